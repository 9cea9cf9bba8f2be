"""``kubescheduler.config.k8s.io/v1`` KubeSchedulerConfiguration and the plugin args dralloc reads, as typed
structs. Decoding is strict: an unknown field is an error, as kube-scheduler's strict decoding."""

from __future__ import annotations

from typing import Any

import msgspec

from dralloc.api.core_v1 import NodeAffinity
from dralloc.api.meta import LabelSelector

API_VERSION = "kubescheduler.config.k8s.io/v1"


class Strict(msgspec.Struct, rename="camel", omit_defaults=True, kw_only=True, forbid_unknown_fields=True):
    """Camel-case names, unknown fields rejected."""


class Plugin(Strict):
    name: str = ""
    weight: int | None = None


class PluginSet(Strict):
    enabled: list[Plugin] | None = None
    disabled: list[Plugin] | None = None


class Plugins(Strict):
    pre_enqueue: PluginSet | None = None
    queue_sort: PluginSet | None = None
    pre_filter: PluginSet | None = None
    filter: PluginSet | None = None
    post_filter: PluginSet | None = None
    pre_score: PluginSet | None = None
    score: PluginSet | None = None
    reserve: PluginSet | None = None
    permit: PluginSet | None = None
    pre_bind: PluginSet | None = None
    bind: PluginSet | None = None
    post_bind: PluginSet | None = None
    multi_point: PluginSet | None = None


class PluginConfig(Strict):
    name: str = ""
    args: dict[str, Any] | None = None


class Profile(Strict):
    scheduler_name: str | None = None
    percentage_of_nodes_to_score: int | None = None
    plugins: Plugins | None = None
    plugin_config: list[PluginConfig] | None = None


class KubeSchedulerConfiguration(Strict):
    """What dralloc reads of the file; the fields that only concern a running kube-scheduler (client connection,
    leader election, profiling, extenders) are accepted and ignored."""

    api_version: str = ""
    kind: str = ""
    parallelism: int | None = None
    percentage_of_nodes_to_score: int | None = None
    pod_initial_backoff_seconds: int | None = None
    pod_max_backoff_seconds: int | None = None
    profiles: list[Profile] | None = None
    extenders: list[dict[str, Any]] | None = None
    delay_cache_until_active: bool | None = None
    leader_election: dict[str, Any] | None = None
    client_connection: dict[str, Any] | None = None
    enable_profiling: bool | None = None
    enable_contention_profiling: bool | None = None
    health_z_bind_address: str | None = msgspec.field(default=None, name="healthzBindAddress")
    metrics_bind_address: str | None = None


# ---------------------------------------------------------------------------------------------- plugin args
class ArgsBase(Strict):
    api_version: str | None = None
    kind: str | None = None


class ResourceSpec(Strict):
    name: str = ""
    weight: int = 0


class UtilizationShapePoint(Strict):
    utilization: int = 0
    score: int = 0


class RequestedToCapacityRatioParam(Strict):
    shape: list[UtilizationShapePoint] | None = None


class ScoringStrategy(Strict):
    type: str = ""
    resources: list[ResourceSpec] | None = None
    requested_to_capacity_ratio: RequestedToCapacityRatioParam | None = None


class NodeResourcesFitArgs(ArgsBase):
    ignored_resources: list[str] | None = None
    ignored_resource_groups: list[str] | None = None
    scoring_strategy: ScoringStrategy | None = None


class NodeResourcesBalancedAllocationArgs(ArgsBase):
    resources: list[ResourceSpec] | None = None


class InterPodAffinityArgs(ArgsBase):
    hard_pod_affinity_weight: int | None = None
    ignore_preferred_terms_of_existing_pods: bool = False


class DefaultConstraint(Strict):
    """A cluster-level default topology spread constraint (a TopologySpreadConstraint without a selector)."""

    max_skew: int = 0
    topology_key: str = ""
    when_unsatisfiable: str = ""
    label_selector: LabelSelector | None = None
    min_domains: int | None = None
    node_affinity_policy: str | None = None
    node_taints_policy: str | None = None
    match_label_keys: list[str] | None = None


class PodTopologySpreadArgs(ArgsBase):
    default_constraints: list[DefaultConstraint] | None = None
    defaulting_type: str | None = None


class NodeAffinityArgs(ArgsBase):
    added_affinity: NodeAffinity | None = None


class DefaultPreemptionArgs(ArgsBase):
    min_candidate_nodes_percentage: int | None = None
    min_candidate_nodes_absolute: int | None = None


class DynamicResourcesArgs(ArgsBase):
    filter_timeout: str | None = None
    binding_timeout: str | None = None


class VolumeBindingArgs(ArgsBase):
    bind_timeout_seconds: int | None = None
    shape: list[UtilizationShapePoint] | None = None


PluginArgs = (NodeResourcesFitArgs | NodeResourcesBalancedAllocationArgs | InterPodAffinityArgs
              | PodTopologySpreadArgs | NodeAffinityArgs | DefaultPreemptionArgs | DynamicResourcesArgs
              | VolumeBindingArgs)

ARGS_TYPES: dict[str, type[ArgsBase]] = {
    "NodeResourcesFit": NodeResourcesFitArgs,
    "NodeResourcesBalancedAllocation": NodeResourcesBalancedAllocationArgs,
    "InterPodAffinity": InterPodAffinityArgs,
    "PodTopologySpread": PodTopologySpreadArgs,
    "NodeAffinity": NodeAffinityArgs,
    "DefaultPreemption": DefaultPreemptionArgs,
    "DynamicResources": DynamicResourcesArgs,
    "VolumeBinding": VolumeBindingArgs,
}
