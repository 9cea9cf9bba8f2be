"""Extended resources backed by DRA (DRAExtendedResource): the special claim a pod's container requests
become on a node that does not advertise the resource.

A resource is backed by DRA when a DeviceClass maps it — through ``spec.extendedResourceName`` or the
implicit ``deviceclass.resource.kubernetes.io/<class>`` — (the newest class wins a duplicate mapping).
On a node whose allocatable has none of it, each long-lived container (regular or sidecar) gets a
request ``container-<i>-request-<j>`` (i indexes init containers then containers, j the resource among the
container's sorted request names) for ``count`` devices of the class; a non-sidecar init container first
reuses the requests of the long-lived containers after it, and the largest of the init containers' own
requests stands for all of them. Requests are sorted by name.
"""

from __future__ import annotations

from dataclasses import dataclass

from dralloc.api.core_v1 import Container, Pod
from dralloc.api.meta import ObjectMeta, OwnerReference
from dralloc.api.resource_v1 import (
    DeviceClaim,
    DeviceClass,
    DeviceRequest,
    ExactDeviceRequest,
    ResourceClaim,
    ResourceClaimSpec,
)

IMPLICIT_PREFIX = "deviceclass.resource.kubernetes.io/"
CLAIM_ANNOTATION = "resource.kubernetes.io/extended-resource-claim"


def class_mapping(classes: list[DeviceClass]) -> dict[str, str]:
    """Extended resource name → DeviceClass name; on a duplicate mapping the newest class wins (ties: name)."""
    ordered = sorted(classes, key=lambda c: (c.metadata.creation_timestamp or "", c.metadata.name or ""))
    out: dict[str, str] = {}
    for c in ordered:
        name = c.metadata.name or ""
        out[IMPLICIT_PREFIX + name] = name
        if c.spec is not None and c.spec.extended_resource_name:
            out[c.spec.extended_resource_name] = name
    return out


@dataclass(frozen=True)
class RequestMapping:
    container_name: str
    resource_name: str
    request_name: str


def _count(container: Container, resource: str) -> int:
    res = container.resources
    requests = dict(res.limits or {}) if res is not None else {}
    if res is not None:
        requests.update(res.requests or {})
    q = requests.get(resource)
    if q is None:
        return 0
    v = q.as_int64()
    return v or 0


def _request_index(container: Container, resource: str) -> int:
    res = container.resources
    names = sorted(set((res.limits or {}) | (res.requests or {}))) if res is not None else []
    return names.index(resource) if resource in names else 0


def _container_request(containers: list[Container], i: int, resource: str, class_name: str,
                       reusable: list[DeviceRequest | None]) -> tuple[DeviceRequest | None, list[RequestMapping]]:
    """Container i's request for ``resource`` after using what ``reusable`` requests already provide."""
    c = containers[i]
    want = _count(c, resource)
    if want == 0:
        return None, []
    found: list[RequestMapping] = []
    have = 0
    for r in reusable:
        if r is None or r.exactly is None:
            continue
        have += r.exactly.count or 0
        found.append(RequestMapping(c.name, resource, r.name))
        if have >= want:
            return None, found
    name = f"container-{i}-request-{_request_index(c, resource)}"
    found.append(RequestMapping(c.name, resource, name))
    return DeviceRequest(name=name, exactly=ExactDeviceRequest(
        device_class_name=class_name, allocation_mode="ExactCount", count=want - have)), found


def requests_and_mappings(pod: Pod, resources: list[str], mapping: dict[str, str]
                          ) -> tuple[list[DeviceRequest], list[RequestMapping]]:
    spec = pod.spec
    inits = list(spec.init_containers or ())
    containers = inits + list(spec.containers or ())
    long_lived = [i for i, c in enumerate(containers) if i >= len(inits) or c.restart_policy == "Always"]
    short_lived = [i for i in range(len(inits)) if containers[i].restart_policy != "Always"]
    requests: list[DeviceRequest] = []
    mappings: list[RequestMapping] = []
    for resource in sorted(resources):
        class_name = mapping.get(resource)
        if class_name is None:
            continue

        long_requests: list[DeviceRequest | None] = [None] * len(containers)
        long_mappings: list[RequestMapping] = []
        for i in long_lived:
            req, found = _container_request(containers, i, resource, class_name, [])
            long_requests[i] = req
            long_mappings.extend(found)
        biggest: DeviceRequest | None = None
        short_names: set[str] = set()
        short_mappings: list[RequestMapping] = []
        for i in short_lived:
            req, found = _container_request(containers, i, resource, class_name, long_requests[i:])
            if req is not None:
                short_names.add(req.name)
                if biggest is None or (biggest.exactly and req.exactly
                                       and (biggest.exactly.count or 0) < (req.exactly.count or 0)):
                    biggest = req
            short_mappings.extend(found)
        if biggest is not None and len(short_names) > 1:
            short_names.discard(biggest.name)
            short_mappings = [RequestMapping(m.container_name, m.resource_name, biggest.name)
                              if m.request_name in short_names else m for m in short_mappings]
        if biggest is not None:
            requests.append(biggest)
        requests.extend(r for r in long_requests if r is not None)
        mappings.extend(long_mappings)
        mappings.extend(short_mappings)
    requests.sort(key=lambda r: r.name)
    return requests, mappings


def extended_claim_owner(claim: ResourceClaim) -> str | None:
    """The uid of the pod a claim for DRA-backed extended resources was made for (the annotation and the
    pod as controlling owner); None for any other claim."""
    if (claim.metadata.annotations or {}).get(CLAIM_ANNOTATION) != "true":
        return None
    return next((o.uid for o in claim.metadata.owner_references or () if o.controller and o.kind == "Pod"), None)


def special_claim(pod: Pod, requests: list[DeviceRequest]) -> ResourceClaim:
    """The in-memory claim for the pod's DRA-backed extended resources (created under
    ``<pod>-extended-resources-`` when the pod is bound)."""
    meta = pod.metadata
    return ResourceClaim(
        metadata=ObjectMeta(
            name=f"{meta.name}-extended-resources",  # in memory only; the bound claim gets a generated name
            generate_name=f"{meta.name}-extended-resources-",
            namespace=meta.namespace or "default",
            annotations={CLAIM_ANNOTATION: "true"},
            owner_references=[OwnerReference(api_version="v1", kind="Pod", name=meta.name or "",
                                             uid=meta.uid or "", controller=True, block_owner_deletion=True)],
        ),
        spec=ResourceClaimSpec(devices=DeviceClaim(requests=requests)),
    )
