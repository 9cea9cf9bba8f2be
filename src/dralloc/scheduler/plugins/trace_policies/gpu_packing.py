"""GpuPacking: partly used GPUs first, then used nodes, then small idle nodes.

CPU-only pod → 0. Every GPU of the node free → max(33 − N, N). Otherwise take the k GPUs with room,
least left first: z of them fully free → max(50 − z, 33); none → max(100 − ⌊Σ⌊gᵢ·100/1000⌋ / 10⌋, 50)
over the picked GPUs' milli left before placement. GPU choice: best fit.
"""

from __future__ import annotations

from dralloc.scheduler.framework import Cycle
from dralloc.scheduler.nodeinfo import NodeInfo
from dralloc.scheduler.plugins.trace_policies.gpus import WHOLE, GpuPolicy, demand, node_gpus


class GpuPackingScore(GpuPolicy):
    name = "GpuPackingScore"

    def score(self, cycle: Cycle, node: NodeInfo) -> int:
        want, gpus = demand(cycle), node_gpus(cycle, node)
        if not want.count:
            return 0
        if all(g == WHOLE for g in gpus.free):
            return max(33 - len(gpus.free), len(gpus.free))
        picked = sorted(g for g in gpus.free if g >= want.milli)[: want.count]
        fresh = sum(1 for g in picked if g == WHOLE)
        if fresh:
            return max(50 - fresh, 33)
        return max(100 - sum(g * 100 // WHOLE for g in picked) // 10, 50)
