"""NodeResourcesFit: the pod's requests must fit what the node has left; LeastAllocated scoring.

Filter (``fitsRequest``): ``Too many pods`` when the node already runs ``allocatable.pods`` pods; then,
if the pod requests anything, each of cpu, memory and ephemeral-storage it requests, and each other
(scalar) resource with a non-zero request, must fit ``allocatable - requested`` (``Insufficient <name>``).
A request above the node's whole allocatable makes the status UnschedulableAndUnresolvable. An extended
resource the node does not advertise but a DeviceClass maps (DRAExtendedResource) is left to
DynamicResources.

Score (weight 1) by the scoring strategy of the plugin's args (default LeastAllocated over cpu and memory,
weight 1 each): per configured resource with allocatable > 0, requested = the node's non-zero requests + the
pod's (cpu and memory use the scoring defaults of 100m / 200Mi for containers without requests; an extended
resource the pod does not request is left out; one the node does not advertise but a DeviceClass maps —
DRAExtendedResource — counts the node's devices of that class, see :mod:`.dra_extended`),

* LeastAllocated: ``(allocatable - requested) * 100 / allocatable`` (0 when over),
* MostAllocated: ``min(requested, allocatable) * 100 / allocatable`` (bin packing),
* RequestedToCapacityRatio: the broken-linear shape over ``requested * 100 / allocatable`` (scores 0–10 scaled
  to 0–100; over-allocated counts as 100 % used), resources scoring 0 left out, the mean rounded,

and the weighted mean of the per-resource scores (integer division, as upstream). ``ignoredResources`` and
``ignoredResourceGroups`` (the part of an extended resource's name before ``/``) are not checked by Filter.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from dralloc.scheduler.framework import MAX_NODE_SCORE, Code, Cycle, Plugin, Status, interned
from dralloc.scheduler.nodeinfo import NodeInfo
from dralloc.scheduler.plugins.node_resources_fit.dra_extended import device_totals

MAX_CUSTOM_PRIORITY_SCORE = 10
MAX_UTILIZATION = 100
DEFAULT_RESOURCES: tuple[tuple[str, int], ...] = (("cpu", 1), ("memory", 1))

NAME = "NodeResourcesFit"
TOO_MANY_PODS = "Too many pods"
NATIVE = ("cpu", "memory", "ephemeral-storage")


def insufficient(request: dict[str, int], node: NodeInfo, delegated: frozenset[str] = frozenset(),
                 ignored: Callable[[str], bool] | None = None) -> tuple[list[str], bool]:
    """(reasons, unresolvable) for a request on a node, in ``fitsRequest``'s order; ``ignored`` names the
    extended resources the plugin's args leave out."""
    reasons: list[str] = []
    unresolvable = False
    if len(node.pods) + 1 > node.allowed_pods:
        reasons.append(TOO_MANY_PODS)
    if not request:
        return reasons, unresolvable
    alloc = node.allocatable
    used = node.requested
    for name in NATIVE:
        want = request.get(name, 0)
        if want > 0 and want > alloc.get(name, 0) - used.get(name, 0):
            reasons.append(f"Insufficient {name}")
            unresolvable |= want > alloc.get(name, 0)
    for name, want in request.items():
        if name in NATIVE or name == "pods" or want == 0:
            continue
        have = alloc.get(name, 0)
        if have == 0 and name in delegated:
            continue
        if ignored is not None and ignored(name):
            continue
        if want > have - used.get(name, 0):
            reasons.append(f"Insufficient {name}")
            unresolvable |= want > have
    return reasons, unresolvable


def least_requested(requested: int, capacity: int) -> int:
    if capacity == 0 or requested > capacity:
        return 0
    return (capacity - requested) * MAX_NODE_SCORE // capacity


def most_requested(requested: int, capacity: int) -> int:
    if capacity == 0:
        return 0
    return min(requested, capacity) * MAX_NODE_SCORE // capacity


def broken_linear(shape: Sequence[tuple[int, int]]) -> Callable[[int], int]:
    """``helper.BuildBrokenLinearFunction`` over (utilization, score) points sorted by utilization."""
    def score(p: int) -> int:
        for i, (utilization, value) in enumerate(shape):
            if p <= utilization:
                if i == 0:
                    return value
                u0, s0 = shape[i - 1]
                return s0 + _go_div((value - s0) * (p - u0), utilization - u0)
        return shape[-1][1]
    return score


def _go_div(a: int, b: int) -> int:
    """Go's integer division truncates toward zero (a falling shape gives negative numerators)."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


Scorer = Callable[[list[int], list[int], list[int]], int]


def weighted_scorer(per_resource: Callable[[int, int], int]) -> Scorer:
    """leastResourceScorer / mostResourceScorer: the weighted mean over resources with allocatable > 0."""
    def score(requested: list[int], allocatable: list[int], weights: list[int]) -> int:
        total = weight_sum = 0
        for req, alloc, weight in zip(requested, allocatable, weights):
            if alloc == 0:
                continue
            total += per_resource(req, alloc) * weight
            weight_sum += weight
        return total // weight_sum if weight_sum else 0
    return score


def ratio_scorer(shape: Sequence[tuple[int, int]]) -> Scorer:
    """requestedToCapacityRatioScorer: resources scoring 0 are left out, the mean rounded."""
    scaled = [(u, s * (MAX_NODE_SCORE // MAX_CUSTOM_PRIORITY_SCORE)) for u, s in shape]
    raw = broken_linear(scaled)

    def per_resource(requested: int, capacity: int) -> int:
        if capacity == 0 or requested > capacity:
            return raw(MAX_UTILIZATION)
        return raw(requested * MAX_UTILIZATION // capacity)

    def score(requested: list[int], allocatable: list[int], weights: list[int]) -> int:
        total = weight_sum = 0
        for req, alloc, weight in zip(requested, allocatable, weights):
            if alloc == 0:
                continue
            value = per_resource(req, alloc)
            if value > 0:
                total += value * weight
                weight_sum += weight
        if weight_sum == 0:
            return 0
        return int(_round_half_away(total, weight_sum))
    return score


def _round_half_away(a: int, b: int) -> int:
    """Go's math.Round of a/b for non-negative a, b: halves round up."""
    return (2 * a + b) // (2 * b)


DraTotals = Callable[[str], tuple[int, int]]


def allocatable_and_requested(node: NodeInfo, resource: str, pod_request: int, use_requested: bool,
                              dra: DraTotals | None = None) -> tuple[int, int]:
    """``calculateResourceAllocatableRequest``: (allocatable, node's requests + the pod's); (0, 0) for an
    extended resource the pod does not request or the node does not have. ``dra``: for an extended resource
    the node does not advertise, the node's (devices, allocated devices) of the DeviceClass that maps it
    (see :mod:`.dra_extended`)."""
    native = resource in ("cpu", "memory", "ephemeral-storage")
    if pod_request == 0 and not native:
        return 0, 0
    if resource == "cpu":
        used = node.requested.get("cpu", 0) if use_requested else node.nonzero_cpu
        return node.allocatable.get("cpu", 0), used + pod_request
    if resource == "memory":
        used = node.requested.get("memory", 0) if use_requested else node.nonzero_memory
        return node.allocatable.get("memory", 0), used + pod_request
    if dra is not None and node.allocatable.get(resource, 0) == 0:
        devices, allocated = dra(resource)
        if devices > 0:
            return devices, allocated + pod_request
    if resource in node.allocatable:
        return node.allocatable[resource], node.requested.get(resource, 0) + pod_request
    return 0, 0


def dra_totals(cycle: Cycle, node: NodeInfo) -> DraTotals:
    """The node's device counts for an extended resource a DeviceClass maps ((0, 0) when none does, and
    always without DRAExtendedResource, whose mapping is then empty). Read only for an extended resource the
    pod requests and the node does not advertise."""

    def totals(resource: str) -> tuple[int, int]:
        snapshot = cycle.snapshot
        class_name = snapshot.extended_mapping.get(resource)
        return device_totals(snapshot, node, class_name) if class_name is not None else (0, 0)
    return totals


def pod_requests(cycle: Cycle, resources: Sequence[str], use_requested: bool) -> list[int]:
    """The pod's request of each resource; cpu and memory with the scoring defaults unless ``use_requested``."""
    pod = cycle.pod
    out = []
    for r in resources:
        if r == "cpu" and not use_requested:
            out.append(pod.nonzero_cpu)
        elif r == "memory" and not use_requested:
            out.append(pod.nonzero_memory)
        else:
            out.append(pod.request.get(r, 0))
    return out


class NodeResourcesFit(Plugin):
    name = NAME
    weight = 1
    has_filter = True
    has_score = True

    def __init__(self, strategy: str = "LeastAllocated", resources: Sequence[tuple[str, int]] = DEFAULT_RESOURCES,
                 shape: Sequence[tuple[int, int]] = (), ignored_resources: Sequence[str] = (),
                 ignored_groups: Sequence[str] = ()) -> None:
        """The plugin's args (NodeResourcesFitArgs): the scoring strategy with its (resource, weight) list and,
        for RequestedToCapacityRatio, its (utilization, score) shape; the extended resources Filter ignores."""
        self.strategy = strategy
        self.resources = [r for r, _ in resources]
        self.weights = [w for _, w in resources]
        if strategy == "MostAllocated":
            self.scorer = weighted_scorer(most_requested)
        elif strategy == "RequestedToCapacityRatio":
            self.scorer = ratio_scorer(shape)
        else:
            self.scorer = weighted_scorer(least_requested)
        self.ignored = frozenset(ignored_resources)
        self.ignored_groups = frozenset(ignored_groups)
        self._default_scoring = strategy == "LeastAllocated" and tuple(resources) == DEFAULT_RESOURCES

    def is_ignored(self, resource: str) -> bool:
        return resource in self.ignored or (bool(self.ignored_groups) and "/" in resource
                                            and resource.split("/", 1)[0] in self.ignored_groups)

    def filter(self, cycle: Cycle, node: NodeInfo) -> Status | None:
        pod = cycle.pod
        if len(node.pods) + 1 <= node.allowed_pods:
            # Fast path: nothing requested, or everything fits with room to spare.
            req = pod.request
            if not req:
                return None
            alloc, used = node.allocatable, node.requested
            for name, want in req.items():  # a plain loop: this runs for every node a pod is filtered on
                if want > alloc.get(name, 0) - used.get(name, 0):
                    break
            else:
                return None
        ignored = self.is_ignored if self.ignored or self.ignored_groups else None
        reasons, unresolvable = insufficient(pod.request, node, cycle.snapshot.dra_extended_resources, ignored)
        if not reasons:
            return None
        return interned(Code.UNRESOLVABLE if unresolvable else Code.UNSCHEDULABLE, tuple(reasons), NAME)

    def score(self, cycle: Cycle, node: NodeInfo) -> int:
        pod = cycle.pod
        if self._default_scoring:  # the default profile's case, without the general machinery
            total = weight = 0
            cpu = node.allocatable.get("cpu", 0)
            if cpu:
                total += least_requested(node.nonzero_cpu + pod.nonzero_cpu, cpu)
                weight += 1
            memory = node.allocatable.get("memory", 0)
            if memory:
                total += least_requested(node.nonzero_memory + pod.nonzero_memory, memory)
                weight += 1
            return total // weight if weight else 0
        wants = pod_requests(cycle, self.resources, use_requested=False)
        requested, allocatable = [], []
        dra = dra_totals(cycle, node)
        for resource, want in zip(self.resources, wants):
            alloc, req = allocatable_and_requested(node, resource, want, use_requested=False, dra=dra)
            allocatable.append(alloc)
            requested.append(req if alloc else 0)
        return self.scorer(requested, allocatable, self.weights)
