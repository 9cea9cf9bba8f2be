"""The schema tables of the protobuf decoder (server/protobuf/decoder.py): for each message, its field numbers and what
each field is in the object's JSON form. Written from the Kubernetes API's generated ``.proto`` files and the
Go types' JSON tags; this module holds the meta.k8s.io/v1 pieces, the core/v1 kinds and the small groups,
server/protobuf/pod.py a Pod's, and server/protobuf/resource.py the resource.k8s.io ones.

A message is a dict ``{field number: "jsonName type [flag]"}`` listed in the Go struct's order (the order the
decoded object's keys come in). The type is Go-like:

* a scalar: ``string``, ``bool``, ``int32``, ``int64`` or ``bytes`` (base64 text in JSON);
* a message with a JSON form of its own: ``Quantity`` (its text), ``Time`` (RFC 3339 in seconds),
  ``MicroTime`` (RFC 3339 with microseconds), ``RawExtension`` and ``FieldsV1`` (the embedded JSON),
  ``IntOrString`` (its int or its string), ``JSONSchemaProps`` (a CRD's OpenAPI schema, read and written by
  server/protobuf/apiextensions.py);
* the name of another message of the same table (its JSON object);
* ``[]T`` for a repeated field, ``map[string]T`` for a map (entries ``{1: key, 2: value}``); a leading ``*``
  says the Go field is a pointer.

As Go's JSON, an empty scalar (``""``, ``0``, ``false``) is left out unless the Go field is a pointer (then
it was set: ``*bool`` false is kept) or its JSON tag has no ``omitempty`` (flag ``always``); flag ``inline``
merges an embedded struct's fields into the object that embeds it (Go's ``json:""``).
"""

from __future__ import annotations

from dataclasses import dataclass

SCALARS = frozenset({"string", "bool", "int32", "int64", "bytes"})
VARINTS = frozenset({"bool", "int32", "int64"})
# Messages whose JSON form is not an object of their fields
SPECIAL = frozenset({"Quantity", "Time", "MicroTime", "RawExtension", "FieldsV1", "IntOrString", "JSONSchemaProps"})
# Those whose JSON nests without bound
UNBOUNDED = frozenset({"JSONSchemaProps"})


@dataclass(frozen=True, slots=True)
class Field:
    name: str  # the JSON name
    type: str  # a scalar, a SPECIAL message or a message of the same table
    repeated: bool = False
    map: bool = False  # map[string]type
    keep_zero: bool = False  # an empty scalar is kept: a pointer, or a JSON tag without omitempty
    inline: bool = False
    varint: bool = False  # an int or bool (wire type 0; a repeated one may come packed, wire type 2)
    wire: int = 2  # the wire type it comes in
    pointer: bool = False  # a Go pointer: written when set (Go writes every other field, empty or not)

Message = dict[int, Field]
Schema = dict[str, Message]


def _field(text: str) -> Field:
    name, kind, *flags = text.split()
    unknown = set(flags) - {"always", "inline"}
    if unknown:
        raise ValueError(f"unknown flags {sorted(unknown)} in {text!r}")
    repeated = kind.startswith("[]")
    is_map = kind.startswith("map[string]")
    kind = kind.removeprefix("[]").removeprefix("map[string]")
    pointer = kind.startswith("*")
    kind = kind.removeprefix("*")
    varint = kind in VARINTS
    return Field(name, kind, repeated, is_map, pointer or "always" in flags, "inline" in flags, varint,
                 0 if varint and not is_map else 2, pointer)


def messages(spec: dict[str, dict[int, str]]) -> Schema:
    """The fields of each message of ``spec`` (see the module docstring for the notation)."""
    return {name: {number: _field(text) for number, text in fields.items()} for name, fields in spec.items()}


def schema(*parts: Schema) -> Schema:
    """One table of the given ones (a later part's message replaces an earlier one of the same name); every
    message a field names must be in it."""
    merged: Schema = {}
    for part in parts:
        merged.update(part)
    for name, fields in merged.items():
        for number, f in fields.items():
            if f.type not in SCALARS and f.type not in SPECIAL and f.type not in merged:
                raise ValueError(f"{name} field {number} names {f.type}, which the table lacks")
    return merged


# --- meta.k8s.io/v1 -----------------------------------------------------------------------------------

META = messages({
    "ObjectMeta": {1: "name string", 2: "generateName string", 3: "namespace string", 4: "selfLink string",
                   5: "uid string", 6: "resourceVersion string", 7: "generation int64",
                   8: "creationTimestamp Time", 9: "deletionTimestamp *Time",
                   10: "deletionGracePeriodSeconds *int64", 11: "labels map[string]string",
                   12: "annotations map[string]string", 13: "ownerReferences []OwnerReference",
                   14: "finalizers []string", 17: "managedFields []ManagedFieldsEntry"},
    "OwnerReference": {5: "apiVersion string always", 1: "kind string always", 3: "name string always",
                       4: "uid string always", 6: "controller *bool", 7: "blockOwnerDeletion *bool"},
    "ManagedFieldsEntry": {1: "manager string", 2: "operation string", 3: "apiVersion string", 4: "time *Time",
                           6: "fieldsType string", 7: "fieldsV1 *FieldsV1", 8: "subresource string"},
    "Condition": {1: "type string always", 2: "status string always", 3: "observedGeneration int64",
                  4: "lastTransitionTime Time", 5: "reason string always", 6: "message string always"},
    # The preconditions are pointers in Go; an empty one is read as none here (no client sends one)
    "Preconditions": {1: "uid string", 2: "resourceVersion string"},
    "DeleteOptions": {1: "gracePeriodSeconds *int64", 2: "preconditions *Preconditions",
                      3: "orphanDependents *bool", 4: "propagationPolicy *string", 5: "dryRun []string",
                      6: "ignoreStoreReadErrorWithClusterBreakingPotential *bool"},
})

# --- core/v1 ------------------------------------------------------------------------------------------

CORE_PIECES = messages({
    "ObjectReference": {1: "kind string", 2: "namespace string", 3: "name string", 4: "uid string",
                        5: "apiVersion string", 6: "resourceVersion string", 7: "fieldPath string"},
    "LocalObjectReference": {1: "name string"},
    "NodeSelector": {1: "nodeSelectorTerms []NodeSelectorTerm"},
    "NodeSelectorTerm": {1: "matchExpressions []NodeSelectorRequirement",
                         2: "matchFields []NodeSelectorRequirement"},
    "NodeSelectorRequirement": {1: "key string always", 2: "operator string always", 3: "values []string"},
    "EventSource": {1: "component string", 2: "host string"},
    "EventSeries": {1: "count int32", 2: "lastObservedTime MicroTime"},
})

CORE = schema(META, CORE_PIECES, messages({
    "Namespace": {1: "metadata ObjectMeta", 2: "spec NamespaceSpec", 3: "status NamespaceStatus"},
    "NamespaceSpec": {1: "finalizers []string"},
    "NamespaceStatus": {1: "phase string", 2: "conditions []NamespaceCondition"},
    "NamespaceCondition": {1: "type string always", 2: "status string always", 4: "lastTransitionTime Time",
                           5: "reason string", 6: "message string"},
    # A Node, every field: what a kubelet's status updates carry
    "Node": {1: "metadata ObjectMeta", 2: "spec NodeSpec", 3: "status NodeStatus"},
    "NodeSpec": {1: "podCIDR string", 7: "podCIDRs []string", 3: "providerID string", 4: "unschedulable bool",
                 5: "taints []Taint", 6: "configSource *NodeConfigSource", 2: "externalID string"},
    "Taint": {1: "key string always", 2: "value string", 3: "effect string always", 4: "timeAdded *Time"},
    "NodeConfigSource": {2: "configMap *ConfigMapNodeConfigSource"},
    "ConfigMapNodeConfigSource": {1: "namespace string always", 2: "name string always", 3: "uid string",
                                  4: "resourceVersion string", 5: "kubeletConfigKey string always"},
    "NodeStatus": {1: "capacity map[string]Quantity", 2: "allocatable map[string]Quantity", 3: "phase string",
                   4: "conditions []NodeCondition", 5: "addresses []NodeAddress",
                   6: "daemonEndpoints NodeDaemonEndpoints", 7: "nodeInfo NodeSystemInfo",
                   8: "images []ContainerImage", 9: "volumesInUse []string", 10: "volumesAttached []AttachedVolume",
                   11: "config *NodeConfigStatus", 12: "runtimeHandlers []NodeRuntimeHandler",
                   13: "features *NodeFeatures", 14: "declaredFeatures []string"},
    "NodeCondition": {1: "type string always", 2: "status string always", 3: "lastHeartbeatTime Time",
                      4: "lastTransitionTime Time", 5: "reason string", 6: "message string"},
    "NodeAddress": {1: "type string always", 2: "address string always"},
    "NodeDaemonEndpoints": {1: "kubeletEndpoint DaemonEndpoint"},
    "DaemonEndpoint": {1: "Port int32 always"},
    "NodeSystemInfo": {1: "machineID string always", 2: "systemUUID string always", 3: "bootID string always",
                       4: "kernelVersion string always", 5: "osImage string always",
                       6: "containerRuntimeVersion string always", 7: "kubeletVersion string always",
                       8: "kubeProxyVersion string always", 9: "operatingSystem string always",
                       10: "architecture string always", 11: "swap *NodeSwapStatus"},
    "NodeSwapStatus": {1: "capacity *int64"},
    "ContainerImage": {1: "names []string", 2: "sizeBytes int64"},
    "AttachedVolume": {1: "name string always", 2: "devicePath string always"},
    "NodeConfigStatus": {1: "assigned *NodeConfigSource", 2: "active *NodeConfigSource",
                         3: "lastKnownGood *NodeConfigSource", 4: "error string"},
    "NodeRuntimeHandler": {1: "name string always", 2: "features *NodeRuntimeHandlerFeatures"},
    "NodeRuntimeHandlerFeatures": {1: "recursiveReadOnlyMounts *bool", 2: "userNamespaces *bool"},
    "NodeFeatures": {1: "supplementalGroupsPolicy *bool"},
    "ConfigMap": {1: "metadata ObjectMeta", 4: "immutable *bool", 2: "data map[string]string",
                  3: "binaryData map[string]bytes"},
    "Secret": {1: "metadata ObjectMeta", 5: "immutable *bool", 2: "data map[string]bytes",
               4: "stringData map[string]string", 3: "type string"},
    "ServiceAccount": {1: "metadata ObjectMeta", 2: "secrets []ObjectReference",
                       3: "imagePullSecrets []LocalObjectReference", 4: "automountServiceAccountToken *bool"},
    "Binding": {1: "metadata ObjectMeta", 2: "target ObjectReference"},
    "Event": {1: "metadata ObjectMeta", 2: "involvedObject ObjectReference", 3: "reason string",
              4: "message string", 5: "source EventSource", 6: "firstTimestamp Time", 7: "lastTimestamp Time",
              8: "count int32", 9: "type string", 10: "eventTime MicroTime", 11: "series *EventSeries",
              12: "action string", 13: "related *ObjectReference", 14: "reportingComponent string always",
              15: "reportingInstance string always"},
}))

# --- events.k8s.io/v1 ---------------------------------------------------------------------------------

EVENTS_V1 = schema(META, CORE_PIECES, messages({
    "Event": {1: "metadata ObjectMeta", 2: "eventTime MicroTime", 3: "series *EventSeries",
              4: "reportingController string", 5: "reportingInstance string", 6: "action string",
              7: "reason string", 8: "regarding ObjectReference", 9: "related *ObjectReference",
              10: "note string", 11: "type string", 12: "deprecatedSource EventSource",
              13: "deprecatedFirstTimestamp Time", 14: "deprecatedLastTimestamp Time",
              15: "deprecatedCount int32"},
    "EventSeries": {1: "count int32 always", 2: "lastObservedTime MicroTime"},
}))

# --- the small groups: what kubectl's and the controllers' typed clients send -------------------------

SCHEDULING_V1 = schema(META, messages({
    "PriorityClass": {1: "metadata ObjectMeta", 2: "value int32 always", 3: "globalDefault bool",
                      4: "description string", 5: "preemptionPolicy *string"},
}))

COORDINATION_V1 = schema(META, messages({
    "Lease": {1: "metadata ObjectMeta", 2: "spec LeaseSpec"},
    "LeaseSpec": {1: "holderIdentity *string", 2: "leaseDurationSeconds *int32", 3: "acquireTime *MicroTime",
                  4: "renewTime *MicroTime", 5: "leaseTransitions *int32", 6: "strategy *string",
                  7: "preferredHolder *string"},
}))

POLICY_V1 = schema(META, messages({"Eviction": {1: "metadata ObjectMeta", 2: "deleteOptions *DeleteOptions"}}))

# The reviews' specs (their status is the server's answer)
AUTHORIZATION_V1 = schema(META, messages({
    "SelfSubjectAccessReview": {1: "metadata ObjectMeta", 2: "spec SelfSubjectAccessReviewSpec"},
    "SelfSubjectAccessReviewSpec": {1: "resourceAttributes *ResourceAttributes",
                                    2: "nonResourceAttributes *NonResourceAttributes"},
    "ResourceAttributes": {1: "namespace string", 2: "verb string", 3: "group string", 4: "version string",
                           5: "resource string", 6: "subresource string", 7: "name string"},
    "NonResourceAttributes": {1: "path string", 2: "verb string"},
    "SelfSubjectRulesReview": {1: "metadata ObjectMeta", 2: "spec SelfSubjectRulesReviewSpec"},
    "SelfSubjectRulesReviewSpec": {1: "namespace string"},
}))

# authentication.k8s.io/v1: the self review, a TokenReview's spec and a TokenRequest's (kubectl create token);
# their statuses are the server's answer
AUTHENTICATION_V1 = schema(META, messages({
    "SelfSubjectReview": {1: "metadata ObjectMeta"},
    "TokenReview": {1: "metadata ObjectMeta", 2: "spec TokenReviewSpec"},
    "TokenReviewSpec": {1: "token string", 2: "audiences []string"},
    "TokenRequest": {1: "metadata ObjectMeta", 2: "spec TokenRequestSpec"},
    "TokenRequestSpec": {1: "audiences []string", 4: "expirationSeconds *int64",
                         3: "boundObjectRef *BoundObjectReference"},
    "BoundObjectReference": {1: "kind string", 2: "apiVersion string", 3: "name string", 4: "uid string"},
}))
