"""Random: any feasible node, any fitting GPU.

Every feasible node scores the same, so the scheduler's uniform tie-break draws the node (the paper's
PreScore draws one feasible node uniformly: the same distribution). A share goes to a GPU drawn uniformly
among those with room (device choice beyond upstream DRA); whole GPUs are the lowest-index free ones.
"""

from __future__ import annotations

import random

from dralloc.scheduler.framework import Cycle
from dralloc.scheduler.nodeinfo import NodeInfo
from dralloc.scheduler.plugins.trace_policies.gpus import GpuDemand, GpuPolicy, NodeGpus, pick_gpus


class RandomScore(GpuPolicy):
    name = "RandomScore"
    uniform_ties = True  # the node is drawn by the tie-break, never by rank

    def __init__(self, seed: int = 0) -> None:
        self.rng = random.Random(seed)

    def score(self, cycle: Cycle, node: NodeInfo) -> int:
        return 0

    def choose(self, cycle: Cycle, gpus: NodeGpus, want: GpuDemand) -> list[int]:
        if not want.shares:
            return pick_gpus(gpus.free, want)
        fitting = [i for i, g in enumerate(gpus.free) if g >= want.milli]
        return [self.rng.choice(fitting)] if fitting else []
