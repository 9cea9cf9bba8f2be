"""How server-side apply treats each field of the served kinds: the schema's list and map types.

kube-apiserver's field manager (structured-merge-diff) follows the OpenAPI extensions generated from the Go
markers of the API types: ``+listType=map`` with ``+listMapKey`` (``x-kubernetes-list-type: map``) makes a list
an associative list whose items are owned and merged one by one by their keys, ``+listType=set`` a set of
scalars, ``+listType=atomic``, ``+mapType=atomic`` and ``+structType=atomic`` a value owned and replaced whole.
A list without a marker but with ``patchStrategy=merge`` and a ``patchMergeKey`` counts as a map keyed by the
merge key; any other list is atomic, and a map or struct is granular (owned field by field).

The table below gives, for resource.k8s.io (v1; v1beta1 and v1beta2 share every non-atomic list) and the
core kinds the server stores, each field that is not "an atomic list or a granular struct": associative lists
with their keys and the keys' schema defaults (an item that omits a key field is identified by the default,
e.g. a container port's ``protocol`` by ``TCP``; a key field without a default is left out of the item's key),
sets, and atomic structs and maps. ``always`` names the fields a Go object always carries (value structs, and
the pod's ``containers``, which has no ``omitempty``): they exist even when a request leaves them out, so
adding something below them never creates them; upstream marks what a change created with ``.`` in
``managedFields`` and needs to know this.

Strategic merge patch has its own table (``smp``): its patch merge keys are not these list-map keys for
every list (container ports merge by ``containerPort`` alone there; a pod's ``hostIPs`` and a container's
``resizePolicy`` merge by key there but are atomic here).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

NodeKind = Literal["struct", "list-map", "set", "atomic"]


@dataclass(frozen=True, slots=True)
class FieldType:
    """The schema of one value: a struct's fields with their own types (an undeclared field is a granular struct
    if it holds an object, else atomic), a list's item type and keys."""

    kind: NodeKind = "struct"
    fields: Mapping[str, FieldType] = field(default_factory=dict)
    always: Mapping[str, Any] = field(default_factory=dict)  # field -> the empty value it has when unset
    keys: tuple[str, ...] = ()
    key_defaults: Mapping[str, Any] = field(default_factory=dict)
    item: FieldType | None = None  # the items of a list-map or set
    sorted_keys: tuple[str, ...] = ()  # the keys by name, as an item's path element lists them
    values: FieldType | None = None  # the type of every key of a map (a schema's additionalProperties)

    def child(self, name: str) -> FieldType:
        found = self.fields.get(name)
        if found is not None:
            return found
        return self.values if self.values is not None else STRUCT


@dataclass(frozen=True, slots=True)
class KindSchema:
    """The apply schema of a kind that brings its own (a custom resource's, from its CRD), in place of the
    table below: its type, and whether it has a status subresource."""

    node: FieldType
    status_subresource: bool


STRUCT = FieldType()
ATOMIC = FieldType("atomic")
SET = FieldType("set", item=ATOMIC)


def struct(always: tuple[str, ...] = (), **fields: FieldType) -> FieldType:
    return FieldType("struct", fields, {name: {} for name in always})


def list_map(*keys: str, no_default: tuple[str, ...] = (), defaults: Mapping[str, Any] | None = None,
             always: tuple[str, ...] = (), atomic_items: bool = False, item_fields: Mapping[str, FieldType] | None = None,
             **fields: FieldType) -> FieldType:
    """An associative list. Its key fields default to "" (string keys with ``default: ""`` in the schema)
    unless listed in ``no_default`` or given in ``defaults``."""
    key_defaults = {k: "" for k in keys if k not in no_default} | dict(defaults or {})
    item = ATOMIC if atomic_items else struct(always, **{**(item_fields or {}), **fields})
    return FieldType("list-map", keys=keys, key_defaults=key_defaults, item=item, sorted_keys=tuple(sorted(keys)))


OBJECT_META = struct(finalizers=SET, ownerReferences=list_map("uid", atomic_items=True))
_LABEL_SELECTOR = ATOMIC  # metav1.LabelSelector: +structType=atomic
_NODE_SELECTOR = ATOMIC  # core NodeSelector: +structType=atomic
_LOCAL_REF = ATOMIC  # LocalObjectReference, SecretReference, ObjectReference, ...: +structType=atomic
_RESOURCE_REQUIREMENTS = struct(claims=list_map("name"))

_CONTAINER_FIELDS = {
    "env": list_map("name", valueFrom=struct(configMapKeyRef=ATOMIC, secretKeyRef=ATOMIC, fieldRef=ATOMIC,
                                             resourceFieldRef=ATOMIC, fileKeyRef=ATOMIC)),
    "ports": list_map("containerPort", "protocol", defaults={"containerPort": 0, "protocol": "TCP"}),
    "volumeMounts": list_map("mountPath"),
    "volumeDevices": list_map("devicePath"),
    "resources": _RESOURCE_REQUIREMENTS,
}
_CONTAINERS = list_map("name", always=("resources",), item_fields=_CONTAINER_FIELDS)

_VOLUME = {
    "ephemeral": struct(volumeClaimTemplate=struct(
        ("metadata", "spec"), metadata=OBJECT_META,
        spec=struct(("resources",), selector=_LABEL_SELECTOR, dataSource=ATOMIC))),
    "csi": struct(nodePublishSecretRef=_LOCAL_REF),
    **{source: struct(secretRef=_LOCAL_REF)
       for source in ("cephfs", "cinder", "flexVolume", "iscsi", "rbd", "scaleIO", "storageos")},
    "projected": STRUCT,  # its sources are an atomic list
}

_POD_SPEC = FieldType("struct", {
    "containers": _CONTAINERS, "initContainers": _CONTAINERS, "ephemeralContainers": _CONTAINERS,
    "volumes": list_map("name", item_fields=_VOLUME),
    "imagePullSecrets": list_map("name", atomic_items=True),
    "hostAliases": list_map("ip"),
    "topologySpreadConstraints": list_map("topologyKey", "whenUnsatisfiable", labelSelector=_LABEL_SELECTOR),
    "resourceClaims": list_map("name"),
    "schedulingGates": list_map("name"),
    "nodeSelector": ATOMIC,  # +mapType=atomic
    "affinity": struct(nodeAffinity=struct(requiredDuringSchedulingIgnoredDuringExecution=_NODE_SELECTOR)),
    "resources": _RESOURCE_REQUIREMENTS,
}, {"containers": []})

_POD_STATUS = struct(conditions=list_map("type"), podIPs=list_map("ip"), resourceClaimStatuses=list_map("name"),
                     resources=_RESOURCE_REQUIREMENTS)

_CLAIM_SPEC = struct(("devices",))
_CLAIM_STATUS = struct(
    devices=list_map("driver", "device", "pool", "shareID", no_default=("shareID",),
                     conditions=list_map("type"), data=ATOMIC),
    reservedFor=list_map("uid"),
    allocation=struct(("devices",), nodeSelector=_NODE_SELECTOR),
)

KINDS: dict[str, FieldType] = {
    "DeviceClass": struct(("metadata", "spec"), metadata=OBJECT_META),
    "ResourceClaim": struct(("metadata", "spec", "status"), metadata=OBJECT_META, spec=_CLAIM_SPEC,
                            status=_CLAIM_STATUS),
    "ResourceClaimTemplate": struct(("metadata", "spec"), metadata=OBJECT_META,
                                    spec=struct(("metadata", "spec"), metadata=OBJECT_META, spec=_CLAIM_SPEC)),
    "ResourceSlice": struct(("metadata", "spec"), metadata=OBJECT_META,
                            spec=struct(("pool",), nodeSelector=_NODE_SELECTOR)),
    "DeviceTaintRule": struct(("metadata", "spec", "status"), metadata=OBJECT_META,
                              spec=struct(("taint",)), status=struct(conditions=list_map("type"))),
    "Pod": struct(("metadata", "spec", "status"), metadata=OBJECT_META, spec=_POD_SPEC, status=_POD_STATUS),
    "Node": struct(("metadata", "spec", "status"), metadata=OBJECT_META, spec=struct(podCIDRs=SET),
                   status=struct(("daemonEndpoints", "nodeInfo"), daemonEndpoints=struct(("kubeletEndpoint",)),
                                 addresses=list_map("type"), conditions=list_map("type"))),
    "Namespace": struct(("metadata", "spec", "status"), metadata=OBJECT_META,
                        status=struct(conditions=list_map("type"))),
    # ports: +listType=map by port and protocol; selector: +mapType=atomic; the IP lists are atomic
    "Service": struct(("metadata", "spec", "status"), metadata=OBJECT_META,
                      spec=struct(ports=list_map("port", "protocol", defaults={"port": 0, "protocol": "TCP"}),
                                  selector=ATOMIC),
                      status=struct(conditions=list_map("type"))),
    "Event": struct(("metadata", "involvedObject", "source"), metadata=OBJECT_META, involvedObject=_LOCAL_REF,
                    related=_LOCAL_REF),
}

# The workloads: their pod template's spec is a pod's; selectors atomic; conditions by type
_TEMPLATE = struct(("metadata", "spec"), metadata=OBJECT_META, spec=_POD_SPEC)
_WORKLOAD_STATUS = struct(conditions=list_map("type"))
KINDS.update({
    "Deployment": struct(("metadata", "spec", "status"), metadata=OBJECT_META,
                         spec=struct(("template", "strategy"), selector=_LABEL_SELECTOR, template=_TEMPLATE),
                         status=_WORKLOAD_STATUS),
    "ReplicaSet": struct(("metadata", "spec", "status"), metadata=OBJECT_META,
                         spec=struct(("template",), selector=_LABEL_SELECTOR, template=_TEMPLATE),
                         status=_WORKLOAD_STATUS),
    "StatefulSet": struct(("metadata", "spec", "status"), metadata=OBJECT_META,
                          spec=struct(("template", "updateStrategy"), selector=_LABEL_SELECTOR, template=_TEMPLATE),
                          status=_WORKLOAD_STATUS),
    "DaemonSet": struct(("metadata", "spec", "status"), metadata=OBJECT_META,
                        spec=struct(("template", "updateStrategy"), selector=_LABEL_SELECTOR, template=_TEMPLATE),
                        status=_WORKLOAD_STATUS),
    "Job": struct(("metadata", "spec", "status"), metadata=OBJECT_META,
                  spec=struct(("template",), selector=_LABEL_SELECTOR, template=_TEMPLATE), status=_WORKLOAD_STATUS),
    "CronJob": struct(("metadata", "spec", "status"), metadata=OBJECT_META, spec=struct(
        ("jobTemplate",), jobTemplate=struct(spec=struct(("template",), selector=_LABEL_SELECTOR,
                                                         template=_TEMPLATE)))),
})


# ReplicationControllers (a map selector, +mapType=atomic) and HorizontalPodAutoscalers (conditions by type;
# metrics atomic)
KINDS.update({
    "ReplicationController": struct(("metadata", "spec", "status"), metadata=OBJECT_META,
                                    spec=struct(selector=ATOMIC, template=_TEMPLATE), status=_WORKLOAD_STATUS),
    "HorizontalPodAutoscaler": struct(("metadata", "spec", "status"), metadata=OBJECT_META,
                                      spec=struct(("scaleTargetRef",)), status=struct(conditions=list_map("type"))),
})
# admissionregistration.k8s.io/v1: webhooks and match conditions by name (+listType=map), rules atomic
_WEBHOOKS = list_map("name", always=("clientConfig",), namespaceSelector=_LABEL_SELECTOR,
                     objectSelector=_LABEL_SELECTOR, matchConditions=list_map("name"))
_MATCH_RESOURCES = struct(namespaceSelector=_LABEL_SELECTOR, objectSelector=_LABEL_SELECTOR)
KINDS.update({
    **{kind: struct(("metadata",), metadata=OBJECT_META, webhooks=_WEBHOOKS)
       for kind in ("ValidatingWebhookConfiguration", "MutatingWebhookConfiguration")},
    "ValidatingAdmissionPolicy": struct(
        ("metadata", "spec", "status"), metadata=OBJECT_META,
        spec=struct(matchConditions=list_map("name"), variables=list_map("name"), matchConstraints=_MATCH_RESOURCES),
        status=struct(conditions=list_map("type"))),
    "ValidatingAdmissionPolicyBinding": struct(
        ("metadata", "spec"), metadata=OBJECT_META,
        spec=struct(validationActions=SET, matchResources=_MATCH_RESOURCES, paramRef=struct(selector=_LABEL_SELECTOR))),
})


def kind_type(kind: Any) -> FieldType:
    """The schema of a kind; an unknown kind is a struct with atomic lists (as an untyped object)."""
    return KINDS.get(kind, STRUCT) if isinstance(kind, str) else STRUCT


def skeleton(node: FieldType) -> dict[str, Any]:
    """The fields an empty Go object of this type carries (kube-apiserver compares a create against it)."""
    out: dict[str, Any] = {}
    for name, empty in node.always.items():
        out[name] = skeleton(node.child(name)) if isinstance(empty, dict) else empty
    return out
