"""NodeResourcesFit's MostAllocated strategy (kube-scheduler's bin-packing score) over cpu and memory.

Per resource: requested · 100 / allocatable (requested = the node's non-zero requests + the pod's, capped at
allocatable), averaged over cpu and memory with weight 1 each. Devices are chosen as upstream does.
"""

from __future__ import annotations

from dralloc.scheduler.framework import MAX_NODE_SCORE, Cycle, Plugin
from dralloc.scheduler.nodeinfo import NodeInfo


def most_requested(requested: int, capacity: int) -> int:
    if capacity == 0:
        return 0
    return min(requested, capacity) * MAX_NODE_SCORE // capacity


class MostAllocated(Plugin):
    name = "NodeResourcesFit"
    weight = 1
    has_score = True

    def score(self, cycle: Cycle, node: NodeInfo) -> int:
        pod = cycle.pod
        total = weight = 0
        for have, used in ((node.allocatable.get("cpu", 0), node.nonzero_cpu + pod.nonzero_cpu),
                           (node.allocatable.get("memory", 0), node.nonzero_memory + pod.nonzero_memory)):
            if have:
                total += most_requested(used, have)
                weight += 1
        return total // weight if weight else 0
