"""DefaultPreemption (PostFilter): evict lower-priority pods from one node so the pod fits there.

Only nodes whose Filter status was Unschedulable are tried (UnschedulableAndUnresolvable nodes, which
include every DynamicResources rejection, are "not helpful"). On each, every lower-priority pod is removed,
the filters run again (DynamicResources' allocator state stays as it was: evicting a pod does not free its
devices within the cycle, as in 1.36), then the most important victims are reprieved one by one while the
pod still fits. The dry run starts at a seeded random offset and stops after max(10 % of the nodes, 100)
candidates. The node picked has, in turn: the fewest PDB violations (no PDBs are modelled: 0), the lowest
highest-victim priority, the lowest sum of victim priorities, the fewest victims, the latest start time of
its most important victims, then the first in dry-run order.

A pod that preempted before waits instead of preempting again (``PodEligibleToPreemptOthers``): while its
nominated node holds a lower-priority pod that is terminating because the scheduler preempted it
(deletionTimestamp set, first DisruptionTarget condition True with reason PreemptionByScheduler), it is not
eligible, unless that node's Filter status was UnschedulableAndUnresolvable (nodes not examined count as such).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

from dralloc.api.core_v1 import Pod
from dralloc.scheduler.framework import Code, Diagnosis, Status, fit_error_message, unresolvable
from dralloc.scheduler.nodeinfo import NodeInfo
from dralloc.scheduler.plugins.base import Cycle, Plugin
from dralloc.scheduler.podinfo import PodInfo

NAME = "DefaultPreemption"
NOT_HELPFUL = "Preemption is not helpful for scheduling"
NO_VICTIMS = "No preemption victims found for incoming pod"
NEVER = "not eligible due to preemptionPolicy=Never."
TERMINATING_ON_NOMINATED = "not eligible due to a terminating pod on the nominated node."
DISRUPTION_TARGET = "DisruptionTarget"
PREEMPTION_BY_SCHEDULER = "PreemptionByScheduler"
MIN_CANDIDATE_NODES_PERCENTAGE = 10
MIN_CANDIDATE_NODES_ABSOLUTE = 100
INT32_MAX = 2**31 - 1

FilterRunner = Callable[[Cycle, NodeInfo], "Status | None"]


@dataclass
class Candidate:
    node: NodeInfo
    victims: list[PodInfo]


def more_important(a: PodInfo, b: PodInfo) -> bool:
    """``util.MoreImportantPod``: higher priority, then the pod that started earlier."""
    if a.priority != b.priority:
        return a.priority > b.priority
    return (a.start_time, a.order) < (b.start_time, b.order)


def importance_key(p: PodInfo) -> tuple[int, str, int]:
    return (-p.priority, p.start_time, p.order)


def terminating_by_preemption(pod: Pod) -> bool:
    """Being deleted, and the first DisruptionTarget condition says the scheduler preempted it."""
    if not pod.metadata.deletion_timestamp or pod.status is None:
        return False
    for condition in pod.status.conditions or ():
        if condition.type == DISRUPTION_TARGET:
            return condition.status == "True" and condition.reason == PREEMPTION_BY_SCHEDULER
    return False


def waits_for_victims(cycle: Cycle, diagnosis: Diagnosis) -> bool:
    """Whether the pod is not eligible to preempt: its nominated node (unless UnschedulableAndUnresolvable
    there) still holds a lower-priority pod terminating by preemption, most likely its own victim."""
    pod = cycle.pod
    nominated = pod.pod.status.nominated_node_name if pod.pod.status is not None else None
    if not nominated:
        return False
    status = diagnosis.node_statuses.get(nominated, diagnosis.absent_status)
    if status is None or status.code == Code.UNRESOLVABLE:
        return False
    node = cycle.snapshot.by_name.get(nominated)
    return node is not None and any(p.priority < pod.priority and terminating_by_preemption(p.pod)
                                    for p in node.pods)


class DefaultPreemption(Plugin):
    name = NAME

    def __init__(self, run_filters: FilterRunner, rng: random.Random) -> None:
        self.run_filters = run_filters
        self.rng = rng

    def post_filter(self, cycle: Cycle, diagnosis: Diagnosis, num_all_nodes: int
                    ) -> tuple[Status, Candidate | None, bool]:
        """The verdict, the candidate picked, and whether the pod's nominatedNodeName is to be cleared:
        ``Preempt`` clears it when no node can be made to fit (its FitError), and leaves it when the pod is
        not eligible (no PostFilterResult)."""
        pod = cycle.pod
        if pod.preemption_policy == "Never":
            return Status(Code.UNSCHEDULABLE, ("preemption: " + NEVER,), NAME), None, False
        if waits_for_victims(cycle, diagnosis):
            return Status(Code.UNSCHEDULABLE, ("preemption: " + TERMINATING_ON_NOMINATED,), NAME), None, False
        snap = cycle.snapshot
        statuses: dict[str, Status] = {}
        potential: list[NodeInfo] = []
        for node in snap.nodes:
            st = diagnosis.node_statuses.get(node.name, diagnosis.absent_status)
            if st is None or st.code == Code.UNRESOLVABLE:
                statuses[node.name] = unresolvable(NAME, NOT_HELPFUL)
            else:
                potential.append(node)
        candidates: list[Candidate] = []
        if potential:
            offset = self.rng.randrange(len(potential))
            wanted = max(len(potential) * MIN_CANDIDATE_NODES_PERCENTAGE // 100, MIN_CANDIDATE_NODES_ABSOLUTE)
            wanted = min(wanted, len(potential))
            for i in range(len(potential)):
                node = potential[(offset + i) % len(potential)]
                victims, status = self._select_victims(cycle, node)
                if status is None and victims:
                    candidates.append(Candidate(node, victims))
                    if len(candidates) >= wanted:
                        break
                elif status is not None:
                    statuses[node.name] = status
        if not candidates:
            dry = Diagnosis(node_statuses=statuses, absent_status=unresolvable(NAME, NOT_HELPFUL))
            text = "preemption: " + fit_error_message(num_all_nodes, dry)
            return Status(Code.UNSCHEDULABLE, (text,), NAME), None, True
        return Status(Code.SUCCESS, (), NAME), pick_one(candidates), False

    def _select_victims(self, cycle: Cycle, node: NodeInfo) -> tuple[list[PodInfo], Status | None]:
        pod = cycle.pod
        potential = [p for p in node.pods if p.priority < pod.priority]
        if not potential:
            return [], unresolvable(NAME, NO_VICTIMS)
        trial = node.copy_with([])
        trial.nominated = list(node.nominated)  # the dry run filters with nominated pods too
        for p in potential:
            trial.remove_pod(p, p.claim_footprint)
        status = self.run_filters(cycle, trial)
        if status is not None:
            return [], status
        victims: list[PodInfo] = []
        for p in sorted(potential, key=importance_key):
            trial.add_pod(p, p.claim_footprint)
            if self.run_filters(cycle, trial) is not None:
                trial.remove_pod(p, p.claim_footprint)
                victims.append(p)
        return victims, None


def _victim_sum(victims: list[PodInfo]) -> int:
    # Priorities shifted by MaxInt32 + 1 so that negative priorities add up correctly.
    return sum(v.priority + INT32_MAX + 1 for v in victims)


def pick_one(candidates: list[Candidate]) -> Candidate:
    """``pickOneNodeForPreemption`` (no PDB violations are modelled, so that criterion ties)."""
    for c in candidates:
        if not c.victims:
            return c
    best = candidates
    for key in (
        lambda c: c.victims[0].priority,
        _victim_sum_key,
        lambda c: len(c.victims),
    ):
        low = min(key(c) for c in best)
        best = [c for c in best if key(c) == low]
        if len(best) == 1:
            return best[0]
    # Latest start time among each node's highest-priority victims.
    latest = max(_earliest_start(c) for c in best)
    best = [c for c in best if _earliest_start(c) == latest]
    return best[0]


def _victim_sum_key(c: Candidate) -> int:
    return _victim_sum(c.victims)


def _earliest_start(c: Candidate) -> str:
    top = c.victims[0].priority
    return min(v.start_time for v in c.victims if v.priority == top)
