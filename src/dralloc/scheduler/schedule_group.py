"""The pod group cycle (kube-scheduler's ``scheduleOnePodGroup``): the queued members of one PodGroup are
taken together and evaluated in one snapshot, each filtered, scored, assumed and reserved in turn so the next
sees it; then every member that fits binds, or none does.

* After each member, GangScheduling's PlacementFeasible decides: the group is feasible once ``minCount``
  members are assumed or bound (then the members that fit bind, those that did not keep their own
  FitError — partial binding above minCount), and the cycle stops as soon as minCount cannot be reached.
  A feasible cycle that placed no member is unschedulable (``pod group is unschedulable``).
* With a topology constraint (TopologyAwareWorkloadScheduling) each candidate placement (a label value's
  nodes) is evaluated this way and reverted; the feasible ones are scored by PodGroupPodsCount and the best
  is taken. None feasible: ``0/<n> placements are available, first placement status: <its status>``.
* On failure, members that fit carry the group's message; members that did not fit carry their own FitError.

Placements whose nodes are all in the same states (the node groups of :mod:`dralloc.scheduler.groups`) give
the same outcome for pods that read nothing but a node's state (no node selector or affinity, no pod
(anti-)affinity or spreading, no nominations, node-local devices only): one of them is evaluated for all, so
a cycle costs its members times the distinct kinds of domain, not times the domains.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from dralloc.api.scheduling_v1alpha2 import PodGroup
from dralloc.scheduler.framework import Code, Status, unschedulable
from dralloc.scheduler.nodeinfo import NodeInfo
from dralloc.scheduler.plugins.gang_scheduling import GangScheduling, PlacementProgress
from dralloc.scheduler.plugins.topology_placement import (
    PLACEMENTS_UNAVAILABLE,
    Placement,
    PlacementError,
    generate_placements,
    pods_count_scores,
)
from dralloc.scheduler.pod_groups import PodGroupStates
from dralloc.scheduler.podinfo import PodInfo
from dralloc.scheduler.schedule_one import Framework

GROUP_UNSCHEDULABLE = "pod group is unschedulable"
OTHER_POD_FAILED = "failed to schedule other pod from a pod group: "


@dataclass
class MemberOutcome:
    """One member's end in the cycle: bound on ``node``, or not with ``message`` (``code``)."""

    pod: PodInfo
    code: Code
    node: NodeInfo | None = None
    message: str = ""


@dataclass
class GroupOutcome:
    """The cycle's end: the group's status (SUCCESS, UNSCHEDULABLE or ERROR), the domain it got and each
    member's outcome (every member taken, in order)."""

    key: str
    group: PodGroup
    code: Code
    message: str = ""
    domain: str | None = None
    members: list[MemberOutcome] = field(default_factory=list)


@dataclass
class _Evaluation:
    status: Status | None  # None: feasible
    held: list[tuple[PodInfo, NodeInfo]]
    failed: dict[str, str]  # pod key -> its own FitError
    placed: int


class PodGroupCycle:
    """Runs pod group cycles over one framework. ``gang``: the GangScheduling plugin (None without its
    gate: every group is basic); ``topology``: whether TopologyAwareWorkloadScheduling is on."""

    def __init__(self, framework: Framework, states: PodGroupStates, gang: GangScheduling | None,
                 topology: bool, rng: random.Random) -> None:
        self.framework = framework
        self.states = states
        self.gang = gang
        self.topology = topology
        self.rng = rng

    def run(self, key: str, pods: list[PodInfo]) -> GroupOutcome:
        group = self.states.groups[key]
        policy = group.spec.scheduling_policy.gang
        min_count = policy.min_count if policy is not None and self.gang is not None else 0
        topology_key = group.topology_key if self.topology else None
        if topology_key is None:
            return self._finish(key, group, pods, self._evaluate(key, pods, None, min_count), None)
        snap = self.framework.snapshot
        try:
            placements = generate_placements(topology_key, snap.nodes, self.states.scheduled_nodes(key))
        except PlacementError as exc:
            return GroupOutcome(key, group, Code.ERROR, str(exc),
                                members=[MemberOutcome(p, Code.ERROR, None, str(exc)) for p in pods])
        return self._place(key, group, pods, placements, min_count)

    # ------------------------------------------------------------------ placements
    def _place(self, key: str, group: PodGroup, pods: list[PodInfo], placements: list[Placement],
               min_count: int) -> GroupOutcome:
        if not placements:
            message = PLACEMENTS_UNAVAILABLE.format(count=0, status="no node has the topology label")
            return GroupOutcome(key, group, Code.UNSCHEDULABLE, message,
                                members=[MemberOutcome(p, Code.UNSCHEDULABLE, None, message) for p in pods])
        signatures = self._signatures(placements, pods)
        evaluated: dict[object, _Evaluation] = {}
        results: list[_Evaluation] = []
        for i, placement in enumerate(placements):
            sig = signatures[i] if signatures is not None else i
            result = evaluated.get(sig)
            if result is None:
                result = evaluated[sig] = self._evaluate(key, pods, placement, min_count)
                self._revert(key, result)
            results.append(result)
        feasible = {p.name: r.placed for p, r in zip(placements, results) if r.status is None}
        if not feasible:
            first = results[0]
            assert first.status is not None
            message = PLACEMENTS_UNAVAILABLE.format(count=len(placements), status=first.status.message)
            members = [MemberOutcome(p, Code.UNSCHEDULABLE, None, first.failed.get(p.key, message)) for p in pods]
            return GroupOutcome(key, group, Code.UNSCHEDULABLE, message, members=members)
        already = len(self.states.scheduled(key))
        scores = pods_count_scores({name: already + placed for name, placed in feasible.items()})
        best = max(scores.values())
        ties = [name for name in feasible if scores[name] == best]
        chosen_name = ties[self.rng.randrange(len(ties))] if len(ties) > 1 else ties[0]
        chosen = next(p for p in placements if p.name == chosen_name)
        return self._finish(key, group, pods, self._evaluate(key, pods, chosen, min_count), chosen.name)

    def _signatures(self, placements: list[Placement], pods: list[PodInfo]) -> list[bytes] | None:
        """Each placement's node states (sorted group ids), when the members read nothing else; else None."""
        fw = self.framework
        snap = fw.snapshot
        if not fw.group_nodes or snap.nominations or not snap.dra.all_local or not snap.groups.refresh():
            return None
        for p in pods:
            spec = p.pod.spec
            if spec.affinity is not None or spec.topology_spread_constraints or spec.node_selector \
                    or spec.node_name:
                return None
        gids, index = snap.groups.gids, snap.groups.index
        return [bytes(sorted(gids[index[n.name]] for n in placement.nodes)) for placement in placements]

    # ------------------------------------------------------------------ one evaluation
    def _evaluate(self, key: str, pods: list[PodInfo], placement: Placement | None,
                  min_count: int) -> _Evaluation:
        """``podGroupSchedulingDefaultAlgorithm``: each member in turn, held once it fits."""
        fw = self.framework
        fw.placement = placement.nodes if placement is not None else None
        progress = PlacementProgress(remaining=len(pods), scheduled=len(self.states.scheduled(key)))
        held: list[tuple[PodInfo, NodeInfo]] = []
        failed: dict[str, str] = {}
        status: Status | None = unschedulable("", GROUP_UNSCHEDULABLE)
        try:
            for pod in pods:
                attempt = fw.attempt(pod, hold=key)
                if attempt.code == Code.ERROR:
                    status = Status(Code.ERROR, (OTHER_POD_FAILED + attempt.message,))
                    failed[pod.key] = attempt.message
                    break
                progress.remaining -= 1
                if attempt.code == Code.WAIT and attempt.node is not None:
                    held.append((pod, attempt.node))
                    progress.scheduled += 1
                else:
                    failed[pod.key] = attempt.message
                status = self.gang.placement_feasible(min_count, progress) if self.gang is not None else None
                if status is not None and status.rejected:
                    break
        finally:
            fw.placement = None
        if status is not None and status.code == Code.WAIT:
            status = unschedulable(status.plugin, *status.reasons)  # a terminal Wait is a failure
        if status is None and not held:
            status = unschedulable("", GROUP_UNSCHEDULABLE)
        return _Evaluation(status, held, failed, len(held))

    def _revert(self, key: str, result: _Evaluation) -> None:
        """Unreserve and forget the held members, last first."""
        for pod, _ in reversed(result.held):
            self.framework.reject(pod, key, "")

    def _finish(self, key: str, group: PodGroup, pods: list[PodInfo], result: _Evaluation,
                domain: str | None) -> GroupOutcome:
        """Bind every held member when the group is feasible; else revert them with the group's message."""
        status = result.status
        if status is not None:
            self._revert(key, result)
            code = Code.ERROR if status.code == Code.ERROR else Code.UNSCHEDULABLE
            members = [MemberOutcome(p, code, None, result.failed.get(p.key, status.message)) for p in pods]
            return GroupOutcome(key, group, code, status.message, None, members)
        members = []
        bound: dict[str, MemberOutcome] = {}
        for pod, node in result.held:
            ended = self.framework.allow(pod, key)
            if ended is not None and ended.code == Code.SUCCESS:
                bound[pod.key] = MemberOutcome(pod, Code.SUCCESS, node)
            else:
                bound[pod.key] = MemberOutcome(pod, ended.code if ended is not None else Code.ERROR, None,
                                               ended.message if ended is not None else "")
        for pod in pods:
            members.append(bound.get(pod.key) or MemberOutcome(pod, Code.UNSCHEDULABLE, None,
                                                               result.failed.get(pod.key, "")))
        return GroupOutcome(key, group, Code.SUCCESS, "", domain, members)
