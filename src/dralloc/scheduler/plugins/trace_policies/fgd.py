"""FGD (fragmentation gradient descent): the placement that grows the node's fragmentation least wins.

score = trunc(100 · σ((F(n) − F(n')) / 1000)), σ the logistic function, F the node's fragmentation for
the target workload (:mod:`.fragmentation`), n' the node after placement. A share is tried on every GPU
with room; the node scores its best GPU, and that GPU (the first to reach the score) takes the share —
device choice beyond upstream DRA. Whole GPUs: the lowest-index free ones; a CPU-only pod only takes CPU.
"""

from __future__ import annotations

import math

from dralloc.scheduler.framework import Cycle
from dralloc.scheduler.nodeinfo import NodeInfo
from dralloc.scheduler.plugins.trace_policies.fragmentation import Fragmentation, PodClass
from dralloc.scheduler.plugins.trace_policies.gpus import (
    GpuDemand,
    GpuPolicy,
    NodeGpus,
    demand,
    node_gpus,
    pick_gpus,
)


def gradient_score(before: float, after: float) -> int:
    return int(100 / (1 + math.exp(-(before - after) / 1000)))


class FgdScore(GpuPolicy):
    name = "FGDScore"

    def __init__(self, workload: tuple[PodClass, ...]) -> None:
        self.frag = Fragmentation(workload)

    def best(self, gpus: NodeGpus, want: GpuDemand) -> tuple[int, list[int]]:
        """(score, GPUs taken) of placing the pod on the node."""
        frag = self.frag.of
        before = frag(gpus.model, gpus.cpu_left, gpus.free)
        cpu = gpus.cpu_left - want.cpu
        if not want.shares:
            chosen = pick_gpus(gpus.free, want) if want.count else []
            taken = set(chosen)
            left = tuple(0 if i in taken else g for i, g in enumerate(gpus.free))
            return gradient_score(before, frag(gpus.model, cpu, left)), chosen
        top, chosen = -1, []
        for i, g in enumerate(gpus.free):
            if g >= want.milli:
                shared = gpus.free[:i] + (g - want.milli,) + gpus.free[i + 1:]
                s = gradient_score(before, frag(gpus.model, cpu, shared))
                if s > top:
                    top, chosen = s, [i]
        return max(top, 0), chosen

    def score(self, cycle: Cycle, node: NodeInfo) -> int:
        return self.best(node_gpus(cycle, node), demand(cycle))[0]

    def choose(self, cycle: Cycle, gpus: NodeGpus, want: GpuDemand) -> list[int]:
        return self.best(gpus, want)[1]
