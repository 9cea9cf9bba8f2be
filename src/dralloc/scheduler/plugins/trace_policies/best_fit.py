"""BestFit: the least (CPU, GPU) left over after placement wins, min–max normalised over the nodes.

raw = trunc(100 · (1 − [½ (C − c)/128000 + ½ (I − k·u)/8000])); normalised (raw − min)·100/(max − min),
all 0 when every node scores the same. GPU choice: best fit.
"""

from __future__ import annotations

from dralloc.scheduler.framework import Cycle, K
from dralloc.scheduler.nodeinfo import NodeInfo
from dralloc.scheduler.plugins.trace_policies.gpus import CPU_MAX, GPU_MAX, GpuPolicy, demand, node_gpus


class BestFitScore(GpuPolicy):
    name = "BestFitScore"

    def score(self, cycle: Cycle, node: NodeInfo) -> int:
        want, gpus = demand(cycle), node_gpus(cycle, node)
        left = 0.5 * (gpus.cpu_left - want.cpu) / CPU_MAX + 0.5 * (gpus.idle - want.total) / GPU_MAX
        return int(100 * (1 - left))

    def normalize(self, cycle: Cycle, scores: dict[K, int]) -> dict[K, int]:
        if not scores:
            return scores
        low, high = min(scores.values()), max(scores.values())
        if high == low:
            return dict.fromkeys(scores, 0)
        return {k: (s - low) * 100 // (high - low) for k, s in scores.items()}
