"""The scheduler of ``dralloc serve``, kept for the server's whole life as kube-scheduler keeps its cache: one
:class:`~dralloc.simulator.Simulator` (its cache of which pods count on which node, its claims and DRA state,
its random source and rotating start index), fed from the store's changes between passes instead of rebuilt.

Each pass brings it up to date with a snapshot of the mirror:

* Nodes, ResourceSlices, DeviceClasses, DeviceTaintRules, Services, workload objects, Namespaces: when any of
  them changed (the mirror hands out a new list), the cluster side is built again from the snapshot; the
  random source and the start index carry on (:class:`~dralloc.scheduler.schedule_one.SchedulerState`).
  Likewise when a new claim's selectors name device attributes the DRA state does not index.
* PodGroups (read with the GenericWorkload gate on, as the pod group cycle's groups), by object as the
  claims: a group that is new or changed (its status written — most often by this scheduler's own
  PodGroupScheduled condition — or its metadata; its spec is immutable), or whose condition the last run
  computed (a write that may not have happened), takes its stored version; a group gone from the store goes.
  The cluster side stays: nothing in it depends on a group.
* ResourceClaims: a claim that is new or changed (the mirror replaces an object on every change, so an object
  seen before is the version seen before), or that the last run changed itself (an allocation whose write
  may not have happened), takes its stored state; a claim gone from the store goes.
* Bound pods: added when new, taken out and added again when changed, taken out when gone. A pod the last
  run bound is added again from the store (as written, or gone if the bind failed). Pods waiting for their
  binding conditions count on the node they wait for (assumed).
* Pending pods: those of the last run (tried or held) are taken out; this pass's candidates and held pods
  are added, so the pending side is exactly this pass's, as in a scheduler built for the pass.
"""

from __future__ import annotations

import operator
from datetime import datetime
from typing import Any

from msgspec.structs import replace

from dralloc.api.core_v1 import Pod
from dralloc.api.resource_v1 import ResourceClaim
from dralloc.api.scheduling_v1alpha2 import PodGroup
from dralloc.scheduler.attributes import referenced_attributes
from dralloc.scheduler.features import FeatureGates
from dralloc.scheduler.schedule_one import SchedulerState
from dralloc.scheduler.volumes import VolumeState
from dralloc.server.controllers.snapshot import STORAGE_INPUTS, WORKLOAD_SELECTORS, Obj, Snapshot
from dralloc.simulator.simulator import Simulator

# The inputs whose change builds the cluster side again.
CLUSTER_INPUTS = ("nodes", "resourceslices", "deviceclasses", "devicetaintrules", "namespaces", *WORKLOAD_SELECTORS)

Key = tuple[str, str]


def pod_key(pod: Obj) -> str:
    meta = pod.get("metadata") or {}
    return f"{meta.get('namespace') or 'default'}/{meta.get('name')}"


def _group_key(group: Obj) -> str:
    meta = group.get("metadata") or {}
    return f"{meta.get('namespace') or 'default'}/{meta.get('name')}"


def _claim_key(claim: Obj) -> Key:
    meta = claim.get("metadata") or {}
    return (meta.get("namespace") or "default", meta.get("name") or "")


class LiveScheduler:
    def __init__(self, seed: int = 0, gates: FeatureGates | None = None) -> None:
        self.seed = seed
        self.gates = gates or FeatureGates()  # kube-scheduler's --feature-gates (pod groups with GenericWorkload)
        self.state = SchedulerState(seed)
        self.sim: Simulator | None = None
        self.builds = 0  # how often the cluster side was built (tests and benchmarks read it)
        self._inputs: dict[str, list[Obj]] = {}  # the mirror's lists the cluster side was built from
        # id of a stored claim -> its key, the object (kept, so that its id stays its own) and what was set
        self._claim_objs: dict[int, tuple[Key, Obj, ResourceClaim]] = {}
        self._claim_of: dict[Key, int] = {}  # key -> id of the stored claim set
        # key of a PodGroup -> the stored object and the group set from it (GenericWorkload on)
        self._group_objs: dict[str, tuple[Obj, PodGroup]] = {}
        # id of a stored bound pod (or an assumed one) -> its key, the object, the node it is assumed on
        self._pod_objs: dict[int, tuple[str, Obj, str | None]] = {}
        self._pod_of: dict[str, int] = {}  # key -> id of the pod added
        self._bound_here: list[str] = []  # pods the last run bound (their stored state replaces them)
        self._pending: list[str] = []  # pods of the last run that were pending (tried or held)
        self._volume_inputs: list[list[Obj]] = []  # the mirror's storage lists the volumes were made from
        self._volumes: VolumeState | None = None  # what they were made into (a new simulator has its own)

    def run(self, snap: Snapshot, running: list[Obj], assumed: list[tuple[Obj, str]], pending: list[Obj],
            held: list[Obj], victims_terminate_at: str, now: datetime) -> Simulator:
        """One run over the pass's snapshot: ``running`` the bound pods, ``assumed`` pods with the node they
        wait to be bound to, ``pending`` the pods to try, ``held`` pending pods that keep their nomination.
        The outcome is in the simulator's ``results``, ``evicted`` and ``lost_nominations``."""
        try:
            return self._run(snap, running, assumed, pending, held, victims_terminate_at, now)
        except BaseException:
            self.sim = None  # a run that stopped half-way: the next one builds everything from the store
            raise

    def _run(self, snap: Snapshot, running: list[Obj], assumed: list[tuple[Obj, str]], pending: list[Obj],
             held: list[Obj], victims_terminate_at: str, now: datetime) -> Simulator:
        sim = self.sync(snap, running, assumed)
        # the stored budgets, as DefaultPreemption's lister sees them (their status the disruption controller's)
        sim.snapshot.disruption_budgets = snap.typed("poddisruptionbudgets")
        sim.victims_terminate_at = victims_terminate_at
        sim.snapshot.now = sim.pod_groups.now = now  # (the time a PodGroupScheduled condition is stamped with)
        sim.evicted, sim.lost_nominations, sim.warnings = [], [], []
        for pod in snap.typed("pods", pending):
            self._pending.append(sim.add_pod(pod).key)
        for pod in snap.typed("pods", held):
            sim.hold(pod)
            self._pending.append(f"{pod.metadata.namespace or 'default'}/{pod.metadata.name}")
        sim.run()
        for key in list(self._pending):
            result = sim.results.get(key)
            if result is not None and result.status == "scheduled" and result.node:
                self._pending.remove(key)
                self._bound_here.append(key)
        return sim

    def sync(self, snap: Snapshot, running: list[Obj], assumed: list[tuple[Obj, str]]) -> Simulator:
        """The simulator brought up to date with the snapshot, with no pending pod in it."""
        sim = self._cluster(snap)
        for key in self._pending:
            sim.forget_pod(key)
        self._pending = []
        self._sync_groups(sim, snap)
        if not self._sync_claims(sim, snap):
            sim = self._build(snap)
        self._sync_volumes(sim, snap)
        self._sync_bound(sim, snap, running, assumed)
        return sim

    def _sync_volumes(self, sim: Simulator, snap: Snapshot) -> None:
        """The volume plugins' PVs, PVCs, classes and CSI objects, as stored now (kube-scheduler's listers and
        assume caches): made anew when one of them changed or the last run assumed bindings (its PreBinds'), so
        that what a run assumed never outlives it; the version goes on counting, so that caches keyed by it see
        a change."""
        inputs = [snap.objects[r] for r in STORAGE_INPUTS]
        old = sim.snapshot.volumes
        if old is self._volumes and all(map(operator.is_, inputs, self._volume_inputs)) and not old.bindings:
            return
        self._volume_inputs = inputs
        last = old.version
        volumes = VolumeState.build(snap.typed("persistentvolumes"), snap.typed("persistentvolumeclaims"),
                                    snap.typed("storageclasses"), snap.typed("csinodes"), snap.typed("csidrivers"),
                                    snap.typed("csistoragecapacities"))
        volumes.version += last + 1
        sim.snapshot.volumes = self._volumes = volumes

    # --- the cluster side ---------------------------------------------------------------------------

    def _cluster(self, snap: Snapshot) -> Simulator:
        if self.sim is None or any(snap.objects[r] is not self._inputs.get(r) for r in CLUSTER_INPUTS):
            return self._build(snap)
        return self.sim

    def _build(self, snap: Snapshot) -> Simulator:
        """The cluster side from the snapshot, with the scheduler's random source and start index."""
        self._inputs = {r: snap.objects[r] for r in CLUSTER_INPUTS}
        claims = snap.typed("resourceclaims")
        self.sim = Simulator(snap.typed("nodes"), [], slices=snap.typed("resourceslices"),
                             classes=snap.typed("deviceclasses"), claims=claims,
                             taint_rules=snap.typed("devicetaintrules"), seed=self.seed, state=self.state,
                             services=snap.typed("services"),
                             controllers=[o for r in WORKLOAD_SELECTORS[1:] for o in snap.typed(r)],
                             namespaces=snap.typed("namespaces"), feature_gates=self.gates,
                             pod_groups=snap.typed("podgroups"))
        self.builds += 1
        self._claim_objs, self._claim_of = {}, {}
        for obj in snap.claims:
            typed = snap.cache.typed("resourceclaims", obj)
            if isinstance(typed, ResourceClaim):
                self._note_claim(_claim_key(obj), obj, typed)
        self._pod_objs, self._pod_of, self._bound_here = {}, {}, []
        self._pending = []
        self._group_objs = {}
        if self.sim.pod_groups.enabled:
            groups = self.sim.pod_groups.states.groups
            for obj in snap.objects["podgroups"]:
                key = _group_key(obj)
                if key in groups:
                    self._group_objs[key] = (obj, groups[key])
        return self.sim

    def _note_claim(self, key: Key, obj: Obj, typed: ResourceClaim) -> None:
        old = self._claim_of.get(key)
        if old is not None:
            self._claim_objs.pop(old, None)
        self._claim_objs[id(obj)] = (key, obj, typed)
        self._claim_of[key] = id(obj)

    def _sync_claims(self, sim: Simulator, snap: Snapshot) -> bool:
        """Bring the simulator's claims to the stored ones; False when a new claim names device attributes
        the DRA state does not index (the cluster side must be built again).

        The mirror's objects are read-only and replaced on every change: an object seen before is the same
        version, and still in the simulator unless a run replaced it there (then it is set again)."""
        claims = sim.snapshot.claims
        stored: set[int] = set()
        for obj in snap.claims:
            stored.add(id(obj))
            seen = self._claim_objs.get(id(obj))
            if seen is not None and claims.get(seen[0]) is seen[2]:
                continue
            typed = snap.cache.typed("resourceclaims", obj)
            if not isinstance(typed, ResourceClaim):
                continue
            key = _claim_key(obj)
            if key not in self._claim_of and not self._indexed(sim, typed):
                return False
            sim.snapshot.set_claim(typed)
            self._note_claim(key, obj, typed)
        for gone in [i for i in self._claim_objs if i not in stored]:
            key = self._claim_objs.pop(gone)[0]
            del self._claim_of[key]
            if key in claims:
                sim.snapshot.delete_claim(claims[key])
        if len(claims) != len(self._claim_of):  # made by a run and never stored (a write that failed)
            for key in [k for k in claims if k not in self._claim_of]:
                sim.snapshot.delete_claim(claims[key])
        return True

    def _sync_groups(self, sim: Simulator, snap: Snapshot) -> None:
        """Bring the simulator's PodGroups to the stored ones (by object, as the claims): a group's status
        write, the scheduler's own included, leaves the cluster side as it is."""
        groups = sim.pod_groups
        if not groups.enabled:
            return
        held = groups.states.groups
        stored: set[str] = set()
        for obj in snap.objects["podgroups"]:
            key = _group_key(obj)
            seen = self._group_objs.get(key)
            if seen is not None and seen[0] is obj and held.get(key) is seen[1]:
                stored.add(key)
                continue
            typed = snap.cache.typed("podgroups", obj)
            if not isinstance(typed, PodGroup):
                continue  # (one dralloc cannot read takes no part, as in a build)
            stored.add(key)
            # as a build takes it: the group, and the claims made for its template entries
            groups.add_group(typed, sim.templates, sim.names, sim.snapshot.set_claim, sim.warnings)
            self._group_objs[key] = (obj, held[key])
        for key in [k for k in self._group_objs if k not in stored]:
            del self._group_objs[key]
            groups.forget_group(key)

    @staticmethod
    def _indexed(sim: Simulator, claim: ResourceClaim) -> bool:
        known = sim.snapshot.attributes
        if known is None:
            return True
        named = referenced_attributes((), [claim.spec])
        return named is not None and named <= known

    # --- the pods -----------------------------------------------------------------------------------

    def _sync_bound(self, sim: Simulator, snap: Snapshot, running: list[Obj],
                    assumed: list[tuple[Obj, str]]) -> None:
        """Bring the simulator's bound pods to ``running`` and ``assumed`` (by object, as the claims)."""
        current: set[int] = set()
        entries: list[tuple[Obj, str | None]] = [(o, None) for o in running]
        for obj, node in [*entries, *assumed]:
            current.add(id(obj))
            seen = self._pod_objs.get(id(obj))
            if seen is not None and seen[2] == node:
                continue
            key = pod_key(obj)
            typed: Any = snap.cache.typed("pods", obj)
            sim.forget_pod(key)
            if not isinstance(typed, Pod):
                continue
            if node is not None and typed.spec.node_name != node:  # assumed: counted where it waits to be bound
                typed = replace(typed, spec=replace(typed.spec, node_name=node))
            sim.add_pod(typed)
            old = self._pod_of.get(key)
            if old is not None:
                self._pod_objs.pop(old, None)
            self._pod_objs[id(obj)] = (key, obj, node)
            self._pod_of[key] = id(obj)
        for gone in [i for i in self._pod_objs if i not in current]:
            key = self._pod_objs.pop(gone)[0]
            if self._pod_of.get(key) == gone:
                del self._pod_of[key]
                sim.forget_pod(key)
        for key in self._bound_here:  # bound by the last run, and not bound in the store (the bind failed)
            if key not in self._pod_of:
                sim.forget_pod(key)
        self._bound_here = []
