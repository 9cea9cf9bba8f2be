"""NodeResourcesFit: the pod's requests must fit what the node has left; LeastAllocated scoring.

Filter (``fitsRequest``): ``Too many pods`` when the node already runs ``allocatable.pods`` pods; then,
if the pod requests anything, each of cpu, memory and ephemeral-storage it requests, and each other
(scalar) resource with a non-zero request, must fit ``allocatable - requested`` (``Insufficient <name>``).
A request above the node's whole allocatable makes the status UnschedulableAndUnresolvable. An extended
resource the node does not advertise but a DeviceClass maps (DRAExtendedResource) is left to
DynamicResources.

Score (weight 1): per resource r in {cpu, memory}, ``(allocatable - requested) * 100 / allocatable`` with
requested = the node's non-zero requests + the pod's, averaged over the resources with allocatable > 0.
"""

from __future__ import annotations

from dralloc.scheduler.framework import MAX_NODE_SCORE, Code, Cycle, Plugin, Status
from dralloc.scheduler.nodeinfo import NodeInfo

NAME = "NodeResourcesFit"
TOO_MANY_PODS = "Too many pods"
NATIVE = ("cpu", "memory", "ephemeral-storage")


def insufficient(request: dict[str, int], node: NodeInfo, delegated: frozenset[str] = frozenset()
                 ) -> tuple[list[str], bool]:
    """(reasons, unresolvable) for a request on a node, in ``fitsRequest``'s order."""
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
        if want > have - used.get(name, 0):
            reasons.append(f"Insufficient {name}")
            unresolvable |= want > have
    return reasons, unresolvable


def least_requested(requested: int, capacity: int) -> int:
    if capacity == 0 or requested > capacity:
        return 0
    return (capacity - requested) * MAX_NODE_SCORE // capacity


class NodeResourcesFit(Plugin):
    name = NAME
    weight = 1
    has_filter = True
    has_score = True

    def filter(self, cycle: Cycle, node: NodeInfo) -> Status | None:
        pod = cycle.pod
        if len(node.pods) + 1 <= node.allowed_pods:
            # Fast path: nothing requested, or everything fits with room to spare.
            req = pod.request
            if not req:
                return None
            alloc, used = node.allocatable, node.requested
            if all(want <= alloc.get(name, 0) - used.get(name, 0) for name, want in req.items()):
                return None
        reasons, unresolvable = insufficient(pod.request, node, cycle.snapshot.dra_extended_resources)
        if not reasons:
            return None
        return Status(Code.UNRESOLVABLE if unresolvable else Code.UNSCHEDULABLE, tuple(reasons), NAME)

    def score(self, cycle: Cycle, node: NodeInfo) -> int:
        pod = cycle.pod
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
