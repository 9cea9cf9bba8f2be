"""leaderworkerset.x-k8s.io/v1 LeaderWorkerSet (kubernetes-sigs/lws): replicas of a group of one leader pod and
``size - 1`` worker pods.

Every field of the upstream type is modelled, so an unknown field is reported with its path. Defaults are
those of the CRD schema and the LeaderWorkerSet webhook, applied by :func:`defaulted`.
"""

from __future__ import annotations

from typing import Any

import msgspec
from msgspec.structs import replace

from dralloc.api.core_v1 import PodTemplateSpec
from dralloc.api.meta import Base, Condition, ListMeta, ObjectMeta

GROUP_VERSION = "leaderworkerset.x-k8s.io/v1"
SUBDOMAIN_SHARED = "Shared"
SUBDOMAIN_UNIQUE_PER_REPLICA = "UniquePerReplica"
LEADER_CREATED = "LeaderCreated"
LEADER_READY = "LeaderReady"
LEADER_WORKER = "LeaderWorker"
LEADER_EXCLUDED = "LeaderExcluded"


class SubGroupPolicy(Base):
    sub_group_policy_type: str | None = None  # LeaderWorker (default) or LeaderExcluded
    sub_group_size: int | None = None


class LeaderWorkerTemplate(Base):
    leader_template: PodTemplateSpec | None = None  # defaults to the worker template
    worker_template: PodTemplateSpec = msgspec.field(default_factory=PodTemplateSpec)
    size: int | None = None  # defaults to 1
    restart_policy: str | None = None
    sub_group_policy: SubGroupPolicy | None = None
    volume_claim_templates: list[dict[str, Any]] | None = None
    persistent_volume_claim_retention_policy: dict[str, Any] | None = None


class RollingUpdateConfiguration(Base):
    partition: int | None = None
    max_unavailable: int | str | None = None
    max_surge: int | str | None = None


class RolloutStrategy(Base):
    type: str | None = None
    rolling_update_configuration: RollingUpdateConfiguration | None = None


class NetworkConfig(Base):
    subdomain_policy: str | None = None  # Shared (default) or UniquePerReplica


class LeaderWorkerSetSpec(Base):
    replicas: int | None = None  # defaults to 1
    leader_worker_template: LeaderWorkerTemplate = msgspec.field(default_factory=LeaderWorkerTemplate)
    rollout_strategy: RolloutStrategy | None = None
    startup_policy: str | None = None  # LeaderCreated (default) or LeaderReady
    network_config: NetworkConfig | None = None


class LeaderWorkerSetStatus(Base):
    conditions: list[Condition] | None = None
    ready_replicas: int | None = None
    updated_replicas: int | None = None
    replicas: int | None = None
    hpa_pod_selector: str | None = None
    observed_generation: int | None = None


class LeaderWorkerSet(Base):
    api_version: str = GROUP_VERSION
    kind: str = "LeaderWorkerSet"
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: LeaderWorkerSetSpec = msgspec.field(default_factory=LeaderWorkerSetSpec)
    status: LeaderWorkerSetStatus | None = None


class LeaderWorkerSetList(Base):
    api_version: str = GROUP_VERSION
    kind: str = "LeaderWorkerSetList"
    metadata: ListMeta | None = None
    items: list[LeaderWorkerSet] = msgspec.field(default_factory=list)


def defaulted(lws: LeaderWorkerSet) -> LeaderWorkerSet:
    """The LeaderWorkerSet as stored: the CRD's defaults (replicas 1, size 1, startup policy LeaderCreated,
    restart policy RecreateGroupOnPodRestart, sub-group type LeaderWorker) and the webhook's (rolling update
    with maxUnavailable 1, maxSurge 0, partition 0; subdomain policy Shared)."""
    spec = lws.spec
    template = spec.leader_worker_template
    restart = template.restart_policy or "RecreateGroupOnPodRestart"
    if restart == "Default":  # the deprecated name of None
        restart = "None"
    sub_group = template.sub_group_policy
    if sub_group is not None and sub_group.sub_group_policy_type is None:
        sub_group = replace(sub_group, sub_group_policy_type=LEADER_WORKER)
    template = replace(template, size=1 if template.size is None else template.size, restart_policy=restart,
                       sub_group_policy=sub_group)
    rollout = spec.rollout_strategy or RolloutStrategy()
    rollout = replace(rollout, type=rollout.type or "RollingUpdate")
    rolling = rollout.rolling_update_configuration
    if rolling is not None or rollout.type == "RollingUpdate":
        rolling = rolling or RollingUpdateConfiguration()
        rollout = replace(rollout, rolling_update_configuration=replace(
            rolling, partition=0 if rolling.partition is None else rolling.partition,
            max_unavailable=1 if rolling.max_unavailable is None else rolling.max_unavailable,
            max_surge=0 if rolling.max_surge is None else rolling.max_surge))
    network = spec.network_config or NetworkConfig()
    if network.subdomain_policy is None:
        network = replace(network, subdomain_policy=SUBDOMAIN_SHARED)
    return replace(lws, spec=replace(spec, replicas=1 if spec.replicas is None else spec.replicas,
                                     leader_worker_template=template, rollout_strategy=rollout,
                                     startup_policy=spec.startup_policy or LEADER_CREATED, network_config=network))
