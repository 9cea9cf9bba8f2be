"""Which pods a node removal must move, and which pods forbid it: Cluster Autoscaler's default drain rules
(``--skip-nodes-with-system-pods`` and ``--skip-nodes-with-local-storage`` on, as by default).

Pods that need no new home: mirror pods, DaemonSet pods, pods that finished, pods being deleted.
A pod annotated ``cluster-autoscaler.kubernetes.io/safe-to-evict: "true"`` moves whatever else holds;
otherwise a pod blocks its node when it has no controller owner ("is not replicated": an ownerReference with
``controller: true`` counts even when the owner is not in the dump), runs in kube-system with no
PodDisruptionBudget, has local storage (emptyDir off memory, hostPath) not listed in
``safe-to-evict-local-volumes``, or is annotated ``safe-to-evict: "false"``. Any pod to move whose budget
allows no disruption blocks too. The texts are CA's.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from dralloc.api.core_v1 import Pod
from dralloc.api.meta import LabelSelector
from dralloc.simulator.planner.selectors import selector_matches

MIRROR_ANNOTATION = "kubernetes.io/config.mirror"
SAFE_TO_EVICT = "cluster-autoscaler.kubernetes.io/safe-to-evict"
SAFE_TO_EVICT_LOCAL_VOLUMES = "cluster-autoscaler.kubernetes.io/safe-to-evict-local-volumes"
SCALE_DOWN_DISABLED = "cluster-autoscaler.kubernetes.io/scale-down-disabled"
KUBE_SYSTEM = "kube-system"


@dataclass(frozen=True)
class Budget:
    """What the drain rules read of a PodDisruptionBudget."""

    namespace: str
    name: str
    selector: LabelSelector | None
    disruptions_allowed: int

    def covers(self, pod: Pod) -> bool:
        if (pod.metadata.namespace or "default") != self.namespace or self.selector is None:
            return False
        return selector_matches(self.selector, pod.metadata.labels or {})


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
    for volume in getattr(pod.spec, "volumes", None) or ():  # MERGE-TODO: typed once PodSpec has volumes
        empty = volume.empty_dir
        if volume.host_path is not None or (empty is not None and empty.medium != "Memory"):
            out.append(volume.name)
    return out


def blocking_reason(pod: Pod, budgets: Sequence[Budget]) -> str | None:
    """Why this pod keeps its node, or None when it can be moved."""
    meta = pod.metadata
    annotations = meta.annotations or {}
    name = meta.name or ""
    namespace = meta.namespace or "default"
    covering = [b for b in budgets if b.covers(pod)]
    if annotations.get(SAFE_TO_EVICT) != "true":
        if not any(o.controller for o in meta.owner_references or ()):
            return f"{namespace}/{name} is not replicated"
        if namespace == KUBE_SYSTEM and not covering:
            return f"non-daemonset, non-mirrored, non-pdb-assigned kube-system pod present: {name}"
        allowed = {v.strip() for v in annotations.get(SAFE_TO_EVICT_LOCAL_VOLUMES, "").split(",") if v.strip()}
        if any(v not in allowed for v in local_volumes(pod)):
            return f"pod with local storage present: {name}"
        if annotations.get(SAFE_TO_EVICT) == "false":
            return f"pod annotated as not safe to evict present: {name}"
    for budget in covering:
        if budget.disruptions_allowed < 1:
            return f"not enough pod disruption budget to move {namespace}/{name}"
    return None
