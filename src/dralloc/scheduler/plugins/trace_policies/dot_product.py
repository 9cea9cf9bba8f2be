"""DotProd: the smallest dot product of the node's free (CPU, GPU) and the pod's demand wins.

score = trunc(100 · (1 − ½ · [(C/128000)(c/128000) + (I/8000)(k·u/8000)])), with C the node's free
milli-CPU, I its free milli-GPU (before placement), c, k·u the pod's. GPU choice: best fit.
"""

from __future__ import annotations

from dralloc.scheduler.framework import Cycle
from dralloc.scheduler.nodeinfo import NodeInfo
from dralloc.scheduler.plugins.trace_policies.gpus import CPU_MAX, GPU_MAX, GpuPolicy, demand, node_gpus


class DotProductScore(GpuPolicy):
    name = "DotProductScore"

    def score(self, cycle: Cycle, node: NodeInfo) -> int:
        want, gpus = demand(cycle), node_gpus(cycle, node)
        if gpus.cpu_left < want.cpu:
            return 0
        dot = (gpus.cpu_left / CPU_MAX) * (want.cpu / CPU_MAX) + (gpus.idle / GPU_MAX) * (want.total / GPU_MAX)
        return int(100 * (1 - dot / 2))
