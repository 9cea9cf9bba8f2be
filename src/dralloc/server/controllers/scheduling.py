"""The scheduler loop of ``dralloc serve``: pending pods of the default scheduler placed with
``dralloc.scheduler`` (the code behind ``dralloc simulate``), one scheduler kept for the server's whole life and
brought up to date with the store at each pass (``live.py``), then written back as
kube-scheduler writes them: the claims' ``status.allocation`` and ``reservedFor`` (with the delete-protection
finalizer), then the binding, and a ``Scheduled`` event; or the PodScheduled=False condition with
kube-scheduler's message and a ``FailedScheduling`` event.

A pod that did not fit is not tried again until something it may be waiting for changes (a ResourceSlice,
DeviceClass, ResourceClaim, Node or DeviceTaintRule, a pod that goes, finishes or changes its requests, or the
pod's own labels, spec or generated claims), as kube-scheduler's unschedulable pool; nor for more than 5
minutes: the pool is flushed every 30 seconds (from the scheduler's start) of the pods that have been in it
longer (``flushUnschedulablePodsLeftover``). Each pass gives a pod one scheduling cycle, so that every failed
cycle leaves its event, condition and nomination. A placement that could not be written (a claim changed
between the cycle and its write, the bind failed) backs the pod off: 1 s, doubling up to 10 s, as
kube-scheduler's backoff queue.

A device with binding conditions (KEP-5007) holds its pod back after the claims are written (each allocation
stamped with ``allocationTimestamp``), as DynamicResources' PreBind: a ``BindingConditionsPending`` event, the
pod assumed on its node, then the bind once every binding condition is True in the claims'
``status.devices``; a failure condition, or ten minutes, fails the binding cycle instead: the
FailedScheduling event and the SchedulerError condition with PreBind's message, the claims unreserved (and
so deallocated) and the pod backed off, to be tried again on other devices.

Preemption as kube-scheduler's ``prepareCandidate``: each victim gets the DisruptionTarget condition (reason
PreemptionByScheduler), then a delete with default options, so it terminates for its grace period keeping its
node share and its claims (``termination`` removes it when that is over); then a ``Preempted`` event naming
the preemptor. Lower-priority pods nominated to that node lose their nomination. The preemptor's cycle ends
with its FailedScheduling event and ``status.nominatedNodeName``; it is tried again when a victim is gone.
See docs/scheduler-events.md for the whole sequence.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from concurrent.futures import Executor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import partial
from typing import Any, NamedTuple

from dralloc.api.codec import decode, to_dict
from dralloc.api.core_v1 import Pod
from dralloc.controllers.preemption import (
    POD_GROUP_CANDIDATE,
    PREEMPTOR_POD,
    PREEMPTOR_POD_GROUP,
    preempted_event_message,
    preemption_condition,
)
from dralloc.scheduler.features import FeatureGates
from dralloc.scheduler.plugins.dynamic_resources import binding_conditions, reservations
from dralloc.scheduler.volumes import VolumeState
from dralloc.server.clock import now
from dralloc.server.controllers import pod_groups
from dralloc.server.controllers.claims import DELETE_PROTECTION, needs_claims_made, release_claims, unreserve
from dralloc.server.controllers.events import EventRecorder
from dralloc.server.controllers.live import LiveScheduler
from dralloc.server.controllers.snapshot import Snapshot
from dralloc.server.controllers.termination import TerminatingPods, set_condition
from dralloc.server.controllers.volume_prebind import (
    BIND_TIMEOUT_SECONDS,
    VolumeWait,
    check_bindings,
    write_bindings,
)
from dralloc.server.controllers.volume_prebind import PREBIND as VOLUME_PREBIND
from dralloc.server.controllers.writes import Writer
from dralloc.server.http.errors import ApiError
from dralloc.server.names import generated_name
from dralloc.server.registry import pods as pod_registry
from dralloc.simulator.result import POD_GROUP_PREEMPTOR, PodResult
from dralloc.simulator.simulator import DEFAULT_SCHEDULER
from dralloc.store import Conflict, NotFound

COMPONENT = "default-scheduler"
MAX_UNSCHEDULABLE_SECONDS = 300  # podMaxInUnschedulablePodsDuration
BACKOFF_INITIAL_SECONDS = 1.0  # podInitialBackoffDuration: a pod whose placement could not be written waits
BACKOFF_MAX_SECONDS = 10.0  # podMaxBackoffDuration: the wait doubles per failure up to this
FLUSH_PERIOD_SECONDS = 30  # how often the scheduling queue looks for pods waiting longer than that
Obj = dict[str, Any]
PREBIND = 'running PreBind plugin "DynamicResources": '  # how a PreBind failure reads in events and conditions


def _without_timestamp(allocation: Obj) -> Obj:
    return {k: v for k, v in allocation.items() if k != "allocationTimestamp"}


class _Preemptor(NamedTuple):
    """Who preempts, as the victim's condition and Preempted event name it."""

    obj: Obj
    kind: str  # pod, podgroup
    scheduler_name: str | None
    uid: str | None


@dataclass
class WaitingBinding:
    """A pod whose claims are written but whose devices' binding conditions are not all True yet."""

    pod: Obj
    node: str
    claims: list[Obj]  # as written: allocated and reserved for the pod
    created: Obj | None  # the extended-resource claim made for it
    started: float
    volumes: list[VolumeWait] = field(default_factory=list)  # VolumeBinding's PreBind: claims not bound yet


def _meta(obj: Obj) -> Obj:
    return obj.get("metadata") or {}


def _key(obj: Obj) -> str:
    return f"{_meta(obj).get('namespace') or 'default'}/{_meta(obj).get('name')}"


def is_pending_for_us(pod: Obj) -> bool:
    spec = pod.get("spec") or {}
    return (not spec.get("nodeName") and (spec.get("schedulerName") or DEFAULT_SCHEDULER) == DEFAULT_SCHEDULER
            and not _meta(pod).get("deletionTimestamp")
            and (pod.get("status") or {}).get("phase") not in pod_registry.TERMINAL_PHASES)


def _requests(pod: Obj) -> str:
    """What a bound pod's requests are computed from: its spec and what the kubelet reports of its containers'
    resources (an in-place resize) and of the resize."""
    spec = pod.get("spec") or {}
    status = pod.get("status") or {}
    reported = [[(s.get("resources"), s.get("allocatedResources")) for s in status.get(k) or []
                 if isinstance(s, dict)] for k in ("initContainerStatuses", "containerStatuses")]
    resize = [c for c in status.get("conditions") or [] if isinstance(c, dict) and c.get("type") == "PodResizePending"]
    return json.dumps([[c.get("resources") for c in spec.get(k) or [] if isinstance(c, dict)]
                       for k in ("initContainers", "containers")] + [spec.get("resources"), spec.get("overhead")]
                      + reported + [resize], sort_keys=True, default=str)


def scheduling_properties(pod: Obj) -> str:
    """What of a waiting pod's own may change where it fits: its labels, its spec, the claims made for it.
    A change to anything else (its status, annotations, finalizers) does not send it back to the queue, as
    no plugin's queueing hint takes such an update for a reason to try again."""
    status = pod.get("status") or {}
    return json.dumps([_meta(pod).get("labels"), pod.get("spec"), status.get("resourceClaimStatuses"),
                       status.get("extendedResourceClaimStatus")], sort_keys=True, default=str)


class SchedulerLoop:
    def __init__(self, writer: Writer, recorder: EventRecorder, pool: Executor, terminating: TerminatingPods,
                 seed: int = 0, clock: Callable[[], float] = time.time, gates: FeatureGates | None = None) -> None:
        self.writer = writer
        self.terminating = terminating
        self.pool = pool
        self.recorder = recorder
        self.seed = seed
        # One scheduler for the server's whole life, as kube-scheduler's: its cache is kept up to date between
        # passes, its random source and rotating start index carry on from pass to pass.
        self.live = LiveScheduler(seed, gates)
        self.pod_groups = self.live.gates.enabled("GenericWorkload")  # PodGroups read and written
        self.clock = clock
        self.started = clock()  # the unschedulable pool's flush ticks count from here
        # uid of an unschedulable pod -> its resourceVersion and scheduling properties when it failed
        self.waiting: dict[str, tuple[str, str]] = {}
        self.since: dict[str, float] = {}  # uid of an unschedulable pod -> when its last cycle failed
        self.retry_all = True
        self.changed_pods: set[tuple[str, str]] = set()  # (namespace, name) of pods other clients changed
        self.bound_requests: dict[str, str] = {}  # uid of a bound pod -> what it requests, when last seen
        # uid of a pod whose placement could not be written (a claim changed meanwhile, the bind failed) ->
        # its failures in a row and the time before which it is not tried again (kube-scheduler's backoff queue)
        self.backoff: dict[str, tuple[int, float]] = {}
        self.binding: dict[str, WaitingBinding] = {}  # uid -> a pod waiting for its binding conditions or volumes
        self._volumes = VolumeState()  # the last run's volumes, with the bindings its PreBinds chose
        self.scheduled = 0

    @property
    def next_due(self) -> float | None:
        """When the next waiting pod is flushed out of the unschedulable pool, or ends its backoff (seconds
        since the epoch)."""
        flush = min((self._flush_at(t) for t in self.since.values()), default=None)
        backoff = min((until for _, until in self.backoff.values()), default=None)
        binding = min((w.started + binding_conditions.BINDING_TIMEOUT_SECONDS + 1 for w in self.binding.values()),
                      default=None)
        return min((t for t in (flush, backoff, binding) if t is not None), default=None)

    def due(self) -> bool:
        due = self.next_due
        return due is not None and due <= self.clock()

    def _flush_at(self, failed_at: float) -> float:
        """The first flush tick at which a pod that failed at ``failed_at`` has waited longer than the limit."""
        ticks = (failed_at + MAX_UNSCHEDULABLE_SECONDS - self.started) // FLUSH_PERIOD_SECONDS + 1
        return self.started + max(ticks, 0) * FLUSH_PERIOD_SECONDS

    def _note_changed_pods(self, snap: Snapshot) -> None:
        """Whether pods other clients changed may let waiting pods fit, as kube-scheduler's queueing hints
        say for a pod update: one that finished (its informer sees it go) or whose requests changed (an
        in-place resize); not one whose status or metadata changed (a kubelet's report, a label)."""
        if not self.changed_pods:
            return
        for key in self.changed_pods:
            pod = snap.mirror.get("pods", key)
            if pod is None or (pod.get("status") or {}).get("phase") in pod_registry.TERMINAL_PHASES:
                self.retry_all = True
            elif (pod.get("spec") or {}).get("nodeName"):
                uid = str(_meta(pod).get("uid"))
                requests = _requests(pod)
                if self.bound_requests.get(uid) != requests:
                    self.bound_requests[uid] = requests
                    self.retry_all = True
        self.changed_pods.clear()

    def candidates(self, snap: Snapshot, pods_gone: bool = True) -> list[Obj]:
        """Pending pods to try now: new ones, changed ones, all waiting ones after a cluster change, and those
        flushed out of the unschedulable pool. ``pods_gone``: whether a pod may have gone since the last call
        (the bookkeeping of pods that went is done then)."""
        self._note_changed_pods(snap)
        out = []
        members = []  # (GenericWorkload) pending pods of pod groups that could be tried now
        clock = self.clock()
        for pod in snap.unbound_pods:
            if not is_pending_for_us(pod) or needs_claims_made(snap, pod):
                continue
            meta = _meta(pod)
            uid = str(meta.get("uid"))
            if uid in self.binding:
                continue  # in its binding cycle, waiting for binding conditions
            held = self.backoff.get(uid)
            if held is not None and held[1] > clock:
                continue  # backing off after its placement could not be written
            if self.pod_groups and pod_groups.group_of(pod) is not None:
                members.append(pod)
            seen = self.waiting.get(uid)
            failed_at = self.since.get(uid)
            flushed = failed_at is not None and self._flush_at(failed_at) <= clock
            if seen is not None and seen[0] != str(meta.get("resourceVersion")):
                if scheduling_properties(pod) == seen[1]:  # its status or annotations: no reason to try again
                    self.waiting[uid] = seen = (str(meta.get("resourceVersion")), seen[1])
                else:
                    seen = None
            if seen is None or self.retry_all or flushed:
                out.append(pod)
                self.since.pop(uid, None)
        self.retry_all = False
        if members:  # a candidate's group: its waiting members are tried with it (GangScheduling's queueing hint)
            chosen = {id(p) for p in out}
            for pod in pod_groups.members_of({g for g in map(pod_groups.group_of, out) if g is not None},
                                             (p for p in members if id(p) not in chosen)):
                out.append(pod)
                self.since.pop(str(_meta(pod).get("uid")), None)
        if not pods_gone:
            return out
        present = {str(_meta(p).get("uid")) for p in snap.pods}
        for uid in [u for u in self.waiting if u not in present]:
            del self.waiting[uid]  # the pod is gone
        for uid in [u for u in self.since if u not in self.waiting]:
            del self.since[uid]
        for uid in [u for u in self.bound_requests if u not in present]:
            del self.bound_requests[uid]
        for uid in [u for u in self.backoff if u not in present]:
            del self.backoff[uid]
        return out

    def check_bindings(self, snap: Snapshot) -> bool:
        """PreBind's wait for binding conditions, one poll of every waiting pod: bind those whose devices are
        ready, fail those whose binding failed or timed out. True when a pod was bound or released."""
        if not self.binding:
            return False
        done = False
        pods = snap.pods_by_uid()
        clock = self.clock()
        moment = datetime.fromtimestamp(clock, UTC)
        for uid, waiting in list(self.binding.items()):
            pod = pods.get(uid)
            if pod is None or _meta(pod).get("deletionTimestamp") or (pod.get("spec") or {}).get("nodeName"):
                del self.binding[uid]  # gone or bound by someone else: the claims controller releases its claims
                done = True
                continue
            failure = None
            ready = True
            prefix = PREBIND
            if waiting.volumes:  # VolumeBinding's PreBind comes before DynamicResources'
                bound = check_bindings(snap.mirror, waiting.volumes, waiting.node)
                if bound is not True:
                    prefix, ready = VOLUME_PREBIND, False
                    if isinstance(bound, str):
                        failure = bound
                    elif clock > waiting.started + BIND_TIMEOUT_SECONDS:
                        failure = "binding volumes: context deadline exceeded"
            for written in waiting.claims if ready else ():
                meta = _meta(written)
                current = snap.mirror.get("resourceclaims", (meta.get("namespace") or "", meta.get("name") or ""))
                if current is None:
                    failure = f'resourceclaim.resource.k8s.io "{meta.get("name")}" not found'
                    break
                try:
                    if not binding_conditions.wait_outcome(decode(current), moment):
                        ready = False
                        break
                except binding_conditions.BindingFailed as exc:
                    failure = str(exc)
                    break
            if failure is None and not ready and prefix == PREBIND \
                    and clock > waiting.started + binding_conditions.BINDING_TIMEOUT_SECONDS:
                failure = "device binding timeout"
            if failure is None and not ready:
                continue
            del self.binding[uid]
            done = True
            if failure is None:
                self._bind(waiting.pod, waiting.node, waiting.claims, waiting.created)
            else:
                self._undo(waiting.claims, waiting.created, uid)
                self._record_failure(pod, "SchedulerError", prefix + failure, None, retried_after_backoff=True)
        return done

    def may_have_candidates(self, pods_changed: bool) -> bool:
        """Whether a look at every pod can find one to try: not when no pod changed and none waits for a
        cluster change, a flush or the end of its backoff (a new pod is a pod change)."""
        return (pods_changed or bool(self.changed_pods) or self.due()
                or (self.retry_all and bool(self.waiting)))

    def cycle(self, snap: Snapshot, pods_changed: bool = True, pods_gone: bool = True) -> bool:
        """Schedule the candidate pods; True when the cluster changed in a way other pods may wait for.
        ``pods_changed``: whether any pod changed since the last cycle (else pods are looked at only when
        some may be candidates); ``pods_gone``: whether one may have gone."""
        released = self.check_bindings(snap)
        if not self.may_have_candidates(pods_changed or released):
            self.retry_all = False
            return released
        pending = self.candidates(snap, pods_gone)
        if not pending:
            return released
        running, assumed = self.bound_pods(snap)
        tried = {_key(p): p for p in pending}
        # Pods still waiting keep the room of their nomination (kube-scheduler's nominator holds them all).
        held = [p for p in snap.unbound_pods if is_pending_for_us(p) and _key(p) not in tried
                and (p.get("status") or {}).get("nominatedNodeName")]
        sched = self.live.run(snap, running, assumed, pending, held, victims_terminate_at=now(),
                              now=datetime.fromtimestamp(self.clock(), UTC))
        freed = False

        def by_key(key: str) -> Obj | None:  # (a look-up, not a map of every pod)
            namespace, _, name = key.partition("/")
            return snap.mirror.get("pods", (namespace, name))

        for eviction in sched.evicted:
            victim = by_key(f"{eviction.namespace}/{eviction.name}")
            preemptor = self._preemptor(eviction.by, snap, by_key)
            if victim is not None and preemptor is not None and self._evict(victim, preemptor, eviction.node, snap):
                freed = True
        for key in sched.lost_nominations:  # a preemptor took the node these waiting pods were nominated to
            lost = by_key(key)
            if lost is not None:
                self._clear_nomination(lost)
        results = [r for r in (sched.results.get(k) for k in tried) if r is not None]
        placed = [(tried[r.key], r) for r in results if r.status == "scheduled" and r.node]
        for _, r in placed:
            r.claims = sched.pod_claims(r.pod)
        failed = [(tried[r.key], r) for r in results if r.status in ("unschedulable", "error") and not r.held]
        for r in results:
            if r.held:
                self._hold(tried[r.key])
        # Pods are independent once placed: their writes go concurrently so that they share the store's commits
        # (each pod's own writes stay in order: claims, then binding, then the event).
        self._volumes = sched.snapshot.volumes  # (what VolumeBinding's PreBind writes of each placed pod)
        prebound = bool(self._volumes.bindings)  # the volume controllers complete those bindings next
        list(self.pool.map(lambda pr: self._place(*pr), placed))
        list(self.pool.map(lambda pr: self._fail(*pr), failed))
        if self.pod_groups:
            pod_groups.write_conditions(self.writer, sched, lambda key: snap.mirror.get(pod_groups.PODGROUPS, key))
        return freed or released or prebound

    def bound_pods(self, snap: Snapshot) -> tuple[list[Obj], list[tuple[Obj, str]]]:
        """The pods that count on a node: those bound and not finished, and (with the node each waits for)
        the pods in their binding cycle (kube-scheduler's assumed pods)."""
        running = [p for p in snap.pods if (p.get("spec") or {}).get("nodeName")
                   and (p.get("status") or {}).get("phase") not in pod_registry.TERMINAL_PHASES]
        return running, [(w.pod, w.node) for w in self.binding.values()]

    # --- outcomes -----------------------------------------------------------------------------------

    def _place(self, pod: Obj, res: PodResult) -> bool:
        """Write the claims (creating the pod's extended-resource claim first, as kube-scheduler's PreBind),
        record that claim in the pod's status, then bind. False when that could not be written (a claim
        changed meanwhile): the pod is tried again after its backoff."""
        meta = _meta(pod)
        namespace, name, uid = meta.get("namespace") or "default", meta.get("name") or "", str(meta.get("uid"))
        volumes = write_bindings(self.writer, self._volumes, res.key, res.node or "")
        if isinstance(volumes, str):
            self._undo([], None, uid)
            self._record_failure(pod, "SchedulerError", VOLUME_PREBIND + "binding volumes: " + volumes, None,
                                 retried_after_backoff=True)
            return False
        extended = dict((res.pod.status.extended_resource_claim_status if res.pod.status is not None else None) or {})
        written: list[Obj] = []
        created: Obj | None = None
        for claim in res.claims:
            allocation = to_dict(claim.status.allocation) if claim.status and claim.status.allocation else None
            if allocation is None:
                continue
            claim_ns, claim_name, claim_uid = claim.metadata.namespace or namespace, claim.metadata.name or "", \
                claim.metadata.uid
            ref = dict(to_dict(reservations.consumer(claim, res.pod)))  # the pod, or its group for the group's claim
            if claim_name and claim_name == extended.get("resourceClaimName") and not self._stored(claim_ns, claim_name):
                created = self._create_extended_claim(claim, claim_ns)
                claim_name, claim_uid = created["metadata"]["name"], created["metadata"]["uid"]
                extended["resourceClaimName"] = claim_name

            unchanged: list[Obj] = []  # the claim as read, when it needs no write (reserved already)

            def reserve(current: Obj, allocation: Obj = allocation, ref: Obj = ref,
                        unchanged: list[Obj] = unchanged) -> Obj | None:
                status = current.setdefault("status", {})
                if status.get("allocation") is None:
                    # stamped as kube-scheduler does with binding conditions and device status on (1.36)
                    status["allocation"] = {**allocation, "allocationTimestamp": now()}
                    fins = current["metadata"].setdefault("finalizers", [])
                    if DELETE_PROTECTION not in fins:
                        fins.append(DELETE_PROTECTION)
                elif _without_timestamp(status["allocation"]) != _without_timestamp(allocation):
                    # (the same allocation written by another member of the claim's PodGroup is no conflict)
                    raise Conflict("allocated differently meanwhile")
                reserved = status.setdefault("reservedFor", [])
                if any(r.get("uid") in (uid, ref["uid"]) for r in reserved if isinstance(r, dict)):
                    unchanged.append(current)  # (a PodGroup's claim another member reserved for the group)
                    return None
                if len(reserved) >= reservations.RESERVED_FOR_MAX:  # as kube-apiserver refuses the 257th
                    raise Conflict("reservedFor is full")  # (taken meanwhile: tried again after the backoff)
                reserved.append(ref)
                return current

            try:
                done = self.writer.update("resourceclaims", claim_ns, claim_name, reserve, uid=claim_uid)
            except Conflict:
                done = None
            if done is None and unchanged:
                done = unchanged[-1]
            if done is None:
                self._undo(written, created, uid)
                return False
            written.append(done)
        if created is not None and not self._record_extended_claim(namespace, name, uid, extended):
            self._undo(written, created, uid)
            return False
        conditions = any(r.get("bindingConditions") for c in written for r in (
            (c.get("status") or {}).get("allocation") or {}).get("devices", {}).get("results") or ())
        if conditions or volumes:
            self.binding[uid] = WaitingBinding(pod, res.node or "", written, created, self.clock(), volumes)
            if conditions:
                self.recorder.record(pod, "Normal", "BindingConditionsPending",
                                     f"waiting for binding conditions for device on node {res.node}", COMPONENT,
                                     "Scheduling")
            return True
        return self._bind(pod, res.node or "", written, created)

    def _bind(self, pod: Obj, node: str, written: list[Obj], created: Obj | None) -> bool:
        """The binding, then the Scheduled event; False (the claims released, the pod backed off) when the
        pod is gone."""
        meta = _meta(pod)
        namespace, name, uid = meta.get("namespace") or "default", meta.get("name") or "", str(meta.get("uid"))
        try:
            bound = pod_registry.bind(self.writer.store, namespace, name, node, uid=uid)
        except (NotFound, ApiError):
            self._undo(written, created, uid)
            return False
        self.writer.own.add(int(bound["metadata"]["resourceVersion"]))
        self.backoff.pop(uid, None)
        self.waiting.pop(uid, None)
        self.bound_requests[uid] = _requests(bound)
        self.scheduled += 1
        # About the pod as its cycle saw it (kube-scheduler's assumed pod), as the FailedScheduling events are.
        self.recorder.record(pod, "Normal", "Scheduled", f"Successfully assigned {namespace}/{name} to {node}",
                             COMPONENT, "Binding")
        return True

    def _stored(self, namespace: str, name: str) -> bool:
        try:
            self.writer.store.get("resourceclaims", namespace, name)
        except NotFound:
            return False
        return True

    def _create_extended_claim(self, claim: Any, namespace: str) -> Obj:
        """Create the claim for the pod's DRA-backed extended resources (its name generated from
        ``<pod>-extended-resources-``, owned by the pod, with the delete-protection finalizer); its
        allocation is written next, as for every claim."""
        meta = claim.metadata
        base = meta.generate_name or f"{meta.name}-"
        obj: Obj = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                    "metadata": {"name": meta.name, "generateName": base, "namespace": namespace,
                                 "generation": 1, "annotations": dict(meta.annotations or {}),
                                 "ownerReferences": [to_dict(o) for o in meta.owner_references or ()],
                                 "finalizers": [DELETE_PROTECTION]},
                    "spec": to_dict(claim.spec)}
        return self.writer.create("resourceclaims", namespace, obj, new_name=partial(generated_name, base))

    def _record_extended_claim(self, namespace: str, name: str, uid: str, extended: Obj) -> bool:
        """``status.extendedResourceClaimStatus`` of the pod: the claim and which request serves which
        container's resource (what the kubelet reads). False when the pod is gone."""
        def record(current: Obj) -> Obj | None:
            status = current.setdefault("status", {})
            if status.get("extendedResourceClaimStatus") == extended:
                return None
            status["extendedResourceClaimStatus"] = extended
            return current

        return self.writer.update("pods", namespace, name, record, uid=uid) is not None

    def _undo(self, written: list[Obj], created: Obj | None, uid: str) -> None:
        """A placement that could not be written: release the claims reserved so far, delete the
        extended-resource claim made for it (kube-scheduler's Unreserve), and back the pod off (1 s, doubling
        up to 10 s) instead of trying it again at once: a write that keeps failing must not spin the loop."""
        self.waiting.pop(uid, None)
        failures = self.backoff.get(uid, (0, 0.0))[0] + 1
        delay = min(BACKOFF_INITIAL_SECONDS * 2 ** (failures - 1), BACKOFF_MAX_SECONDS)
        self.backoff[uid] = (failures, self.clock() + delay)
        self._unreserve(written, uid)
        if created is not None:
            meta = created["metadata"]
            self.writer.delete("resourceclaims", meta["namespace"], meta["name"], uid=meta["uid"])

    def _unreserve(self, claims: list[Obj], uid: str) -> None:
        for claim in claims:
            unreserve(self.writer, claim, uid)

    def _hold(self, pod: Obj) -> None:
        """A pod its scheduling gates or a PreEnqueue plugin hold back: kept aside until it or the cluster
        changes, with nothing written. kube-scheduler's queue only notes the gating plugin (a gated pod's
        SchedulingGated condition is kube-apiserver's, set when the pod is created)."""
        meta = _meta(pod)
        uid = str(meta.get("uid"))
        self.waiting[uid] = (str(meta.get("resourceVersion")), scheduling_properties(pod))
        self.since[uid] = self.clock()

    def _fail(self, pod: Obj, res: PodResult) -> None:
        """``handleSchedulingFailure``: the FailedScheduling event, then one status write with the
        PodScheduled=False condition and the nomination this cycle set (after a preemption), cleared (no
        node can be made to fit) or left."""
        reason = "SchedulerError" if res.status == "error" else "Unschedulable"
        nominated = res.pod.status.nominated_node_name if res.pod.status is not None else None
        self._record_failure(pod, reason, res.message, nominated)

    def _record_failure(self, pod: Obj, reason: str, message: str, nominated: str | None,
                        retried_after_backoff: bool = False) -> None:
        """The FailedScheduling event and the PodScheduled=False condition with
        ``reason`` and ``message``. ``retried_after_backoff``: a failed binding cycle, whose pod is tried
        again when its backoff ends rather than when the cluster changes."""
        meta = _meta(pod)
        uid = str(meta.get("uid"))
        # every failed cycle records its event, whether or not the status changes
        self.recorder.record(pod, "Warning", "FailedScheduling", message, COMPONENT, "Scheduling")

        def condition(current: Obj) -> Obj | None:
            if (current.get("spec") or {}).get("nodeName"):
                return None
            status = current.setdefault("status", {})
            conds = [c for c in status.get("conditions") or [] if isinstance(c, dict)]
            old = next((c for c in conds if c.get("type") == "PodScheduled"), None)
            new = {"type": "PodScheduled", "status": "False", "lastProbeTime": None,
                   "lastTransitionTime": now(), "reason": reason, "message": message}
            if old is not None and all(old.get(k) == new[k] for k in ("status", "reason", "message")) \
                    and status.get("nominatedNodeName") == nominated:
                return None
            if old is not None and old.get("status") == "False":
                new["lastTransitionTime"] = old.get("lastTransitionTime") or new["lastTransitionTime"]
            status["conditions"] = [c for c in conds if c.get("type") != "PodScheduled"] + [new]
            if nominated:
                status["nominatedNodeName"] = nominated
            else:
                status.pop("nominatedNodeName", None)
            return current

        updated = self.writer.update("pods", meta.get("namespace") or "default", meta.get("name") or "",
                                     condition, uid=uid)
        if updated is not None and not retried_after_backoff:
            self.waiting[uid] = (str(_meta(updated).get("resourceVersion")), scheduling_properties(updated))
            self.since[uid] = self.clock()

    def _clear_nomination(self, pod: Obj) -> None:
        """``clearNominatedNodeName``: a status patch removing the nomination, nothing else."""
        def clear(current: Obj) -> Obj | None:
            status = current.get("status") or {}
            if not status.get("nominatedNodeName") or (current.get("spec") or {}).get("nodeName"):
                return None
            del status["nominatedNodeName"]
            return current

        meta = _meta(pod)
        updated = self.writer.update("pods", meta.get("namespace") or "default", meta.get("name") or "", clear,
                                     uid=str(meta.get("uid")))
        uid = str(meta.get("uid"))
        if updated is not None and uid in self.waiting:  # own write: no retry for it
            self.waiting[uid] = (str(_meta(updated).get("resourceVersion")), self.waiting[uid][1])

    def _preemptor(self, by: str, snap: Snapshot, pod_by_key: Callable[[str], Obj | None]) -> _Preemptor | None:
        """Who an eviction row names: a pod (``namespace/name``), or with workload-aware preemption a PodGroup
        (``PodGroup/namespace/name``, of the scheduler its first pending member names)."""
        group_key = by.removeprefix(POD_GROUP_PREEMPTOR)
        if group_key == by:
            pod = pod_by_key(by)
            if pod is None:
                return None
            return _Preemptor(pod, PREEMPTOR_POD, (pod.get("spec") or {}).get("schedulerName"), _meta(pod).get("uid"))
        namespace, _, name = group_key.partition("/")
        group = snap.mirror.get(pod_groups.PODGROUPS, (namespace, name))
        if group is None:
            return None
        scheduler = next(((p.get("spec") or {}).get("schedulerName") for p in snap.unbound_pods
                          if _meta(p).get("namespace") == namespace
                          and ((p.get("spec") or {}).get("schedulingGroup") or {}).get("podGroupName") == name), None)
        return _Preemptor(group, PREEMPTOR_POD_GROUP, scheduler, _meta(group).get("uid"))

    def _evict(self, victim: Obj, preemptor: _Preemptor, node: str, snap: Snapshot) -> bool:
        """Preempt one victim; True when it is gone at once (no grace period), its claims released."""
        meta = _meta(victim)
        namespace, name, uid = meta.get("namespace") or "default", meta.get("name") or "", str(meta.get("uid"))
        typed = snap.cache.typed("pods", victim)
        if not isinstance(typed, Pod):
            return False  # (the scheduler could not have read it either)
        condition: Obj = to_dict(preemption_condition(typed, preemptor.scheduler_name, preemptor.kind))

        def disrupt(current: Obj) -> Obj | None:
            return current if set_condition(current, condition) else None

        if self.writer.update("pods", namespace, name, disrupt, uid=uid) is None:
            return False  # gone already
        terminating = self.terminating.delete(namespace, name, uid)
        # a pod group's candidate is the whole cluster, not one node
        candidate = POD_GROUP_CANDIDATE if preemptor.kind == PREEMPTOR_POD_GROUP else node
        self.recorder.record(victim, "Normal", "Preempted",
                             preempted_event_message(preemptor.kind, preemptor.uid, candidate), COMPONENT,
                             "Preempting", related=preemptor.obj)
        if terminating is not None:
            return False  # it keeps its claims until it is gone
        pods = {u: p for u, p in snap.pods_by_uid().items() if u != uid}
        release_claims(self.writer, [c for c in snap.claims if any(
            isinstance(r, dict) and r.get("uid") == uid for r in (c.get("status") or {}).get("reservedFor") or [])],
            pods)
        return True
