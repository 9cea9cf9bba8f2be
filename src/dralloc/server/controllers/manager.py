"""The controllers of ``dralloc serve`` in one worker thread: woken by every commit to the store, it reads
what changed since its last pass (into its mirror of the objects it looks at), then runs the resourceclaim
controller, the device taint eviction controller, the scheduler loop and (``--fake-kubelet``) the fake
kubelet over a snapshot of the mirror, after the garbage collector (``garbage``: objects whose owners are
gone) and removing the pods whose grace period is over (``termination``: no kubelet stops them here).
A controller whose inputs did not change since the last pass does not look at every object again.
The store is the only state that matters: after a restart the first pass picks up where the last one ended.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from itertools import groupby
from operator import attrgetter
from typing import ClassVar, Protocol

from dralloc.scheduler.features import FeatureGates
from dralloc.server.controllers import kubelet
from dralloc.server.controllers.autoscaling import HorizontalPodAutoscalerController
from dralloc.server.controllers.claims import create_pod_claims, needs_claims_made, release_claims
from dralloc.server.controllers.disruption import DisruptionController
from dralloc.server.controllers.endpoints import EndpointsControllers
from dralloc.server.controllers.events import EventRecorder
from dralloc.server.controllers.garbage import GarbageCollector
from dralloc.server.controllers.group_claims import create_pod_group_claims, needs_group_claims_made
from dralloc.server.controllers.namespaces import NamespaceDeleter
from dralloc.server.controllers.resource_quota import ResourceQuotaController
from dralloc.server.controllers.rootca import RootCAPublisher
from dralloc.server.controllers.scheduling import SchedulerLoop
from dralloc.server.controllers.serviceaccounts import DefaultServiceAccounts
from dralloc.server.controllers.snapshot import RESOURCES, STORAGE_INPUTS, Changes, Mirror, Obj, Snapshot
from dralloc.server.controllers.taints import TaintEviction
from dralloc.server.controllers.termination import TerminatingPods
from dralloc.server.controllers.volumes import VolumeControllers
from dralloc.server.controllers.workload_pods import PodControl
from dralloc.server.controllers.workloads import WorkloadControllers
from dralloc.server.controllers.writes import Writer
from dralloc.store import Change, Gone, SQLStore

log = logging.getLogger(__name__)

# Changes another client makes to these may let a waiting pod fit.
CLUSTER_RESOURCES = ("resourceslices", "deviceclasses", "resourceclaims", "nodes", "devicetaintrules", "podgroups",
                     *STORAGE_INPUTS)
WRITERS = 8  # concurrent writes of one pass (independent pods): they share the store's group commits
IDLE_SECONDS = 5.0  # a pass at least this often (a safety net)
# Passes start at most this often: under a burst of writes one pass takes in many commits, instead of
# a pass (a snapshot, a scheduling cycle) per commit competing with the requests for the interpreter.
MIN_PASS_INTERVAL = 0.01
# After a pass that took this thread T seconds of CPU, the next one waits REST_RATIO × T: a pass whose cost grows
# with the cluster (a PodDisruptionBudget or a Service over thousands of pods looks at all of them, as upstream's
# syncs do) then takes in more changes at once, and the controllers keep at most a quarter of the interpreter
# from the requests under a sustained burst, as a workqueue's batching bounds a controller's work upstream.
REST_RATIO = 3.0


def _names_pods_or_goes(claim: Obj) -> bool:
    """A claim release may change: one reserved for or owned by pods, or being deleted."""
    meta = claim.get("metadata") or {}
    return bool((claim.get("status") or {}).get("reservedFor") or meta.get("ownerReferences")
                or meta.get("deletionTimestamp"))


class _Noting(Protocol):
    """A controller that takes in the changes of the store's feed (those of the resources it names)."""

    NOTED: ClassVar[frozenset[str] | None]  # None: every resource's

    def notes(self, changes: Sequence[Change]) -> None: ...  # (of one resource, in the log's order)


_resource_of = attrgetter("resource")


@dataclass(frozen=True)
class Options:
    scheduler: bool = True
    fake_kubelet: bool = False
    provision_volumes: bool = False  # act as the StorageClasses' external provisioners (also with fake_kubelet)
    seed: int = 0
    root_ca: str = ""  # the CA published in every namespace's kube-root-ca.crt
    feature_gates: FeatureGates = field(default_factory=FeatureGates)  # the scheduler's (--feature-gates)


class ControllerManager:
    def __init__(self, store: SQLStore, options: Options = Options()) -> None:
        self.store = store
        self.options = options
        self.writer = Writer(store)
        self.recorder = EventRecorder(self.writer)
        self.pool = ThreadPoolExecutor(WRITERS, thread_name_prefix="dralloc-controller-write")
        self.terminating = TerminatingPods(self.writer, at_once=options.fake_kubelet)
        self.scheduler = SchedulerLoop(self.writer, self.recorder, self.pool, self.terminating, options.seed,
                                       gates=options.feature_gates)
        self.taints = TaintEviction(self.writer, self.recorder, self.terminating)
        # the resourceclaim controller makes PodGroups' claims (DRAWorkloadResourceClaims)
        gates = options.feature_gates
        self.group_claims = gates.enabled("GenericWorkload") and gates.enabled("DRAWorkloadResourceClaims")
        self.mirror = Mirror(store)
        self.garbage = GarbageCollector(self.writer, self.terminating.delete, self.mirror)
        self.namespaces = NamespaceDeleter(self.writer, self.terminating.delete)
        self.service_accounts = DefaultServiceAccounts(self.writer)
        self.root_ca = RootCAPublisher(self.writer, ca=options.root_ca)
        self.volumes = VolumeControllers(self.writer, self.recorder,
                                         provision=options.provision_volumes or options.fake_kubelet)
        self.workloads = WorkloadControllers(PodControl(self.writer, self.terminating.delete, self.recorder))
        self.endpoints = EndpointsControllers(self.writer)
        self.disruption = DisruptionController(self.writer)
        self.quotas = ResourceQuotaController(self.writer)
        self.autoscalers = HorizontalPodAutoscalerController(self.writer, self.recorder)
        # Who takes in every change, own writes too: the collector's deletes may orphan more objects, a
        # namespace's content goes, the workload controllers make ReplicaSets and pods and bind and start them
        # (endpoints: a pod's IP, Ready; disruption: a pod ready, a ReplicaSet scaled; quotas: pods made;
        # autoscalers: a workload scaled)
        self._noting: tuple[_Noting, ...] = (
            self.garbage, self.namespaces, self.service_accounts, self.root_ca, self.workloads, self.endpoints,
            self.disruption, self.quotas, self.autoscalers, self.volumes)
        self._notes: dict[str, tuple[Callable[[Sequence[Change]], None], ...]] = {}  # resource -> its notes, in order
        self.position = 0
        self.passes = 0
        self._wake = threading.Event()
        self._last_pass = 0.0
        self._rest_until = 0.0  # no pass before then (see REST_RATIO)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    # --- lifecycle ----------------------------------------------------------------------------------

    def start(self) -> None:
        self.position = self.store.current_rv()
        self.store.subscribe(self._committed)
        self._thread = threading.Thread(target=self._run, name="dralloc-controllers", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._wake.set()
        self.store.unsubscribe(self._committed)
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(3)  # a pass in flight finishes its writes; shutdown must stay quick
        self.pool.shutdown(wait=False)

    def _committed(self) -> None:
        """(After every commit, on the thread that made it) wake the controllers' thread. A wake-up still pending
        is left as it is (a pass clears it before it reads the feed, so that pass sees this commit anyway):
        under a stream of commits most of them find one pending, and setting an Event takes its lock."""
        if not self._wake.is_set():
            self._wake.set()

    def _run(self) -> None:
        dirty = True  # the first pass looks at everything
        failures = 0
        while not self._stop.is_set():
            if not dirty:
                timeout = IDLE_SECONDS
                # delayed evictions, removals, pods flushed out of the unschedulable pool
                for due in (self.taints.next_due, self.terminating.next_due, self.scheduler.next_due,
                            self.root_ca.next_due, self.workloads.next_due, self.disruption.next_due,
                            self.autoscalers.next_due, self.volumes.next_due, self.quotas.next_due):
                    if due is not None:
                        timeout = max(0.05, min(timeout, due - time.time() + 0.05))
                self._wake.wait(timeout)
            pause = self.pause()
            if pause > 0 and self._stop.wait(pause):
                return
            self._wake.clear()
            if self._stop.is_set():
                return
            self._last_pass = time.monotonic()
            try:
                dirty = self.timed_pass(dirty)
                failures = 0
            except Exception:  # a controller bug must not stop the server: a later pass retries
                log.exception("controller pass failed")
                self.mirror.mark_everything_changed()
                failures += 1
                self._stop.wait(min(30.0, 0.5 * 2 ** min(failures, 6)))  # backing off, not a busy loop
                dirty = True

    def pause(self) -> float:
        """How long the next pass waits: MIN_PASS_INTERVAL after the last one began, and its rest (REST_RATIO)."""
        return max(self._last_pass + MIN_PASS_INTERVAL, self._rest_until) - time.monotonic()

    def timed_pass(self, force: bool) -> bool:
        """:meth:`run_once`, and the rest after it in proportion to the CPU it took this thread."""
        cpu = time.thread_time()
        try:
            return self.run_once(force=force)
        finally:
            self._rest_until = time.monotonic() + REST_RATIO * (time.thread_time() - cpu)

    # --- one pass -----------------------------------------------------------------------------------

    def _changes(self) -> bool:
        """Read the events since the last pass; True when another client changed anything."""
        external = False
        while True:
            try:
                changes = self.store.changes_since(self.position, 10_000, with_data=RESOURCES)
            except Gone:
                self.scheduler.retry_all = True
                self.position = self.store.current_rv()
                self.mirror.synced = False  # list again: the events in between are lost
                return True
            if not changes:
                return external
            self.mirror.apply_all(changes)
            notes_of, own = self._notes, self.writer.own
            for resource, run in groupby(changes, _resource_of):  # (runs of one resource, in the log's order)
                batch = list(run)
                notes = notes_of.get(resource)
                if notes is None:
                    notes = self._notes_of(resource)
                for notes_in in notes:
                    notes_in(batch)
                if own:  # (this pass's own writes are no news)
                    theirs = [c for c in batch if c.rv not in own]
                    own.difference_update([c.rv for c in batch])
                    batch = theirs
                if not batch or resource == "events":
                    continue
                external = True
                # A pod that goes may free room, one that changes may have finished or shrunk (the scheduler
                # looks); a new one frees nothing.
                if resource in STORAGE_INPUTS:
                    # (no volume plugin's queueing hint takes a storage object's deletion for a reason)
                    batch = [c for c in batch if c.type != "DELETED"]
                if not batch:
                    continue
                if resource in CLUSTER_RESOURCES:
                    self.scheduler.retry_all = True
                elif resource == "pods":
                    if any([c.type == "DELETED" for c in batch]):
                        self.scheduler.retry_all = True
                    self.scheduler.changed_pods.update([(c.namespace, c.name) for c in batch if c.type == "MODIFIED"])
            self.position = changes[-1].rv

    def _notes_of(self, resource: str) -> tuple[Callable[[Sequence[Change]], None], ...]:
        """What takes in ``resource``'s changes: the controllers that look at it, in a fixed order (looked up once)."""
        notes = self._notes[resource] = tuple(c.notes for c in self._noting
                                              if c.NOTED is None or resource in c.NOTED)
        return notes

    def run_once(self, force: bool = True) -> bool:
        """One pass of every controller. True when it changed something others may react to (run again)."""
        external = self._changes()
        if not (external or force or self.taints.due() or self.terminating.due() or self.garbage.due
                or self.scheduler.due() or self.namespaces.due or self.service_accounts.due
                or self.root_ca.due or bool(self.workloads.changed) or self.workloads.due()
                or self.endpoints.due or self.disruption.due or self.quotas.due or self.autoscalers.due
                or self.volumes.due()):
            return False
        self.passes += 1
        if not self.mirror.synced:
            self.mirror.relist()
            self.workloads.resync()
            self.quotas.everything = True  # (changes may have been missed: counted in full)
        collected = self.namespaces.cycle()  # the content of namespaces being deleted
        self.service_accounts.cycle()  # (nothing else reacts to them)
        self.root_ca.cycle()
        collected |= self.garbage.cycle()  # objects whose owners are gone (a claim's pod, a slice's node)
        late = self._changes() if self.writer.own else False  # the mirror takes in what they wrote
        # Pods gone: their claims are released below, their room reused.
        if (self.mirror.changed_since_taken("pods") or self.terminating.due()) \
                and self.terminating.cycle(Snapshot(self.mirror)):
            self.scheduler.retry_all = True
            late |= self._changes()
        # Deployments, ReplicaSets, StatefulSets, DaemonSets and Jobs make and delete pods (the ones made are
        # given claims and scheduled in this pass)
        if self.workloads.has_work(self.mirror) and self.workloads.cycle(Snapshot(self.mirror)):
            late |= self._changes()
            # a pod being deleted that a Job let go of (its tracking finalizer removed) may go now: the
            # removals are looked at in the next pass
            clock = self.terminating.clock()
            self.terminating.next_due = clock if self.terminating.next_due is None else min(self.terminating.next_due,
                                                                                            clock)
        # The volume controllers bind claims (an own write a pod waiting for its claims is tried again for)
        if (self.volumes.again or self.mirror.changed_since_taken("pods")
                or any(map(self.mirror.changed_since_taken, STORAGE_INPUTS))) \
                and self.volumes.has_work(self.mirror) \
                and self.volumes.cycle(Snapshot(self.mirror), self.mirror.pending_changes() is None):
            self.scheduler.retry_all = True
            late = True
            self._changes()
        # What changed up to this snapshot (what this pass writes from here on counts for the next one).
        changed = self.mirror.take_changes()
        snap = Snapshot(self.mirror)
        made = False
        if self.group_claims and (changed.any("podgroups", "resourceclaimtemplates") or changed.everything):
            groups = [g for g in snap.objects["podgroups"] if needs_group_claims_made(snap, g)]
            if groups:
                snap.templates(), snap.claims  # (listed once, before the writers share the snapshot)
                # (the members see their groups' claims in the next pass, which this one asks for)
                made = any([create_pod_group_claims(self.writer, g, snap) for g in groups])
        # A pod needs claims made when it changed, or any when a template (or a PodGroup) did.
        needing = [p for p in self._changed_templated_pods(snap, changed, "resourceclaimtemplates", "podgroups")
                   if not (p.get("metadata") or {}).get("deletionTimestamp")
                   and not (p.get("spec") or {}).get("nodeName") and needs_claims_made(snap, p)]
        if needing:
            snap.templates(), snap.claims  # (listed once, before the writers share the snapshot)
            # A pod whose template is missing waits for the template (a change of another client), not for
            # the next pass: it does not make this pass ask for another.
            groups_on = self.group_claims
            made = any(list(self.pool.map(lambda p: create_pod_claims(self.writer, p, snap, groups_on), needing))) \
                or made
        again = made or collected
        to_release = self._claims_to_release(snap, changed)
        pods_by_uid = snap.pods_by_uid() if changed.everything else snap.pods_named_by(to_release)
        if to_release and release_claims(self.writer, to_release, pods_by_uid):
            self.scheduler.retry_all = True
            again = True
        # Taint eviction has work only where a NoExecute taint is (or was: a delayed eviction pending).
        may_evict = bool(self.mirror.tainted_slices or snap.objects["devicetaintrules"]
                         or self.taints.next_due is not None or changed.everything)
        if may_evict and (changed.allocations or changed.any("pods", "resourceslices", "devicetaintrules")
                          or self.taints.due()) and self.taints.cycle(snap):
            again = True
        if again:
            late |= self._changes()
            snap = Snapshot(self.mirror)  # the scheduler sees the claims just made or freed
        pods_gone = changed.everything or not self.mirror.has_all("pods", changed.keys.get("pods", ()))
        if self.options.scheduler and self.scheduler.cycle(snap, changed.any("pods") or again, pods_gone):
            self.scheduler.retry_all = True
            again = True
        if self.options.fake_kubelet:
            late |= self._changes()
            if changed.any("nodes"):
                kubelet.ready_nodes(self.writer, Snapshot(self.mirror))
            if changed.any("pods") or self.mirror.changed_since_taken("pods"):  # (a pod bound just now too)
                kubelet.run_bound_pods(self.writer, Snapshot(self.mirror))
                late |= self._changes()
                again |= self.workloads.finish_job_pods(self.writer, Snapshot(self.mirror))
        late |= self._changes()
        if self.endpoints.due and self.endpoints.cycle(Snapshot(self.mirror)):  # Services' EndpointSlices
            late |= self._changes()
        if self.disruption.due and self.disruption.cycle(Snapshot(self.mirror)):  # disruption budgets' status
            late |= self._changes()
        if self.quotas.due and self.quotas.cycle(self.mirror):  # quotas' usage
            late |= self._changes()
        if self.autoscalers.due and self.autoscalers.cycle():  # HPAs' status, targets kept within bounds
            late |= self._changes()
        late |= self._changes()  # own writes of this pass are not news; other clients' meanwhile are
        # (--fake-kubelet) a pod marked now may go now; a namespace's content went: it may go now
        # (a workload whose pods this pass bound or started syncs its status in the next one)
        return again or late or self.terminating.due() or self.namespaces.due or self.workloads.has_work(self.mirror)

    @staticmethod
    def _claims_to_release(snap: Snapshot, changed: Changes) -> list[Obj]:
        """The claims that changed and those reserved for or owned by a pod that changed (it may have finished
        or gone): a claim that did not change, naming pods that did not, needs nothing new."""
        if changed.everything:
            return snap.claims
        mirror = snap.mirror
        keys = set(changed.keys.get("resourceclaims", ())) | mirror.claims_of_pods(changed.keys.get("pods", ()))
        claims = (mirror.get("resourceclaims", k) for k in sorted(keys))
        return [c for c in claims if c is not None and _names_pods_or_goes(c)]

    @staticmethod
    def _changed_templated_pods(snap: Snapshot, changed: Changes, *or_any: str) -> list[Obj]:
        """The pods naming a claim template (the only ones that may need claims made) that changed; every such
        pod when everything or one of ``or_any`` did. A pod without one is not even parsed."""
        mirror = snap.mirror
        keys = mirror.templated if changed.everything or any(r in changed.keys for r in or_any) \
            else mirror.templated.intersection(changed.keys.get("pods", ()))
        pods = (mirror.get("pods", k) for k in sorted(keys))
        return [p for p in pods if p is not None]
