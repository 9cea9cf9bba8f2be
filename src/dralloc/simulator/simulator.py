"""``Simulator``: a cluster dump and a batch of pods in; placements, kube-scheduler's messages, evictions
and utilisation out. The library face of ``dralloc simulate`` (also importable as ``dralloc.Scheduler``).

    from dralloc.simulator import Simulator
    sched = Simulator.from_objects(objects, seed=0)
    result = sched.schedule()          # result.pods, result.claims, result.unschedulable, result.utilization

Pods with ``spec.nodeName`` are running: they count on their node and their claims must be allocated.
Pending pods of the default scheduler are scheduled one at a time in PrioritySort order; a pod that fails
waits until the cluster changes (an eviction, a deallocation) and is tried again, as in kube-scheduler's
unschedulable pool.

Preemption victims are gone at once by default (a simulation has no clock: their kubelets stopped them). With
``victims_terminate_at`` they are deleted as in a live cluster: marked terminating (the DisruptionTarget
condition, deletionTimestamp = that time + their grace period) and kept on their node with their claims until
the caller removes them; meanwhile their preemptor waits (``DefaultPreemption``'s terminating-pod rule).
In that mode one ``schedule()`` is one scheduling cycle per pending pod, as a live scheduler's queue gives: a
pod that preempted or failed is not tried again within the call (the caller retries it when the cluster
changes), so that each cycle's outcome (its message, the nomination it set or cleared) can be written.
Pending pods already being deleted are not scheduled.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from datetime import datetime
from typing import Any, NamedTuple

from msgspec.structs import replace

from dralloc.api.core_v1 import SCHEDULING_GATED_MESSAGE, Node, Pod, PodCondition, PodStatus
from dralloc.api.core_v1_storage import PersistentVolume, PersistentVolumeClaim
from dralloc.api.resource_v1 import (
    DeviceClass,
    DeviceTaintRule,
    ResourceClaim,
    ResourceClaimTemplate,
    ResourceSlice,
)
from dralloc.api.scheduling_v1alpha2 import PodGroup
from dralloc.api.storage_v1 import CSIDriver, CSINode, CSIStorageCapacity, StorageClass
from dralloc.controllers.claim_release import release
from dralloc.controllers.ephemeral_volumes import ephemeral_claims
from dralloc.controllers.names import NameGenerator
from dralloc.controllers.preemption import (
    DEFAULT_GRACE_SECONDS,
    PREEMPTOR_POD,
    PREEMPTOR_POD_GROUP,
    mark_preempted,
)
from dralloc.errors import InputError
from dralloc.scheduler.affinity_terms import NAMESPACE_NAME_LABEL, selects_namespaces_by_label
from dralloc.scheduler.cache import SchedulerCache
from dralloc.scheduler.config import SchedulerConfig
from dralloc.scheduler.features import FeatureGates
from dralloc.scheduler.framework import Code, Plugin, Status, truncate_message
from dralloc.scheduler.nodeinfo import NodeInfo
from dralloc.scheduler.plugins.default_preemption.disruption_budgets import Budget, violations
from dralloc.scheduler.podinfo import PodInfo
from dralloc.scheduler.profile import DEFAULT_SCHEDULER, Profile
from dralloc.scheduler.queue import SchedulingQueue
from dralloc.scheduler.schedule_group import GroupOutcome
from dralloc.scheduler.schedule_one import Framework, SchedulerState
from dralloc.scheduler.snapshot import ClusterSnapshot, claim_key
from dralloc.scheduler.volume_warnings import volume_warnings
from dralloc.scheduler.volumes import VolumeState
from dralloc.simulator.pod_groups import PodGroupScheduling
from dralloc.simulator.result import POD_GROUP_PREEMPTOR, Eviction, PodResult, SimulationResult
from dralloc.simulator.utilization import utilization

__all__ = ["DEFAULT_GRACE_SECONDS", "DEFAULT_SCHEDULER", "MAX_ATTEMPTS", "POD_UID_NAMESPACE", "Scheduler", "Simulator",
           "mark_preempted"]

POD_UID_NAMESPACE = uuid.UUID("0c3e8a52-5d55-4c41-9a3e-6472616c6c70")
MAX_ATTEMPTS = 25


def _pod_uid(pod: Pod) -> str:
    meta = pod.metadata
    return meta.uid or str(uuid.uuid5(POD_UID_NAMESPACE, f"{meta.namespace or 'default'}/{meta.name}"))


class Simulator:
    """A simulated kube-scheduler (1.36 default profile) over one cluster snapshot."""

    def __init__(self, nodes: list[Node], pods: list[Pod], *, slices: Iterable[ResourceSlice] = (),
                 classes: Iterable[DeviceClass] = (), claims: Iterable[ResourceClaim] = (),
                 templates: Iterable[ResourceClaimTemplate] = (), taint_rules: Iterable[DeviceTaintRule] = (),
                 priority_classes: Iterable[Any] = (), seed: int = 0, feature_gates: FeatureGates | None = None,
                 percentage_of_nodes_to_score: int = 0, group_nodes: bool = True,
                 names: NameGenerator | None = None, victims_terminate_at: str | None = None,
                 nominated: Iterable[Pod] = (), now: datetime | None = None,
                 plugins: list[Plugin] | None = None, profiles: Iterable[Profile] = (),
                 config: SchedulerConfig | None = None,
                 services: Iterable[Any] = (), controllers: Iterable[Any] = (), namespaces: Iterable[Any] = (),
                 disruption_budgets: Iterable[Any] = (),
                 persistent_volumes: Iterable[PersistentVolume] = (),
                 persistent_volume_claims: Iterable[PersistentVolumeClaim] = (),
                 storage_classes: Iterable[StorageClass] = (), csi_nodes: Iterable[CSINode] = (),
                 csi_drivers: Iterable[CSIDriver] = (), storage_capacities: Iterable[CSIStorageCapacity] = (),
                 pod_groups: Iterable[PodGroup] = (), state: SchedulerState | None = None) -> None:
        """``nominated``: pending pods not to be scheduled in this run whose ``nominatedNodeName`` still
        reserves room, as kube-scheduler's nominator holds every pending pod's nomination; those that lose it
        to a preemptor are listed in ``lost_nominations``. ``now``: the time against which binding conditions
        time out (None, as for a dump: they never do). ``plugins``: the default-scheduler profile's plugins in
        order (default: kube-scheduler's default profile). ``profiles``: more profiles, by scheduler name
        (pods naming none of them are left to that scheduler). ``config``: a KubeSchedulerConfiguration
        (``dralloc.scheduler.config``): its profiles replace the default one. ``services`` and ``controllers``
        (ReplicationControllers, ReplicaSets, StatefulSets): whose selectors the default topology spread
        constraints use. ``namespaces``: the Namespace objects (their labels, for pod affinity's
        namespaceSelector); ``disruption_budgets``: the PodDisruptionBudgets preemption respects.
        ``pod_groups``: the scheduling.k8s.io PodGroups (read with the GenericWorkload gate on).
        ``state``: the random source and rotating start index, which every profile shares (default: a new
        one from ``seed``); a caller that schedules in several runs passes its own to keep them going."""
        claims, classes, templates = list(claims), list(classes), list(templates)
        self.seed = seed
        self.percentage_of_nodes_to_score = percentage_of_nodes_to_score
        self.source_objects: list[Any] | None = None  # what from_objects was given (for planning)
        self.victims_terminate_at = victims_terminate_at
        self.gates = feature_gates or FeatureGates()
        self.names = names or NameGenerator(seed)
        self.warnings: list[str] = []
        self.templates: dict[str, dict[str, ResourceClaimTemplate]] = {}
        for t in templates:
            self.templates.setdefault(t.metadata.namespace or "default", {})[t.metadata.name or ""] = t
        self._priority_classes = list(priority_classes)
        from dralloc.scheduler.attributes import referenced_attributes

        attributes = referenced_attributes(classes, [c.spec for c in claims] + [t.spec.spec for t in templates])
        self.snapshot = ClusterSnapshot(list(nodes), list(slices), classes, claims, list(taint_rules), self.gates,
                                        attributes, now=now)
        self.snapshot.dra.share = group_nodes
        self.snapshot.services = list(services)
        self.snapshot.controllers = list(controllers)
        self.snapshot.namespace_labels = namespace_labels(namespaces)
        self.snapshot.disruption_budgets = list(disruption_budgets)
        self.snapshot.volumes = VolumeState.build(list(persistent_volumes), list(persistent_volume_claims),
                                                  list(storage_classes), list(csi_nodes), list(csi_drivers),
                                                  list(storage_capacities))
        self.cache = SchedulerCache(self.snapshot)
        self.config = config
        # kube-scheduler keeps the random source and nextStartNodeIndex on its Scheduler: every profile's cycle
        # draws from and advances the same ones.
        self.state = state if state is not None else SchedulerState(seed)
        if config is not None:
            # A configuration file: exactly its profiles (pods naming another scheduler are left to it).
            self.frameworks = {p.scheduler_name: Framework(
                self.snapshot, seed=seed, percentage_of_nodes_to_score=config.percentage_for(p),
                new_claim_name=self.names.generate, group_nodes=group_nodes, cache=self.cache,
                profile=Profile.from_config(p), state=self.state) for p in config.profiles}
            self.framework = self.frameworks.get(DEFAULT_SCHEDULER) or next(iter(self.frameworks.values()))
            profiles = ()
        else:
            self.framework = Framework(self.snapshot, seed=seed,
                                       percentage_of_nodes_to_score=percentage_of_nodes_to_score,
                                       new_claim_name=self.names.generate, group_nodes=group_nodes,
                                       plugins=plugins, cache=self.cache, state=self.state)
            # One framework per profile, as kube-scheduler keeps one per schedulerName.
            self.frameworks = {DEFAULT_SCHEDULER: self.framework}
        for profile in profiles:
            self.frameworks[profile.scheduler_name] = Framework(
                self.snapshot, seed=seed, percentage_of_nodes_to_score=percentage_of_nodes_to_score,
                new_claim_name=self.names.generate, group_nodes=group_nodes, plugins=profile.plugins(),
                cache=self.cache, state=self.state)
        self.pod_groups = PodGroupScheduling(self.gates, self.cache, list(pod_groups), now, self._priority_classes,
                                             self.warnings)
        self.pod_groups.make_claims(self.templates, self.names, self.snapshot.set_claim, self.warnings)
        self._requests_cache: dict[bytes, tuple[dict[str, int], int, int]] = {}
        self.results: dict[str, PodResult] = {}
        self.infos: dict[str, PodInfo] = {}
        self.pending: list[PodInfo] = []
        self.evicted: list[Eviction] = []
        self.held: dict[str, PodInfo] = {}  # the ``nominated`` pods, by key
        self.lost_nominations: list[str] = []  # keys of held pods whose nomination a preemptor took
        self._admitted = 0  # pods taken in so far (each PodInfo's order, the queue's last tie-break)
        for pod in pods:
            self._admit(pod)
        for pod in nominated:
            self._hold(pod)

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_objects(cls, objects: Iterable[Any], *, seed: int = 0, feature_gates: FeatureGates | None = None,
                     percentage_of_nodes_to_score: int = 0, victims_terminate_at: str | None = None,
                     profiles: Iterable[Profile] = (), config: SchedulerConfig | None = None) -> Simulator:
        """Build from decoded objects of any kinds dralloc reads (others are ignored)."""
        from dralloc.simulator.loading import sort_objects

        objects = list(objects)
        names = NameGenerator(seed)
        objs = sort_objects(objects, names)
        if feature_gates is not None and feature_gates.enabled("WorkloadWithJob"):
            from dralloc.api.batch_v1 import Job
            from dralloc.controllers.job_workloads import attach_job_workloads

            jobs = [w for w in objs.workloads if isinstance(w, Job)]
            made, groups, objs.pods = attach_job_workloads(jobs, objs.pods, {id(o) for o in objects})
            objs.scheduling_workloads.extend(made)
            objs.pod_groups.extend(groups)
        sched = cls(objs.nodes, objs.pods, slices=objs.slices, classes=objs.classes, claims=objs.claims,
                    templates=objs.templates, taint_rules=objs.taint_rules, priority_classes=objs.priority_classes,
                    seed=seed, feature_gates=feature_gates, percentage_of_nodes_to_score=percentage_of_nodes_to_score,
                    names=names, victims_terminate_at=victims_terminate_at, profiles=profiles, config=config,
                    services=objs.services, controllers=[*objs.replication_controllers, *objs.workloads],
                    namespaces=objs.namespaces, disruption_budgets=objs.disruption_budgets,
                    persistent_volumes=objs.persistent_volumes, persistent_volume_claims=objs.persistent_volume_claims,
                    storage_classes=objs.storage_classes, csi_nodes=objs.csi_nodes, csi_drivers=objs.csi_drivers,
                    storage_capacities=objs.storage_capacities, pod_groups=objs.pod_groups)
        sched.warnings[:0] = objs.warnings
        from dralloc.simulator.unmodelled import unmodelled_inputs

        sched.warnings.extend(unmodelled_inputs(objs.nodes, sched.pending))
        sched.source_objects = objects
        return sched

    def _priority(self, pod: Pod) -> int:
        if pod.spec.priority is not None:
            return pod.spec.priority
        name = pod.spec.priority_class_name
        for pc in self._priority_classes:
            if name and pc.metadata.name == name:
                return int(pc.value)
        if name:
            self.warnings.append(f"pod {pod.metadata.namespace or 'default'}/{pod.metadata.name}: "
                                 f"priority class {name!r} not found; priority 0")
            return 0
        for pc in self._priority_classes:
            if getattr(pc, "global_default", False):
                return int(pc.value)
        return 0

    def _admit(self, pod: Pod) -> PodResult:
        """Take a pod into the simulation: running (bound) or pending, with its template claims made."""
        meta = pod.metadata
        if not meta.namespace:
            pod = replace(pod, metadata=replace(meta, namespace="default"))
        if not pod.metadata.uid:
            pod = replace(pod, metadata=replace(pod.metadata, uid=_pod_uid(pod)))
        key = f"{pod.metadata.namespace}/{pod.metadata.name}"
        if key in self.results:
            raise InputError(f"pod {key} appears twice")
        pod = self._make_template_claims(pod)
        info = PodInfo.build(pod, self._next_order(), self._priority(pod), self._requests_cache)
        self.infos[key] = info
        phase = pod.status.phase if pod.status is not None else None
        result = PodResult(pod, pod.spec.node_name)
        self.results[key] = result
        if phase in ("Succeeded", "Failed"):
            result.status = phase.lower()
            return result
        self.pod_groups.admit(info)  # (a finished pod is no longer in the scheduler's view of its group)
        if pod.spec.node_name:
            result.status = "running"
            node = self.snapshot.by_name.get(pod.spec.node_name)
            if node is None:
                self.warnings.append(f"pod {key} runs on node {pod.spec.node_name}, which is not in the input")
            else:
                self.cache.add_pod(info, node)
            for claim in self._pod_claims(pod):
                if claim.status is None or claim.status.allocation is None:
                    self.warnings.append(f"pod {key} runs on {pod.spec.node_name} but its ResourceClaim "
                                         f"{claim.metadata.name} is not allocated")
            return result
        if pod.metadata.deletion_timestamp:
            result.status = "skipped"
            result.message = "being deleted: not scheduled"
            return result
        scheduler_name = pod.spec.scheduler_name or DEFAULT_SCHEDULER
        if scheduler_name not in self.frameworks:
            result.status = "skipped"
            result.message = f'schedulerName "{scheduler_name}": left to that scheduler'
            return result
        if pod.spec.scheduling_gates:
            result.status = "unschedulable"
            result.message = SCHEDULING_GATED_MESSAGE
            result.held = True
            return result
        self._warn_namespace_labels(info)
        for pvc in ephemeral_claims(pod, self.snapshot.volumes):
            self.snapshot.volumes.add_claim(pvc)
        self.warnings.extend(volume_warnings(pod, self.snapshot.volumes))
        self.pending.append(info)
        nominated = self.snapshot.by_name.get(pod.status.nominated_node_name or "") if pod.status else None
        if nominated is not None:
            # kube-scheduler's nominator takes a pending pod's nominatedNodeName as it comes from the API:
            # pods of lower priority are then filtered with it counted on that node.
            self.snapshot.nominate(nominated, info)
        return result

    def _next_order(self) -> int:
        self._admitted += 1
        return self._admitted - 1

    def _warn_namespace_labels(self, info: PodInfo) -> None:
        if info.affinity is not None and not self.snapshot.namespace_labels \
                and selects_namespaces_by_label(info.affinity):
            self.warnings.append(f"pod {info.key}: its pod (anti-)affinity selects namespaces by label, but the "
                                 f"input has no Namespace objects: only each namespace's {NAMESPACE_NAME_LABEL} "
                                 f"label is known")

    def _hold(self, pod: Pod) -> None:
        """Count a pending pod that is not scheduled now on its nominated node (for pods of at most its
        priority, as the nominator does)."""
        node = self.snapshot.by_name.get(pod.status.nominated_node_name or "") if pod.status else None
        if node is None:
            return
        if not pod.metadata.namespace:
            pod = replace(pod, metadata=replace(pod.metadata, namespace="default"))
        key = f"{pod.metadata.namespace}/{pod.metadata.name}"
        if key in self.results or key in self.held:
            raise InputError(f"pod {key} appears twice")
        info = PodInfo.build(pod, self._next_order(), self._priority(pod), self._requests_cache)
        self.held[key] = info
        self.snapshot.nominate(node, info)

    def _make_template_claims(self, pod: Pod) -> Pod:
        """The resourceclaim controller's step: a claim per template reference, recorded in the pod status."""
        from dralloc.controllers.resourceclaims import claims_for_pod

        if not any(pc.resource_claim_template_name for pc in pod.spec.resource_claims or ()):
            return pod
        pod = self.pod_groups.with_group_claims(pod)
        try:
            pod, claims = claims_for_pod(pod, self.templates.get(pod.metadata.namespace or "default", {}),
                                         self.names)
        except InputError as exc:  # the pod stays pending: its claim is never created
            self.warnings.append(str(exc))
            return pod
        for claim in claims:
            self.snapshot.set_claim(claim)
        return pod

    def _pod_claims(self, pod: Pod) -> list[ResourceClaim]:
        ns = pod.metadata.namespace or "default"
        generated = {s.name: s.resource_claim_name for s in (pod.status.resource_claim_statuses or ())} \
            if pod.status is not None else {}
        out = []
        for pc in pod.spec.resource_claims or ():
            name = pc.resource_claim_name or generated.get(pc.name)
            claim = self.snapshot.claims.get((ns, name)) if name else None
            if claim is not None:
                out.append(claim)
        if pod.status is not None and pod.status.extended_resource_claim_status:
            name = pod.status.extended_resource_claim_status.get("resourceClaimName")
            claim = self.snapshot.claims.get((ns, name)) if name else None
            if claim is not None:
                out.append(claim)
        return out

    # ------------------------------------------------------------------ a long-lived caller
    # ``dralloc serve`` keeps one Simulator for its whole life: it adds the pods of the cluster as they come
    # (``add_pod``: running or pending; ``hold``: pending, not scheduled now, keeping its nomination), takes
    # out those that went or changed (``forget_pod``), and schedules the pending ones with ``run``.
    def add_pod(self, pod: Pod) -> PodResult:
        """Take a pod in: bound (it counts on its node) or pending (scheduled by the next ``run``)."""
        return self._admit(pod)

    def hold(self, pod: Pod) -> None:
        """A pending pod not scheduled now whose ``nominatedNodeName`` still reserves room."""
        self._hold(pod)

    def forget_pod(self, key: str) -> None:
        """Take a pod out (``namespace/name``): off its node, off every nomination. Its claims stay as they
        are (the caller says how they changed)."""
        self.results.pop(key, None)
        info = self.infos.pop(key, None) or self.held.pop(key, None)
        if info is None:
            return
        self.pod_groups.forget(info)  # (the barrier counts the group's pods as they are now)
        node = self.cache.placed.get(info.uid) or self.cache.assumed.get(info.uid)
        if node is not None:
            self.cache.remove_pod(info, node)
        if self.snapshot.nominations:
            for each in self.snapshot.nodes:
                self.snapshot.unnominate(each, info)

    def pod_claims(self, pod: Pod) -> list[ResourceClaim]:
        """The pod's claims as they are now (those of its entries that exist, and its extended-resource claim)."""
        return self._pod_claims(pod)

    # ------------------------------------------------------------------ scheduling
    def schedule(self, progress: Any = None) -> SimulationResult:
        """Schedule every pending pod; returns the whole simulation's result. Pods that failed are tried
        again after an eviction or deallocation freed room, except with ``victims_terminate_at`` (one cycle
        each: the caller is the queue)."""
        self.run(progress)
        return self.result()

    def run(self, progress: Any = None) -> None:
        """``schedule`` without the whole result: each pod's outcome is in ``results``, the evictions in
        ``evicted``."""
        groups = self.pod_groups
        queue = SchedulingQueue(lambda info: self._framework(info).pre_enqueue(info) or groups.pre_enqueue(info))
        for info in self.pending:
            status = queue.add(info)
            if status is not None:
                self._gated(info, status)
        self.pending = []
        done = 0
        while queue:
            info = queue.pop()
            group = groups.group_of(info)
            if group is not None:  # its members waiting in activeQ go with it, in one pod group cycle
                failed, preempted = groups.schedule(queue, info, group, self._framework(info), self.record_member,
                                                    self.evict_for_group)
                if preempted and self.victims_terminate_at is None:  # its victims are gone: try it again
                    queue.move_all_to_active()
                for pod in failed:
                    if preempted and self.victims_terminate_at is None and self.results[pod.key].attempts < MAX_ATTEMPTS:
                        queue.requeue(pod)
                    else:
                        queue.add_unschedulable(pod)
                if progress is not None:
                    done += 1
                    progress(done, len(queue) + len(queue.unschedulable))
                continue
            attempt = self._attempt(info)
            if progress is not None:
                done += 1
                progress(done, len(queue) + len(queue.unschedulable))
            if attempt is None or attempt.code == Code.WAIT:  # bound, or held by Permit (assumed, not retried)
                continue
            if attempt.changed_cluster and self.victims_terminate_at is None:
                queue.move_all_to_active()
                if self.results[info.key].attempts < MAX_ATTEMPTS:
                    queue.requeue(info)
                    continue
            queue.add_unschedulable(info)

    def schedule_pod(self, pod: Pod) -> PodResult:
        """Add one pod and try to schedule it now (one attempt)."""
        result = self._admit(pod)
        if self.pending and self.pending[-1].key == result.key:
            info = self.pending.pop()
            status = self._framework(info).pre_enqueue(info)
            if status is None:
                self._attempt(info)
            else:
                self._gated(info, status)
        return self.results[result.key]

    def _framework(self, info: PodInfo) -> Framework:
        """The framework of the pod's profile."""
        return self.frameworks[info.pod.spec.scheduler_name or DEFAULT_SCHEDULER]

    def _gated(self, info: PodInfo, status: Status) -> None:
        """A pod the PreEnqueue plugins hold back is never tried: it stays pending with their message."""
        result = self.results[info.key]
        result.status = "error" if status.code == Code.ERROR else "unschedulable"
        result.message = truncate_message(status.message)
        result.held = True

    def _attempt(self, info: PodInfo) -> Any:
        """One cycle; None when bound, else the Attempt."""
        result = self.results[info.key]
        result.attempts += 1
        result.held = False
        attempt = self._framework(info).attempt(info)
        if attempt.code == Code.SUCCESS and attempt.node is not None:
            pod = info.pod  # bound by the Bind plugin, with what PreBind recorded in its status
            if self.snapshot.nominations:
                for node in self.snapshot.nodes:
                    self.snapshot.unnominate(node, info)
            result.pod = pod
            result.node = attempt.node.name
            result.status = "scheduled"
            result.message = ""
            return None
        result.status = "error" if attempt.code == Code.ERROR else "unschedulable"
        result.message = truncate_message(attempt.message)
        attempt.evicted = self._evict_for(info, attempt.nominated, attempt.evicted, attempt.unnominated)
        if attempt.clear_nomination and info.pod.status is not None and info.pod.status.nominated_node_name:
            info.pod = _with_nomination(info.pod, None)
            result.pod = info.pod
            if self.snapshot.nominations:
                for node in self.snapshot.nodes:
                    self.snapshot.unnominate(node, info)
        if attempt.nominated is not None:
            status = info.pod.status or PodStatus()
            info.pod = replace(info.pod, status=replace(status, nominated_node_name=attempt.nominated.name))
            result.pod = info.pod
            if self.snapshot.nominations:
                for node in self.snapshot.nodes:
                    self.snapshot.unnominate(node, info)
            self.snapshot.nominate(attempt.nominated, info)
        return attempt

    def record_member(self, info: PodInfo, code: Code, node: NodeInfo | None, message: str,
                      nomination: tuple[NodeInfo | None] | None = None) -> bool:
        """A pod group member's outcome (True when bound); ``nomination``: when the cycle sets it, the node its
        nominatedNodeName becomes (a group waiting for its preemption's victims to go) or None (cleared)."""
        result = self.results[info.key]
        result.attempts += 1
        result.held = False
        if code == Code.SUCCESS and node is not None:
            result.pod = info.pod
            result.node = node.name
            result.status = "scheduled"
            result.message = ""
            return True
        result.status = "error" if code == Code.ERROR else "unschedulable"
        result.message = truncate_message(message)
        if nomination is not None:
            (nominated,) = nomination
            info.pod = _with_nomination(info.pod, nominated.name if nominated is not None else None)
            result.pod = info.pod
            if self.snapshot.nominations:
                for each in self.snapshot.nodes:
                    self.snapshot.unnominate(each, info)
            if nominated is not None:
                self.snapshot.nominate(nominated, info)
        return False

    def evict_for_group(self, outcome: GroupOutcome) -> None:
        """Evict the victims of a pod group's preemption (``actuatePodGroupPreemption``), the preemptor being
        the group (``PodGroup/<namespace>/<name>``, of its first member's scheduler)."""
        first = outcome.members[0].pod.pod.spec.scheduler_name if outcome.members else None
        by = Preemptor(f"{POD_GROUP_PREEMPTOR}{outcome.key}", first, PREEMPTOR_POD_GROUP)
        broken = self._budgets_broken(outcome.preempted)
        for victim in outcome.preempted:
            self._evict(victim, None, by, broken[id(victim)])
        for member in outcome.member_preemptions:  # (WorkloadAwarePreemption off: a member preempted for itself)
            self._evict_for(member.pod, member.node, member.victims, member.unnominated)

    def _evict_for(self, preemptor: PodInfo, node: NodeInfo | None, victims: list[PodInfo],
                   unnominated: list[PodInfo]) -> list[PodInfo]:
        """A pod's own preemption carried out: its victims evicted (those actually evicted returned), the
        lower-priority pods that lost their nomination to it updated."""
        broken = self._budgets_broken(victims)
        by = Preemptor(preemptor.key, preemptor.pod.spec.scheduler_name)
        evicted = [v for v in victims if self._evict(v, node, by, broken[id(v)])]
        for lowered in unnominated:
            lowered.pod = _with_nomination(lowered.pod, None)
            if lowered.key in self.results:
                self.results[lowered.key].pod = lowered.pod
            else:
                self.lost_nominations.append(lowered.key)
        return evicted

    def _budgets_broken(self, victims: list[PodInfo]) -> dict[int, list[str]]:
        """For each victim (by id), the disruption budgets its eviction takes below zero, counting the victims
        in importance order against each budget's ``disruptionsAllowed``."""
        budgets = [Budget.of(b) for b in self.snapshot.disruption_budgets]
        return {id(v): broken for v, broken in zip(victims, violations(victims, budgets))}

    def _spend_budgets(self, victim: PodInfo) -> None:
        """The disruption controller's next status of every budget covering a deleted victim: one healthy pod
        fewer, so one disruption fewer allowed (never below zero)."""
        changed = False
        budgets = []
        for pdb in self.snapshot.disruption_budgets:
            if pdb.status is not None and Budget.of(pdb).covers(victim):
                pdb = replace(pdb, status=replace(pdb.status, disruptions_allowed=max(0, pdb.status.disruptions_allowed - 1),
                                                  current_healthy=max(0, pdb.status.current_healthy - 1)))
                changed = True
            budgets.append(pdb)
        if changed:
            self.snapshot.disruption_budgets = budgets

    def _evict(self, victim: PodInfo, node: NodeInfo | None, by: Preemptor, violated: list[str] | None = None) -> bool:
        """Delete a preemption victim: free its node share, un-reserve its claims, deallocate or delete
        the claims nobody else uses (as the resourceclaim controller would). With ``victims_terminate_at``
        it is only marked terminating, and a victim already being deleted is left alone (kube-scheduler
        sends no request for it). False when nothing was done."""
        result = self.results[victim.key]
        if result.status == "evicted":  # (chosen again by a later member of the same group cycle: one delete)
            return False
        node_name = victim.pod.spec.node_name or result.node or ""
        if self.victims_terminate_at is not None:
            if victim.pod.metadata.deletion_timestamp:
                return False
            victim.pod = mark_preempted(victim.pod, self.victims_terminate_at, by.scheduler_name, by.kind)
            result.pod = victim.pod
            marked = self.snapshot.by_name.get(node_name)
            if marked is not None and marked.dirty_sink is not None:
                # A terminating pod no longer counts for topology spreading: the node's pods changed.
                marked.dirty_sink[0].add(marked.dirty_sink[1])
            grace = victim.pod.metadata.deletion_grace_period_seconds
            if grace is not None and grace > 0:
                result.status = "evicted"
                result.message = _preempted_message(by, node_name, violated)
                self.evicted.append(Eviction(victim.namespace, victim.name, node_name, by.key, list(violated or ())))
                self._spend_budgets(victim)
                return True
        holder = self.snapshot.by_name.get(node_name) or node
        if holder is not None:
            self.cache.remove_pod(victim, holder)
        self.release_claims(victim.pod)
        result.status = "evicted"
        result.node = None
        result.message = _preempted_message(by, node_name, violated)
        self.evicted.append(Eviction(victim.namespace, victim.name, node_name, by.key, list(violated or ())))
        self._spend_budgets(victim)
        return True

    def release_claims(self, pod: Pod, *, pod_deleted: bool = True) -> None:
        """Drop the pod from its claims' ``reservedFor``; a claim nobody uses any more is deallocated, or
        deleted when it was generated for this pod and the pod is gone (``pod_deleted``)."""
        release_pod_claims(self.snapshot, pod, self._pod_claims(pod), pod_deleted=pod_deleted)

    # ------------------------------------------------------------------ what-if
    def add_nodes(self, count: int, like: str) -> list[str]:
        """Clone node ``like`` with its node-local ResourceSlices ``count`` times (as cluster-autoscaler's
        template node); returns the new node names. Rebuilds the snapshot's DRA state."""
        from dralloc.simulator.whatif import clone_nodes

        return clone_nodes(self, count, like)

    def remove_node(self, name: str) -> list[str]:
        """Remove a node and its node-local slices; its pods become pending again with their generated
        claims deallocated. Returns the keys of the pods that became pending."""
        from dralloc.simulator.whatif import remove_node

        return remove_node(self, name)

    def remove_nodes(self, names: list[str]) -> list[str]:
        """``remove_node`` for several nodes at once (one rebuild)."""
        from dralloc.simulator.whatif import remove_nodes

        return remove_nodes(self, names)

    def plan_scale_up(self, templates: list[Any], max_nodes: dict[str, int] | None = None,
                      **options: Any) -> Any:
        """The fewest nodes per template that make this cluster's pending pods schedule: a ScaleUpPlan
        (``dralloc.simulator.planner``; needs a scheduler built by ``from_objects``)."""
        from dralloc.simulator.planner import plan_scale_up

        return plan_scale_up(self._source(), templates, settings=self._plan_settings(), max_nodes=max_nodes,
                             **options)

    def plan_scale_down(self, **options: Any) -> Any:
        """A set of nodes that can go together, their pods rescheduled elsewhere: a ScaleDownPlan."""
        from dralloc.simulator.planner import plan_scale_down

        return plan_scale_down(self._source(), settings=self._plan_settings(), **options)

    def _source(self) -> list[Any]:
        if self.source_objects is None:
            raise ValueError("planning needs a Scheduler built with Scheduler.from_objects")
        return self.source_objects

    def _plan_settings(self) -> Any:
        from dralloc.simulator.planner import PlanSettings

        return PlanSettings(type(self), self.seed, self.gates, self.percentage_of_nodes_to_score, self.config)

    def max_copies(self, target: str, limit: int = 10_000) -> tuple[int, dict[str, int], str]:
        """How many more copies of pod ``target`` fit: (count, copies per node, why the next did not). For a
        PodGroup (``PodGroup/name`` or ``namespace/name``, gates on): how many more copies of the whole group
        fit, each all or nothing, with copies per topology domain (``*`` without a constraint)."""
        key = self._pod_group_target(target)
        if key is not None:
            return self._max_group_copies(key, min(limit, 1000))
        from dralloc.simulator.whatif import max_copies

        return max_copies(self, target, limit)

    def _pod_group_target(self, target: str) -> str | None:
        groups = self.pod_groups
        if not groups.enabled:
            return None
        name = target.removeprefix("PodGroup/")
        key = name if "/" in name else f"default/{name}"
        if key in groups.states.groups and (target.startswith("PodGroup/") or key not in self.results):
            return key
        return None

    def _max_group_copies(self, key: str, limit: int) -> tuple[int, dict[str, int], str]:
        from dralloc.simulator.pod_groups import copy_members

        groups = self.pod_groups
        group = groups.states.groups[key]
        pods = [self.results[m.key].pod for m in groups.states.members[key]]
        per_domain: dict[str, int] = {}
        for i in range(1, limit + 1):
            copy, members = copy_members(group, pods, f"max-{i}")
            copy_key = groups.add_group(copy, self.templates, self.names, self.snapshot.set_claim, self.warnings)
            infos = []
            for pod in members:
                admitted = self._admit(pod)
                if self.pending and self.pending[-1].key == admitted.key:
                    infos.append(self.pending.pop())
            outcome = groups.run(copy_key, infos, self._framework(infos[0]) if infos else self.framework,
                                 self.record_member)
            if outcome.code != Code.SUCCESS or not infos:
                return i - 1, per_domain, outcome.message or (outcome.members[0].message if outcome.members else "")
            per_domain[outcome.domain or "*"] = per_domain.get(outcome.domain or "*", 0) + 1
        return limit, per_domain, f"stopped after {limit} copies"

    def explain(self, key: str, limit: int = 3) -> list[Any]:
        """dralloc's per-claim explanation of why a pending pod's claims do not fit, for the ``limit`` nodes
        that pass every other filter (the closest ones)."""
        from dralloc.simulator.explain import explain_pod

        return explain_pod(self, key, limit)

    # ------------------------------------------------------------------ result
    def result(self) -> SimulationResult:
        claims: dict[tuple[str, str], ResourceClaim] = {}
        for res in self.results.values():
            res.claims = self._pod_claims(res.pod)
            if res.status == "scheduled":
                res.pod = _scheduled_condition(res.pod)
            elif res.status in ("unschedulable", "error") and res.message:
                res.pod = _unschedulable_condition(res.pod, res.message,
                                                   "SchedulerError" if res.status == "error" else "Unschedulable")
        for c in self.snapshot.claims.values():
            claims[claim_key(c)] = c
        ordered = [claims[k] for k in sorted(claims)]
        return SimulationResult(list(self.results.values()), ordered, list(self.evicted),
                                utilization(self.snapshot), list(dict.fromkeys(self.warnings)), self.seed,
                                list(self.snapshot.volumes.bindings),
                                self.pod_groups.results(lambda key: self.results[key].message, self.evicted),
                                list(self.pod_groups.states.groups.values()))


class Preemptor(NamedTuple):
    """Who preempts a victim: its key in the evicted rows, its scheduler's name and its type (``pod`` or
    ``podgroup``, as the DisruptionTarget condition names it)."""

    key: str
    scheduler_name: str | None
    kind: str = PREEMPTOR_POD


def _preempted_message(by: Preemptor, node: str, violated: list[str] | None) -> str:
    text = f"preempted by {by.key} on node {node}"
    if violated:
        text += f"; violates PodDisruptionBudget {', '.join(violated)}"
    return text


def namespace_labels(namespaces: Iterable[Any]) -> dict[str, dict[str, str]]:
    """Each Namespace's labels, with the ``kubernetes.io/metadata.name`` label kube-apiserver sets on every
    namespace (a hand-written Namespace may lack it; the stored one never does)."""
    out: dict[str, dict[str, str]] = {}
    for ns in namespaces:
        name = ns.metadata.name or ""
        out[name] = {**(ns.metadata.labels or {}), NAMESPACE_NAME_LABEL: name}
    return out


def _scheduled_condition(pod: Pod) -> Pod:
    status = pod.status or PodStatus()
    conds = [c for c in status.conditions or () if c.type != "PodScheduled"]
    conds.append(PodCondition(type="PodScheduled", status="True"))
    return replace(pod, status=replace(status, conditions=conds))


def _unschedulable_condition(pod: Pod, message: str, reason: str) -> Pod:
    status = pod.status or PodStatus()
    conds = [c for c in status.conditions or () if c.type != "PodScheduled"]
    conds.append(PodCondition(type="PodScheduled", status="False", reason=reason, message=message))
    return replace(pod, status=replace(status, phase=status.phase or "Pending", conditions=conds))


def _with_nomination(pod: Pod, node: str | None) -> Pod:
    return replace(pod, status=replace(pod.status or PodStatus(), nominated_node_name=node))


# The name the simulator had before the framework and the simulator were split; kept for existing callers.
Scheduler = Simulator


def release_pod_claims(snapshot: ClusterSnapshot, pod: Pod, claims: Iterable[ResourceClaim], *,
                       pod_deleted: bool = True) -> None:
    """The pod leaves its claims (``claims``: their current state) by the resourceclaim controller's rule
    (``dralloc.controllers.claim_release``): it is dropped from each claim's ``reservedFor``; a claim it was
    the last to use is deallocated, or deleted when it was generated for this pod and the pod is gone
    (``pod_deleted``)."""
    uid = pod.metadata.uid
    for claim in claims:
        status = claim.status
        if status is None:
            continue
        owned = any(o.uid == uid and o.controller for o in claim.metadata.owner_references or ())
        outcome = release(status.reserved_for or (), lambda ref: ref.uid == uid, owner_gone=owned and pod_deleted)
        if outcome.delete:
            snapshot.delete_claim(claim)
        elif outcome.deallocate:
            snapshot.deallocate(claim)
        elif outcome.changed:
            snapshot.set_claim(replace(claim, status=replace(status, reserved_for=outcome.reserved_for)))
