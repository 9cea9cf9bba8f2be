"""The pod group cycle (kube-scheduler's ``scheduleOnePodGroup``): the queued members of one PodGroup are
taken together and evaluated in one snapshot, each filtered, scored, assumed and reserved in turn so the next
sees it; then every member that fits binds, or none does.

* Every member is evaluated, in order. One that fits is assumed and reserved, then GangScheduling's Permit
  holds it (``waiting for minCount pods from a gang to be scheduled``) until ``minCount`` members are
  assumed or bound; the member that makes ``minCount`` makes the group feasible, and then every member that
  fit binds, while those that did not keep their own FitError (partial binding above minCount). A member
  whose scheduling errs ends the cycle in error (``failed to schedule other pod from a pod group: ...``).
* A group that is not feasible is ``pod group is unschedulable``: its members that fit read
  ``pod group is unschedulable, <their Permit message>``, the others their own FitError.
* With TopologyAwareWorkloadScheduling each candidate placement (a label value's nodes; every node for a
  group without a constraint) is evaluated this way and reverted; the feasible ones are scored by
  PodGroupPodsCount and the best is taken. None feasible: ``0/<n> placements are available, first placement
  status: pod group is unschedulable``, the members reading what the first placement gave them.
* Without WorkloadAwarePreemption a member that does not fit runs its own PostFilter (DynamicResources, then
  DefaultPreemption): its victims are evicted whatever the group's outcome, and it is held on the node it was
  nominated to (``requiresPreemption``). A group feasible only with such members waits: ``pod group is
  unschedulable, pod group is waiting for preemption to complete``, its members nominated where they were
  held. Under TopologyAwareWorkloadScheduling a member of a group with scheduling constraints does not
  preempt for itself (the placement-based limitation).
* With WorkloadAwarePreemption, a group that is unschedulable (not in error) runs DefaultPreemption's
  PodGroupPostFilter (:mod:`dralloc.scheduler.plugins.default_preemption.pod_group`) on the cluster, its
  victims taken off their nodes for the trial and put back after: a profile without DefaultPreemption
  cannot (``default preemption plugin is not registered, ...``), nor can a group with a topology constraint.
  The members' own PostFilter runs in this cycle (not in the preemption's trials): DynamicResources as for
  any pod, and DefaultPreemption declining to preempt for one member.
  When it finds victims the group still fails this cycle, now waiting for them to go: the members that fit
  are nominated to the nodes they fit on, and the outcome lists the pods to evict. When it does not, its
  status message is appended to the group's message (never to the members').

Placements whose nodes are in the same states (as many nodes of each state of :mod:`dralloc.scheduler.groups`)
give the same outcome for pods that read nothing but a node's state (no node selector or affinity, no pod
(anti-)affinity or spreading, no nominations, node-local devices only): one of them is tried for all, and the
outcome is remembered across cycles under that signature and the members' shape (their specs, not their
names). A trial in which a plugin reads more of a node than its state (``Attempt.keyed``) turns the sharing
off for the cycle. A trial's random draws are not kept, so sharing changes no outcome; a cycle costs its
members times the kinds of domain it has not met before, not times the domains.
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass, field

from msgspec.structs import replace

from dralloc.api.codec import encode_json
from dralloc.api.scheduling_v1alpha2 import PodGroup
from dralloc.scheduler.framework import Code, Status, unschedulable
from dralloc.scheduler.nodeinfo import NodeInfo
from dralloc.scheduler.plugins.default_preemption.disruption_budgets import Budget
from dralloc.scheduler.plugins.default_preemption.pod_group import (
    MEMBER_PLACEMENT_LIMITATION,
    member_post_filter,
    preempt_for_group,
)
from dralloc.scheduler.plugins.gang_scheduling import WAITING_FOR_QUORUM, GangScheduling
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
WAITING_ON_PREEMPTION = "pod group is waiting for preemption to complete"
PREEMPTION_NOT_REGISTERED = "default preemption plugin is not registered, workload aware preemption is disabled"
PREEMPTION_NOT_WITH_CONSTRAINTS = "workload aware preemption is not supported for pod groups with scheduling constraints"
MEMO_LIMIT = 100_000
OTHER_POD_FAILED = "failed to schedule other pod from a pod group: "


@dataclass
class MemberOutcome:
    """One member's end in the cycle: bound on ``node``, or not with ``message`` (``code``). ``fit``: where a
    member of a failed cycle fit; ``nominated``: the node its nominatedNodeName is set to (after preemption;
    with WorkloadAwarePreemption a member that fit in a failed cycle is otherwise cleared, as upstream's
    failure handler does)."""

    pod: PodInfo
    code: Code
    node: NodeInfo | None = None
    message: str = ""
    fit: NodeInfo | None = None
    nominated: NodeInfo | None = None
    renominated: bool = False  # the cycle sets its nominatedNodeName to ``nominated`` (None: clears it)


@dataclass
class GroupOutcome:
    """The cycle's end: the group's status (SUCCESS, UNSCHEDULABLE or ERROR), the domain it got, each
    member's outcome (every member taken, in order) and the pods its preemption evicts (most important
    first)."""

    key: str
    group: PodGroup
    code: Code
    message: str = ""
    domain: str | None = None
    members: list[MemberOutcome] = field(default_factory=list)
    preempted: list[PodInfo] = field(default_factory=list)
    # With WorkloadAwarePreemption off, a member's own DefaultPreemption: (member, its node, its victims).
    # Upstream evicts them whatever the group's outcome.
    member_preemptions: list[MemberPreemption] = field(default_factory=list)


@dataclass
class MemberPreemption:
    """A member's own preemption in a group cycle: its victims on ``node`` and the lower-priority pods that
    lost their nomination there."""

    pod: PodInfo
    node: NodeInfo
    victims: list[PodInfo]
    unnominated: list[PodInfo]


@dataclass
class _Evaluation:
    status: Status | None  # None: feasible
    held: list[tuple[PodInfo, NodeInfo]]
    failed: dict[str, str]  # pod key -> its own FitError
    placed: int
    keyed: bool = False  # a plugin read more of some node than its state: no sharing
    # members held on the node their own preemption nominated -> their FitError
    preempting: dict[str, str] = field(default_factory=dict)
    waiting_on_preemption: bool = False  # feasible once the members' victims are gone
    member_preemptions: list[MemberPreemption] = field(default_factory=list)


@dataclass(frozen=True)
class _Remembered:
    """A reverted evaluation kept across cycles, its members by position."""

    status: Status | None
    failed: tuple[tuple[int, str], ...]
    placed: int

    @classmethod
    def of_result(cls, result: _Evaluation, pods: list[PodInfo]) -> _Remembered:
        position = {p.key: i for i, p in enumerate(pods)}
        return cls(result.status, tuple((position[k], m) for k, m in result.failed.items()), result.placed)

    def of(self, pods: list[PodInfo]) -> _Evaluation:
        return _Evaluation(self.status, [], {pods[i].key: m for i, m in self.failed}, self.placed)


class PodGroupCycle:
    """Runs pod group cycles over one framework. ``gang``: the GangScheduling plugin (None without its
    gate: every group is basic); ``topology``: whether TopologyAwareWorkloadScheduling is on;
    ``preemption``: whether WorkloadAwarePreemption is on."""

    def __init__(self, framework: Framework, states: PodGroupStates, gang: GangScheduling | None,
                 topology: bool, rng: random.Random, memo: dict[tuple[object, object], _Remembered] | None = None,
                 preemption: bool = False) -> None:
        """``memo``: outcomes of placements remembered across cycles (owned by the caller)."""
        self.memo: dict[tuple[object, object], _Remembered] = memo if memo is not None else {}
        self.framework = framework
        self.states = states
        self.gang = gang
        self.topology = topology
        self.rng = rng
        self.preemption = preemption

    def run(self, key: str, pods: list[PodInfo]) -> GroupOutcome:
        """``podGroupCycle``: the group algorithm, then workload-aware preemption when it is unschedulable."""
        fw = self.framework
        if not self.preemption:
            # Each member's own PostFilter runs; DefaultPreemption preempts for it alone, except for a group
            # with scheduling constraints under TopologyAwareWorkloadScheduling (not once per placement).
            if self.topology and self.states.groups[key].spec.scheduling_constraints is not None:
                fw.held_post_filter = MEMBER_PLACEMENT_LIMITATION
            else:
                fw.held_preemption = True
            try:
                return self._schedule(key, pods)
            finally:
                fw.held_preemption, fw.held_post_filter = False, None
        fw.held_post_filter = member_post_filter(self.topology, self.states.groups[key])
        try:
            outcome = self._schedule(key, pods)
        finally:
            fw.held_post_filter = None
        if outcome.code == Code.UNSCHEDULABLE:
            self._preempt(outcome, pods)
        for member in outcome.members:
            if member.fit is not None:  # (assumed, then let go: its nomination is the cycle's to set)
                member.renominated = True
        return outcome

    # ------------------------------------------------------------------ workload-aware preemption
    def _preempt(self, outcome: GroupOutcome, pods: list[PodInfo]) -> None:
        """``runWorkloadAwarePreemption`` and what the cycle makes of its verdict (see the module docstring)."""
        group = outcome.group
        if self.framework.preemption is None:
            status = unschedulable("", PREEMPTION_NOT_REGISTERED)
        elif group.topology_key is not None:
            status = unschedulable("", PREEMPTION_NOT_WITH_CONSTRAINTS)
        else:
            status, victims = self._select_victims(outcome.key, group, pods)
            if status.code == Code.SUCCESS:
                outcome.preempted = victims
                for member in outcome.members:
                    member.nominated = member.fit
                    if member.fit is not None:  # waiting on preemption: the group's status, not its Permit's
                        member.message = outcome.message
                return
        if status.code == Code.ERROR:
            outcome.code = Code.ERROR
            outcome.message = status.message
            for member in outcome.members:
                if member.code != Code.ERROR:
                    member.code, member.message = Code.ERROR, status.message
            return
        outcome.message = ", ".join(m for m in (outcome.message, status.message) if m)

    def _select_victims(self, key: str, group: PodGroup, pods: list[PodInfo]) -> tuple[Status, list[PodInfo]]:
        """The PodGroupPostFilter over the whole cluster, its feasibility check this group's cycle without
        PostFilter, each trial reverted."""
        snap = self.framework.snapshot
        policy = group.spec.scheduling_policy.gang
        min_count = policy.min_count if policy is not None and self.gang is not None else 0

        def schedule() -> Status | None:
            result = self._evaluate(key, pods, None, min_count)
            self._revert(key, result)
            return result.status

        return preempt_for_group(group, pods, snap.nodes, self.states.groups,
                                 [Budget.of(b) for b in snap.disruption_budgets], schedule)

    def _schedule(self, key: str, pods: list[PodInfo]) -> GroupOutcome:
        group = self.states.groups[key]
        policy = group.spec.scheduling_policy.gang
        min_count = policy.min_count if policy is not None and self.gang is not None else 0
        if not self.topology:
            return self._finish(key, group, pods, self._evaluate(key, pods, None, min_count), None)
        snap = self.framework.snapshot
        topology_key = group.topology_key
        if topology_key is None:  # the placement algorithm still runs, over one placement: every node
            return self._place(key, group, pods, [Placement("", list(snap.nodes))], min_count)
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
        shape = self._shape(key, group, pods, min_count) if signatures is not None else None
        results = self._evaluate_all(key, pods, placements, min_count, signatures, shape)
        if results is None:  # some node read beyond its state: every placement on its own
            results = self._evaluate_all(key, pods, placements, min_count, None, None)
        assert results is not None
        outcome = self._choose(key, group, pods, placements, results, min_count)
        if signatures is not None and outcome[1] is not None and outcome[1].keyed:
            # (every outcome was remembered, and the final run shows the states do not say it all)
            self._revert(key, outcome[1])
            results = self._evaluate_all(key, pods, placements, min_count, None, None)
            assert results is not None
            outcome = self._choose(key, group, pods, placements, results, min_count)
        if outcome[1] is None:
            return outcome[0]
        return self._finish(key, group, pods, outcome[1], outcome[2] if group.topology_key is not None else None)

    def _choose(self, key: str, group: PodGroup, pods: list[PodInfo], placements: list[Placement],
                results: list[_Evaluation], min_count: int
                ) -> tuple[GroupOutcome, None, None] | tuple[None, _Evaluation, str]:
        """No placement feasible: the group's outcome; else the best placement, run again and held."""
        for result in results:  # a placement whose evaluation errs ends the algorithm with its error
            if result.status is not None and result.status.code == Code.ERROR:
                return self._failed(key, group, pods, result, result.status), None, None
        feasible = {p.name: r.placed for p, r in zip(placements, results) if r.status is None}
        if not feasible:
            first = results[0]
            assert first.status is not None
            # (the first placement's status as an error: the group's own "pod group is unschedulable")
            status = unschedulable("", PLACEMENTS_UNAVAILABLE.format(count=len(placements),
                                                                     status=GROUP_UNSCHEDULABLE))
            return self._failed(key, group, pods, first, status), None, None
        already = len(self.states.scheduled(key))
        scores = pods_count_scores({name: already + placed for name, placed in feasible.items()})
        best = max(scores.values())
        ties = [name for name in feasible if scores[name] == best]
        chosen_name = ties[self.rng.randrange(len(ties))] if len(ties) > 1 else ties[0]
        chosen = next(p for p in placements if p.name == chosen_name)
        return None, self._evaluate(key, pods, chosen, min_count), chosen.name

    def _evaluate_all(self, key: str, pods: list[PodInfo], placements: list[Placement], min_count: int,
                      signatures: list[frozenset[object]] | None, shape: object | None) -> list[_Evaluation] | None:
        """Each placement's outcome, placements of one signature sharing one evaluation (remembered across
        cycles under ``shape``); None when an evaluation shows the signatures do not say it all."""
        evaluated: dict[object, _Evaluation] = {}
        results: list[_Evaluation] = []
        for i, placement in enumerate(placements):
            sig = signatures[i] if signatures is not None else i
            result = evaluated.get(sig)
            if result is None and shape is not None:
                remembered = self.memo.get((shape, sig))
                if remembered is not None:
                    result = evaluated[sig] = remembered.of(pods)
            if result is None:
                # A trial's random draws (ties between nodes) are not kept: whether placements share a
                # trial then changes nothing that follows.
                drawn = self.rng.getstate()
                result = evaluated[sig] = self._evaluate(key, pods, placement, min_count)
                self._revert(key, result)
                self.rng.setstate(drawn)
                if result.keyed and signatures is not None:
                    return None
                if shape is not None:
                    if len(self.memo) >= MEMO_LIMIT:
                        self.memo.clear()
                    self.memo[(shape, sig)] = _Remembered.of_result(result, pods)
            results.append(result)
        return results

    def _shape(self, key: str, group: PodGroup, pods: list[PodInfo], min_count: int) -> object | None:
        """What an evaluation reads of the group besides the nodes' states — its members' specs (not their
        names), priorities and namespaces, minCount and the members already scheduled — or None when it
        reads more (claims by name, the group's own claims): the key, with a placement's signature, under
        which an outcome is remembered across cycles."""
        if group.spec.resource_claims:
            return None
        members = []
        for p in pods:
            spec = p.pod.spec
            if any(c.resource_claim_name for c in spec.resource_claims or ()):
                return None
            members.append((p.namespace, p.priority,
                            encode_json(replace(spec, scheduling_group=None, node_name=None))))
        return (min_count, len(self.states.scheduled(key)), self.gang is None, tuple(members))

    def _signatures(self, placements: list[Placement], pods: list[PodInfo]) -> list[frozenset[object]] | None:
        """Each placement's node states (how many of its nodes are in each state), when the members read
        nothing else of a node; else None."""
        fw = self.framework
        snap = fw.snapshot
        if not fw.group_nodes or snap.nominations or not snap.dra.all_local or not snap.groups.refresh():
            return None
        for p in pods:
            spec = p.pod.spec
            if spec.affinity is not None or spec.topology_spread_constraints or spec.node_selector \
                    or spec.node_name:
                return None
        groups = snap.groups
        gids, index = groups.gids, groups.index
        out: list[frozenset[object]] = []
        for placement in placements:
            counts = Counter(gids[index[n.name]] for n in placement.nodes)
            out.append(frozenset((groups.key(g), n) for g, n in counts.items()))
        return out

    # ------------------------------------------------------------------ one evaluation
    def _evaluate(self, key: str, pods: list[PodInfo], placement: Placement | None,
                  min_count: int) -> _Evaluation:
        """``podGroupSchedulingDefaultAlgorithm``: every member in turn, held once it fits (or once its own
        preemption nominated a node for it); the group is feasible once a held member passes Permit, and
        waits for preemption instead when some held member needs it."""
        fw = self.framework
        fw.placement = placement.nodes if placement is not None else None
        scheduled = len(self.states.scheduled(key))
        result = _Evaluation(unschedulable("", GROUP_UNSCHEDULABLE), [], {}, 0)
        try:
            for pod in pods:
                attempt = fw.attempt(pod, hold=key)
                result.keyed = result.keyed or attempt.keyed
                if attempt.evicted and attempt.nominated is not None:
                    result.member_preemptions.append(MemberPreemption(pod, attempt.nominated, attempt.evicted,
                                                                      attempt.unnominated))
                if attempt.code == Code.ERROR:
                    result.status = Status(Code.ERROR, (OTHER_POD_FAILED + attempt.message,))
                    result.failed[pod.key] = attempt.message
                    result.waiting_on_preemption = False
                    break
                if attempt.code != Code.WAIT or attempt.node is None:
                    result.failed[pod.key] = attempt.message
                    continue
                result.held.append((pod, attempt.node))
                scheduled += 1
                if attempt.requires_preemption:
                    result.preempting[pod.key] = attempt.message
                self._drop_nomination(pod)
                if self.gang is None or self.gang.quorum(min_count, scheduled) is None:
                    if result.preempting:
                        result.status = unschedulable("", GROUP_UNSCHEDULABLE, WAITING_ON_PREEMPTION)
                        result.waiting_on_preemption = True
                    else:
                        result.status = None
        finally:
            fw.placement = None
        result.placed = len(result.held)
        return result

    def _drop_nomination(self, pod: PodInfo) -> None:
        """``assume`` takes an assumed pod out of the nominator: its nomination no longer holds room for it
        (it only comes back when the cycle nominates it again). Members are nominated by a group's
        preemption, or with WorkloadAwarePreemption off by their own."""
        status = pod.pod.status
        node = self.framework.snapshot.by_name.get(status.nominated_node_name or "") if status is not None else None
        if node is not None:
            self.framework.snapshot.unnominate(node, pod)

    def _revert(self, key: str, result: _Evaluation) -> None:
        """Unreserve and forget the held members, last first."""
        for pod, _ in reversed(result.held):
            self.framework.reject(pod, key, "")

    def _failed(self, key: str, group: PodGroup, pods: list[PodInfo], result: _Evaluation,
                status: Status) -> GroupOutcome:
        """``submitPodGroupAlgorithmResult`` of a group that is not feasible (``result`` reverted). In error,
        each member reads its own error or the group's. Unschedulable, a member that did not fit reads its own
        FitError; one held reads ``pod group is unschedulable, <its Permit message>`` and loses its nomination
        — unless the group waits for preemption: then one that fit reads the group's message and one its own
        preemption placed reads its FitError, each nominated to where it was held."""
        code = Code.ERROR if status.code == Code.ERROR else Code.UNSCHEDULABLE
        waiting = result.waiting_on_preemption and code != Code.ERROR
        held = {pod.key: node for pod, node in result.held}
        members = []
        for p in pods:
            node = held.get(p.key)
            if p.key in result.failed or node is None:
                message = result.failed.get(p.key, status.message)
                members.append(MemberOutcome(p, code, None, message))
                continue
            if code == Code.ERROR:
                members.append(MemberOutcome(p, code, None, status.message, node))
            elif waiting:
                message = result.preempting.get(p.key, status.message)
                members.append(MemberOutcome(p, code, None, message, node, node, renominated=not self.preemption))
            else:
                message = f"{GROUP_UNSCHEDULABLE}, {WAITING_FOR_QUORUM}"
                members.append(MemberOutcome(p, code, None, message, node, None,
                                             renominated=not self.preemption and p.key in result.preempting))
        return GroupOutcome(key, group, code, status.message, None, members,
                            member_preemptions=result.member_preemptions)

    def _finish(self, key: str, group: PodGroup, pods: list[PodInfo], result: _Evaluation,
                domain: str | None) -> GroupOutcome:
        """Bind every held member when the group is feasible; else revert them with the group's message."""
        status = result.status
        if status is not None:
            self._revert(key, result)
            return self._failed(key, group, pods, result, status)
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
        return GroupOutcome(key, group, Code.SUCCESS, "", domain, members,
                            member_preemptions=result.member_preemptions)
