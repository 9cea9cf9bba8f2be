"""The protobuf schema tables of resource.k8s.io v1, v1beta2 and v1beta1 (notation: server/protobuf/schema.py).

v1beta2 has v1's messages and field numbers. v1beta1 differs in two places: a Device's fields sit in a
``basic`` BasicDevice, and a DeviceRequest carries an exact request's fields itself (numbered after its name)
where v1 has ``exactly``; its ResourceSliceSpec's nodeName and allNodes are plain values, not pointers.

A Device has both forms of its node allocatable resources: 1.36's ``nodeAllocatableResourceMappings`` and
1.37's ``nodeAllocatableResources``.
"""

from __future__ import annotations

from dralloc.server.protobuf.schema import CORE_PIECES, META, Schema, messages, schema

_DEVICE_FIELDS = {
    # (number in v1's Device, number in v1beta1's BasicDevice): the same fields
    (2, 1): "attributes map[string]DeviceAttribute", (3, 2): "capacity map[string]DeviceCapacity",
    (4, 3): "consumesCounters []DeviceCounterConsumption", (5, 4): "nodeName *string",
    (6, 5): "nodeSelector *NodeSelector", (7, 6): "allNodes *bool", (8, 7): "taints []DeviceTaint",
    (9, 8): "bindsToNode *bool", (10, 9): "bindingConditions []string", (11, 10): "bindingFailureConditions []string",
    (12, 11): "allowMultipleAllocations *bool",
    (13, 12): "nodeAllocatableResourceMappings map[string]NodeAllocatableResourceMapping",  # 1.36's form
    (14, 14): "nodeAllocatableResources map[string]NodeAllocatableResource",
}

_V1 = messages({
    # ResourceSlice
    "ResourceSlice": {1: "metadata ObjectMeta", 2: "spec ResourceSliceSpec"},
    "ResourceSliceSpec": {1: "driver string always", 2: "pool ResourcePool", 3: "nodeName *string",
                          4: "nodeSelector *NodeSelector", 5: "allNodes *bool", 6: "devices []Device",
                          7: "perDeviceNodeSelection *bool", 8: "sharedCounters []CounterSet",
                          9: "partitionTypeAttribute *string", 10: "skipNodeOperations []string"},
    "CounterSet": {1: "name string always", 2: "counters map[string]Counter"},
    "ResourcePool": {1: "name string always", 2: "generation int64 always", 3: "resourceSliceCount int64 always"},
    "Device": {1: "name string always", **{v1: text for (v1, _), text in _DEVICE_FIELDS.items()}},
    "NodeAllocatableResourceMapping": {1: "capacityKey *string", 2: "allocationMultiplier *Quantity"},
    "NodeAllocatableResource": {3: "mapping *NodeAllocatableMapping", 4: "overhead *NodeAllocatableOverhead"},
    "NodeAllocatableMapping": {1: "capacityKey *string", 2: "capacityMultiplier *Quantity",
                               3: "deviceMultiplier *Quantity"},
    "NodeAllocatableOverhead": {1: "perPod *Quantity", 2: "perContainer *Quantity"},
    "DeviceCounterConsumption": {1: "counterSet string always", 2: "counters map[string]Counter"},
    "DeviceCapacity": {1: "value Quantity", 2: "requestPolicy *CapacityRequestPolicy"},
    "Counter": {1: "value Quantity"},
    "CapacityRequestPolicy": {1: "default *Quantity", 3: "validValues []Quantity",
                              4: "validRange *CapacityRequestPolicyRange"},
    "CapacityRequestPolicyRange": {1: "min *Quantity", 2: "max *Quantity", 3: "step *Quantity"},
    "DeviceAttribute": {2: "int *int64", 3: "bool *bool", 4: "string *string", 5: "version *string",
                        6: "ints []int64", 7: "bools []bool", 8: "strings []string", 9: "versions []string"},
    "DeviceTaint": {1: "key string always", 2: "value string", 3: "effect string always", 4: "timeAdded *Time"},
    # DeviceTaintRule
    "DeviceTaintRule": {1: "metadata ObjectMeta", 2: "spec DeviceTaintRuleSpec", 3: "status DeviceTaintRuleStatus"},
    "DeviceTaintRuleSpec": {1: "deviceSelector *DeviceTaintSelector", 2: "taint DeviceTaint"},
    "DeviceTaintSelector": {2: "driver *string", 3: "pool *string", 4: "device *string"},
    "DeviceTaintRuleStatus": {1: "conditions []Condition"},
    # ResourceClaim
    "ResourceClaim": {1: "metadata ObjectMeta", 2: "spec ResourceClaimSpec", 3: "status ResourceClaimStatus"},
    "ResourceClaimSpec": {1: "devices DeviceClaim"},
    "DeviceClaim": {1: "requests []DeviceRequest", 2: "constraints []DeviceConstraint",
                    3: "config []DeviceClaimConfiguration"},
    "DeviceRequest": {1: "name string always", 2: "exactly *ExactDeviceRequest", 3: "firstAvailable []DeviceSubRequest"},
    "ExactDeviceRequest": {1: "deviceClassName string always", 2: "selectors []DeviceSelector",
                           3: "allocationMode string", 4: "count int64", 5: "adminAccess *bool",
                           6: "tolerations []DeviceToleration", 7: "capacity *CapacityRequirements"},
    "DeviceSubRequest": {1: "name string always", 2: "deviceClassName string always", 3: "selectors []DeviceSelector",
                         4: "allocationMode string", 5: "count int64", 6: "tolerations []DeviceToleration",
                         7: "capacity *CapacityRequirements"},
    "CapacityRequirements": {1: "requests map[string]Quantity"},
    "DeviceSelector": {1: "cel *CELDeviceSelector"},
    "CELDeviceSelector": {1: "expression string always"},
    "DeviceConstraint": {1: "requests []string", 2: "matchAttribute *string", 3: "distinctAttribute *string"},
    "DeviceClaimConfiguration": {1: "requests []string", 2: "deviceConfiguration DeviceConfiguration inline"},
    "DeviceConfiguration": {1: "opaque *OpaqueDeviceConfiguration"},
    "OpaqueDeviceConfiguration": {1: "driver string always", 2: "parameters RawExtension"},
    "DeviceToleration": {1: "key string", 2: "operator string", 3: "value string", 4: "effect string",
                         5: "tolerationSeconds *int64"},
    "ResourceClaimStatus": {1: "allocation *AllocationResult", 2: "reservedFor []ResourceClaimConsumerReference",
                            4: "devices []AllocatedDeviceStatus"},
    "ResourceClaimConsumerReference": {1: "apiGroup string", 3: "resource string always", 4: "name string always",
                                       5: "uid string always"},
    "AllocationResult": {1: "devices DeviceAllocationResult", 3: "nodeSelector *NodeSelector",
                         5: "allocationTimestamp *Time"},
    "DeviceAllocationResult": {1: "results []DeviceRequestAllocationResult",
                               2: "config []DeviceAllocationConfiguration"},
    "DeviceRequestAllocationResult": {1: "request string always", 2: "driver string always", 3: "pool string always",
                                      4: "device string always", 5: "adminAccess *bool",
                                      6: "tolerations []DeviceToleration", 7: "bindingConditions []string",
                                      8: "bindingFailureConditions []string", 9: "shareID *string",
                                      10: "consumedCapacity map[string]Quantity", 11: "skipNodeOperations []string"},
    "DeviceAllocationConfiguration": {1: "source string always", 2: "requests []string",
                                      3: "deviceConfiguration DeviceConfiguration inline"},
    "AllocatedDeviceStatus": {1: "driver string always", 2: "pool string always", 3: "device string always",
                              7: "shareID *string", 4: "conditions []Condition", 5: "data *RawExtension",
                              6: "networkData *NetworkDeviceData"},
    "NetworkDeviceData": {1: "interfaceName string", 2: "ips []string", 3: "hardwareAddress string"},
    # DeviceClass
    "DeviceClass": {1: "metadata ObjectMeta", 2: "spec DeviceClassSpec"},
    "DeviceClassSpec": {1: "selectors []DeviceSelector", 2: "config []DeviceClassConfiguration",
                        4: "extendedResourceName *string"},
    "DeviceClassConfiguration": {1: "deviceConfiguration DeviceConfiguration inline"},
    # ResourceClaimTemplate
    "ResourceClaimTemplate": {1: "metadata ObjectMeta", 2: "spec ResourceClaimTemplateSpec"},
    "ResourceClaimTemplateSpec": {1: "metadata ObjectMeta", 2: "spec ResourceClaimSpec"},
})

RESOURCE_V1: Schema = schema(META, CORE_PIECES, _V1)
RESOURCE_V1BETA2 = RESOURCE_V1

RESOURCE_V1BETA1: Schema = schema(RESOURCE_V1, messages({
    "ResourceSliceSpec": {
        1: "driver string always", 2: "pool ResourcePool", 3: "nodeName string", 4: "nodeSelector *NodeSelector",
        5: "allNodes bool", 6: "devices []Device", 7: "perDeviceNodeSelection *bool", 8: "sharedCounters []CounterSet",
        9: "partitionTypeAttribute *string", 10: "skipNodeOperations []string"},
    "Device": {1: "name string always", 2: "basic *BasicDevice"},
    "BasicDevice": {beta: text for (_, beta), text in _DEVICE_FIELDS.items()},
    "DeviceRequest": {1: "name string always", 2: "deviceClassName string always", 3: "selectors []DeviceSelector",
                      4: "allocationMode string", 5: "count int64", 6: "adminAccess *bool",
                      7: "firstAvailable []DeviceSubRequest", 8: "tolerations []DeviceToleration",
                      9: "capacity *CapacityRequirements"},
    "DeviceSubRequest": {1: "name string always", 2: "deviceClassName string always", 3: "selectors []DeviceSelector",
                         4: "allocationMode string", 5: "count int64", 7: "tolerations []DeviceToleration",
                         8: "capacity *CapacityRequirements"},
}))
