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
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import ClassVar

from dralloc.controllers.workloads import JOB_TRACKING_FINALIZER
from dralloc.server.controllers import jobs
from dralloc.server.controllers.adoption import claim, matcher
from dralloc.server.controllers.cron_jobs import sync_cron_job
from dralloc.server.controllers.daemon_sets import sync_daemon_set
from dralloc.server.controllers.deployments import sync_deployment, sync_replica_set
from dralloc.server.controllers.snapshot import Mirror, Snapshot
from dralloc.server.controllers.stateful_sets import is_member, sync_stateful_set
from dralloc.server.controllers.workload_pods import (
    Obj,
    PodControl,
    PodSummary,
    controller_uid,
    is_active,
    meta,
)
from dralloc.server.controllers.writes import Writer
from dralloc.store import Change

WORKLOADS = ("deployments", "replicasets", "replicationcontrollers", "statefulsets", "daemonsets", "jobs",
             "cronjobs")
# who adopts an orphan of each kind (ControllerRefManager's claims)
ADOPTERS = {"pods": ("replicasets", "replicationcontrollers", "statefulsets", "daemonsets", "jobs"), "replicasets": ("deployments",),
            "controllerrevisions": ("statefulsets", "daemonsets")}
INPUTS = frozenset((*WORKLOADS, "pods", "nodes", "controllerrevisions"))
OWNED = ("pods", "replicasets", "controllerrevisions", "jobs")  # what has a workload for controller
INDEXED = frozenset((*WORKLOADS, *OWNED))
Key = tuple[str, str, str]  # (resource, namespace, name)
RC_COMPONENT = "replication-controller"  # (the events of a ReplicationController's pods)


@dataclass
class WorkloadControllers:
    NOTED: ClassVar[frozenset[str] | None] = INPUTS  # (note() is handed only these)
    control: PodControl
    everything: bool = True  # sync every workload in the next cycle (the first one)
    changed: set[Key] = field(default_factory=set)  # inputs changed since the last cycle
    # the controller (uid) of each object with one, as of the last cycle: a deleted pod's owner is looked up here
    controller_of: dict[Key, str] = field(default_factory=dict)
    # Kept up to date from the changes a cycle takes in (built anew from every object when it syncs them all),
    # so that a cycle reads only the objects of the workloads it syncs: what each controller controls (uid ->
    # resource -> (namespace, name)), each workload's key by uid and uid by key, and the orphans that may be
    # adopted by namespace.
    owned: dict[str, dict[str, set[tuple[str, str]]]] = field(default_factory=dict)
    workload_key: dict[str, Key] = field(default_factory=dict)
    workload_uid: dict[Key, str] = field(default_factory=dict)
    orphans: dict[str, dict[str, set[str]]] = field(default_factory=lambda: {kind: {} for kind in ADOPTERS})
    indexed: bool = False  # (False: built anew at the next cycle; changes were dropped without a cycle)
    clock: Callable[[], float] = time.time  # (tests move it on: progress and active deadlines, schedules)
    # when a workload (uid) is to be synced again though nothing changed: a progress or active deadline that may pass
    wake_at: dict[str, float] = field(default_factory=dict)
    # the workloads (uid, and the kind they claim) synced before: they saw every orphan of that kind
    known: set[tuple[str, str]] = field(default_factory=set)

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

    def notes(self, changes: Sequence[Change]) -> None:
        """Take in changes of one of :data:`INPUTS` from the store's feed."""
        self.changed.update([(c.resource, c.namespace, c.name) for c in changes])

    def has_work(self, mirror: Mirror) -> bool:
        """Whether a cycle has something to look at: inputs changed, and there are workloads (or pods that
        changed still carry a Job's tracking finalizer: their Job went)."""
        if not (self.changed or self.everything or self.due()):
            return False
        if not mirror.any_of(WORKLOADS):
            finalizer, held = f'"{jobs.FINALIZER}"', False
            for resource, namespace, name in self.changed:
                if resource == "pods" and mirror.mentions("pods", (namespace, name), finalizer):  # (text searched)
                    held = True
                    break
            if not held:
                self.changed.clear()  # (nothing to sync; a workload created later is a change of its own)
                self.indexed = False
            return held
        return True

    def _dirty(self, snap: Snapshot) -> set[str] | None:
        """The uids of the workloads to sync (None: all). The indexes take in the changes on the way."""
        if self.everything or not self.indexed:
            self._index_all(snap)
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
            self._index(key, obj)
            if owner is not None:
                dirty.add(owner)
            if obj is not None and resource != "pods":
                dirty.add(str(meta(obj).get("uid")))
            if obj is not None and owner is None and resource in ADOPTERS:  # an orphan: who may adopt it
                dirty |= self._adopters(snap, resource, obj)
        # a ReplicaSet's pods changed: its Deployment counts them too
        for uid in list(dirty):
            found = self.workload_key.get(uid)
            if found is not None and found[0] == "replicasets" and (owner := self.controller_of.get(found)) is not None:
                dirty.add(owner)
        return dirty

    def _index_all(self, snap: Snapshot) -> None:
        """The indexes built anew from every object."""
        self.controller_of, self.owned, self.workload_key, self.workload_uid = {}, {}, {}, {}
        self.orphans = {kind: {} for kind in ADOPTERS}
        for resource in INDEXED:
            for (namespace, name), obj in snap.mirror.items(resource).items():
                self._index((resource, namespace, name), obj)
        self.indexed = True

    def _index(self, key: Key, obj: Obj | None) -> None:
        """The indexes take in the object at ``key`` as it is now (None: gone)."""
        resource, namespace, name = key
        if resource not in INDEXED:
            return
        if resource in WORKLOADS:
            was = self.workload_uid.pop(key, None)
            if was is not None and self.workload_key.get(was) == key:
                del self.workload_key[was]
            if obj is not None:
                uid = str(meta(obj).get("uid"))
                self.workload_uid[key], self.workload_key[uid] = uid, key
        if resource not in OWNED:
            return
        controller = controller_uid(obj) if obj is not None else None
        before = self.controller_of.get(key)
        if before != controller:
            if before is not None:
                kept = self.owned[before][resource]
                kept.discard((namespace, name))
                if not kept:
                    del self.owned[before][resource]
                    if not self.owned[before]:
                        del self.owned[before]
                del self.controller_of[key]
            if controller is not None:
                self.owned.setdefault(controller, {}).setdefault(resource, set()).add((namespace, name))
                self.controller_of[key] = controller
        if resource in ADOPTERS:
            orphans = self.orphans[resource]
            if obj is not None and controller is None:
                orphans.setdefault(namespace, set()).add(name)
            elif namespace in orphans:
                orphans[namespace].discard(name)
                if not orphans[namespace]:
                    del orphans[namespace]

    def _owned_by(self, snap: Snapshot, uid: str, resource: str) -> list[Obj]:
        """What the controller ``uid`` controls of ``resource``, in (namespace, name) order as listed."""
        keys = self.owned.get(uid, {}).get(resource)
        if not keys:
            return []
        found = (snap.mirror.get(resource, k) for k in sorted(keys))
        return [o for o in found if o is not None]

    def _orphans_in(self, snap: Snapshot, kind: str, namespace: str) -> list[Obj]:
        """The objects of ``kind`` in ``namespace`` without a controller, in name order as listed."""
        names = self.orphans[kind].get(namespace)
        if not names:
            return []
        found = (snap.mirror.get(kind, (namespace, n)) for n in sorted(names))
        return [o for o in found if o is not None]

    @staticmethod
    def _adopters(snap: Snapshot, resource: str, orphan: Obj) -> set[str]:
        """The workloads of the orphan's namespace whose selector matches it (getPodReplicaSets and its
        kin: they are synced and may adopt it)."""
        namespace = meta(orphan).get("namespace")
        found: set[str] = set()
        for kind in ADOPTERS[resource]:
            for owner in snap.objects[kind]:
                if meta(owner).get("namespace") == namespace and (match := matcher(kind, owner)) is not None \
                        and match(orphan):
                    found.add(str(meta(owner).get("uid")))
        return found

    def cycle(self, snap: Snapshot) -> bool:
        """One sync of the workloads whose objects changed; True when it wrote anything."""
        objects = snap.objects
        dirty = self._dirty(snap)
        # what may have stopped matching its controller's selector (selectors never change): the objects that
        # changed (None: everything, the first cycle)
        relabelled = None if self.everything else {(r, ns, n) for r, ns, n in self.changed if r in ADOPTERS}
        self.everything, self.changed = False, set()
        changed = False

        def uid(obj: Obj) -> str:
            return str(meta(obj).get("uid"))

        def controlled(resource: str, owner: Obj) -> list[Obj]:
            return self._owned_by(snap, uid(owner), resource)

        dirty_keys: dict[str, list[tuple[str, str]]] = {}  # the workloads to sync by resource (dirty None: all)
        for workload_uid in dirty or ():
            if (key := self.workload_key.get(workload_uid)) is not None:
                dirty_keys.setdefault(key[0], []).append(key[1:])

        def due(resource: str) -> list[Obj]:
            if dirty is None:
                return objects[resource]
            found = (snap.mirror.get(resource, k) for k in sorted(dirty_keys.get(resource, ())))
            return [o for o in found if o is not None and uid(o) in dirty]

        summaries: dict[str, PodSummary] = {}  # a ReplicaSet's pods, read once for it and its Deployment

        def summary(rs: Obj) -> PodSummary:
            found = summaries.get(uid(rs))
            if found is None:
                found = summaries[uid(rs)] = PodSummary.of(controlled("pods", rs))
            return found

        every_orphan: dict[str, dict[str, list[Obj]]] = {}  # (listed when a workload is new)
        changed_orphans: dict[str, dict[str, list[Obj]]] = {kind: {} for kind in ADOPTERS}
        changed_owned: dict[str, list[Obj]] = {}  # owner uid -> what it controls that changed
        for kind, namespace, name in relabelled or ():
            if (obj := snap.mirror.get(kind, (namespace, name))) is not None:
                if (owner_uid := controller_uid(obj)) is None:
                    changed_orphans[kind].setdefault(namespace, []).append(obj)
                else:
                    changed_owned.setdefault(owner_uid, []).append(obj)

        def orphans(kind: str, owner: Obj) -> list[Obj]:
            """The orphans ``owner`` may adopt: all of its namespace for a workload not synced before, else
            those that changed (an orphan that did not was looked at already)."""
            namespace = str(meta(owner).get("namespace") or "")
            if relabelled is not None and (uid(owner), kind) in self.known:
                return changed_orphans[kind].get(namespace, [])
            of_kind = every_orphan.setdefault(kind, {})
            if namespace not in of_kind:
                of_kind[namespace] = self._orphans_in(snap, kind, namespace)
            return of_kind[namespace]

        def claimed(resource: str, owner: Obj, owned: list[Obj], kind: str = "pods",
                    also: Callable[[Obj], bool] | None = None, finalizer: str | None = None) -> list[Obj]:
            """The objects ``owner`` controls once it adopted and released what its selector says."""
            nonlocal changed
            match = matcher(resource, owner)
            if match is None:
                return owned
            if also is not None:
                match = (lambda selected, extra: lambda o: selected(o) and extra(o))(match, also)
            candidates = orphans(kind, owner)
            self.known.add((uid(owner), kind))
            checked = owned if relabelled is None else changed_owned.get(uid(owner), [])
            if not any(match(o) for o in candidates) and all(match(o) for o in checked):
                return owned
            result = claim(self.control.writer, kind, resource, owner, owned, candidates, match, finalizer)
            taken = {uid(o) for o in result}
            candidates[:] = [o for o in candidates if uid(o) not in taken]  # (adopted: no longer an orphan)
            changed = True
            return result

        now = self.clock()
        for deploy in due("deployments"):
            sets = claimed("deployments", deploy, controlled("replicasets", deploy), kind="replicasets")
            wrote, recheck = sync_deployment(self.control, deploy, sets, summary, now)
            changed |= wrote
            self.wake(uid(deploy), recheck)
        for rs in due("replicasets"):
            owned = summary(rs).active
            mine = claimed("replicasets", rs, owned, also=is_active)
            changed |= sync_replica_set(self.control, rs, summary(rs) if mine is owned else PodSummary.of(mine))
        for rc in due("replicationcontrollers"):  # (the ReplicaSet controller's rule: upstream's ReplicationManager)
            owned = summary(rc).active
            mine = claimed("replicationcontrollers", rc, owned, also=is_active)
            changed |= sync_replica_set(self.control, rc, summary(rc) if mine is owned else PodSummary.of(mine),
                                        "replicationcontrollers", RC_COMPONENT)
        for sts in due("statefulsets"):
            mine = claimed("statefulsets", sts, controlled("pods", sts), also=partial(is_member, sts))
            history = claimed("statefulsets", sts, controlled("controllerrevisions", sts), kind="controllerrevisions")
            changed |= sync_stateful_set(self.control, snap, sts, mine, history)
        for ds in due("daemonsets"):
            mine = claimed("daemonsets", ds, controlled("pods", ds))
            history = claimed("daemonsets", ds, controlled("controllerrevisions", ds), kind="controllerrevisions")
            changed |= sync_daemon_set(self.control, snap, ds, mine, history)
        for job in due("jobs"):
            mine = claimed("jobs", job, controlled("pods", job), finalizer=JOB_TRACKING_FINALIZER)
            wrote, wake = jobs.sync_job(self.control, job, mine, now)
            changed |= wrote
            self.wake(uid(job), wake)
        changed |= self._release_job_pods(snap, relabelled)
        for cron in due("cronjobs"):
            wrote, wake = sync_cron_job(self.control, cron, controlled("jobs", cron), now)
            changed |= wrote
            self.wake(uid(cron), wake)
        if len(self.known) > 4 * len(self.workload_key):  # (those deleted, now and then)
            self.known = {k for k in self.known if k[0] in self.workload_key}
        return changed

    def _release_job_pods(self, snap: Snapshot, relabelled: set[Key] | None) -> bool:
        """The job-tracking finalizer off the pods no Job controls any more (their Job went, or they are
        orphans), as the Job controller's orphan pod handling does: nothing would count them. The pods that
        changed are looked at (all of them in the first cycle)."""
        if relabelled is None:
            candidates = snap.objects["pods"]
        else:
            changed_pods = (snap.mirror.get("pods", (k[1], k[2])) for k in relabelled if k[0] == "pods")
            candidates = [p for p in changed_pods if p is not None]
        tracked = [p for p in candidates if jobs.tracked(p)]
        if not tracked:
            return False
        jobs_here = {str(meta(j).get("uid")) for j in snap.objects["jobs"]}
        stray = [p for p in tracked if controller_uid(p) not in jobs_here]
        return jobs.remove_finalizers(self.control.writer, stray) if stray else False

    def resync(self) -> None:
        """Sync every workload in the next cycle (the mirror was listed again: changes may be lost)."""
        self.everything = True
        self.known.clear()

    @staticmethod
    def finish_job_pods(writer: Writer, snap: Snapshot) -> bool:
        """``--fake-kubelet``: the running pods of unfinished Jobs end successfully."""
        live = {str(meta(j).get("uid")) for j in snap.objects["jobs"]}
        return bool(live) and jobs.finish_pods(writer, snap, live)
