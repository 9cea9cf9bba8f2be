"""GpuClustering: pods of one kind (a share, or k whole GPUs) together on a node.

b = ⌊25 · (8000 − I) / 8000⌋ for the node's free milli-GPU I. CPU-only pod → 0. The node holds GPU pods
of the pod's kind only → 75 + b; of its kind among others → 50 + b; no GPU pods → 25 + b; only other
kinds → b. GPU choice: best fit.
"""

from __future__ import annotations

from collections.abc import Hashable

from dralloc.scheduler.framework import Cycle, Status
from dralloc.scheduler.nodeinfo import NodeInfo
from dralloc.scheduler.plugins.trace_policies.gpus import (
    GPU_MAX,
    GpuDemand,
    GpuPolicy,
    demand,
    node_gpus,
    placed_demand,
)


def kind(want: GpuDemand) -> str:
    return "share" if want.shares else f"{want.count}-gpu"


class GpuClusteringScore(GpuPolicy):
    name = "GpuClusteringScore"
    node_local_key = True  # its node key reads that node's pods only

    def __init__(self) -> None:
        self._kinds: dict[str, tuple[int, frozenset[str]]] = {}

    def kinds(self, cycle: Cycle, node: NodeInfo) -> frozenset[str]:
        """The kinds of the GPU pods on the node (cached per node generation)."""
        hit = self._kinds.get(node.name)
        if hit is None or hit[0] != node.generation:
            found = frozenset(kind(d) for p in node.pods if (d := placed_demand(cycle.snapshot, p)).count)
            hit = self._kinds[node.name] = (node.generation, found)
        return hit[1]

    def pre_filter(self, cycle: Cycle) -> Status | set[str] | None:
        cycle.keyed.append(self)  # the score reads the node's pods beyond the framework's node keys
        return None

    def node_key(self, cycle: Cycle, node: NodeInfo) -> Hashable:
        return self.kinds(cycle, node)

    def score(self, cycle: Cycle, node: NodeInfo) -> int:
        want = demand(cycle)
        if not want.count:
            return 0
        base = 25 * (GPU_MAX - node_gpus(cycle, node).idle) // GPU_MAX
        held = self.kinds(cycle, node)
        if not held:
            return 25 + base
        if kind(want) in held:
            return (75 if len(held) == 1 else 50) + base
        return base
