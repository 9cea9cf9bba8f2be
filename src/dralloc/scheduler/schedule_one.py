"""The scheduling cycle: one pod at a time, PreFilter → Filter (sampled nodes, rotating start) → PostFilter
(DynamicResources, DefaultPreemption) → Score → assume, Reserve → Permit → PreBind → Bind, as
kube-scheduler's ``ScheduleOne`` and its framework runtime.

Where upstream picks at random (ties between top-scoring nodes, the preemption dry run's offset), a
``random.Random(seed)`` picks, so a run is reproducible from its seed.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from itertools import compress, islice

from dralloc.api.core_v1 import NodeSelector, Pod
from dralloc.api.resource_v1 import ResourceClaim
from dralloc.scheduler.cache import SchedulerCache
from dralloc.scheduler.framework import (
    NO_NODES_AVAILABLE,
    Code,
    Cycle,
    Diagnosis,
    Plugin,
    PreScoreError,
    Status,
    fit_error_message,
    unresolvable,
    unschedulable,
)
from dralloc.scheduler.groups import combine_classes
from dralloc.scheduler.memo import MEMO, CycleMemo
from dralloc.scheduler.nodeinfo import NodeInfo
from dralloc.scheduler.plugins.default_binder import bind_pod
from dralloc.scheduler.plugins.default_preemption import (
    MIN_CANDIDATE_NODES_ABSOLUTE,
    MIN_CANDIDATE_NODES_PERCENTAGE,
    Candidate,
    DefaultPreemption,
)
from dralloc.scheduler.plugins.dynamic_resources import DEALLOCATED as DRA_DEALLOCATED
from dralloc.scheduler.plugins.dynamic_resources import DELETED as DRA_DELETED
from dralloc.scheduler.plugins.dynamic_resources import NAME as DRA
from dralloc.scheduler.plugins.dynamic_resources import DraCycle, DynamicResources, selector_matches
from dralloc.scheduler.podinfo import PodInfo
from dralloc.scheduler.profile import Profile, default_plugins
from dralloc.scheduler.runtime import PluginRuntime
from dralloc.scheduler.snapshot import ClusterSnapshot, claim_key

__all__ = ["Attempt", "Framework", "SchedulerState", "bind_pod", "num_feasible_nodes_to_find"]

MIN_FEASIBLE_NODES_TO_FIND = 100
MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND = 5


def num_feasible_nodes_to_find(num_nodes: int, percentage: int = 0) -> int:
    """``numFeasibleNodesToFind``: every node below 100; otherwise ``percentage`` of them (adaptive
    max(50 − n/125, 5) % when 0), at least 100."""
    if num_nodes < MIN_FEASIBLE_NODES_TO_FIND or percentage >= 100:
        return num_nodes
    pct = percentage
    if pct <= 0:
        pct = max(50 - num_nodes // 125, MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND)
    found = num_nodes * pct // 100
    return max(found, MIN_FEASIBLE_NODES_TO_FIND)


class Attempt:
    """How one scheduling attempt ended."""

    __slots__ = ("clear_nomination", "code", "deallocated", "evicted", "keyed", "message", "node", "nominated",
                 "requires_preemption", "unnominated")

    def __init__(self) -> None:
        self.node: NodeInfo | None = None
        self.message = ""
        self.code = Code.UNSCHEDULABLE
        self.evicted: list[PodInfo] = []
        self.deallocated = False
        self.nominated: NodeInfo | None = None
        # kube-scheduler overrides the pod's nominatedNodeName with "" (clearNominatedNode) on these failures
        self.clear_nomination = False
        self.unnominated: list[PodInfo] = []  # lower-priority pods that lost their nomination to this one
        # whether a plugin read more of a node than the framework's node keys for this pod (Cycle.keyed)
        self.keyed = False
        # a pod group member held on the node its own preemption nominated (``requiresPreemption``)
        self.requires_preemption = False

    @property
    def changed_cluster(self) -> bool:
        return bool(self.evicted) or self.deallocated


class SchedulerState:
    """What kube-scheduler keeps on its ``Scheduler``, not per profile: the random source (Go's global
    ``math/rand``, behind tie-breaks and the preemption dry run's offset) and ``nextStartNodeIndex``, where
    the next cycle's node search starts. Every profile's framework reads and advances the same one, and a
    long-lived scheduler keeps it across its cycles."""

    __slots__ = ("next_start_node_index", "rng")

    def __init__(self, seed: int = 0) -> None:
        self.rng = random.Random(seed)
        self.next_start_node_index = 0


class Framework(PluginRuntime):
    """A profile's plugins over a snapshot, and the cycle that runs them."""

    def __init__(self, snapshot: ClusterSnapshot, *, seed: int = 0, percentage_of_nodes_to_score: int = 0,
                 new_claim_name: Callable[[str], str] | None = None, group_nodes: bool = True,
                 plugins: list[Plugin] | None = None, cache: SchedulerCache | None = None,
                 profile: Profile | None = None, tie_break: Callable[[list[NodeInfo]], NodeInfo] | None = None,
                 memo: bool = False, state: SchedulerState | None = None) -> None:
        """``plugins``: the profile's plugins in order (default: kube-scheduler's default profile); or
        ``profile``, a configured profile (its plugins per extension point, weights and preemption).
        ``cache``: the scheduler's cache over ``snapshot``, shared by the frameworks of its profiles.
        ``tie_break``: picks among the top-scoring nodes (default: uniformly with the seeded generator, as
        upstream). ``memo``: keep verdicts and scores across cycles for pods of one signature
        (:mod:`dralloc.scheduler.memo`; same outcome, faster on many alike pods). ``state``: the random
        source and start index shared with the scheduler's other profiles (default: this framework's own,
        from ``seed``)."""
        self.snapshot = snapshot
        self.cache = cache if cache is not None else SchedulerCache(snapshot)
        self.state = state if state is not None else SchedulerState(seed)
        self.rng = self.state.rng
        self.percentage = percentage_of_nodes_to_score
        if profile is not None:
            super().__init__(profile.plugins(), profile.points)
        else:
            super().__init__(default_plugins() if plugins is None else list(plugins))
        self.dra = next((p for p in self.plugins if isinstance(p, DynamicResources)), None)
        if new_claim_name is not None and self.dra is not None:
            self.dra.new_claim_name = new_claim_name
        if self.dra is not None:  # its PreEnqueue reads the claims
            self.dra.claims_of = lambda: self.snapshot.claims
        preempts = profile is None or profile.preemption is not None
        percentage, absolute = profile.preemption if profile is not None and profile.preemption is not None \
            else (MIN_CANDIDATE_NODES_PERCENTAGE, MIN_CANDIDATE_NODES_ABSOLUTE)
        self.preemption = DefaultPreemption(self, self.rng, percentage, absolute) if preempts else None
        # Share filter and score work between nodes in the same state (never changes the answer; tests
        # switch it off to compare).
        self.group_nodes = group_nodes
        # Pods a Permit plugin holds (Code.WAIT): assumed and reserved on their node until allowed or rejected.
        self.waiting: dict[str, tuple[Cycle, NodeInfo, set[str]]] = {}
        self.tie_break = tie_break
        self.memo = CycleMemo() if memo else None
        # A pod group cycle's candidate placement: the only nodes a held attempt considers (None: all).
        self.placement: list[NodeInfo] | None = None
        # With WorkloadAwarePreemption a pod group cycle's members run PostFilter too, DefaultPreemption
        # answering with this text instead of preempting for one pod (None: held members skip PostFilter).
        self.held_post_filter: str | None = None
        # Without it, a member's PostFilter is the pod's own (DynamicResources, then DefaultPreemption, which
        # may preempt for that one member): set by the pod group cycle for its members.
        self.held_preemption = False
        # For each pod held by a pod group cycle: its claims as they were before its PreBind wrote them
        # (None: a claim it created), and the pod itself, to put back when the group lets it go.
        self.held_writes: dict[str, tuple[dict[tuple[str, str], ResourceClaim | None], Pod]] = {}

    @property
    def next_start_node_index(self) -> int:
        """Where the next node search starts (the scheduler's, shared by its profiles)."""
        return self.state.next_start_node_index

    # ------------------------------------------------------------------ one attempt
    def attempt(self, pod: PodInfo, *, hold: str | None = None) -> Attempt:
        """One pod's cycle. ``hold``: a pod group cycle's evaluation of one member (``schedulePod`` +
        ``AssumeAndReserve``): no PostFilter, and a pod that fits is assumed and reserved, then held in
        ``waiting`` on ``hold`` (Code.WAIT) until the group cycle allows or rejects it."""
        snap = self.snapshot
        out = Attempt()
        if not snap.nodes:
            out.message = NO_NODES_AVAILABLE
            out.code = Code.ERROR
            out.clear_nomination = True
            return out
        cycle = Cycle(pod, snap)
        diagnosis = Diagnosis()
        feasible = self._find_feasible(cycle, diagnosis, out)
        out.keyed = bool(cycle.keyed)
        if out.code == Code.ERROR:
            out.clear_nomination = True
            return out
        if not feasible:
            if hold is None:
                self._post_filter(cycle, diagnosis, out)
            elif self.held_post_filter is not None:
                reasons = self._dra_post_filter(cycle, out)
                if self.preemption is not None:
                    reasons.append(self.held_post_filter)
                diagnosis.post_filter_msg = ", ".join(reasons)
            elif self.held_preemption:
                self._post_filter(cycle, diagnosis, out)
                out.keyed = True  # (the dry run reads the pods on nodes, more than their states)
            out.message = fit_error_message(len(snap.nodes if self.placement is None else self.placement),
                                            diagnosis)
            if hold is not None and out.nominated is not None:
                # requiresPreemption: held on the nominated node as if it fit there, so the group's next
                # members see it (its victims are still in the snapshot until they are gone)
                status = self._assume_and_hold(cycle, out.nominated, hold)
                if status is None:
                    out.node, out.code, out.requires_preemption = out.nominated, Code.WAIT, True
                else:
                    out.message, out.code = status.message, status.code
            return out
        try:
            if len(feasible) == 1:  # (kube-scheduler neither pre-scores nor scores a single feasible node)
                chosen = feasible[0]
            elif MEMO in cycle.data:
                chosen = self._select_host_memo(cycle, feasible)
            elif cycle.window is not None:
                chosen = self._select_host_grouped(cycle, feasible)
            else:
                chosen = self._select_host(cycle, feasible)
        except PreScoreError as failed:
            out.code, out.message, out.clear_nomination = Code.ERROR, failed.status.message, True
            return out
        if hold is not None:
            status = self._assume_and_hold(cycle, chosen, hold)
            if status is None:
                out.node = chosen
                out.code = Code.WAIT
            else:
                self._fail_binding(status, chosen, out)
            return out
        status = self._assume_and_bind(cycle, chosen)
        if status is None:
            out.node = chosen
            out.code = Code.SUCCESS
            return out
        if status.code == Code.WAIT:
            out.code = Code.WAIT
            out.message = status.message
            return out
        self._fail_binding(status, chosen, out)
        return out

    def _fail_binding(self, status: Status, node: NodeInfo, out: Attempt) -> None:
        """A rejection after the host was chosen is a FitError over that one node; an error is its text."""
        out.code = status.code
        if status.rejected:
            out.message = fit_error_message(1, Diagnosis(node_statuses={node.name: status}))
        else:
            out.message = status.message
        out.clear_nomination = True

    def _find_feasible(self, cycle: Cycle, diagnosis: Diagnosis, out: Attempt) -> list[NodeInfo]:
        snap = self.snapshot
        status, names, with_nodes = self.run_pre_filter(cycle)
        if status is not None:
            if status.code == Code.ERROR:
                out.code = Code.ERROR
                out.message = f'running PreFilter plugin "{status.plugin}": {status.message}'
                return []
            diagnosis.absent_status = status
            diagnosis.pre_filter_msg = status.message
            return []
        nominated_name = cycle.pod.pod.status.nominated_node_name if cycle.pod.pod.status else None
        placement = self.placement
        if placement is not None:
            return self._find_feasible_in(placement, cycle, diagnosis, out, names, with_nodes)
        if nominated_name and nominated_name in snap.by_name:
            node = snap.by_name[nominated_name]
            nominated_status = self.run_filters(cycle, node)
            if nominated_status is None:
                return [node]
            if nominated_status.rejected:  # DefaultPreemption reads it (evaluateNominatedNode keeps it too)
                diagnosis.node_statuses[node.name] = nominated_status
        nodes = snap.nodes
        if names is not None:
            nodes = [n for n in snap.nodes if n.name in names]
            diagnosis.absent_status = unresolvable(
                "", f"node(s) didn't satisfy plugin(s) [{' '.join(sorted(with_nodes))}]")
        if not nodes:
            return []
        wanted = num_feasible_nodes_to_find(len(nodes), self.percentage)
        named = self._needs_node_names(cycle)
        claim_selectors = self._claim_selectors(cycle)
        if self.memo is not None and names is None and wanted == len(nodes) and snap.dra.all_local \
                and not snap.nominations and not claim_selectors and not named:
            signature = self.memo.signature(cycle)
            if signature is not None:
                found = self.memo.feasible(self, cycle, signature, diagnosis)
                if found is not None:
                    return found
                diagnosis.node_statuses.clear()  # a filter error: the uncached search reports it
                cycle.data.pop(MEMO, None)
        keyed = cycle.keyed  # plugins whose verdicts read more of a node than the group keys hold
        classes = node_classes(cycle, keyed) if keyed and self.group_nodes else None
        if self.group_nodes and names is None and not named and not claim_selectors \
                and (not keyed or classes is not None) and snap.dra.all_local and not snap.nominations \
                and snap.groups.refresh():
            found = self._find_feasible_grouped(cycle, diagnosis, out, wanted, classes)
            if found is not None:
                return found
        feasible: list[NodeInfo] = []
        state = self.state
        start = state.next_start_node_index
        count = len(nodes)
        processed = 0
        statuses = diagnosis.node_statuses
        # Nodes in the same state give the same verdict: filter one of them, reuse it for the others.
        verdicts: dict[tuple[object, ...], Status | None] = {}
        keys = cycle.node_keys
        state_id = snap.dra.state_id
        run = self.run_filters
        # A node's group id stands for its (static_key, dynamic_key) while the groups are usable.
        gids = snap.groups.gids if self.group_nodes and names is None and not named and snap.groups.refresh() \
            else None
        only_key = keyed[0].node_key if len(keyed) == 1 else None
        for i in range(count):
            index = (start + i) % count
            node = nodes[index]
            processed += 1
            if node.nominated:
                st = run(cycle, node)
            else:
                key: tuple[object, ...] = (
                    gids[index] if gids is not None else
                    (node.named_key if named or not self.group_nodes else node.static_key,
                     node.dynamic_key(state_id(node.name))),
                    tuple(selector_matches(sel, node) for sel in claim_selectors) if claim_selectors else (),
                    only_key(cycle, node) if only_key is not None else
                    tuple(plugin.node_key(cycle, node) for plugin in keyed) if keyed else ())
                keys[node.name] = key
                if key in verdicts:
                    st = verdicts[key]
                else:
                    st = verdicts[key] = run(cycle, node)
                    cycle.representatives[key] = node
            if st is None:
                feasible.append(node)
                if len(feasible) >= wanted:
                    break
            elif st.code == Code.ERROR:
                out.code = Code.ERROR
                out.message = st.message
                break
            else:
                statuses[node.name] = st
        state.next_start_node_index = (state.next_start_node_index + processed) % len(snap.nodes)
        return feasible

    def _find_feasible_in(self, placement: list[NodeInfo], cycle: Cycle, diagnosis: Diagnosis, out: Attempt,
                          names: set[str] | None, with_nodes: list[str]) -> list[NodeInfo]:
        """``_find_feasible`` over a placement's nodes only (``ListNodesInPlacement``): every node is filtered
        (nodes in one state share their verdict), none outside counts, not even in the failure text."""
        nodes = placement
        if names is not None:
            nodes = [n for n in placement if n.name in names]
            diagnosis.absent_status = unresolvable(
                "", f"node(s) didn't satisfy plugin(s) [{' '.join(sorted(with_nodes))}]")
        wanted = num_feasible_nodes_to_find(len(placement), self.percentage)
        state_id = self.snapshot.dra.state_id
        claim_selectors = self._claim_selectors(cycle)
        keyed = cycle.keyed
        named = self._needs_node_names(cycle)
        verdicts: dict[tuple[object, ...], Status | None] = {}
        feasible: list[NodeInfo] = []
        count = len(nodes)
        start = self.next_start_node_index % count if count else 0
        for i in range(count):
            node = nodes[(start + i) % count]
            if node.nominated:
                st = self.run_filters(cycle, node)
            else:
                key: tuple[object, ...] = (
                    node.named_key if named or not self.group_nodes else node.static_key,
                    node.dynamic_key(state_id(node.name)),
                    tuple(selector_matches(sel, node) for sel in claim_selectors),
                    tuple(plugin.node_key(cycle, node) for plugin in keyed))
                cycle.node_keys[node.name] = key
                if key in verdicts:
                    st = verdicts[key]
                else:
                    st = verdicts[key] = self.run_filters(cycle, node)
                    cycle.representatives[key] = node
            if st is None:
                feasible.append(node)
                if len(feasible) >= wanted:
                    break
            elif st.code == Code.ERROR:
                out.code = Code.ERROR
                out.message = st.message
                break
            else:
                diagnosis.node_statuses[node.name] = st
        return feasible

    def _find_feasible_grouped(self, cycle: Cycle, diagnosis: Diagnosis, out: Attempt, wanted: int,
                               classes: tuple[bytes, int] | None = None) -> list[NodeInfo] | None:
        """``_find_feasible`` over node groups: filter one member of each group, turn the verdicts into a
        per-node map and find the first ``wanted`` feasible nodes from the rotating start in C. With
        ``classes`` (the keyed plugins' class of each node, and how many there are) a group is a node group
        and a class; None when there would be too many of those."""
        snap = self.snapshot
        groups = snap.groups
        nodes = snap.nodes
        count = len(nodes)
        gids = bytes(groups.gids)
        live: list[tuple[int, int]]
        if classes is None:
            live = sorted(groups.live().items())
            cycle.group_key = groups.key
        else:
            n = classes[1]
            combined = combine_classes(gids, max(gids) + 1, *classes)  # group id * n + class
            if combined is None:
                return None
            gids = combined[0]
            live = sorted((g, gids.index(g)) for g in set(gids))
            cycle.group_key = lambda g: (groups.key(g // n), g % n)
        table = bytearray(256)
        verdicts: dict[int, Status | None] = {}
        for gid, member in live:
            node = nodes[member]
            st = self.run_filters(cycle, node)
            if st is not None and st.code == Code.ERROR:
                # Upstream stops at the first error in node order; report the error (any member would).
                out.code = Code.ERROR
                out.message = st.message
                return []
            verdicts[gid] = st
            cycle.representatives[cycle.group_key(gid)] = node
            if st is None:
                table[gid] = 1
        cycle.feasible_gids = bytes(table)
        state = self.state
        start = state.next_start_node_index % count
        rotated_gids = gids[start:] + gids[:start]
        rotated = rotated_gids.translate(bytes(table))
        positions = list(islice(compress(range(count), rotated), wanted))
        processed = positions[-1] + 1 if len(positions) >= wanted else count
        feasible = [nodes[(start + p) % count] for p in positions]
        if len(feasible) < wanted:
            # A failure text needs every examined node's status.
            statuses = diagnosis.node_statuses
            for p in range(processed):
                i = (start + p) % count
                st = verdicts[gids[i]]
                if st is not None:
                    statuses[nodes[i].name] = st
        cycle.window = (rotated_gids[:processed], start)
        state.next_start_node_index = (state.next_start_node_index + processed) % count
        return feasible

    def _select_host_grouped(self, cycle: Cycle, feasible: list[NodeInfo]) -> NodeInfo:
        """``_select_host`` for a grouped search: score each feasible group present in the examined window
        once, then pick uniformly among the nodes of the top groups, in examination order."""
        key = cycle.group_key
        assert cycle.window is not None and key is not None
        window, start = cycle.window
        present = sorted(g for g in set(window) if key(g) in cycle.representatives and cycle.feasible_gids[g])
        reps = {g: cycle.representatives[key(g)] for g in present}
        totals = self.run_scores(cycle, feasible, reps)
        best = max(totals.values())
        top = bytearray(256)
        for g, total in totals.items():
            if total == best:
                top[g] = 1
        tie_flags = window.translate(bytes(top))
        ties = list(compress(range(len(window)), tie_flags))
        count = len(self.snapshot.nodes)
        if self.tie_break is not None and len(ties) > 1:
            return self.tie_break([self.snapshot.nodes[(start + p) % count] for p in ties])
        pick = ties[self.rng.randrange(len(ties))] if len(ties) > 1 else ties[0]
        return self.snapshot.nodes[(start + pick) % count]

    @staticmethod
    def _needs_node_names(cycle: Cycle) -> bool:
        """Whether the pod's own constraints read a node's name beyond what keyed plugins capture
        (``spec.nodeName``; NodeAffinity keys on the labels its selectors read)."""
        return bool(cycle.pod.pod.spec.node_name)

    @staticmethod
    def _claim_selectors(cycle: Cycle) -> list[NodeSelector]:
        """The node selectors of the pod's allocated claims: the only way its verdict depends on a node's
        name besides its own selectors (nodes agreeing on every one of them can share verdicts)."""
        st: DraCycle | None = cycle.data.get(DRA)
        return [sel for sel in st.available_on if sel is not None] if st is not None else []

    def _dra_post_filter(self, cycle: Cycle, out: Attempt) -> list[str]:
        """DynamicResources' PostFilter (it runs first): its reasons, ``out.deallocated`` when it freed a claim
        (deallocated one, or deleted the pod's stale claim for extended resources)."""
        if self.dra is None:
            return []
        dra_status = self.dra.post_filter(cycle)
        if dra_status.reasons and dra_status.reasons[0] in (DRA_DEALLOCATED, DRA_DELETED):
            out.deallocated = True
        return list(dra_status.reasons)

    def _post_filter(self, cycle: Cycle, diagnosis: Diagnosis, out: Attempt) -> None:
        reasons = self._dra_post_filter(cycle, out)
        if self.preemption is None:  # a profile without DefaultPreemption: no victims, the nomination stays
            diagnosis.post_filter_msg = ", ".join(reasons)
            return
        status, candidate, clear = self.preemption.post_filter(cycle, diagnosis, len(self.snapshot.nodes))
        out.clear_nomination = clear
        if status.code == Code.SUCCESS and candidate is not None:
            self._prepare_candidate(cycle, candidate, out)
            diagnosis.post_filter_msg = ""
            return
        reasons.extend(status.reasons)
        diagnosis.post_filter_msg = ", ".join(reasons)

    def _prepare_candidate(self, cycle: Cycle, candidate: Candidate, out: Attempt) -> None:
        node = candidate.node
        for victim in candidate.victims:
            out.evicted.append(victim)
        for p in list(node.nominated):
            if p.priority < cycle.pod.priority:
                self.snapshot.unnominate(node, p)
                out.unnominated.append(p)
        out.nominated = node

    # ------------------------------------------------------------------ score
    def _select_host(self, cycle: Cycle, feasible: list[NodeInfo]) -> NodeInfo:
        """Score each distinct node state once (normalisation only needs the maxima, which the distinct
        states have), then pick uniformly among the top-scoring nodes with the seeded generator — the
        distribution of selectHost's reservoir sampling."""
        keys = cycle.node_keys
        groups: dict[tuple[object, ...] | str, list[NodeInfo]] = {}
        for n in feasible:
            key = keys.get(n.name, n.name)
            members = groups.get(key)
            if members is None:
                groups[key] = [n]
            else:
                members.append(n)
        reps: dict[tuple[object, ...] | str, NodeInfo] = {
            key: cycle.representatives.get(key, members[0]) if isinstance(key, tuple) else members[0]
            for key, members in groups.items()}
        totals = self.run_scores(cycle, feasible, reps)
        best = max(totals.values())
        ties = [n for key, members in groups.items() if totals[key] == best for n in members]
        if len(groups) > 1 and len(ties) > 1:
            order = {id(n): i for i, n in enumerate(feasible)}
            ties.sort(key=lambda n: order[id(n)])
        if self.tie_break is not None and len(ties) > 1:
            return self.tie_break(ties)
        return ties[self.rng.randrange(len(ties))] if len(ties) > 1 else ties[0]

    def _select_host_memo(self, cycle: Cycle, feasible: list[NodeInfo]) -> NodeInfo:
        """``_select_host`` with the memo's scores: the same ties, in the same order, the same draw."""
        assert self.memo is not None
        totals = self.memo.totals(self, cycle, feasible)
        best = max(totals)
        ties = [n for n, total in zip(feasible, totals) if total == best]
        if self.tie_break is not None and len(ties) > 1:
            return self.tie_break(ties)
        return ties[self.rng.randrange(len(ties))] if len(ties) > 1 else ties[0]

    # ------------------------------------------------------------------ assume, Reserve, Permit, PreBind, Bind
    def _assume_and_bind(self, cycle: Cycle, node: NodeInfo) -> Status | None:
        """Assume the pod on the node, then Reserve and Permit (the scheduling cycle's end), then PreBind and
        Bind (the binding cycle, run inline). A failure runs Unreserve and forgets the pod; WAIT keeps it
        assumed in ``waiting`` until :meth:`allow` or :meth:`reject`."""
        pod = cycle.pod
        # A score plugin may prefer some devices of the node (a trace policy's GPU choice; not upstream's):
        # DynamicResources' Reserve allocates in that order.
        cycle.device_order = next((o for o in (p.device_order(cycle, node) for p in self.scorers)
                                   if o is not None), None)
        self.cache.assume_pod(pod, node)
        status = self.run_reserve(cycle, node)
        waiting_on: set[str] = set()
        if status is None:
            status, waiting_on = self.run_permit(cycle, node)
        if status is None:
            status = self._bind(cycle, node)
        if status is not None and status.code == Code.WAIT:
            self.waiting[pod.uid] = (cycle, node, waiting_on)
            return status
        if status is not None:
            self._forget(cycle, node)
        return status

    def _assume_and_hold(self, cycle: Cycle, node: NodeInfo, holder: str) -> Status | None:
        """Assume and Reserve only; the pod waits on ``holder`` (its group cycle), which later allows it
        (PreBind, Bind) or rejects it (Unreserve, forget)."""
        pod = cycle.pod
        cycle.device_order = next((o for o in (p.device_order(cycle, node) for p in self.scorers)
                                   if o is not None), None)
        self.cache.assume_pod(pod, node)
        status = self.run_reserve(cycle, node)
        if status is not None:
            self._forget(cycle, node)
            return status
        # The group's next members must see the devices taken (upstream's in-flight claim allocations):
        # PreBind writes the allocations now, and they are put back if the group does not bind.
        st: DraCycle | None = cycle.data.get(DRA)
        claims = list(st.claims) if st is not None else []
        if st is not None and st.reservation is not None:
            claims += st.reservation.claims
            if st.reservation.extended_claim is not None:
                claims.append(st.reservation.extended_claim)
        snap = self.snapshot
        before = {claim_key(c): snap.claims.get(claim_key(c)) for c in claims}
        self.held_writes[pod.uid] = (before, pod.pod)
        status = self.run_pre_bind(cycle, node)
        if status is not None:
            self._forget(cycle, node)
            self._put_back(pod)
            return status
        self.waiting[pod.uid] = (cycle, node, {holder})
        return None

    def _put_back(self, pod: PodInfo) -> None:
        """Undo what a held pod's PreBind wrote (its claims, its status)."""
        held = self.held_writes.pop(pod.uid, None)
        if held is None:
            return
        before, old_pod = held
        snap = self.snapshot
        for key, claim in before.items():
            if claim is not None:
                snap.set_claim(claim)
            elif key in snap.claims:
                snap.delete_claim(snap.claims[key])
        pod.pod = old_pod

    def _bind(self, cycle: Cycle, node: NodeInfo) -> Status | None:
        status = self.run_pre_bind(cycle, node)
        if status is None:
            status = self.run_bind(cycle, node)
        if status is None:
            self.cache.finish_binding(cycle.pod)
        return status

    def _forget(self, cycle: Cycle, node: NodeInfo) -> None:
        self.run_unreserve(cycle, node)
        self.cache.forget_pod(cycle.pod)

    # ------------------------------------------------------------------ waiting pods (Permit WAIT)
    def allow(self, pod: PodInfo, plugin: str) -> Attempt | None:
        """``WaitingPod.Allow``: ``plugin`` lets the held pod go; once every plugin that asked it to wait
        has, the binding cycle runs. None while it still waits (or was not waiting), else how it ended."""
        held = self.waiting.get(pod.uid)
        if held is None:
            return None
        cycle, node, waiting_on = held
        waiting_on.discard(plugin)
        if waiting_on:
            return None
        del self.waiting[pod.uid]
        self.held_writes.pop(pod.uid, None)
        out = Attempt()
        status = self._bind(cycle, node)
        if status is None:
            out.node = node
            out.code = Code.SUCCESS
            return out
        self._forget(cycle, node)
        self._fail_binding(status, node, out)
        return out

    def reject(self, pod: PodInfo, plugin: str, message: str) -> Attempt | None:
        """``WaitingPod.Reject``: the held pod is unreserved and forgotten; its failure is a FitError over its
        node with ``message``. None when it was not waiting."""
        held = self.waiting.pop(pod.uid, None)
        if held is None:
            return None
        cycle, node, _ = held
        self._forget(cycle, node)
        self._put_back(pod)
        out = Attempt()
        self._fail_binding(unschedulable(plugin, message), node, out)
        return out


def node_classes(cycle: Cycle, keyed: list[Plugin]) -> tuple[bytes, int] | None:
    """The keyed plugins' classes of every node combined into one (class, count), or None when a plugin
    has none for this pod or there are more than 256 combinations."""
    combined: tuple[bytes, int] | None = None
    for plugin in keyed:
        found = plugin.node_classes(cycle)
        if found is None:
            return None
        combined = found if combined is None else combine_classes(*combined, *found)
        if combined is None:
            return None
    return combined
