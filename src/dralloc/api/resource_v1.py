"""resource.k8s.io/v1 types as of Kubernetes 1.36 (plus the 1.37 fields dralloc already reads).

Field names are the snake_case of the JSON names (``resource_slice_count`` ↔ ``resourceSliceCount``);
``DeviceAttribute.int_``/``bool_`` carry JSON ``int``/``bool``. Every optional field defaults to None so that
"unset" and "empty" stay distinct where upstream distinguishes them, and None is omitted on output — which is
what kube-apiserver returns. Quantities are exact :class:`~dralloc.api.quantity.Quantity` values.
"""

from __future__ import annotations

from typing import Any

import msgspec

from dralloc.api.core_v1 import NodeSelector
from dralloc.api.meta import Base, Condition, ListMeta, ObjectMeta
from dralloc.api.quantity import Quantity

GROUP = "resource.k8s.io"
API_VERSION = "resource.k8s.io/v1"

ALLOCATION_MODE_EXACT_COUNT = "ExactCount"
ALLOCATION_MODE_ALL = "All"

# --- ResourceSlice ----------------------------------------------------------------------------------


class ResourcePool(Base, omit_defaults=False):
    # All three fields are always written by kube-apiserver (no omitempty), generation 0 included.
    name: str = ""
    generation: int = 0
    resource_slice_count: int = 0


def _zero() -> Quantity:
    return Quantity(0)


class Counter(Base):
    value: Quantity = msgspec.field(default_factory=_zero)


class CounterSet(Base):
    name: str = ""
    counters: dict[str, Counter] | None = None


class DeviceAttribute(Base):
    """Exactly one member is set. The list forms (``ints`` ...) are 1.36's DRAListTypeAttributes."""

    int_: int | None = msgspec.field(default=None, name="int")
    bool_: bool | None = msgspec.field(default=None, name="bool")
    string: str | None = None
    version: str | None = None
    ints: list[int] | None = None
    bools: list[bool] | None = None
    strings: list[str] | None = None
    versions: list[str] | None = None


class CapacityRequestPolicyRange(Base):
    min: Quantity | None = None
    max: Quantity | None = None
    step: Quantity | None = None


class CapacityRequestPolicy(Base):
    default: Quantity | None = None
    valid_values: list[Quantity] | None = None
    valid_range: CapacityRequestPolicyRange | None = None


class DeviceCapacity(Base):
    value: Quantity = msgspec.field(default_factory=_zero)
    request_policy: CapacityRequestPolicy | None = None


class DeviceCounterConsumption(Base):
    counter_set: str = ""
    counters: dict[str, Counter] | None = None
    compatibility_groups: list[str] | None = None  # 1.37


class DeviceTaint(Base):
    key: str = ""
    value: str | None = None
    effect: str = ""
    time_added: str | None = None


class NodeAllocatableResourceMapping(Base):
    """1.36 (KEP-5517 alpha): how an allocation of this device counts against node allocatable."""

    capacity_key: str | None = None
    allocation_multiplier: Quantity | None = None


class NodeAllocatableMapping(Base):
    """1.37 form, inside ``nodeAllocatableResources[name].mapping``."""

    capacity_key: str | None = None
    capacity_multiplier: Quantity | None = None
    device_multiplier: Quantity | None = None


class NodeAllocatableOverhead(Base):
    per_pod: Quantity | None = None
    per_container: Quantity | None = None


class NodeAllocatableResource(Base):
    mapping: NodeAllocatableMapping | None = None
    overhead: NodeAllocatableOverhead | None = None


class Device(Base):
    name: str = ""
    attributes: dict[str, DeviceAttribute] | None = None
    capacity: dict[str, DeviceCapacity] | None = None
    consumes_counters: list[DeviceCounterConsumption] | None = None
    node_name: str | None = None
    node_selector: NodeSelector | None = None
    all_nodes: bool | None = None
    taints: list[DeviceTaint] | None = None
    binds_to_node: bool | None = None
    binding_conditions: list[str] | None = None
    binding_failure_conditions: list[str] | None = None
    allow_multiple_allocations: bool | None = None
    node_allocatable_resource_mappings: dict[str, NodeAllocatableResourceMapping] | None = None
    node_allocatable_resources: dict[str, NodeAllocatableResource] | None = None  # 1.37


class ResourceSliceSpec(Base):
    driver: str = ""
    pool: ResourcePool = msgspec.field(default_factory=ResourcePool)
    node_name: str | None = None
    node_selector: NodeSelector | None = None
    all_nodes: bool | None = None
    devices: list[Device] | None = None
    per_device_node_selection: bool | None = None
    shared_counters: list[CounterSet] | None = None
    partition_type_attribute: str | None = None  # 1.37
    skip_node_operations: list[str] | None = None  # 1.37


class ResourceSlice(Base):
    api_version: str = API_VERSION
    kind: str = "ResourceSlice"
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: ResourceSliceSpec = msgspec.field(default_factory=ResourceSliceSpec)


class ResourceSliceList(Base):
    api_version: str = API_VERSION
    kind: str = "ResourceSliceList"
    metadata: ListMeta | None = None
    items: list[ResourceSlice] = msgspec.field(default_factory=list)


# --- DeviceClass ------------------------------------------------------------------------------------


class CELDeviceSelector(Base):
    expression: str = ""


class DeviceSelector(Base):
    cel: CELDeviceSelector | None = None


class OpaqueDeviceConfiguration(Base):
    driver: str = ""
    parameters: Any = None  # a RawExtension: must be a JSON object (validated)


class DeviceConfiguration(Base):
    opaque: OpaqueDeviceConfiguration | None = None


class DeviceClassConfiguration(Base):
    opaque: OpaqueDeviceConfiguration | None = None


class DeviceClassSpec(Base):
    selectors: list[DeviceSelector] | None = None
    config: list[DeviceClassConfiguration] | None = None
    extended_resource_name: str | None = None


class DeviceClass(Base):
    api_version: str = API_VERSION
    kind: str = "DeviceClass"
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: DeviceClassSpec = msgspec.field(default_factory=DeviceClassSpec)


class DeviceClassList(Base):
    api_version: str = API_VERSION
    kind: str = "DeviceClassList"
    metadata: ListMeta | None = None
    items: list[DeviceClass] = msgspec.field(default_factory=list)


# --- ResourceClaim ----------------------------------------------------------------------------------


class DeviceToleration(Base):
    key: str | None = None
    operator: str | None = None
    value: str | None = None
    effect: str | None = None
    toleration_seconds: int | None = None


class CapacityRequirements(Base):
    requests: dict[str, Quantity] | None = None


class DerivedAttribute(Base):  # 1.37
    name: str = ""
    cel: CELDeviceSelector | None = None


class ExactDeviceRequest(Base):
    device_class_name: str = ""
    selectors: list[DeviceSelector] | None = None
    allocation_mode: str | None = None
    count: int | None = None
    admin_access: bool | None = None
    tolerations: list[DeviceToleration] | None = None
    capacity: CapacityRequirements | None = None
    derived_attributes: list[DerivedAttribute] | None = None  # 1.37


class DeviceSubRequest(Base):
    name: str = ""
    device_class_name: str = ""
    selectors: list[DeviceSelector] | None = None
    allocation_mode: str | None = None
    count: int | None = None
    tolerations: list[DeviceToleration] | None = None
    capacity: CapacityRequirements | None = None
    derived_attributes: list[DerivedAttribute] | None = None  # 1.37


class DeviceRequest(Base):
    name: str = ""
    exactly: ExactDeviceRequest | None = None
    first_available: list[DeviceSubRequest] | None = None


class DeviceConstraint(Base):
    requests: list[str] | None = None
    match_attribute: str | None = None
    distinct_attribute: str | None = None


class DeviceClaimConfiguration(Base):
    requests: list[str] | None = None
    opaque: OpaqueDeviceConfiguration | None = None


class DeviceClaim(Base):
    requests: list[DeviceRequest] | None = None
    constraints: list[DeviceConstraint] | None = None
    config: list[DeviceClaimConfiguration] | None = None


class ResourceClaimSpec(Base):
    devices: DeviceClaim | None = None


class DeviceRequestAllocationResult(Base):
    request: str = ""
    driver: str = ""
    pool: str = ""
    device: str = ""
    admin_access: bool | None = None
    tolerations: list[DeviceToleration] | None = None
    binding_conditions: list[str] | None = None
    binding_failure_conditions: list[str] | None = None
    share_id: str | None = msgspec.field(default=None, name="shareID")
    consumed_capacity: dict[str, Quantity] | None = None
    skip_node_operations: list[str] | None = None  # 1.37


class DeviceAllocationConfiguration(Base):
    source: str = ""
    requests: list[str] | None = None
    opaque: OpaqueDeviceConfiguration | None = None


class DeviceAllocationResult(Base):
    results: list[DeviceRequestAllocationResult] | None = None
    config: list[DeviceAllocationConfiguration] | None = None


class AllocationResult(Base):
    devices: DeviceAllocationResult | None = None
    node_selector: NodeSelector | None = None
    allocation_timestamp: str | None = None


class ResourceClaimConsumerReference(Base):
    api_group: str | None = None
    resource: str = ""
    name: str = ""
    uid: str = ""


class NetworkDeviceData(Base):
    interface_name: str | None = None
    ips: list[str] | None = None
    hardware_address: str | None = None


class AllocatedDeviceStatus(Base):
    driver: str = ""
    pool: str = ""
    device: str = ""
    share_id: str | None = msgspec.field(default=None, name="shareID")
    conditions: list[Condition] | None = None
    data: Any = None
    network_data: NetworkDeviceData | None = None


class ResourceClaimStatus(Base):
    allocation: AllocationResult | None = None
    reserved_for: list[ResourceClaimConsumerReference] | None = None
    devices: list[AllocatedDeviceStatus] | None = None


class ResourceClaim(Base):
    api_version: str = API_VERSION
    kind: str = "ResourceClaim"
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: ResourceClaimSpec = msgspec.field(default_factory=ResourceClaimSpec)
    status: ResourceClaimStatus | None = None


class ResourceClaimList(Base):
    api_version: str = API_VERSION
    kind: str = "ResourceClaimList"
    metadata: ListMeta | None = None
    items: list[ResourceClaim] = msgspec.field(default_factory=list)


class ResourceClaimTemplateSpec(Base):
    metadata: ObjectMeta | None = None
    spec: ResourceClaimSpec = msgspec.field(default_factory=ResourceClaimSpec)


class ResourceClaimTemplate(Base):
    api_version: str = API_VERSION
    kind: str = "ResourceClaimTemplate"
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: ResourceClaimTemplateSpec = msgspec.field(default_factory=ResourceClaimTemplateSpec)


class ResourceClaimTemplateList(Base):
    api_version: str = API_VERSION
    kind: str = "ResourceClaimTemplateList"
    metadata: ListMeta | None = None
    items: list[ResourceClaimTemplate] = msgspec.field(default_factory=list)


# --- DeviceTaintRule (v1beta2 in 1.36, v1 in 1.37) --------------------------------------------------


class DeviceTaintSelector(Base):
    driver: str | None = None
    pool: str | None = None
    device: str | None = None


class DeviceTaintRuleSpec(Base):
    device_selector: DeviceTaintSelector | None = None
    taint: DeviceTaint = msgspec.field(default_factory=DeviceTaint)


class DeviceTaintRuleStatus(Base):
    conditions: list[Condition] | None = None


class DeviceTaintRule(Base):
    api_version: str = API_VERSION
    kind: str = "DeviceTaintRule"
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: DeviceTaintRuleSpec = msgspec.field(default_factory=DeviceTaintRuleSpec)
    status: DeviceTaintRuleStatus | None = None


class DeviceTaintRuleList(Base):
    api_version: str = API_VERSION
    kind: str = "DeviceTaintRuleList"
    metadata: ListMeta | None = None
    items: list[DeviceTaintRule] = msgspec.field(default_factory=list)
