"""Inputs that can change a placement in kube-scheduler 1.36 but that the simulation does not model.

Each finding is one warning line naming the object, the field, why the placement may differ, and the pods
it affects. ``dralloc simulate --strict`` refuses to simulate (exit 2) when there is any.

* **In-place resize leftovers.** kube-scheduler counts a container's request as the larger of its spec and
  what ``status.containerStatuses[]`` reports (``resources.requests``, ``allocatedResources``; only the
  status when the pod's ``PodResizePending`` condition says ``Infeasible``), whenever the status carries
  ``resources``. dralloc counts the spec.
* **Node conditions without their taint.** kube-scheduler reads no node condition; the node lifecycle
  controller turns them into ``NoSchedule`` taints (``Ready=False`` → ``node.kubernetes.io/not-ready``, ...).
  A dump taken before it did so has the condition but not the taint: in the cluster, pods that do not
  tolerate the taint would be kept off the node, in the simulation they are not.
"""

from __future__ import annotations

from collections.abc import Iterable

from dralloc.api.core_v1 import Container, ContainerStatus, Node, Pod, Taint
from dralloc.resources.fit import single_container_requests
from dralloc.resources.resourcelist import ResourceList
from dralloc.scheduler.podinfo import PodInfo
from dralloc.scheduler.tolerations import tolerated

# (condition type, status) → the NoSchedule taint key the node lifecycle controller puts on the node.
CONDITION_TAINTS: dict[tuple[str, str], str] = {
    ("Ready", "False"): "node.kubernetes.io/not-ready",
    ("Ready", "Unknown"): "node.kubernetes.io/unreachable",
    ("MemoryPressure", "True"): "node.kubernetes.io/memory-pressure",
    ("DiskPressure", "True"): "node.kubernetes.io/disk-pressure",
    ("NetworkUnavailable", "True"): "node.kubernetes.io/network-unavailable",
    ("PIDPressure", "True"): "node.kubernetes.io/pid-pressure",
}

SHOWN_PODS = 5  # affected pods named in a warning; the rest are counted


def unmodelled_inputs(nodes: Iterable[Node], pods: Iterable[Pod], pending: list[PodInfo]) -> list[str]:
    """The warnings for ``pods`` (the admitted pods, running and pending) and ``nodes``; ``pending``: the
    pods the simulation schedules."""
    nodes = list(nodes)
    names = {n.metadata.name for n in nodes}
    out: list[str] = []
    for pod in pods:
        # A pod on a node missing from the input takes no room from anyone (and is warned about as such).
        if not pod.spec.node_name or pod.spec.node_name in names:
            out.extend(_resize_warnings(pod, pending))
    for node in nodes:
        out.extend(_condition_warnings(node, pending))
    return out


def _resize_warnings(pod: Pod, pending: list[PodInfo]) -> list[str]:
    statuses = pod.status.container_statuses if pod.status is not None else None
    if not statuses:
        return []
    by_name = {s.name: s for s in statuses}
    key = f"{pod.metadata.namespace or 'default'}/{pod.metadata.name}"
    out = []
    for container in pod.spec.containers or ():
        status = by_name.get(container.name)
        if status is None or status.resources is None:
            continue
        spec = single_container_requests(container)
        counted = _counted_requests(pod, container, status)
        if all(counted.nanos(r) == spec.nanos(r) for r in {*counted, *spec}):
            continue
        index = statuses.index(status)
        if pod.spec.node_name:
            affects = (f"the room on node {pod.spec.node_name} for the pending pods: "
                       f"{_pod_list(info.key for info in pending)}" if pending else "")
        else:
            affects = f"pod {key}"
        if not affects:
            continue
        out.append(f"pod {key}: status.containerStatuses[{index}] (container {container.name}) reports "
                   f"resources that differ from its spec (an in-place resize): kube-scheduler counts "
                   f"{_show(counted)}, dralloc counts the spec's {_show(spec)}; affects {affects}")
    return out


def _counted_requests(pod: Pod, container: Container, status: ContainerStatus) -> ResourceList:
    """The container request kube-scheduler counts when the container status reports resources."""
    reported = ResourceList(status.resources.requests or {}) if status.resources is not None else ResourceList()
    allocated = ResourceList(status.allocated_resources or {})
    if _resize_infeasible(pod):
        return reported.max(allocated)
    return single_container_requests(container).max(reported).max(allocated)


def _resize_infeasible(pod: Pod) -> bool:
    for condition in (pod.status.conditions if pod.status is not None else None) or ():
        if condition.type == "PodResizePending":
            return condition.reason == "Infeasible"
    return False


def _condition_warnings(node: Node, pending: list[PodInfo]) -> list[str]:
    conditions = node.status.conditions if node.status is not None else None
    if not conditions:
        return []
    taints = (node.spec.taints if node.spec is not None else None) or []
    name = node.metadata.name
    out = []
    for condition in conditions:
        kind, status = condition.type, condition.status
        taint_key = CONDITION_TAINTS.get((kind, status))
        if taint_key is None or any(t.key == taint_key and t.effect == "NoSchedule" for t in taints):
            continue
        taint = Taint(key=taint_key, effect="NoSchedule")
        kept_off = [info.key for info in pending if not tolerated(taint, info.tolerations)]
        if not kept_off:
            continue
        out.append(f"node {name}: status.conditions {kind}={status} without the {taint_key}:NoSchedule taint "
                   f"the node lifecycle controller adds for it: kube-scheduler would keep pods that do not "
                   f"tolerate it off the node, the simulation does not; affects pending pods: "
                   f"{_pod_list(kept_off)}")
    return out


def _show(requests: ResourceList) -> str:
    return str(requests) or "nothing"


def _pod_list(keys: Iterable[str]) -> str:
    keys = list(keys)
    shown = ", ".join(keys[:SHOWN_PODS])
    return f"{shown} and {len(keys) - SHOWN_PODS} more" if len(keys) > SHOWN_PODS else shown
