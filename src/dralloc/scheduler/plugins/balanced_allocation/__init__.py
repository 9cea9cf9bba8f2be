"""NodeResourcesBalancedAllocation: prefer nodes whose cpu and memory end up equally used.

For cpu and memory (actual requests, not the scoring defaults), f = (node requested + pod request) /
allocatable capped at 1; score = ⌊(1 − std(f)) × 100⌋, where std of two values is |f1 − f2| / 2.
Skipped for pods that request neither. Weight 1.
"""

from __future__ import annotations

import math

from dralloc.scheduler.framework import MAX_NODE_SCORE, SKIP, Cycle, Plugin, Status
from dralloc.scheduler.nodeinfo import NodeInfo

NAME = "NodeResourcesBalancedAllocation"
RESOURCES = ("cpu", "memory")


class BalancedAllocation(Plugin):
    name = NAME
    weight = 1
    has_score = True

    def pre_score(self, cycle: Cycle, nodes: list[NodeInfo]) -> Status | None:
        req = cycle.pod.request
        return None if any(req.get(r, 0) for r in RESOURCES) else SKIP

    def score(self, cycle: Cycle, node: NodeInfo) -> int:
        req = cycle.pod.request
        fractions = []
        for r in RESOURCES:
            alloc = node.allocatable.get(r, 0)
            if alloc == 0:
                continue
            f = (node.requested.get(r, 0) + req.get(r, 0)) / alloc
            fractions.append(min(f, 1.0))
        if len(fractions) == 2:
            std = abs(fractions[0] - fractions[1]) / 2
        elif len(fractions) > 2:
            mean = sum(fractions) / len(fractions)
            std = math.sqrt(sum((f - mean) ** 2 for f in fractions) / len(fractions))
        else:
            std = 0.0
        return int((1 - std) * MAX_NODE_SCORE)
