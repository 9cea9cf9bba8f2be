"""DefaultBinder (Bind): the pod as ``pods/binding`` leaves it — ``spec.nodeName`` set, nomination cleared."""

from __future__ import annotations

from msgspec.structs import replace

from dralloc.api.core_v1 import Pod, PodStatus
from dralloc.scheduler.framework import Cycle, Plugin, Status
from dralloc.scheduler.nodeinfo import NodeInfo

NAME = "DefaultBinder"


def bind_pod(pod: Pod, node_name: str) -> Pod:
    """The pod as ``pods/binding`` leaves it: ``spec.nodeName`` set, nomination cleared."""
    status = pod.status or PodStatus()
    return replace(pod, spec=replace(pod.spec, node_name=node_name),
                   status=replace(status, nominated_node_name=None))


class DefaultBinder(Plugin):
    name = NAME

    def bind(self, cycle: Cycle, node: NodeInfo) -> Status | None:
        cycle.pod.pod = bind_pod(cycle.pod.pod, node.name)
        return None
