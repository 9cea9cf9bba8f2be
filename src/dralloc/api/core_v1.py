"""core/v1 types dralloc needs: Node, the scheduling-relevant parts of Pod and PodTemplateSpec, NodeSelector
and Event.

Only what the allocator, node fit, the scheduler and the workload controllers read is modelled; other
fields of a Node or Pod are dropped when decoding. The structs that model only part of their upstream type
say so with ``PARTIAL = True``: strict decoding does not report fields below them as unknown.  The API server stores core objects as the
JSON clients sent (every field round-trips) and decodes them into these models only to read them.
"""

from __future__ import annotations

from typing import Any, ClassVar

import msgspec

from dralloc.api.meta import Base, LabelSelector, ListMeta, ObjectMeta
from dralloc.api.quantity import Quantity

ResourceList = dict[str, Quantity]


class NodeSelectorRequirement(Base):
    key: str = ""
    operator: str = ""
    values: list[str] | None = None


class NodeSelectorTerm(Base):
    match_expressions: list[NodeSelectorRequirement] | None = None
    match_fields: list[NodeSelectorRequirement] | None = None


class NodeSelector(Base):
    node_selector_terms: list[NodeSelectorTerm] = msgspec.field(default_factory=list)


class PreferredSchedulingTerm(Base):
    weight: int = 0
    preference: NodeSelectorTerm = msgspec.field(default_factory=NodeSelectorTerm)


class NodeAffinity(Base):
    required_during_scheduling_ignored_during_execution: NodeSelector | None = None
    preferred_during_scheduling_ignored_during_execution: list[PreferredSchedulingTerm] | None = None


class PodAffinityTerm(Base):
    label_selector: LabelSelector | None = None
    namespaces: list[str] | None = None
    topology_key: str = ""
    namespace_selector: LabelSelector | None = None
    match_label_keys: list[str] | None = None
    mismatch_label_keys: list[str] | None = None


class WeightedPodAffinityTerm(Base):
    weight: int = 0
    pod_affinity_term: PodAffinityTerm = msgspec.field(default_factory=PodAffinityTerm)


class PodAffinity(Base):
    """core/v1 PodAffinity, and PodAntiAffinity, which has the same fields."""

    required_during_scheduling_ignored_during_execution: list[PodAffinityTerm] | None = None
    preferred_during_scheduling_ignored_during_execution: list[WeightedPodAffinityTerm] | None = None


class Affinity(Base):
    node_affinity: NodeAffinity | None = None
    pod_affinity: PodAffinity | None = None
    pod_anti_affinity: PodAffinity | None = None


class TopologySpreadConstraint(Base):
    max_skew: int = 0
    topology_key: str = ""
    when_unsatisfiable: str = ""
    label_selector: LabelSelector | None = None
    min_domains: int | None = None
    node_affinity_policy: str | None = None  # Honor (default) or Ignore
    node_taints_policy: str | None = None  # Ignore (default) or Honor
    match_label_keys: list[str] | None = None


class Taint(Base):
    key: str = ""
    value: str | None = None
    effect: str = ""
    time_added: str | None = None


class Toleration(Base):
    key: str | None = None
    operator: str | None = None
    value: str | None = None
    effect: str | None = None
    toleration_seconds: int | None = None


# --- Node -------------------------------------------------------------------------------------------


class NodeSpec(Base):
    PARTIAL: ClassVar[bool] = True  # upstream has more fields

    unschedulable: bool | None = None
    taints: list[Taint] | None = None
    provider_id: str | None = msgspec.field(default=None, name="providerID")
    pod_cidr: str | None = msgspec.field(default=None, name="podCIDR")


class ContainerImage(Base):
    """An image the node holds (``status.images[]``): every name it is known by, and its size."""

    names: list[str] | None = None
    size_bytes: int | None = None


class NodeCondition(Base):
    type: str = ""
    status: str = ""
    last_heartbeat_time: str | None = None
    last_transition_time: str | None = None
    reason: str | None = None
    message: str | None = None


class NodeStatus(Base):
    PARTIAL: ClassVar[bool] = True  # upstream has more fields

    capacity: ResourceList | None = None
    allocatable: ResourceList | None = None
    conditions: list[NodeCondition] | None = None
    images: list[ContainerImage] | None = None


class Node(Base):
    api_version: str = "v1"
    kind: str = "Node"
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: NodeSpec | None = None
    status: NodeStatus | None = None


class NodeList(Base):
    api_version: str = "v1"
    kind: str = "NodeList"
    metadata: ListMeta | None = None
    items: list[Node] = msgspec.field(default_factory=list)


class Namespace(Base):
    api_version: str = "v1"
    kind: str = "Namespace"
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: dict[str, Any] | None = None
    status: dict[str, Any] | None = None


# --- Service, ReplicationController (read for their pod selectors: default topology spreading) ---------


class ServiceSpec(Base):
    PARTIAL: ClassVar[bool] = True  # upstream has more fields (ports, type, ...)

    # Unset selects no pods; an empty map selects every pod of the namespace.
    selector: dict[str, str] | None = None


class Service(Base):
    api_version: str = "v1"
    kind: str = "Service"
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: ServiceSpec = msgspec.field(default_factory=ServiceSpec)
    status: dict[str, Any] | None = None


class ReplicationControllerSpec(Base):
    PARTIAL: ClassVar[bool] = True  # upstream has more fields (template, minReadySeconds)

    replicas: int | None = None
    selector: dict[str, str] | None = None


class ReplicationController(Base):
    api_version: str = "v1"
    kind: str = "ReplicationController"
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: ReplicationControllerSpec = msgspec.field(default_factory=ReplicationControllerSpec)
    status: dict[str, Any] | None = None


# --- Pod --------------------------------------------------------------------------------------------


class ResourceClaimReference(Base):
    """A container's use of one of the pod's claims (``resources.claims[]``)."""

    name: str = ""
    request: str | None = None


class ResourceRequirements(Base):
    limits: ResourceList | None = None
    requests: ResourceList | None = None
    claims: list[ResourceClaimReference] | None = None


class ContainerPort(Base):
    container_port: int = 0
    name: str | None = None
    host_port: int | None = None
    protocol: str | None = None  # TCP (default), UDP, SCTP
    host_ip: str | None = msgspec.field(default=None, name="hostIP")


class Container(Base):
    name: str = ""
    image: str | None = None
    ports: list[ContainerPort] | None = None
    resources: ResourceRequirements | None = None
    # Only meaningful for init containers: "Always" makes it a sidecar (restartable init container).
    restart_policy: str | None = None


class PodResourceClaim(Base):
    name: str = ""
    resource_claim_name: str | None = None
    resource_claim_template_name: str | None = None


class PodSchedulingGate(Base):
    name: str = ""


# --- Pod volumes (what the volume plugins read; other volume sources are kept out of the model) ------


class VolumeResourceRequirements(Base):
    limits: ResourceList | None = None
    requests: ResourceList | None = None


class PersistentVolumeClaimSpec(Base):
    access_modes: list[str] | None = None
    selector: LabelSelector | None = None
    resources: VolumeResourceRequirements | None = None
    volume_name: str | None = None
    storage_class_name: str | None = None
    volume_mode: str | None = None  # Filesystem (default) or Block
    data_source: dict[str, Any] | None = None
    data_source_ref: dict[str, Any] | None = None
    volume_attributes_class_name: str | None = None


class PersistentVolumeClaimTemplate(Base):
    metadata: ObjectMeta | None = None
    spec: PersistentVolumeClaimSpec = msgspec.field(default_factory=PersistentVolumeClaimSpec)


class PersistentVolumeClaimVolumeSource(Base):
    claim_name: str = ""
    read_only: bool | None = None


class EphemeralVolumeSource(Base):
    volume_claim_template: PersistentVolumeClaimTemplate | None = None


class GCEPersistentDiskVolumeSource(Base):
    pd_name: str = ""
    fs_type: str | None = None
    partition: int | None = None
    read_only: bool | None = None


class AWSElasticBlockStoreVolumeSource(Base):
    volume_id: str = msgspec.field(default="", name="volumeID")
    fs_type: str | None = None
    partition: int | None = None
    read_only: bool | None = None


class ISCSIVolumeSource(Base):
    PARTIAL: ClassVar[bool] = True  # upstream has more fields

    target_portal: str = ""
    iqn: str = ""
    lun: int = 0
    read_only: bool | None = None


class RBDVolumeSource(Base):
    PARTIAL: ClassVar[bool] = True  # upstream has more fields

    monitors: list[str] = msgspec.field(default_factory=list)
    image: str = ""
    pool: str | None = None  # "rbd" when unset (API default)
    read_only: bool | None = None


class EmptyDirVolumeSource(Base):
    medium: str | None = None  # "" (node disk) or Memory
    size_limit: str | None = None


class HostPathVolumeSource(Base):
    path: str = ""
    type: str | None = None


class ImageVolumeSource(Base):
    reference: str | None = None
    pull_policy: str | None = None


class Volume(Base):
    PARTIAL: ClassVar[bool] = True  # upstream has more volume sources

    name: str = ""
    persistent_volume_claim: PersistentVolumeClaimVolumeSource | None = None
    ephemeral: EphemeralVolumeSource | None = None
    gce_persistent_disk: GCEPersistentDiskVolumeSource | None = None
    aws_elastic_block_store: AWSElasticBlockStoreVolumeSource | None = None
    iscsi: ISCSIVolumeSource | None = None
    rbd: RBDVolumeSource | None = None
    image: ImageVolumeSource | None = None
    empty_dir: EmptyDirVolumeSource | None = None  # local storage, for the planner's drain rules
    host_path: HostPathVolumeSource | None = None


class PodSchedulingGroup(Base):
    pod_group_name: str | None = None


class PodSpec(Base):
    PARTIAL: ClassVar[bool] = True  # upstream has more fields

    containers: list[Container] = msgspec.field(default_factory=list)
    init_containers: list[Container] | None = None
    restart_policy: str | None = None
    node_name: str | None = None
    node_selector: dict[str, str] | None = None
    affinity: Affinity | None = None
    tolerations: list[Toleration] | None = None
    host_network: bool | None = None
    scheduling_gates: list[PodSchedulingGate] | None = None
    overhead: ResourceList | None = None
    resource_claims: list[PodResourceClaim] | None = None
    # Pod-level resources (KEP-2837): when set for a resource, it is the pod's footprint for it.
    resources: ResourceRequirements | None = None
    priority: int | None = None
    priority_class_name: str | None = None
    preemption_policy: str | None = None  # PreemptLowerPriority (default) or Never
    scheduler_name: str | None = None
    topology_spread_constraints: list[TopologySpreadConstraint] | None = None
    termination_grace_period_seconds: int | None = None  # how long a deleted pod terminates (default 30)
    volumes: list[Volume] | None = None
    # The PodGroup the pod belongs to (GenericWorkload; read only when the gate is on).
    scheduling_group: PodSchedulingGroup | None = None
    # What ServiceAccount admission reads of the body (typed here so that a wrongly typed value is the
    # decoder's error, as kube-apiserver decodes before admission).
    service_account_name: str | None = None
    service_account: str | None = None  # (deprecated alias of serviceAccountName)
    automount_service_account_token: bool | None = None


class PodResourceClaimStatus(Base):
    name: str = ""
    resource_claim_name: str | None = None


# The PodScheduled=False condition's message kube-apiserver's pod strategy gives a pod created with scheduling
# gates (reason SchedulingGated): the scheduler never tries such a pod.
SCHEDULING_GATED_MESSAGE = "Scheduling is blocked due to non-empty scheduling gates"


class PodCondition(Base):
    type: str = ""  # PodScheduled, Ready, ...
    status: str = ""
    observed_generation: int | None = None
    last_probe_time: str | None = None
    last_transition_time: str | None = None
    reason: str | None = None
    message: str | None = None


class ContainerStatus(Base):
    """What the kubelet reports of a container; only the resources an in-place resize leaves behind are
    read (kube-scheduler counts the larger of them and the spec)."""

    PARTIAL: ClassVar[bool] = True  # upstream has more fields (state, image, ...)

    name: str = ""
    allocated_resources: ResourceList | None = None
    resources: ResourceRequirements | None = None


class PodStatus(Base):
    PARTIAL: ClassVar[bool] = True  # upstream has more fields

    phase: str | None = None  # Pending, Running, Succeeded, Failed, Unknown
    conditions: list[PodCondition] | None = None
    nominated_node_name: str | None = None
    start_time: str | None = None
    resource_claim_statuses: list[PodResourceClaimStatus] | None = None
    # DRA-backed extended resources (DRAExtendedResource): {resourceClaimName, requestMappings}.
    extended_resource_claim_status: dict[str, Any] | None = None
    container_statuses: list[ContainerStatus] | None = None
    init_container_statuses: list[ContainerStatus] | None = None  # (a sidecar's resize is read from here)


class Pod(Base):
    api_version: str = "v1"
    kind: str = "Pod"
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: PodSpec = msgspec.field(default_factory=PodSpec)
    status: PodStatus | None = None


class PodList(Base):
    api_version: str = "v1"
    kind: str = "PodList"
    metadata: ListMeta | None = None
    items: list[Pod] = msgspec.field(default_factory=list)


class PodTemplateSpec(Base):
    """The pod a workload controller stamps out: its metadata (labels!) and spec."""

    metadata: ObjectMeta | None = None
    spec: PodSpec = msgspec.field(default_factory=PodSpec)


# --- Event ------------------------------------------------------------------------------------------


class ObjectReference(Base):
    kind: str | None = None
    namespace: str | None = None
    name: str | None = None
    uid: str | None = None
    api_version: str | None = None
    resource_version: str | None = None
    field_path: str | None = None


class EventSource(Base):
    component: str | None = None
    host: str | None = None


class EventSeries(Base):
    count: int | None = None
    last_observed_time: str | None = None


class Event(Base):
    """A core/v1 Event (what ``kubectl describe`` lists), e.g. kube-scheduler's Scheduled/FailedScheduling."""

    api_version: str = "v1"
    kind: str = "Event"
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    involved_object: ObjectReference = msgspec.field(default_factory=ObjectReference)
    reason: str | None = None
    message: str | None = None
    source: EventSource | None = None
    first_timestamp: str | None = None
    last_timestamp: str | None = None
    count: int | None = None
    type: str | None = None
    event_time: str | None = None
    action: str | None = None
    reporting_component: str | None = None
    reporting_instance: str | None = None
    related: ObjectReference | None = None
    series: EventSeries | None = None


class EventList(Base):
    api_version: str = "v1"
    kind: str = "EventList"
    metadata: ListMeta | None = None
    items: list[Event] = msgspec.field(default_factory=list)


# --- ConfigMap, Secret, ServiceAccount (stored by the API server; the scheduler never reads them) -----------------------


class ConfigMap(Base):
    api_version: str = "v1"
    kind: str = "ConfigMap"
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    immutable: bool | None = None
    data: dict[str, str] | None = None
    binary_data: dict[str, str] | None = None  # base64 in JSON


class Secret(Base):
    api_version: str = "v1"
    kind: str = "Secret"
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    immutable: bool | None = None
    data: dict[str, str] | None = None  # base64 in JSON
    string_data: dict[str, str] | None = None  # write-only: merged into data
    type: str | None = None


class LocalObjectReference(Base):
    name: str | None = None


class ServiceAccount(Base):
    api_version: str = "v1"
    kind: str = "ServiceAccount"
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    secrets: list[ObjectReference] | None = None
    image_pull_secrets: list[LocalObjectReference] | None = None
    automount_service_account_token: bool | None = None
