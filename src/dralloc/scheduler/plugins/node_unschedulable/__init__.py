"""NodeUnschedulable: a cordoned node takes only pods that tolerate ``node.kubernetes.io/unschedulable``."""

from __future__ import annotations

from dralloc.api.core_v1 import Taint
from dralloc.scheduler.framework import Cycle, Plugin, Status, unresolvable
from dralloc.scheduler.nodeinfo import NodeInfo
from dralloc.scheduler.tolerations import tolerated

NAME = "NodeUnschedulable"
REASON = "node(s) were unschedulable"
_TAINT = Taint(key="node.kubernetes.io/unschedulable", effect="NoSchedule")


class NodeUnschedulable(Plugin):
    name = NAME
    has_filter = True

    def filter(self, cycle: Cycle, node: NodeInfo) -> Status | None:
        if node.unschedulable and not tolerated(_TAINT, cycle.pod.tolerations):
            return unresolvable(NAME, REASON)
        return None
