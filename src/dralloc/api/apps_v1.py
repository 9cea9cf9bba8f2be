"""apps/v1 workload kinds: Deployment, ReplicaSet, StatefulSet, DaemonSet.

What their controllers read to create pods is typed (replicas, selector, the pod template, StatefulSet
ordinals, the collision count that enters a Deployment's pod-template hash); update strategies, volume
claim templates and most status fields are kept as plain data or dropped.
"""

from __future__ import annotations

from typing import Any

import msgspec

from dralloc.api.core_v1 import PodTemplateSpec
from dralloc.api.meta import Base, LabelSelector, ListMeta, ObjectMeta

GROUP_VERSION = "apps/v1"


class WorkloadCondition(Base):
    type: str = ""
    status: str = ""
    last_update_time: str | None = None
    last_transition_time: str | None = None
    reason: str | None = None
    message: str | None = None


# --- Deployment -------------------------------------------------------------------------------------


class DeploymentSpec(Base):
    replicas: int | None = None  # defaults to 1
    selector: LabelSelector | None = None
    template: PodTemplateSpec = msgspec.field(default_factory=PodTemplateSpec)
    strategy: dict[str, Any] | None = None
    min_ready_seconds: int | None = None
    revision_history_limit: int | None = None
    paused: bool | None = None
    progress_deadline_seconds: int | None = None


class DeploymentStatus(Base):
    observed_generation: int | None = None
    replicas: int | None = None
    updated_replicas: int | None = None
    ready_replicas: int | None = None
    available_replicas: int | None = None
    unavailable_replicas: int | None = None
    terminating_replicas: int | None = None
    conditions: list[WorkloadCondition] | None = None
    collision_count: int | None = None  # mixed into the pod-template hash after a name collision


class Deployment(Base):
    api_version: str = GROUP_VERSION
    kind: str = "Deployment"
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: DeploymentSpec = msgspec.field(default_factory=DeploymentSpec)
    status: DeploymentStatus | None = None


class DeploymentList(Base):
    api_version: str = GROUP_VERSION
    kind: str = "DeploymentList"
    metadata: ListMeta | None = None
    items: list[Deployment] = msgspec.field(default_factory=list)


# --- ReplicaSet -------------------------------------------------------------------------------------


class ReplicaSetSpec(Base):
    replicas: int | None = None  # defaults to 1
    min_ready_seconds: int | None = None
    selector: LabelSelector | None = None
    template: PodTemplateSpec | None = None


class ReplicaSetStatus(Base):
    replicas: int = 0
    fully_labeled_replicas: int | None = None
    ready_replicas: int | None = None
    available_replicas: int | None = None
    terminating_replicas: int | None = None
    observed_generation: int | None = None
    conditions: list[WorkloadCondition] | None = None


class ReplicaSet(Base):
    api_version: str = GROUP_VERSION
    kind: str = "ReplicaSet"
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: ReplicaSetSpec = msgspec.field(default_factory=ReplicaSetSpec)
    status: ReplicaSetStatus | None = None


class ReplicaSetList(Base):
    api_version: str = GROUP_VERSION
    kind: str = "ReplicaSetList"
    metadata: ListMeta | None = None
    items: list[ReplicaSet] = msgspec.field(default_factory=list)


# --- StatefulSet ------------------------------------------------------------------------------------


class StatefulSetOrdinals(Base):
    start: int = 0


class StatefulSetSpec(Base):
    replicas: int | None = None  # defaults to 1
    selector: LabelSelector | None = None
    template: PodTemplateSpec = msgspec.field(default_factory=PodTemplateSpec)
    volume_claim_templates: list[dict[str, Any]] | None = None
    service_name: str | None = None
    pod_management_policy: str | None = None  # OrderedReady (default) or Parallel
    update_strategy: dict[str, Any] | None = None
    revision_history_limit: int | None = None
    min_ready_seconds: int | None = None
    persistent_volume_claim_retention_policy: dict[str, Any] | None = None
    ordinals: StatefulSetOrdinals | None = None


class StatefulSetStatus(Base):
    observed_generation: int | None = None
    replicas: int = 0
    ready_replicas: int | None = None
    current_replicas: int | None = None
    updated_replicas: int | None = None
    current_revision: str | None = None
    update_revision: str | None = None
    collision_count: int | None = None
    conditions: list[WorkloadCondition] | None = None
    available_replicas: int | None = None


class StatefulSet(Base):
    api_version: str = GROUP_VERSION
    kind: str = "StatefulSet"
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: StatefulSetSpec = msgspec.field(default_factory=StatefulSetSpec)
    status: StatefulSetStatus | None = None


class StatefulSetList(Base):
    api_version: str = GROUP_VERSION
    kind: str = "StatefulSetList"
    metadata: ListMeta | None = None
    items: list[StatefulSet] = msgspec.field(default_factory=list)


# --- DaemonSet --------------------------------------------------------------------------------------


class DaemonSetSpec(Base):
    selector: LabelSelector | None = None
    template: PodTemplateSpec = msgspec.field(default_factory=PodTemplateSpec)
    update_strategy: dict[str, Any] | None = None
    min_ready_seconds: int | None = None
    revision_history_limit: int | None = None


class DaemonSetStatus(Base):
    current_number_scheduled: int = 0
    number_misscheduled: int = 0
    desired_number_scheduled: int = 0
    number_ready: int = 0
    observed_generation: int | None = None
    updated_number_scheduled: int | None = None
    number_available: int | None = None
    number_unavailable: int | None = None
    collision_count: int | None = None
    conditions: list[WorkloadCondition] | None = None


class DaemonSet(Base):
    api_version: str = GROUP_VERSION
    kind: str = "DaemonSet"
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: DaemonSetSpec = msgspec.field(default_factory=DaemonSetSpec)
    status: DaemonSetStatus | None = None


class DaemonSetList(Base):
    api_version: str = GROUP_VERSION
    kind: str = "DaemonSetList"
    metadata: ListMeta | None = None
    items: list[DaemonSet] = msgspec.field(default_factory=list)


# --- ControllerRevision -----------------------------------------------------------------------------


class ControllerRevision(Base):
    """A snapshot of a StatefulSet's or DaemonSet's pod template (``data``: a patch that puts it back) and
    the revision it was; what ``kubectl rollout history|undo`` reads."""

    api_version: str = GROUP_VERSION
    kind: str = "ControllerRevision"
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    data: Any = None  # runtime.RawExtension: any JSON value
    revision: int = 0


class ControllerRevisionList(Base):
    api_version: str = GROUP_VERSION
    kind: str = "ControllerRevisionList"
    metadata: ListMeta | None = None
    items: list[ControllerRevision] = msgspec.field(default_factory=list)
