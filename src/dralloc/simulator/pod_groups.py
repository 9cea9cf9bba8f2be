"""Pod groups in a simulation: which gates turn what on, the queue taking a group's members together, and
each group's outcome — the ``PodGroupScheduled`` condition kube-scheduler writes and the ``podGroups`` rows
of the result.

With ``GenericWorkload`` off (1.36's default) ``spec.schedulingGroup`` is ignored and PodGroups are not
read: every pod is scheduled on its own, as kube-scheduler does. With it on, the members of a PodGroup are
scheduled in a pod group cycle (:mod:`dralloc.scheduler.schedule_group`); ``GangScheduling`` adds the
all-or-nothing rule and the PreEnqueue barrier, ``TopologyAwareWorkloadScheduling`` the topology placements,
``WorkloadAwarePreemption`` the preemption for a whole group, whose victims the simulator evicts.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from datetime import datetime
from typing import Any

from msgspec.structs import replace

from dralloc.api.core_v1 import Pod, PodSchedulingGroup, PodStatus
from dralloc.api.meta import Condition
from dralloc.api.resource_v1 import ResourceClaim, ResourceClaimTemplate
from dralloc.api.scheduling_v1 import PriorityClass
from dralloc.api.scheduling_v1alpha2 import POD_GROUP_SCHEDULED, PodGroup, PodGroupStatus
from dralloc.controllers.names import NameGenerator
from dralloc.controllers.podgroup_claims import claims_for_pod_group, with_group_claims
from dralloc.controllers.priority import PriorityAdmissionError, admit_pod_group_priority
from dralloc.errors import InputError
from dralloc.scheduler.cache import SchedulerCache
from dralloc.scheduler.features import FeatureGates
from dralloc.scheduler.framework import Code, Status
from dralloc.scheduler.nodeinfo import NodeInfo
from dralloc.scheduler.plugins.gang_scheduling import GangScheduling
from dralloc.scheduler.pod_groups import PodGroupStates
from dralloc.scheduler.podinfo import PodInfo
from dralloc.scheduler.queue import SchedulingQueue
from dralloc.scheduler.schedule_group import GroupOutcome, PodGroupCycle
from dralloc.scheduler.schedule_one import Framework
from dralloc.simulator.result import Eviction, PodGroupResult

# How the simulator takes a member's outcome (code, node, message, and when the cycle sets its nomination, the
# node it is nominated to or None to clear it); True when the member is bound.
RecordMember = Callable[[PodInfo, Code, NodeInfo | None, str, tuple[NodeInfo | None] | None], bool]
# How the simulator evicts the victims of a group's preemption.
EvictForGroup = Callable[[GroupOutcome], None]

REASON_SCHEDULED = "Scheduled"
REASON_UNSCHEDULABLE = "Unschedulable"
REASON_ERROR = "SchedulerError"


class PodGroupScheduling:
    """The simulator's pod groups (None of this runs with GenericWorkload off)."""

    def __init__(self, gates: FeatureGates, cache: SchedulerCache, groups: list[PodGroup],
                 now: datetime | None = None, priority_classes: Iterable[PriorityClass] = (),
                 warnings: list[str] | None = None) -> None:
        """``now``: the time conditions are stamped with (None: unstamped). With WorkloadAwarePreemption, a
        group without ``spec.priority`` is admitted as kube-apiserver's Priority plugin admits a new one
        (``priority_classes``; one it would refuse keeps priority 0, with a line in ``warnings``)."""
        self.now = now
        self.enabled = gates.enabled("GenericWorkload")
        self.states = PodGroupStates(cache)
        self.gang = GangScheduling(self.states) if self.enabled and gates.enabled("GangScheduling") else None
        self.topology = self.enabled and gates.enabled("TopologyAwareWorkloadScheduling")
        self.claims = self.enabled and gates.enabled("DRAWorkloadResourceClaims")
        self.preemption = self.enabled and gates.enabled("WorkloadAwarePreemption")
        self.domains: dict[str, str | None] = {}
        self.memo: dict[tuple[object, object], Any] = {}  # placement outcomes across cycles
        if self.enabled:
            classes = list(priority_classes)
            for group in groups:
                if self.preemption and group.spec.priority is None:
                    group = _admitted(group, classes, warnings)
                self.states.add_group(group)

    def add_group(self, group: PodGroup, templates: Mapping[str, Mapping[str, ResourceClaimTemplate]],
                  names: NameGenerator, add_claim: Callable[[ResourceClaim], None], warnings: list[str]) -> str:
        """A PodGroup that comes after the input (a what-if copy), with its claims; returns its key."""
        self.states.add_group(group)
        key = f"{group.metadata.namespace or 'default'}/{group.metadata.name}"
        self.make_claims(templates, names, add_claim, warnings, only=key)
        return key

    def forget_group(self, key: str) -> None:
        """A PodGroup gone (deleted): its members, if any remain, wait for it as for a group never created."""
        self.states.groups.pop(key, None)
        self.domains.pop(key, None)
        if not self.states.members.get(key):
            self.states.members.pop(key, None)

    def make_claims(self, templates: Mapping[str, Mapping[str, ResourceClaimTemplate]], names: NameGenerator,
                    add_claim: Callable[[ResourceClaim], None], warnings: list[str], only: str | None = None) -> None:
        """The resourceclaim controller's claims for the groups' template entries (DRAWorkloadResourceClaims);
        a missing template leaves the group's claim uncreated, with a warning. ``only``: one group's key."""
        if not self.claims:
            return
        for key, group in list(self.states.groups.items()):
            if only is not None and key != only:
                continue
            try:
                group, created = claims_for_pod_group(
                    group, templates.get(group.metadata.namespace or "default", {}), names)
            except InputError as exc:
                warnings.append(str(exc))
                continue
            self.states.groups[key] = group
            for claim in created:
                add_claim(claim)

    def with_group_claims(self, pod: Pod) -> Pod:
        """A member pod with its template entries that match a group claim resolved to the group's claim."""
        name = pod.spec.scheduling_group.pod_group_name if self.claims and pod.spec.scheduling_group else None
        group = self.states.groups.get(f"{pod.metadata.namespace or 'default'}/{name}") if name else None
        return with_group_claims(pod, group) if group is not None else pod

    def admit(self, info: PodInfo) -> None:
        if self.enabled:
            self.states.add_pod(info)

    def forget(self, info: PodInfo) -> None:
        if self.enabled:
            self.states.remove_pod(info)

    def pre_enqueue(self, info: PodInfo) -> Status | None:
        """GangScheduling's barrier, after the profile's own PreEnqueue plugins."""
        return self.gang.pre_enqueue(info) if self.gang is not None else None

    def group_of(self, info: PodInfo) -> str | None:
        if not self.enabled:
            return None
        key = self.states.key_of(info)
        return key if key is not None and key in self.states.groups else None

    def schedule(self, queue: SchedulingQueue, first: PodInfo, key: str, framework: Framework,
                 record: RecordMember, evict: EvictForGroup | None = None) -> tuple[list[PodInfo], bool]:
        """One pod group cycle for ``first`` and its members waiting in activeQ, in ``first``'s profile;
        returns the members that failed (the caller puts them back in the queue) and whether the cycle
        preempted (its victims evicted through ``evict``)."""
        members = [p for p in self.states.members[key] if p is first or (p in queue and queue.take(p))]
        names = [p.pod.spec.scheduler_name or "default-scheduler" for p in members]
        other = next((n for n in names if n != names[0]), None)
        if other is not None:  # frameworkForPodGroup: one profile schedules the whole group
            message = (f"all pods in a single pod group should have the same .spec.schedulerName set, got: "
                       f'"{other}" and "{names[0]}"')
            for pod in members:
                record(pod, Code.ERROR, None, message, None)
            return members, False
        outcome = self.run(key, members, framework, record, evict)
        return ([m.pod for m in outcome.members if m.code != Code.SUCCESS],
                bool(outcome.preempted or outcome.member_preemptions))

    def run(self, key: str, members: list[PodInfo], framework: Framework, record: RecordMember,
            evict: EvictForGroup | None = None) -> GroupOutcome:
        """One pod group cycle over ``members``; each member's outcome recorded, and the group's. Without
        ``evict`` a preemption's victims are found but left in place (``preempted`` is then empty)."""
        cycle = PodGroupCycle(framework, self.states, self.gang, self.topology, framework.rng, self.memo,
                              self.preemption)
        outcome = cycle.run(key, members)
        if outcome.preempted or outcome.member_preemptions:
            if evict is not None:
                evict(outcome)
            else:  # (a what-if copy: nothing is evicted, so nobody waits for it)
                outcome.preempted, outcome.member_preemptions = [], []
                for m in outcome.members:
                    m.nominated = None
        self._record(outcome)
        for m in outcome.members:
            if not record(m.pod, m.code, m.node, m.message, (m.nominated,) if m.renominated else None):
                m.code = Code.ERROR if m.code == Code.ERROR else Code.UNSCHEDULABLE
        return outcome

    def _record(self, outcome: GroupOutcome) -> None:
        """The group's PodGroupScheduled condition as kube-scheduler patches it (never True → False)."""
        group = outcome.group
        if outcome.code == Code.SUCCESS:
            condition = Condition(type=POD_GROUP_SCHEDULED, status="True", reason=REASON_SCHEDULED, message="")
            self.domains[outcome.key] = outcome.domain
        elif outcome.code == Code.ERROR:
            condition = Condition(type=POD_GROUP_SCHEDULED, status="False", reason=REASON_ERROR,
                                  message=outcome.message)
        else:
            condition = Condition(type=POD_GROUP_SCHEDULED, status="False", reason=REASON_UNSCHEDULABLE,
                                  message=outcome.message)
        status = group.status or PodGroupStatus()
        old = next((c for c in status.conditions or () if c.type == POD_GROUP_SCHEDULED), None)
        if old is not None and old.status == "True" and condition.status != "True":
            return
        since = old.last_transition_time if old is not None and old.status == condition.status else None
        if since is None and self.now is not None:  # (SetStatusCondition stamps a change; a dump has no clock)
            since = self.now.strftime("%Y-%m-%dT%H:%M:%SZ")
        condition = replace(condition, observed_generation=group.metadata.generation, last_transition_time=since)
        others = [c for c in status.conditions or () if c.type != POD_GROUP_SCHEDULED]
        group = replace(group, status=replace(status, conditions=[*others, condition]))
        self.states.groups[outcome.key] = group

    def results(self, messages: Callable[[str], str], evictions: Iterable[Eviction] = ()) -> list[PodGroupResult]:
        """Every PodGroup, sorted by namespace and name. A group never tried (its members held at the
        queue's door) says why with its first member's message (``messages``: by pod key). With
        WorkloadAwarePreemption a group whose members were preempted names who did it last (``evictions``)."""
        preempted_by: dict[str, str] = {}
        if self.preemption:
            for eviction in evictions:
                preempted_by[f"{eviction.namespace}/{eviction.name}"] = eviction.by
        rows = []
        for key in sorted(self.states.groups):
            group = self.states.groups[key]
            cond = next((c for c in (group.status.conditions if group.status else None) or ()
                         if c.type == POD_GROUP_SCHEDULED), None)
            policy = group.spec.scheduling_policy.gang
            message = cond.message or "" if cond is not None else ""
            members = self.states.members.get(key, [])
            if cond is None and members:
                message = messages(members[0].key)
            rows.append(PodGroupResult(
                group.metadata.namespace or "default", group.metadata.name or "",
                policy.min_count if policy is not None else 1, len(self.states.scheduled(key)),
                cond is not None and cond.status == "True", self.domains.get(key), message,
                [m.key for m in members], list((group.status.conditions if group.status else None) or ()),
                next((preempted_by[m.key] for m in reversed(members) if m.key in preempted_by), None)))
        return rows


def _admitted(group: PodGroup, classes: list[PriorityClass], warnings: list[str] | None) -> PodGroup:
    try:
        return admit_pod_group_priority(group, classes)
    except PriorityAdmissionError as exc:
        if warnings is not None:
            warnings.append(f"{exc}; priority 0")
        return group


def copy_members(group: PodGroup, pods: list[Pod], suffix: str) -> tuple[PodGroup, list[Pod]]:
    """A pending copy of a PodGroup and its pods, named ``<name>-<suffix>``, the pods naming the copy (claims
    from templates made anew, as for a new pod)."""
    name = f"{group.metadata.name}-{suffix}"
    copy = replace(group, metadata=replace(group.metadata, name=name, uid=None, resource_version=None),
                   status=None)
    members = []
    for pod in pods:
        templated = {c.name for c in pod.spec.resource_claims or () if c.resource_claim_template_name}
        statuses = [s for s in (pod.status.resource_claim_statuses if pod.status else None) or ()
                    if s.name not in templated]
        spec = replace(pod.spec, node_name=None, scheduling_group=PodSchedulingGroup(pod_group_name=name))
        members.append(replace(pod, metadata=replace(pod.metadata, name=f"{pod.metadata.name}-{suffix}", uid=None,
                                                     resource_version=None),
                               spec=spec, status=PodStatus(resource_claim_statuses=statuses or None)))
    return copy, members
