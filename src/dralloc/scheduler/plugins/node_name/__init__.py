"""NodeName: a pod that names its node fits only that node."""

from __future__ import annotations

from dralloc.scheduler.framework import Cycle, Plugin, Status, unresolvable
from dralloc.scheduler.nodeinfo import NodeInfo

NAME = "NodeName"
REASON = "node(s) didn't match the requested node name"


class NodeName(Plugin):
    name = NAME
    has_filter = True

    def filter(self, cycle: Cycle, node: NodeInfo) -> Status | None:
        want = cycle.pod.pod.spec.node_name
        if want and want != node.name:
            return unresolvable(NAME, REASON)
        return None
