"""NodePorts: a requested host port must be free on the node for its protocol and IP (0.0.0.0 overlaps
every IP)."""

from __future__ import annotations

from dralloc.scheduler.framework import SKIP, Cycle, Plugin, Status, unschedulable
from dralloc.scheduler.nodeinfo import NodeInfo

NAME = "NodePorts"
REASON = "node(s) didn't have free ports for the requested pod ports"
ANY_IP = "0.0.0.0"


def conflicts(want: tuple[str, str, int], used: list[tuple[str, str, int]]) -> bool:
    ip, protocol, port = want
    for uip, uproto, uport in used:
        if uport == port and uproto == protocol and (ip == ANY_IP or uip == ANY_IP or uip == ip):
            return True
    return False


class NodePorts(Plugin):
    name = NAME
    has_filter = True

    def pre_filter(self, cycle: Cycle) -> Status | set[str] | None:
        return None if cycle.pod.host_ports else SKIP

    def filter(self, cycle: Cycle, node: NodeInfo) -> Status | None:
        used = node.used_ports
        if used and any(conflicts(p, used) for p in cycle.pod.host_ports):
            return unschedulable(NAME, REASON)
        return None
