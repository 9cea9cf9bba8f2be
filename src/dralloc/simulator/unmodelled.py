"""Inputs that can change a placement in kube-scheduler 1.36 but that the simulation does not model.

Each finding is one warning line naming the object, the field, why the placement may differ, and the pods
it affects. ``dralloc simulate --strict`` refuses to simulate (exit 2) when there is any.

* **Node conditions without their taint.** kube-scheduler reads no node condition; the node lifecycle
  controller turns them into ``NoSchedule`` taints (``Ready=False`` → ``node.kubernetes.io/not-ready``, ...).
  A dump taken before it did so has the condition but not the taint: in the cluster, pods that do not
  tolerate the taint would be kept off the node, in the simulation they are not.
"""

from __future__ import annotations

from collections.abc import Iterable

from dralloc.api.core_v1 import Node, Taint
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


def unmodelled_inputs(nodes: Iterable[Node], pending: list[PodInfo]) -> list[str]:
    """The warnings for ``nodes``; ``pending``: the pods the simulation schedules."""
    out: list[str] = []
    for node in nodes:
        out.extend(_condition_warnings(node, pending))
    return out


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


def _pod_list(keys: Iterable[str]) -> str:
    keys = list(keys)
    shown = ", ".join(keys[:SHOWN_PODS])
    return f"{shown} and {len(keys) - SHOWN_PODS} more" if len(keys) > SHOWN_PODS else shown
