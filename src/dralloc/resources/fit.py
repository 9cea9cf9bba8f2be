"""Does a pod fit a node? kube-scheduler's NodeResourcesFit arithmetic plus the node-allocatable
footprint of the pod's DRA claims (KEP-5517).

* A pod's request is what ``k8s.io/component-helpers/resource.PodRequests`` computes: the sum of its app
  containers, raised to the largest init container (an init container runs together with the restartable
  "sidecar" init containers started before it; sidecars also run with the app containers), pod-level
  ``spec.resources.requests`` replacing cpu, memory and hugepages-* when set, plus ``spec.overhead``. A
  container that sets a limit but no request requests its limit (API defaulting); one whose resources the
  kubelet reports (an in-place resize) counts as ``counted_container_requests`` says.
* Each claim of the pod adds its footprint (``claim_footprint``), once per pod however many containers use it.
  With pod-level resources the pod-level value stays the pod's footprint, and container requests plus claim
  resources must fit into it.
* The node offers ``status.allocatable`` minus the requests of the pods already on it. Like the scheduler,
  only dimensions the pod requests (> 0) are checked, and the pod count against ``allocatable.pods``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from dralloc.api.core_v1 import Container, ContainerStatus, Node, Pod
from dralloc.api.resource_v1 import ResourceClaim, ResourceSlice
from dralloc.resources.footprint import DeviceIndex, claim_footprint
from dralloc.resources.resourcelist import ResourceList

POD_LEVEL_RESOURCES = ("cpu", "memory")
HUGEPAGES_PREFIX = "hugepages-"


def single_container_requests(c: Container) -> ResourceList:
    """One container's spec request (a limit alone is the request, as API defaulting makes it)."""
    res = c.resources
    if res is None:
        return ResourceList()
    values = dict(res.limits or {})
    values.update(res.requests or {})  # a request wins; a limit alone is the request (API defaulting)
    return ResourceList(values)


def container_requests(pod: Pod, non_missing: ResourceList | None = None) -> ResourceList:
    """The pod's request from its containers alone (no pod-level resources, no overhead). ``non_missing``:
    values for what a container does not request at all (kube-scheduler's non-zero defaults), added after
    its status is read."""
    spec = pod.spec
    statuses = _container_statuses(pod)
    infeasible = resize_infeasible(pod) if statuses else False
    reqs = ResourceList()
    for c in spec.containers or ():
        reqs = reqs + _with_defaults(counted_container_requests(c, statuses.get(c.name), infeasible), non_missing)
    sidecars = ResourceList()
    init_max = ResourceList()
    for c in spec.init_containers or ():
        if c.restart_policy == "Always":  # a sidecar is resized like an app container
            r = _with_defaults(counted_container_requests(c, statuses.get(c.name), infeasible), non_missing)
            reqs = reqs + r
            sidecars = sidecars + r
            running = sidecars
        else:
            running = _with_defaults(single_container_requests(c), non_missing) + sidecars
        init_max = init_max.max(running)
    return reqs.max(init_max)


def counted_container_requests(c: Container, status: ContainerStatus | None, resize_infeasible: bool) -> ResourceList:
    """The request kube-scheduler counts for a container (InPlacePodVerticalScaling, on since 1.35): once the
    kubelet reports the container's resources, the larger of the spec, the reported and the allocated
    requests, per resource, so that a resize in flight holds room for both sizes; when the pod's resize is
    ``Infeasible`` (it will not happen), what is reported and allocated only."""
    if status is None or status.resources is None:
        return single_container_requests(c)
    reported = ResourceList(status.resources.requests or {}).max(ResourceList(status.allocated_resources or {}))
    return reported if resize_infeasible else single_container_requests(c).max(reported)


def resize_infeasible(pod: Pod) -> bool:
    """Whether the pod's ``PodResizePending`` condition says its resize is ``Infeasible``."""
    for condition in (pod.status.conditions if pod.status is not None else None) or ():
        if condition.type == "PodResizePending":
            return condition.reason == "Infeasible"
    return False


def _container_statuses(pod: Pod) -> dict[str, ContainerStatus]:
    status = pod.status
    if status is None or not (status.container_statuses or status.init_container_statuses):
        return {}
    return {s.name: s for s in [*(status.container_statuses or ()), *(status.init_container_statuses or ())]}


def _with_defaults(requests: ResourceList, non_missing: ResourceList | None) -> ResourceList:
    if not non_missing:
        return requests
    missing = {k: non_missing[k] for k in non_missing if k not in requests}
    return requests + ResourceList(missing) if missing else requests


def pod_requests(pod: Pod, non_missing: ResourceList | None = None) -> ResourceList:
    """PodRequests as NodeResourcesFit sees it (no DRA footprint)."""
    reqs = container_requests(pod, non_missing)
    pod_level = _pod_level(pod)
    if pod_level:
        reqs = _replace(reqs, pod_level)
    if pod.spec.overhead:
        reqs = reqs + ResourceList(pod.spec.overhead)
    return reqs


def _pod_level(pod: Pod) -> ResourceList:
    res = pod.spec.resources
    if res is None or not res.requests:
        return ResourceList()
    # IsSupportedPodLevelResource: cpu, memory and the hugepages sizes (a pod-level hugepages request
    # replaces its containers' as cpu and memory do)
    return ResourceList({k: v for k, v in res.requests.items()
                         if k in POD_LEVEL_RESOURCES or k.startswith(HUGEPAGES_PREFIX)})


def _replace(base: ResourceList, override: ResourceList) -> ResourceList:
    values = {k: base[k] for k in base if k not in override}
    values.update({k: override[k] for k in override})
    return ResourceList(values)


def pod_claims(pod: Pod, claims: Mapping[tuple[str, str], ResourceClaim]) -> list[tuple[ResourceClaim, int]]:
    """(claim, number of the pod's containers referencing it) for each claim of the pod that is known."""
    ns = pod.metadata.namespace or "default"
    generated = {s.name: s.resource_claim_name for s in (pod.status.resource_claim_statuses or ())} \
        if pod.status is not None else {}
    containers = list(pod.spec.containers or ()) + list(pod.spec.init_containers or ())
    out = []
    seen: set[str] = set()
    for pc in pod.spec.resource_claims or ():
        name = pc.resource_claim_name or generated.get(pc.name)
        if not name or name in seen:
            continue
        seen.add(name)
        claim = claims.get((ns, name))
        if claim is None:
            continue
        users = sum(1 for c in containers
                    if c.resources is not None and any(r.name == pc.name for r in c.resources.claims or ()))
        out.append((claim, users))
    return out


@dataclass
class PodFootprint:
    """What a pod takes from a node: its request including claim resources, and any pod-level violations."""

    total: ResourceList
    claims: ResourceList
    problems: list[str] = field(default_factory=list)


def pod_footprint(pod: Pod, claims: Mapping[tuple[str, str], ResourceClaim] | None = None,
                  devices: DeviceIndex | None = None) -> PodFootprint:
    dra = ResourceList()
    if claims and devices is not None:
        for claim, users in pod_claims(pod, claims):
            dra = dra + claim_footprint(claim, devices, users)
    standard = container_requests(pod)
    pod_level = _pod_level(pod)
    problems = []
    total = standard + dra
    if pod_level:
        for name in pod_level:
            need = total.nanos(name)
            if need > pod_level.nanos(name):
                problems.append(f"pod-level {name} request {pod_level[name]} is less than its containers' "
                                f"{standard[name] if name in standard else 0} plus claim resources "
                                f"{dra[name] if name in dra else 0}")
        total = _replace(total, pod_level)
    if pod.spec.overhead:
        total = total + ResourceList(pod.spec.overhead)
    return PodFootprint(total, dra, problems)


@dataclass
class Insufficiency:
    resource: str
    requested: str
    free: str

    def __str__(self) -> str:
        return f"Insufficient {self.resource}: requested {self.requested}, free {self.free}"


@dataclass
class FitResult:
    node: str
    fits: bool
    request: ResourceList
    free: ResourceList
    insufficient: list[Insufficiency] = field(default_factory=list)
    reasons: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"node": self.node, "fits": self.fits, "request": self.request.as_dict(),
                "free": self.free.as_dict(), "reasons": self.reasons}


def node_free(node: Node, pods_on_node: Iterable[Pod] = (),
              claims: Mapping[tuple[str, str], ResourceClaim] | None = None,
              devices: DeviceIndex | None = None) -> ResourceList:
    """Allocatable minus what the given pods (already bound to the node) request, claims included."""
    status = node.status
    alloc = ResourceList((status.allocatable or status.capacity or {}) if status is not None else {})
    used = ResourceList()
    count = 0
    for p in pods_on_node:
        used = used + pod_footprint(p, claims, devices).total
        count += 1
    free = alloc - used
    if "pods" in alloc:
        free = free - ResourceList({"pods": count})
    return free


def node_fit(pod: Pod, node: Node, pods_on_node: Iterable[Pod] = (), claims: Iterable[ResourceClaim] = (),
             slices: Iterable[ResourceSlice] = ()) -> FitResult:
    """Whether ``pod`` fits ``node`` given the pods already there, and if not, which dimensions fail."""
    claim_map = {(c.metadata.namespace or "default", c.metadata.name or ""): c for c in claims}
    devices = DeviceIndex(slices)
    footprint = pod_footprint(pod, claim_map, devices)
    free = node_free(node, pods_on_node, claim_map, devices)
    return check_fit(node.metadata.name or "", footprint, free)


def check_fit(node_name: str, footprint: PodFootprint, free: ResourceList) -> FitResult:
    request = footprint.total
    reasons: list[str] = []
    insufficient: list[Insufficiency] = []
    if "pods" in free and free.nanos("pods") < 10**9:
        reasons.append("Too many pods")
    wanted = ResourceList({k: request[k] for k in request if request.nanos(k) > 0 and k != "pods"})
    if not wanted.less_equal({k: free[k] if k in free else 0 for k in wanted}, missing="zero"):
        for k in wanted:
            if wanted.nanos(k) > free.nanos(k):
                i = Insufficiency(k, str(wanted[k]), str(free[k]) if k in free else "0")
                insufficient.append(i)
                reasons.append(str(i))
    reasons.extend(footprint.problems)
    return FitResult(node_name, not reasons, request, free, insufficient, reasons)


class FastFit:
    """A node's free resources as integers, for checking many pods quickly (the scheduler's hot path)."""

    __slots__ = ("name", "_free", "_pods_left")

    def __init__(self, name: str, free: ResourceList) -> None:
        self.name = name
        self._free = {k: free.nanos(k) for k in free if k != "pods"}
        self._pods_left = free.nanos("pods") // 10**9 if "pods" in free else None

    @staticmethod
    def prepare(request: ResourceList) -> tuple[tuple[str, int], ...]:
        """The positive dimensions of a request, precomputed once per pod."""
        return tuple((k, request.nanos(k)) for k in request if request.nanos(k) > 0 and k != "pods")

    def fits(self, prepared: tuple[tuple[str, int], ...]) -> bool:
        if self._pods_left is not None and self._pods_left < 1:
            return False
        free = self._free
        for name, need in prepared:
            if need > free.get(name, 0):
                return False
        return True
