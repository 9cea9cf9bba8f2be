"""The disruption controller of kube-controller-manager (pkg/controller/disruption): every PodDisruptionBudget's
status, from the pods its selector matches in its namespace (an unset selector matches none, an empty one all).

* ``expectedPods`` and ``desiredHealthy``: with ``minAvailable`` a number, the pods matched and that number;
  with a percentage (or ``maxUnavailable``), the sum of the scales of the pods' controllers (a ReplicaSet's,
  or its Deployment's, a StatefulSet's, a ReplicationController's), and the percentage of it rounded up
  (``maxUnavailable`` taken from it). Pods without a controller are not counted; a controller of another kind
  fails the sync: no disruption allowed, condition reason ``SyncFailed``.
* ``currentHealthy``: the matched pods that are Ready, neither being deleted nor in ``disruptedPods``.
* ``disruptedPods``: the evictions the API server recorded, until the pod is being deleted or two minutes
  passed (``DeletionTimeout``).
* ``disruptionsAllowed``: ``currentHealthy - desiredHealthy`` when positive and pods are expected, else 0;
  the ``DisruptionAllowed`` condition True (``SufficientPods``) or False (``InsufficientPods``);
  ``observedGeneration`` the budget's generation.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, ClassVar

from dralloc.api.policy_v1 import PodDisruptionBudget
from dralloc.scheduler.labels import from_model
from dralloc.server.controllers.endpoints import is_ready
from dralloc.server.controllers.snapshot import Obj, Snapshot
from dralloc.server.controllers.writes import Writer
from dralloc.server.registry.disruption_budgets import allowed_condition, set_condition
from dralloc.store import Change

DELETION_TIMEOUT = timedelta(minutes=2)
SYNC_FAILED = "SyncFailed"


class SyncFailed(Exception):
    pass


def _parse_time(text: Any) -> datetime | None:
    try:
        return datetime.strptime(str(text), "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    except ValueError:
        return None


def scaled(value: int | str, total: int) -> int:
    """GetScaledValueFromIntOrPercent, rounding up."""
    if isinstance(value, int):
        return value
    return math.ceil(int(value.rstrip("%")) * total / 100)


def _controller_of(obj: Obj) -> Obj | None:
    refs = (obj.get("metadata") or {}).get("ownerReferences") or []
    return next((r for r in refs if isinstance(r, dict) and r.get("controller")), None)


def _scale_of(snap: Snapshot, ref: Obj, namespace: str) -> tuple[str, int] | None:
    """The finders: (uid, replicas) of a pod's controller — a ReplicaSet's Deployment's rather than the
    ReplicaSet's —, None when it is none of the kinds a finder knows."""
    kinds = {("apps", "ReplicaSet"): "replicasets", ("apps", "StatefulSet"): "statefulsets",
             ("", "ReplicationController"): "replicationcontrollers", ("apps", "Deployment"): "deployments"}
    group = str(ref.get("apiVersion") or "").rpartition("/")[0]
    resource = kinds.get((group, str(ref.get("kind"))))
    if resource is None:
        return None
    found = snap.mirror.get(resource, (namespace, str(ref.get("name"))))
    if found is None or (found.get("metadata") or {}).get("uid") != ref.get("uid"):
        return None
    if resource == "replicasets":
        owner = _controller_of(found)
        if owner is not None and owner.get("kind") == "Deployment":
            deployment = _scale_of(snap, owner, namespace)
            if deployment is not None:
                return deployment
    replicas = (found.get("spec") or {}).get("replicas")
    return str(ref.get("uid")), int(replicas) if isinstance(replicas, int) else 1


def expected_scale(snap: Snapshot, pods: list[Obj]) -> int:
    scales: dict[str, int] = {}
    for pod in pods:
        ref = _controller_of(pod)
        if ref is None or ref.get("uid") in scales:
            continue  # (an unmanaged pod counts for nothing)
        meta = pod.get("metadata") or {}
        found = _scale_of(snap, ref, str(meta.get("namespace")))
        if found is None:
            raise SyncFailed(f'found no controllers for pod "{meta.get("name")}"')
        scales[found[0]] = found[1]
    return sum(scales.values())


def expected_counts(snap: Snapshot, pdb: PodDisruptionBudget, pods: list[Obj]) -> tuple[int, int]:
    """getExpectedPodCount: (expectedPods, desiredHealthy)."""
    spec = pdb.spec
    if spec.max_unavailable is not None:
        expected = expected_scale(snap, pods)
        return expected, max(0, expected - scaled(spec.max_unavailable, expected))
    if spec.min_available is not None:
        if isinstance(spec.min_available, int):
            return len(pods), spec.min_available
        expected = expected_scale(snap, pods)
        return expected, scaled(spec.min_available, expected)
    return 0, 0


def disrupted_pods(status: Obj, pods: list[Obj], at: datetime) -> dict[str, str]:
    """buildDisruptedPodMap: the recorded evictions of pods still there, not being deleted, not expired."""
    recorded = status.get("disruptedPods") or {}
    kept: dict[str, str] = {}
    for pod in pods:
        meta = pod.get("metadata") or {}
        when = recorded.get(meta.get("name"))
        if when is None or meta.get("deletionTimestamp"):
            continue
        parsed = _parse_time(when)
        if parsed is not None and parsed + DELETION_TIMEOUT >= at:
            kept[str(meta.get("name"))] = when
    return kept


def budget_status(snap: Snapshot, pdb: PodDisruptionBudget, stored: Obj, pods: list[Obj], at: datetime) -> Obj:
    """The status the controller writes for one budget."""
    old = dict(stored.get("status") or {})
    generation = int((stored.get("metadata") or {}).get("generation") or 0)
    try:
        expected, desired = expected_counts(snap, pdb, pods)
    except SyncFailed as exc:
        failed = {**old, "disruptionsAllowed": 0}
        failed["conditions"] = set_condition(list(old.get("conditions") or []), "False", SYNC_FAILED, str(exc),
                                             int(old.get("observedGeneration") or 0))
        return failed
    disrupted = disrupted_pods(old, pods, at)
    healthy = sum(1 for p in pods if not (p.get("metadata") or {}).get("deletionTimestamp")
                  and (p.get("metadata") or {}).get("name") not in disrupted and is_ready(p))
    allowed = healthy - desired if expected > 0 and healthy - desired > 0 else 0
    status: Obj = {"observedGeneration": generation}
    if disrupted:
        status["disruptedPods"] = disrupted
    status.update(disruptionsAllowed=allowed, currentHealthy=healthy, desiredHealthy=desired, expectedPods=expected,
                  conditions=list(old.get("conditions") or []))
    allowed_condition(status)
    return status


def matched_pods(pdb: PodDisruptionBudget, pods: list[Obj]) -> list[Obj]:
    selector = from_model(pdb.spec.selector)
    return [p for p in pods if selector.matches((p.get("metadata") or {}).get("labels") or {})]


@dataclass
class DisruptionController:
    # (note() is handed only these: a budget's pods and the workloads that scale them)
    NOTED: ClassVar[frozenset[str] | None] = frozenset((
        "poddisruptionbudgets", "pods", "replicasets", "statefulsets", "deployments", "replicationcontrollers"))
    writer: Writer
    dirty: set[str] = field(default_factory=set)  # namespaces whose budgets may need a new status
    everything: bool = True
    next_due: float | None = None  # when a recorded eviction expires (a recheck)

    def notes(self, changes: Sequence[Change]) -> None:
        """Take in changes of one of :data:`NOTED` (their namespaces' budgets may need a new status)."""
        self.dirty.update([c.namespace for c in changes])

    @property
    def due(self) -> bool:
        return self.everything or bool(self.dirty) or (self.next_due is not None
                                                       and self.next_due <= datetime.now(UTC).timestamp())

    def cycle(self, snap: Snapshot) -> bool:
        """Write the status of every budget whose inputs may have changed; True when it wrote."""
        everything = self.everything or (self.next_due is not None and self.next_due <= datetime.now(UTC).timestamp())
        namespaces, self.dirty, self.everything, self.next_due = self.dirty, set(), False, None
        budgets = [b for b in snap.objects["poddisruptionbudgets"]
                   if everything or str((b.get("metadata") or {}).get("namespace")) in namespaces]
        if not budgets:
            return False  # (a pass with no budget to look at does not go through the pods)
        at = datetime.now(UTC)
        by_namespace: dict[str, list[Obj]] = {}
        for pod in snap.pods:
            by_namespace.setdefault(str((pod.get("metadata") or {}).get("namespace")), []).append(pod)
        wrote = False
        for stored in budgets:
            meta = stored.get("metadata") or {}
            namespace = str(meta.get("namespace"))
            pdb = snap.cache.typed("poddisruptionbudgets", stored)
            if not isinstance(pdb, PodDisruptionBudget):
                continue
            status = budget_status(snap, pdb, stored, matched_pods(pdb, by_namespace.get(namespace, [])), at)
            for when in (status.get("disruptedPods") or {}).values():
                parsed = _parse_time(when)
                if parsed is not None:
                    due = (parsed + DELETION_TIMEOUT).timestamp() + 1
                    self.next_due = due if self.next_due is None else min(self.next_due, due)
            if status != stored.get("status"):
                wrote |= self._write(stored, status)
        return wrote

    def _write(self, stored: Obj, status: Obj) -> bool:
        """Write ``status`` over the version it was computed from (as UpdateStatus from an informer's copy): a
        budget written meanwhile (an eviction recorded) is looked at again in the next pass."""
        meta = stored.get("metadata") or {}
        namespace, version = str(meta.get("namespace")), meta.get("resourceVersion")

        def mutate(current: Obj) -> Obj | None:
            if (current.get("metadata") or {}).get("resourceVersion") != version:
                self.dirty.add(namespace)
                return None
            return {**current, "status": status}

        written = self.writer.update("poddisruptionbudgets", namespace, str(meta.get("name")), mutate,
                                     uid=meta.get("uid"))
        return written is not None and (written.get("metadata") or {}).get("resourceVersion") != version
