"""The scheduling cycle: one pod at a time, PreFilter → Filter (sampled nodes, rotating start) → PostFilter
(DynamicResources, DefaultPreemption) → Score → Reserve/Bind, as kube-scheduler's ``ScheduleOne``.

Where upstream picks at random (ties between top-scoring nodes, the preemption dry run's offset), a
``random.Random(seed)`` picks, so a run is reproducible from its seed.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from itertools import compress, islice

from msgspec.structs import replace

from dralloc.api.core_v1 import NodeSelector, Pod, PodStatus
from dralloc.api.resource_v1 import ResourceClaim, ResourceClaimConsumerReference, ResourceClaimStatus
from dralloc.scheduler.framework import (
    NO_NODES_AVAILABLE,
    Code,
    Diagnosis,
    K,
    Status,
    fit_error_message,
    unresolvable,
)
from dralloc.scheduler.memo import MEMO, CycleMemo
from dralloc.scheduler.nodeinfo import NodeInfo
from dralloc.scheduler.plugins.base import Cycle, Plugin
from dralloc.scheduler.plugins.default_preemption import Candidate, DefaultPreemption
from dralloc.scheduler.plugins.dynamic_resources import NAME as DRA
from dralloc.scheduler.plugins.dynamic_resources import DraCycle, is_reserved_for, selector_matches
from dralloc.scheduler.plugins.extended_resources import RequestMapping
from dralloc.scheduler.podinfo import PodInfo
from dralloc.scheduler.profile import default_plugins
from dralloc.scheduler.snapshot import ClusterSnapshot, claim_key

MIN_FEASIBLE_NODES_TO_FIND = 100
MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND = 5
DELETE_PROTECTION_FINALIZER = "resource.kubernetes.io/delete-protection"


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

    __slots__ = ("clear_nomination", "code", "deallocated", "evicted", "extended_claim", "extended_mappings",
                 "message", "node", "nominated", "unnominated")

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
        self.extended_claim: ResourceClaim | None = None
        # which container's extended resource each request of the extended claim serves
        self.extended_mappings: list[RequestMapping] = []

    @property
    def changed_cluster(self) -> bool:
        return bool(self.evicted) or self.deallocated


class Framework:
    """The plugins of the default profile over a snapshot, and the cycle that runs them."""

    def __init__(self, snapshot: ClusterSnapshot, *, seed: int = 0, percentage_of_nodes_to_score: int = 0,
                 on_bind: Callable[[PodInfo, NodeInfo, list[ResourceClaim]], None] | None = None,
                 new_claim_name: Callable[[str], str] | None = None, group_nodes: bool = True,
                 plugins: list[Plugin] | None = None,
                 tie_break: Callable[[list[NodeInfo]], NodeInfo] | None = None, memo: bool = False) -> None:
        """``plugins``: the profile's filter and score plugins in order (default: the default profile);
        it must hold DynamicResources. ``tie_break``: picks among the top-scoring nodes (default: uniformly
        with the seeded generator, as upstream). ``memo``: keep verdicts and scores across cycles for pods
        of one signature (:mod:`dralloc.scheduler.memo`; same outcome, faster on many alike pods)."""
        self.snapshot = snapshot
        self.rng = random.Random(seed)
        self.percentage = percentage_of_nodes_to_score
        self.plugins: list[Plugin] = default_plugins() if plugins is None else plugins
        self.filters = [p for p in self.plugins if p.has_filter]
        self.pre_filters = [p for p in self.plugins if p.has_filter or type(p).pre_filter is not Plugin.pre_filter]
        self.scorers = [p for p in self.plugins if p.has_score]
        self.dra = next(p for p in self.plugins if p.name == DRA)
        self.preemption = DefaultPreemption(self.run_filters, self.rng)
        self.next_start_node_index = 0
        # Share filter and score work between nodes in the same state (never changes the answer; tests
        # switch it off to compare).
        self.group_nodes = group_nodes
        self.on_bind = on_bind
        self.new_claim_name = new_claim_name or (lambda base: base + "x")
        self.tie_break = tie_break
        self.memo = CycleMemo() if memo else None

    # ------------------------------------------------------------------ filters
    def run_filters(self, cycle: Cycle, node: NodeInfo) -> Status | None:
        """Every filter plugin in order, stopping at the first that rejects (with nominated pods of at
        least the pod's priority counted on the node, as ``RunFilterPluginsWithNominatedPods``)."""
        if node.nominated:
            others = [p for p in node.nominated if p is not cycle.pod and p.priority >= cycle.pod.priority]
            if others:
                node = node.copy_with(others)
        skip = cycle.skip_filter
        for plugin in self.filters:
            if plugin.name in skip:
                continue
            status = plugin.filter(cycle, node)
            if status is not None:
                return status
        return None

    def _pre_filter(self, cycle: Cycle) -> tuple[Status | None, set[str] | None, list[str]]:
        names: set[str] | None = None
        with_nodes: list[str] = []
        rejected: Status | None = None
        for plugin in self.pre_filters:
            result = plugin.pre_filter(cycle)
            if result is None:
                continue
            if isinstance(result, set):
                with_nodes.append(plugin.name)
                names = set(result) if names is None else names & result
                if not names:
                    plugins = sorted(with_nodes)
                    text = (f"node(s) didn't satisfy plugin {plugins[0]}" if len(plugins) == 1 else
                            f"node(s) didn't satisfy plugin(s) [{' '.join(plugins)}] simultaneously")
                    return unresolvable(plugin.name, text), names, with_nodes
                continue
            if result.code == Code.SKIP:
                cycle.skip_filter.add(plugin.name)
                continue
            if result.code == Code.UNRESOLVABLE or result.code == Code.ERROR:
                return result, None, with_nodes
            rejected = result  # Unschedulable: the other PreFilters still run (preemption may help)
        return rejected, names, with_nodes

    # ------------------------------------------------------------------ one attempt
    def attempt(self, pod: PodInfo) -> Attempt:
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
        if out.code == Code.ERROR:
            out.clear_nomination = True
            return out
        if not feasible:
            self._post_filter(cycle, diagnosis, out)
            out.message = fit_error_message(len(snap.nodes), diagnosis)
            return out
        if len(feasible) == 1:
            chosen = feasible[0]
        elif MEMO in cycle.data:
            chosen = self._select_host_memo(cycle, feasible)
        elif cycle.window is not None:
            chosen = self._select_host_grouped(cycle, feasible)
        else:
            chosen = self._select_host(cycle, feasible)
        ext: list[ResourceClaim | None] = [None]
        status = self._reserve_and_bind(cycle, chosen, ext, out.extended_mappings)
        if status is not None:
            # A Reserve/PreBind rejection: a FitError over the one chosen node.
            out.message = fit_error_message(1, Diagnosis(node_statuses={chosen.name: status}))
            out.clear_nomination = True
            out.extended_mappings = []
            return out
        out.extended_claim = ext[0]
        out.node = chosen
        out.code = Code.SUCCESS
        return out

    def _find_feasible(self, cycle: Cycle, diagnosis: Diagnosis, out: Attempt) -> list[NodeInfo]:
        snap = self.snapshot
        status, names, with_nodes = self._pre_filter(cycle)
        if status is not None:
            if status.code == Code.ERROR:
                out.code = Code.ERROR
                out.message = f'running PreFilter plugin "{status.plugin}": {status.message}'
                return []
            diagnosis.absent_status = status
            diagnosis.pre_filter_msg = status.message
            return []
        nominated_name = cycle.pod.pod.status.nominated_node_name if cycle.pod.pod.status else None
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
        if self.group_nodes and names is None and not named and not claim_selectors and snap.dra.all_local and not snap.nominations \
                and not cycle.keyed and snap.groups.refresh():
            return self._find_feasible_grouped(cycle, diagnosis, out, wanted)
        feasible: list[NodeInfo] = []
        start = self.next_start_node_index
        count = len(nodes)
        processed = 0
        statuses = diagnosis.node_statuses
        # Nodes in the same state give the same verdict: filter one of them, reuse it for the others.
        verdicts: dict[tuple[object, ...], Status | None] = {}
        keys = cycle.node_keys
        state_id = snap.dra.state_id
        run = self.run_filters
        for i in range(count):
            node = nodes[(start + i) % count]
            processed += 1
            if node.nominated:
                st = run(cycle, node)
            else:
                key = (node.named_key if named or not self.group_nodes else node.static_key,
                       node.dynamic_key(state_id(node.name)),
                       tuple(selector_matches(sel, node) for sel in claim_selectors) if claim_selectors else (),
                       tuple(p.node_key(cycle, node) for p in cycle.keyed))
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
                out.message = f'running "{st.plugin}" filter plugin: {st.message}'
                break
            else:
                statuses[node.name] = st
        self.next_start_node_index = (self.next_start_node_index + processed) % len(snap.nodes)
        return feasible

    def _find_feasible_grouped(self, cycle: Cycle, diagnosis: Diagnosis, out: Attempt, wanted: int
                               ) -> list[NodeInfo]:
        """``_find_feasible`` over node groups: filter one member of each group, turn the verdicts into a
        per-node map and find the first ``wanted`` feasible nodes from the rotating start in C."""
        snap = self.snapshot
        groups = snap.groups
        nodes = snap.nodes
        count = len(nodes)
        table = bytearray(256)
        verdicts: dict[int, Status | None] = {}
        for gid, member in sorted(groups.live().items()):
            node = nodes[member]
            st = self.run_filters(cycle, node)
            if st is not None and st.code == Code.ERROR:
                # Upstream stops at the first error in node order; report the error (any member would).
                out.code = Code.ERROR
                out.message = f'running "{st.plugin}" filter plugin: {st.message}'
                return []
            verdicts[gid] = st
            cycle.representatives[groups.key(gid)] = node
            if st is None:
                table[gid] = 1
        cycle.feasible_gids = bytes(table)
        start = self.next_start_node_index % count
        gids = bytes(groups.gids)
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
        self.next_start_node_index = (self.next_start_node_index + processed) % count
        return feasible

    def _score(self, cycle: Cycle, feasible: list[NodeInfo], reps: dict[K, NodeInfo]) -> dict[K, int]:
        """Weighted sum of every score plugin's normalised score, for one representative node per state
        (normalisation only reads the maximum, which the representatives have)."""
        totals = dict.fromkeys(reps, 0)
        for plugin in self.scorers:
            if plugin.pre_score(cycle, feasible) is not None:
                continue
            scores = plugin.normalize(cycle, {key: plugin.score(cycle, rep) for key, rep in reps.items()})
            for key, score in scores.items():
                totals[key] += score * plugin.weight
        return totals

    def _select_host_grouped(self, cycle: Cycle, feasible: list[NodeInfo]) -> NodeInfo:
        """``_select_host`` for a grouped search: score each feasible group present in the examined window
        once, then pick uniformly among the nodes of the top groups, in examination order."""
        groups = self.snapshot.groups
        assert cycle.window is not None
        window, start = cycle.window
        present = sorted(g for g in set(window) if groups.key(g) in cycle.representatives
                         and cycle.feasible_gids[g])
        reps = {g: cycle.representatives[groups.key(g)] for g in present}
        totals = self._score(cycle, feasible, reps)
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
        """Whether the pod's own constraints read a node's name or labels (selectors, affinity)."""
        pod = cycle.pod
        if pod.node_selector or pod.required_affinity is not None or pod.preferred_affinity:
            return True
        return bool(pod.pod.spec.node_name)

    @staticmethod
    def _claim_selectors(cycle: Cycle) -> list[NodeSelector]:
        """The node selectors of the pod's allocated claims: the only way its verdict depends on a node's
        name besides its own selectors (nodes agreeing on every one of them can share verdicts)."""
        st: DraCycle | None = cycle.data.get(DRA)
        return [sel for sel in st.available_on if sel is not None] if st is not None else []

    def _post_filter(self, cycle: Cycle, diagnosis: Diagnosis, out: Attempt) -> None:
        reasons: list[str] = []
        dra_status = self.dra.post_filter(cycle)  # type: ignore[attr-defined]
        if dra_status.reasons and dra_status.reasons[0].startswith("deallocation"):
            out.deallocated = True
        reasons.extend(dra_status.reasons)
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
    def _select_host_memo(self, cycle: Cycle, feasible: list[NodeInfo]) -> NodeInfo:
        """``_select_host`` with the memo's scores: the same ties, in the same order, the same draw."""
        assert self.memo is not None
        totals = self.memo.totals(self, cycle, feasible)
        best = max(totals)
        ties = [n for n, total in zip(feasible, totals) if total == best]
        if self.tie_break is not None and len(ties) > 1:
            return self.tie_break(ties)
        return ties[self.rng.randrange(len(ties))] if len(ties) > 1 else ties[0]

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
        totals = self._score(cycle, feasible, reps)
        best = max(totals.values())
        ties = [n for key, members in groups.items() if totals[key] == best for n in members]
        if len(groups) > 1 and len(ties) > 1:
            order = {id(n): i for i, n in enumerate(feasible)}
            ties.sort(key=lambda n: order[id(n)])
        if self.tie_break is not None and len(ties) > 1:
            return self.tie_break(ties)
        return ties[self.rng.randrange(len(ties))] if len(ties) > 1 else ties[0]

    # ------------------------------------------------------------------ reserve + bind
    def _reserve_and_bind(self, cycle: Cycle, node: NodeInfo, out_claim: list[ResourceClaim | None],
                          out_mappings: list[RequestMapping]) -> Status | None:
        snap = self.snapshot
        pod = cycle.pod
        bound_claims: list[ResourceClaim] = []
        footprint: dict[str, int] = {}
        st: DraCycle | None = cycle.data.get(DRA)
        if st is not None and not st.empty:
            found = st.nodes.get(node.name)
            to_allocate = list(st.to_allocate)
            ext = found.extended_claim if found is not None else None
            if ext is not None:
                ext = replace(ext, metadata=replace(ext.metadata, name=self.new_claim_name(
                    ext.metadata.generate_name or "")))
                to_allocate.append(ext)
                out_claim[0] = ext
                out_mappings.extend(found.mappings if found is not None else ())
            results = found.results if found is not None else []
            if to_allocate:
                signature = snap.dra.claims_signature(to_allocate)
                order = next((o for o in (p.device_order(cycle, node) for p in self.scorers) if o is not None),
                             None)
                found_here = snap.dra.allocate(node.node, to_allocate, signature, device_order=order)
                moved = snap.dra.results_for(found_here, node.name)
                if moved is None:
                    found_here = snap.dra.allocate(node.node, to_allocate, signature, exact=True)
                    moved = found_here.results
                if moved is None:  # cannot happen: the class answer was checked on this node
                    return unresolvable(DRA, "cannot allocate all claims")
                results = moved
                footprint = found_here.footprint
            ref = ResourceClaimConsumerReference(resource="pods", name=pod.name, uid=pod.uid)
            for claim, result in zip(to_allocate, results):
                status = claim.status or ResourceClaimStatus()
                finalizers = list(claim.metadata.finalizers or ())
                if DELETE_PROTECTION_FINALIZER not in finalizers:
                    finalizers.append(DELETE_PROTECTION_FINALIZER)
                claim = replace(claim, metadata=replace(claim.metadata, finalizers=finalizers),
                                status=replace(status, allocation=result, reserved_for=[ref]))
                snap.set_claim(claim)
                bound_claims.append(claim)
            for claim in st.claims:
                current = snap.claims.get(claim_key(claim), claim)
                if current.status is not None and current.status.allocation is not None \
                        and not is_reserved_for(current, pod.uid) and claim not in st.to_allocate:
                    reserved = list(current.status.reserved_for or ()) + [ref]
                    current = replace(current, status=replace(current.status, reserved_for=reserved))
                    snap.set_claim(current)
                    bound_claims.append(current)
        pod.claim_footprint = footprint
        node.add_pod(pod, footprint)
        if self.on_bind is not None:
            self.on_bind(pod, node, bound_claims)
        return None


def bind_pod(pod: Pod, node_name: str) -> Pod:
    """The pod as ``pods/binding`` leaves it: ``spec.nodeName`` set, nomination cleared."""
    status = pod.status or PodStatus()
    return replace(pod, spec=replace(pod.spec, node_name=node_name),
                   status=replace(status, nominated_node_name=None))
