"""TaintToleration: NoSchedule/NoExecute taints must be tolerated; PreferNoSchedule ones lower the score.

Filter text (1.35+): ``node(s) had untolerated taint(s)`` (older releases named the taint). Score: the
number of PreferNoSchedule taints the pod does not tolerate (only tolerations with an empty or
PreferNoSchedule effect count), normalised in reverse so a node with none scores 100. Weight 3.
"""

from __future__ import annotations

from dralloc.api.core_v1 import Taint
from dralloc.scheduler.framework import Cycle, K, Plugin, Status, default_normalize, unresolvable
from dralloc.scheduler.nodeinfo import NodeInfo
from dralloc.scheduler.tolerations import first_untolerated, tolerated

NAME = "TaintToleration"
REASON = "node(s) had untolerated taint(s)"


def _hard(t: Taint) -> bool:
    return t.effect in ("NoSchedule", "NoExecute")


class TaintToleration(Plugin):
    name = NAME
    weight = 3
    has_filter = True
    has_score = True

    def filter(self, cycle: Cycle, node: NodeInfo) -> Status | None:
        if first_untolerated(node.taints, cycle.pod.tolerations, _hard) is not None:
            return unresolvable(NAME, REASON)
        return None

    def pre_score(self, cycle: Cycle, nodes: list[NodeInfo]) -> Status | None:
        cycle.data[NAME] = [t for t in cycle.pod.tolerations if not t.effect or t.effect == "PreferNoSchedule"]
        return None

    def score(self, cycle: Cycle, node: NodeInfo) -> int:
        spec = node.node.spec
        if spec is None or not spec.taints:  # most nodes: no list to build
            return 0
        tolerations = cycle.data[NAME]
        return sum(1 for t in spec.taints if t.effect == "PreferNoSchedule" and not tolerated(t, tolerations))

    def normalize(self, cycle: Cycle, scores: dict[K, int]) -> dict[K, int]:
        return default_normalize(scores, reverse=True)
