"""NodeResourcesBalancedAllocation: prefer nodes whose resources end up equally used.

For each configured resource (default cpu and memory; actual requests, not the scoring defaults; an extended
resource only when the pod requests it and the node has it, or — DRAExtendedResource — a DeviceClass maps it
to the node's devices), f = (node requested + pod request) /
allocatable capped at 1; score = ⌊(1 − std(f)) × 100⌋, where std of two values is |f1 − f2| / 2.
Skipped for pods that request none of the resources. Weight 1.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from dralloc.scheduler.framework import MAX_NODE_SCORE, SKIP, Cycle, Plugin, Status
from dralloc.scheduler.nodeinfo import NodeInfo
from dralloc.scheduler.plugins.node_resources_fit import allocatable_and_requested, dra_totals, pod_requests

NAME = "NodeResourcesBalancedAllocation"
RESOURCES = ("cpu", "memory")


class BalancedAllocation(Plugin):
    name = NAME
    weight = 1
    has_score = True

    def __init__(self, resources: Sequence[str] = RESOURCES) -> None:
        """The plugin's args: the resources to balance (their weights must be 1)."""
        self.resources = tuple(resources)

    def pre_score(self, cycle: Cycle, nodes: list[NodeInfo]) -> Status | None:
        return None if any(pod_requests(cycle, self.resources, use_requested=True)) else SKIP

    def score(self, cycle: Cycle, node: NodeInfo) -> int:
        wants = pod_requests(cycle, self.resources, use_requested=True)
        fractions = []
        dra = dra_totals(cycle, node)
        for r, want in zip(self.resources, wants):
            alloc, requested = allocatable_and_requested(node, r, want, use_requested=True, dra=dra)
            if alloc == 0:
                continue
            f = requested / alloc
            fractions.append(min(f, 1.0))
        if len(fractions) == 2:
            std = abs(fractions[0] - fractions[1]) / 2
        elif len(fractions) > 2:
            mean = sum(fractions) / len(fractions)
            std = math.sqrt(sum((f - mean) ** 2 for f in fractions) / len(fractions))
        else:
            std = 0.0
        return int((1 - std) * MAX_NODE_SCORE)
