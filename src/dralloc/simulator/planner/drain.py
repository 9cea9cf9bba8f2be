"""Which pods a node removal must move, and which pods forbid it: Cluster Autoscaler's default drain rules
(``--skip-nodes-with-system-pods`` and ``--skip-nodes-with-local-storage`` on, as by default).

Pods that need no new home: mirror pods, DaemonSet pods, pods that finished, pods being deleted.
A pod annotated ``cluster-autoscaler.kubernetes.io/safe-to-evict: "true"`` moves whatever else holds;
otherwise a pod blocks its node when it has no controller owner ("is not replicated": an ownerReference with
``controller: true`` counts even when the owner is not in the dump), runs in kube-system with no
PodDisruptionBudget, has local storage (emptyDir off memory, hostPath) not listed in
``safe-to-evict-local-volumes``, or is annotated ``safe-to-evict: "false"``. The pods to move from a node may
use up at most each PodDisruptionBudget's ``disruptionsAllowed``; the pod that would take one below zero
blocks. The texts are CA's.
"""

from __future__ import annotations

from collections.abc import Sequence

from dralloc.api.core_v1 import Pod
from dralloc.scheduler.plugins.default_preemption.disruption_budgets import Budget
from dralloc.scheduler.podinfo import PodInfo

MIRROR_ANNOTATION = "kubernetes.io/config.mirror"
SAFE_TO_EVICT = "cluster-autoscaler.kubernetes.io/safe-to-evict"
SAFE_TO_EVICT_LOCAL_VOLUMES = "cluster-autoscaler.kubernetes.io/safe-to-evict-local-volumes"
SCALE_DOWN_DISABLED = "cluster-autoscaler.kubernetes.io/scale-down-disabled"
KUBE_SYSTEM = "kube-system"


def needs_no_home(pod: Pod) -> bool:
    """Mirror and DaemonSet pods, finished pods and pods being deleted are not moved."""
    meta = pod.metadata
    if MIRROR_ANNOTATION in (meta.annotations or {}):
        return True
    if any(o.controller and o.kind == "DaemonSet" for o in meta.owner_references or ()):
        return True
    if pod.status is not None and pod.status.phase in ("Succeeded", "Failed"):
        return True
    return bool(meta.deletion_timestamp)


def local_volumes(pod: Pod) -> list[str]:
    """Names of the pod's volumes on the node's disk (emptyDir not in memory, hostPath)."""
    out = []
    for volume in pod.spec.volumes or ():
        empty = volume.empty_dir
        if volume.host_path is not None or (empty is not None and empty.medium != "Memory"):
            out.append(volume.name)
    return out


def blocking_reason(info: PodInfo, budgets: Sequence[Budget]) -> str | None:
    """Why this pod keeps its node regardless of room elsewhere (budgets aside), or None."""
    pod = info.pod
    meta = pod.metadata
    annotations = meta.annotations or {}
    if annotations.get(SAFE_TO_EVICT) == "true":
        return None
    name, namespace = info.name, info.namespace
    if not any(o.controller for o in meta.owner_references or ()):
        return f"{namespace}/{name} is not replicated"
    if namespace == KUBE_SYSTEM and not any(b.covers(info) for b in budgets):
        return f"non-daemonset, non-mirrored, non-pdb-assigned kube-system pod present: {name}"
    allowed = {v.strip() for v in annotations.get(SAFE_TO_EVICT_LOCAL_VOLUMES, "").split(",") if v.strip()}
    if any(v not in allowed for v in local_volumes(pod)):
        return f"pod with local storage present: {name}"
    if annotations.get(SAFE_TO_EVICT) == "false":
        return f"pod annotated as not safe to evict present: {name}"
    return None


def budget_blocker(pods: Sequence[PodInfo], budgets: Sequence[Budget]) -> str | None:
    """The first pod that would take a budget below zero when all ``pods`` are evicted, as CA's tracker of
    remaining disruptions."""
    left = [b.allowed for b in budgets]
    for info in pods:
        for i, budget in enumerate(budgets):
            if budget.covers(info):
                left[i] -= 1
                if left[i] < 0:
                    return f"not enough pod disruption budget to move {info.namespace}/{info.name}"
    return None
