"""DefaultPreemption (PostFilter): evict lower-priority pods from one node so the pod fits there.

Only nodes whose Filter status was Unschedulable are tried (UnschedulableAndUnresolvable nodes, which
include every DynamicResources rejection, are "not helpful"). On each, every lower-priority pod is removed,
with the PreFilter extensions told (RemovePod), and the filters run again (DynamicResources' allocator state
stays as it was: evicting a pod does not free its devices within the cycle, as in 1.36); then victims are
reprieved one by one while the pod still fits (AddPod): first those whose eviction would violate a
PodDisruptionBudget, then the others, each most important first. A violating pod that cannot be reprieved
counts as a PDB violation of the node. The dry run starts at a seeded random offset and stops once it has
max(10 % of the nodes, 100) candidates, at least one of them without violations. The node picked has, in
turn: the fewest PDB violations, the lowest highest-victim priority, the lowest sum of victim priorities, the
fewest victims, the latest start time of its most important victims, then the first in dry-run order (nodes
without violations first).

A pod that preempted before waits instead of preempting again (``PodEligibleToPreemptOthers``): while its
nominated node holds a lower-priority pod that is terminating because the scheduler preempted it
(deletionTimestamp set, first DisruptionTarget condition True with reason PreemptionByScheduler), it is not
eligible, unless that node's Filter status was UnschedulableAndUnresolvable (nodes not examined count as such).
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Protocol

from dralloc.api.core_v1 import Pod
from dralloc.scheduler.framework import (
    Code,
    Cycle,
    Diagnosis,
    Plugin,
    Status,
    fit_error_message,
    unresolvable,
)
from dralloc.scheduler.nodeinfo import NodeInfo
from dralloc.scheduler.plugins.default_preemption.disruption_budgets import Budget, split_violating
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
# Statuses are immutable: the per-node verdicts that repeat on every node share one object each.
NOT_HELPFUL_STATUS = unresolvable(NAME, NOT_HELPFUL)
NO_VICTIMS_STATUS = unresolvable(NAME, NO_VICTIMS)


class PreemptionHandle(Protocol):
    """What the dry run needs of the framework (kube-scheduler's ``framework.Handle``)."""

    def run_filters(self, cycle: Cycle, node: NodeInfo) -> Status | None: ...  # with nominated pods
    def run_add_pod(self, cycle: Cycle, pod: PodInfo, node: NodeInfo) -> Status | None: ...
    def run_remove_pod(self, cycle: Cycle, pod: PodInfo, node: NodeInfo) -> Status | None: ...


@dataclass
class Candidate:
    node: NodeInfo
    victims: list[PodInfo]
    pdb_violations: int = 0


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

    def __init__(self, handle: PreemptionHandle, rng: random.Random,
                 min_candidate_nodes_percentage: int = MIN_CANDIDATE_NODES_PERCENTAGE,
                 min_candidate_nodes_absolute: int = MIN_CANDIDATE_NODES_ABSOLUTE) -> None:
        """``min_candidate_nodes_*``: DefaultPreemptionArgs — the dry run stops after
        max(percentage of the nodes, absolute) candidates."""
        self.handle = handle
        self.rng = rng
        self.min_percentage = min_candidate_nodes_percentage
        self.min_absolute = min_candidate_nodes_absolute
        # node name -> (node, its generation, the lowest priority of its pods): a dry run over a cluster whose
        # pods are all as important as the preemptor finds no victim on any node without scanning them.
        self._lowest: dict[str, tuple[NodeInfo, int, int]] = {}

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
        statuses: dict[str, Status] = {}
        potential: list[NodeInfo] = []
        for node in cycle.snapshot.nodes:
            st = diagnosis.node_statuses.get(node.name, diagnosis.absent_status)
            if st is None or st.code == Code.UNRESOLVABLE:
                statuses[node.name] = NOT_HELPFUL_STATUS
            else:
                potential.append(node)
        candidates = self.dry_run(cycle, potential, statuses)
        if not candidates:
            dry = Diagnosis(node_statuses=statuses, absent_status=NOT_HELPFUL_STATUS)
            text = "preemption: " + fit_error_message(num_all_nodes, dry)
            return Status(Code.UNSCHEDULABLE, (text,), NAME), None, True
        return Status(Code.SUCCESS, (), NAME), pick_one(candidates), False

    def dry_run(self, cycle: Cycle, potential: list[NodeInfo], statuses: dict[str, Status]) -> list[Candidate]:
        """``DryRunPreemption`` over the potential nodes, from a random offset: the candidates (those whose
        victims break no PodDisruptionBudget first), stopping once there are enough with at least one of
        those; each node found without victims gets its status in ``statuses``."""
        pod = cycle.pod
        budgets = [Budget.of(b) for b in cycle.snapshot.disruption_budgets]
        clean: list[Candidate] = []
        violating: list[Candidate] = []
        if potential:
            offset = self.rng.randrange(len(potential))
            wanted = max(len(potential) * self.min_percentage // 100, self.min_absolute)
            wanted = min(wanted, len(potential))
            lowest = self._lowest_priority
            for i in range(len(potential)):
                node = potential[(offset + i) % len(potential)]
                if lowest(node) >= pod.priority:
                    statuses[node.name] = NO_VICTIMS_STATUS
                    continue
                candidate, status = self._select_victims(cycle, node, budgets)
                if candidate is not None:
                    (violating if candidate.pdb_violations else clean).append(candidate)
                    if clean and len(clean) + len(violating) >= wanted:
                        break
                elif status is not None:
                    statuses[node.name] = status
        return clean + violating

    def _lowest_priority(self, node: NodeInfo) -> int:
        """The lowest priority among the node's pods (INT32_MAX + 1 without pods), kept per generation."""
        entry = self._lowest.get(node.name)
        if entry is not None and entry[0] is node and entry[1] == node.generation:
            return entry[2]
        lowest = min((p.priority for p in node.pods), default=INT32_MAX + 1)
        self._lowest[node.name] = (node, node.generation, lowest)
        return lowest

    def _select_victims(self, cycle: Cycle, node: NodeInfo, budgets: list[Budget]
                        ) -> tuple[Candidate | None, Status | None]:
        """``SelectVictimsOnNode`` on a copy of the node and a clone of the cycle: remove every lower-priority
        pod (telling the PreFilter extensions), filter, then add back the PDB-violating pods and then the
        others, most important first, one by one while the pod still fits."""
        pod = cycle.pod
        potential = [p for p in node.pods if p.priority < pod.priority]
        if not potential:
            return None, NO_VICTIMS_STATUS
        handle = self.handle
        state = cycle.clone()
        trial = node.copy_with([])
        trial.nominated = list(node.nominated)  # the dry run filters with nominated pods too
        for p in potential:
            trial.remove_pod(p, p.claim_footprint)
            failed = handle.run_remove_pod(state, p, trial)
            if failed is not None:
                return None, failed
        status = handle.run_filters(state, trial)
        if status is not None:
            return None, status
        potential.sort(key=importance_key)
        violating, other = split_violating(potential, budgets)
        violating_ids = {id(p) for p in violating}
        victims: list[PodInfo] = []
        pdb_violations = 0
        for p in violating + other:
            trial.add_pod(p, p.claim_footprint)
            failed = handle.run_add_pod(state, p, trial)
            if failed is not None:
                return None, failed
            if handle.run_filters(state, trial) is not None:
                trial.remove_pod(p, p.claim_footprint)
                failed = handle.run_remove_pod(state, p, trial)
                if failed is not None:
                    return None, failed
                victims.append(p)
                if id(p) in violating_ids:
                    pdb_violations += 1
        if not victims:
            return None, None
        victims.sort(key=importance_key)
        return Candidate(node, victims, pdb_violations), None


def _victim_sum(victims: list[PodInfo]) -> int:
    # Priorities shifted by MaxInt32 + 1 so that negative priorities add up correctly.
    return sum(v.priority + INT32_MAX + 1 for v in victims)


def pick_one(candidates: list[Candidate]) -> Candidate:
    """``pickOneNodeForPreemption``."""
    for c in candidates:
        if not c.victims:
            return c
    best = candidates
    for key in (
        lambda c: c.pdb_violations,
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
