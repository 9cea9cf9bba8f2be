"""The workload controllers of ``dralloc serve`` in one cycle of the controller pass: Deployments
(``deployments.py``: their ReplicaSets), ReplicaSets (their pods), StatefulSets (``stateful_sets.py``),
DaemonSets (``daemon_sets.py``) and Jobs (``jobs.py``), each over the objects it controls (found by the owner
reference with ``controller: true``), recording upstream's events on them (SuccessfulCreate, SuccessfulDelete,
ScalingReplicaSet, Completed). An owner deleted takes what it controls with it through the garbage collector.

As kube-controller-manager's controllers queue the owner of what changed, a cycle syncs only the workloads
whose objects changed since the last one: a workload itself, the controller of a pod or ReplicaSet that
changed (and a ReplicaSet's Deployment), every DaemonSet when a node did; the first cycle syncs them all."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from dralloc.server.controllers import jobs
from dralloc.server.controllers.daemon_sets import sync_daemon_set
from dralloc.server.controllers.deployments import sync_deployment, sync_replica_set
from dralloc.server.controllers.snapshot import Mirror, Snapshot
from dralloc.server.controllers.stateful_sets import sync_stateful_set
from dralloc.server.controllers.workload_pods import (
    Obj,
    PodControl,
    PodSummary,
    by_controller,
    controller_uid,
    meta,
)
from dralloc.server.controllers.writes import Writer
from dralloc.store import Change

WORKLOADS = ("deployments", "replicasets", "statefulsets", "daemonsets", "jobs")
INPUTS = frozenset((*WORKLOADS, "pods", "nodes"))
Key = tuple[str, str, str]  # (resource, namespace, name)


@dataclass
class WorkloadControllers:
    control: PodControl
    everything: bool = True  # sync every workload in the next cycle (the first one)
    changed: set[Key] = field(default_factory=set)  # inputs changed since the last cycle
    # the controller (uid) of each object with one, as of the last cycle: a deleted pod's owner is looked up here
    controller_of: dict[Key, str] = field(default_factory=dict)
    clock: Callable[[], float] = time.time  # (tests move it on: progress deadlines, schedules)
    # when a workload (uid) is to be synced again though nothing changed: a progress deadline that may pass
    wake_at: dict[str, float] = field(default_factory=dict)

    def wake(self, uid: str, at: float | None) -> None:
        """Sync the workload ``uid`` again at ``at`` (None: no need)."""
        if at is None:
            self.wake_at.pop(uid, None)
        else:
            self.wake_at[uid] = at

    @property
    def next_due(self) -> float | None:
        return min(self.wake_at.values(), default=None)

    def due(self) -> bool:
        """Whether a workload's time to be synced again has come."""
        now = self.clock()
        return any(at <= now for at in self.wake_at.values())

    def note(self, change: Change) -> None:
        """Take in one change of the store's feed (the controllers' own writes too)."""
        if change.resource in INPUTS:
            self.changed.add((change.resource, change.namespace, change.name))

    def has_work(self, mirror: Mirror) -> bool:
        """Whether a cycle has something to look at: inputs changed, and there are workloads."""
        if not (self.changed or self.everything or self.due()):
            return False
        if not any(mirror.items(r) for r in WORKLOADS):
            self.changed.clear()  # (nothing to sync; a workload created later is a change of its own)
            return False
        return True

    def _dirty(self, snap: Snapshot) -> set[str] | None:
        """The uids of the workloads to sync (None: all)."""
        if self.everything:
            return None
        now = self.clock()
        dirty = {uid for uid, at in self.wake_at.items() if at <= now}
        for uid in dirty:
            del self.wake_at[uid]
        mirror = snap.mirror
        for key in self.changed:
            resource, namespace, name = key
            if resource == "nodes":
                dirty |= {str(meta(ds).get("uid")) for ds in snap.objects["daemonsets"]}
                continue
            obj = mirror.get(resource, (namespace, name))
            owner = controller_uid(obj) if obj is not None else self.controller_of.get(key)
            if owner is not None:
                dirty.add(owner)
            if obj is not None and resource != "pods":
                dirty.add(str(meta(obj).get("uid")))
        # a ReplicaSet's pods changed: its Deployment counts them too
        for rs in snap.objects["replicasets"]:
            if str(meta(rs).get("uid")) in dirty and (owner := controller_uid(rs)) is not None:
                dirty.add(owner)
        return dirty

    def cycle(self, snap: Snapshot) -> bool:
        """One sync of the workloads whose objects changed; True when it wrote anything."""
        objects = snap.objects
        dirty = self._dirty(snap)
        self.everything, self.changed = False, set()
        pods_of = by_controller(objects["pods"])
        sets_of = by_controller(objects["replicasets"])
        self.controller_of = {("pods", str(meta(p).get("namespace") or ""), str(meta(p).get("name"))): uid
                              for uid, pods in pods_of.items() for p in pods}
        self.controller_of.update({("replicasets", str(meta(r).get("namespace") or ""), str(meta(r).get("name"))): uid
                                   for uid, sets in sets_of.items() for r in sets})
        changed = False

        def uid(obj: Obj) -> str:
            return str(meta(obj).get("uid"))

        def due(resource: str) -> list[Obj]:
            return [o for o in objects[resource] if dirty is None or uid(o) in dirty]

        summaries: dict[str, PodSummary] = {}  # a ReplicaSet's pods, read once for it and its Deployment

        def summary(rs: Obj) -> PodSummary:
            found = summaries.get(uid(rs))
            if found is None:
                found = summaries[uid(rs)] = PodSummary.of(pods_of.get(uid(rs), []))
            return found

        now = self.clock()
        for deploy in due("deployments"):
            wrote, recheck = sync_deployment(self.control, snap, deploy, sets_of.get(uid(deploy), []), summary, now)
            changed |= wrote
            self.wake(uid(deploy), recheck)
        for rs in due("replicasets"):
            changed |= sync_replica_set(self.control, rs, summary(rs))
        for sts in due("statefulsets"):
            changed |= sync_stateful_set(self.control, snap, sts, pods_of.get(uid(sts), []))
        for ds in due("daemonsets"):
            changed |= sync_daemon_set(self.control, snap, ds, pods_of.get(uid(ds), []))
        for job in due("jobs"):
            changed |= jobs.sync_job(self.control, job, pods_of.get(uid(job), []))
        return changed

    def resync(self) -> None:
        """Sync every workload in the next cycle (the mirror was listed again: changes may be lost)."""
        self.everything = True

    @staticmethod
    def finish_job_pods(writer: Writer, snap: Snapshot) -> bool:
        """``--fake-kubelet``: the running pods of unfinished Jobs end successfully."""
        live = {str(meta(j).get("uid")) for j in snap.objects["jobs"]}
        return bool(live) and jobs.finish_pods(writer, snap, live)
