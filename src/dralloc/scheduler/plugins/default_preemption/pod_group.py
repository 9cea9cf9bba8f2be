"""DefaultPreemption's PodGroupPostFilter (gate ``WorkloadAwarePreemption``, kube-scheduler 1.36): when a pod
group cycle fails, preempt across the whole cluster so that the group as a whole fits.

* Its members' own PostFilter does not preempt: DefaultPreemption answers ``preemption: not eligible due to
  workload aware preemption enabled`` (with TopologyAwareWorkloadScheduling, a group with scheduling
  constraints gets ``... due to placement-based pod group scheduling limitation``).
* The preemptor is the group: its priority is the PodGroup's ``spec.priority`` (0 when unset), and it may not
  preempt when any member has ``preemptionPolicy: Never`` or when a member's nominated node holds a pod of
  lower effective priority (a grouped pod's is its group's) that is terminating by the scheduler's preemption.
* The preemption units: every pod of a PodGroup with ``disruptionMode: PodGroup`` is in one unit with the
  group's priority, evicted whole or not at all; any other pod (no group, or a group in ``Pod`` mode) is a unit
  of its own with its own priority. The units of lower priority than the preemptor are the potential victims
  (none: UnschedulableAndUnresolvable ``No preemption victims found for incoming preemptor``).
* Every potential victim is taken off its nodes and the group cycle is run (without PostFilter); if the group
  is still not feasible, that cycle's status is the answer. Otherwise the units are put back one at a time,
  most important first — first those whose eviction would take a PodDisruptionBudget below zero, then the
  others — each kept when the group stays feasible with it back, else a victim.
* A unit is more important when its priority is higher; at equal priority a grouped pod before a single pod
  (a pod counts as grouped when it names any scheduling group); two single pods: the one started earlier; two
  groups: the larger, then the one started earlier. Equal units keep the order in which the cluster's nodes
  and their pods list them (upstream's order there is a map's).

The victims' pods are returned most important unit first, for the caller to evict; the cluster is left as it
was found.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from dralloc.api.scheduling_v1alpha2 import PodGroup
from dralloc.scheduler.framework import Code, Status, unresolvable, unschedulable
from dralloc.scheduler.nodeinfo import NodeInfo
from dralloc.scheduler.plugins.default_preemption import (
    NAME,
    NEVER,
    TERMINATING_ON_NOMINATED,
    terminating_by_preemption,
)
from dralloc.scheduler.plugins.default_preemption.disruption_budgets import Budget
from dralloc.scheduler.pod_groups import group_key, group_name
from dralloc.scheduler.podinfo import PodInfo

NO_VICTIMS_FOR_GROUP = "No preemption victims found for incoming preemptor"
# What DefaultPreemption's per-pod PostFilter answers for a member of a pod group cycle
MEMBER_PLACEMENT_LIMITATION = "preemption: not eligible due to placement-based pod group scheduling limitation"
MEMBER_WORKLOAD_AWARE = "preemption: not eligible due to workload aware preemption enabled"
DISRUPTION_MODE_POD_GROUP = "PodGroup"

# The group cycle run with some pods taken off their nodes: None when the group is feasible, else its status.
ScheduleGroup = Callable[[], Status | None]


def member_post_filter(topology_gate: bool, group: PodGroup) -> str:
    """DefaultPreemption's PostFilter for a pod of ``group`` with WorkloadAwarePreemption on: it does not
    preempt for one member. With TopologyAwareWorkloadScheduling on, a group that has scheduling constraints
    (even an empty list of them) gets the placement text; any other the workload-aware one."""
    if topology_gate and group.spec.scheduling_constraints is not None:
        return MEMBER_PLACEMENT_LIMITATION
    return MEMBER_WORKLOAD_AWARE


def pod_group_priority(group: PodGroup) -> int:
    """``PodGroupPriority``: the group's ``spec.priority``; unset means it was created with no class and no
    global default, which is priority 0."""
    return group.spec.priority if group.spec.priority is not None else 0


@dataclass
class Victim:
    """A preemption unit: one pod, or every running pod of a PodGroup in ``PodGroup`` disruption mode."""

    priority: int
    placed: list[tuple[PodInfo, NodeInfo]] = field(default_factory=list)

    @property
    def pods(self) -> list[PodInfo]:
        return [p for p, _ in self.placed]

    @property
    def grouped(self) -> bool:
        """``IsPodGroup``: the unit's first pod names a scheduling group (in either disruption mode)."""
        return self.placed[0][0].pod.spec.scheduling_group is not None

    @property
    def earliest_start(self) -> str:
        return min(p.start_time for p, _ in self.placed)


def importance_key(victim: Victim) -> tuple[int, int, int, str]:
    """``moreImportantVictim`` as a sort key (most important first)."""
    grouped = victim.grouped
    return (-victim.priority, 0 if grouped else 1, -len(victim.placed) if grouped else 0, victim.earliest_start)


def cluster_victims(nodes: list[NodeInfo], groups: Mapping[str, PodGroup]) -> list[Victim]:
    """``newDomainForWorkloadPreemption``: every pod on the nodes in its unit, units in the order their first
    pod is met. ``groups``: the PodGroups by ``namespace/name``."""
    units: list[Victim] = []
    by_group: dict[str, Victim] = {}
    for node in nodes:
        for pod in node.pods:
            name = group_name(pod)
            group = groups.get(group_key(pod.namespace, name)) if name is not None else None
            if group is None or group.spec.disruption_mode != DISRUPTION_MODE_POD_GROUP:
                units.append(Victim(pod.priority, [(pod, node)]))
                continue
            key = group_key(pod.namespace, name or "")
            unit = by_group.get(key)
            if unit is None:
                unit = by_group[key] = Victim(pod_group_priority(group))
                units.append(unit)
            unit.placed.append((pod, node))
    return units


def effective_priority(pod: PodInfo, groups: Mapping[str, PodGroup]) -> int:
    """A pod's priority as preemption weighs it: its PodGroup's when it names an existing one."""
    name = group_name(pod)
    group = groups.get(group_key(pod.namespace, name)) if name is not None else None
    return pod_group_priority(group) if group is not None else pod.priority


def ineligible(priority: int, members: list[PodInfo], nodes: Mapping[str, NodeInfo],
               groups: Mapping[str, PodGroup]) -> Status | None:
    """``preemptorEligibleToPreemptOthers`` for a group of ``priority`` with these unscheduled members."""
    if any(m.pod.spec.preemption_policy == "Never" for m in members):
        return unschedulable(NAME, NEVER)
    nominated = {m.pod.status.nominated_node_name for m in members
                 if m.pod.status is not None and m.pod.status.nominated_node_name}
    for name in sorted(nominated):
        node = nodes.get(name)
        if node is not None and any(effective_priority(p, groups) < priority and terminating_by_preemption(p.pod)
                                    for p in node.pods):
            return unschedulable(NAME, TERMINATING_ON_NOMINATED)
    return None


def split_violating(victims: list[Victim], budgets: list[Budget]) -> tuple[list[Victim], list[Victim]]:
    """``filterVictimsWithPDBViolation`` over units, order kept: a unit violates when one of its pods takes a
    budget below zero. Each pod uses one disruption of every budget covering it, up to the first it breaks."""
    allowed = [b.allowed for b in budgets]

    def violates(pod: PodInfo) -> bool:
        if not pod.labels:
            return False
        for i, budget in enumerate(budgets):
            if budget.covers(pod):
                allowed[i] -= 1
                if allowed[i] < 0:
                    return True
        return False

    violating: list[Victim] = []
    other: list[Victim] = []
    for victim in victims:
        broken = [violates(p) for p in victim.pods]  # every pod spends its budgets, as upstream's loop does
        (violating if any(broken) else other).append(victim)
    return violating, other


def preempt_for_group(group: PodGroup, members: list[PodInfo], nodes: list[NodeInfo],
                      groups: Mapping[str, PodGroup], budgets: list[Budget], schedule: ScheduleGroup
                      ) -> tuple[Status, list[PodInfo]]:
    """``PodGroupEvaluator.Preempt`` up to actuation: the verdict and the pods to evict. ``schedule`` runs the
    group cycle over ``nodes`` as they are; the victims taken off for it are back on their nodes afterwards,
    each node's pods in their old order (upstream's snapshot backup and restore)."""
    priority = pod_group_priority(group)
    refused = ineligible(priority, members, {n.name: n for n in nodes}, groups)
    if refused is not None:
        return refused, []
    off: dict[int, tuple[PodInfo, NodeInfo]] = {}  # by id(pod): the pods off their node now
    orders: dict[str, tuple[NodeInfo, list[PodInfo]]] = {}

    def take_off(victim: Victim) -> None:
        for pod, node in victim.placed:
            orders.setdefault(node.name, (node, list(node.pods)))
            node.remove_pod(pod, pod.claim_footprint)
            off[id(pod)] = (pod, node)

    def put_back(victim: Victim) -> None:
        for pod, node in victim.placed:
            node.add_pod(pod, pod.claim_footprint)
            del off[id(pod)]

    try:
        return _select_victims(priority, cluster_victims(nodes, groups), budgets, take_off, put_back, schedule)
    finally:
        for pod, node in reversed(off.values()):
            node.add_pod(pod, pod.claim_footprint)
        for node, order in orders.values():
            node.pods[:] = order


def _select_victims(priority: int, potential: list[Victim], budgets: list[Budget],
                    take_off: Callable[[Victim], None], put_back: Callable[[Victim], None],
                    schedule: ScheduleGroup) -> tuple[Status, list[PodInfo]]:
    """``selectVictimsOnDomain`` past eligibility."""
    potential = [v for v in potential if v.priority < priority]
    if not potential:
        return unresolvable(NAME, NO_VICTIMS_FOR_GROUP), []
    for victim in potential:
        take_off(victim)
    status = schedule()
    if status is not None:
        return status, []
    potential.sort(key=importance_key)
    violating, other = split_violating(potential, budgets)
    chosen: list[Victim] = []
    for victim in violating + other:
        put_back(victim)
        if schedule() is not None:
            take_off(victim)
            chosen.append(victim)
    chosen.sort(key=importance_key)
    return Status(Code.SUCCESS, (), NAME), [p for v in chosen for p in v.pods]
