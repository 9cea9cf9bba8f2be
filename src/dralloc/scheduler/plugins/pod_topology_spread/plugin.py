"""PodTopologySpread: spread a pod's group over topology domains (Filter for DoNotSchedule constraints, Score
for ScheduleAnyway ones and the system defaults). Weight 2; between VolumeZone and InterPodAffinity.

A pod's own constraints replace the defaults; a pod without any gets the system defaults with the selector
of the Services and controllers that select it (:mod:`.defaults`). PreFilter works out both the filter and
the score counts, so that nodes can still share verdicts: a node's key here is what Filter and Score read of
it (per constraint: whether it carries the key and its domain's count), so nodes of domains with equal counts
keep sharing one verdict and one score.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, replace
from typing import NamedTuple

from dralloc.api.codec import encode_json
from dralloc.scheduler.config.types import DefaultConstraint
from dralloc.scheduler.framework import SKIP, Cycle, K, Plugin, Status, error
from dralloc.scheduler.groups import combine_classes
from dralloc.scheduler.nodeinfo import NodeInfo
from dralloc.scheduler.plugins.node_affinity import required_matches
from dralloc.scheduler.plugins.pod_topology_spread import filtering, scoring
from dralloc.scheduler.plugins.pod_topology_spread.constraints import (
    DO_NOT_SCHEDULE,
    HOSTNAME,
    SCHEDULE_ANYWAY,
    SpreadConstraint,
    SpreadConstraintError,
    parse_constraints,
)
from dralloc.scheduler.plugins.pod_topology_spread.counting import DomainTotals, SpreadIndex
from dralloc.scheduler.plugins.pod_topology_spread.defaults import (
    WorkloadSelectors,
    system_default_constraints,
)
from dralloc.scheduler.podinfo import PodInfo
from dralloc.scheduler.tolerations import first_untolerated

NAME = filtering.NAME
MATCH_LABEL_KEYS_GATE = "MatchLabelKeysInPodTopologySpread"


@dataclass(eq=False)
class SpreadCycle:
    """The plugin's cycle state: the filter counts (None without DoNotSchedule constraints), the score
    counts (None without ScheduleAnyway ones), and for node keys: each node's labels as the constraints see
    them (``domains``, by node position) and the key part of each such labelling (``memo``)."""

    filter: filtering.FilterState | None
    score: scoring.ScoreState | None
    index: SpreadIndex
    domains: list[tuple[str | bool | None, ...]]
    own: tuple[int, ...]  # the score constraints counted on the node itself (hostname)
    memo: dict[tuple[str | bool | None, ...], Hashable]

    def clone(self) -> SpreadCycle:
        return SpreadCycle(self.filter.clone() if self.filter is not None else None, self.score, self.index,
                           self.domains, self.own, self.memo)


class PodConstraints(NamedTuple):
    """A pod's DoNotSchedule and ScheduleAnyway constraints, and whether they are the system defaults."""

    hard: tuple[SpreadConstraint, ...]
    soft: tuple[SpreadConstraint, ...]
    defaulted: bool


def _hard_taint(taint: object) -> bool:
    return getattr(taint, "effect", None) in ("NoSchedule", "NoExecute")


def inclusion(c: SpreadConstraint, pod: PodInfo) -> tuple[Hashable, Callable[[NodeInfo], bool] | None]:
    """A key naming which nodes the constraint's node inclusion policies admit for this pod, and the test
    (None: every node)."""
    affinity = c.honor_affinity and (bool(pod.node_selector) or pod.required_affinity is not None)
    taints = c.honor_taints
    if not affinity and not taints:
        return None, None
    key = (encode_json([sorted(pod.node_selector.items()), pod.required_affinity]) if affinity else None,
           encode_json(pod.tolerations) if taints else None)

    def admits(node: NodeInfo) -> bool:
        if affinity and not required_matches(pod.node_selector, pod.required_affinity, node):
            return False
        return not (taints and first_untolerated(node.taints, pod.tolerations, _hard_taint) is not None)

    return key, admits


class PodTopologySpread(Plugin):
    name = NAME
    weight = 2
    has_filter = True
    has_score = True
    has_pre_filter_extensions = True

    def __init__(self, default_constraints: Sequence[DefaultConstraint] = (), defaulting_type: str = "System") -> None:
        """PodTopologySpreadArgs: with ``defaulting_type`` "System" a pod without constraints gets the system
        defaults; with "List" it gets ``default_constraints`` (topologySpreadConstraints without a selector),
        their selector the pod's Services and controllers select it by."""
        self.default_constraints = list(default_constraints)
        self.system_defaulting = defaulting_type != "List"
        self._index: SpreadIndex | None = None
        self._selectors: tuple[object, WorkloadSelectors] | None = None  # (the snapshot, its selectors)
        self._constraints: weakref.WeakKeyDictionary[PodInfo, PodConstraints] = weakref.WeakKeyDictionary()
        self._parsed: dict[bytes, PodConstraints] = {}

    # ------------------------------------------------------------------ constraints
    def constraints(self, cycle: Cycle) -> PodConstraints:
        pod = cycle.pod
        found = self._constraints.get(pod)
        if found is None:
            raws = pod.pod.spec.topology_spread_constraints
            if raws:
                labels = pod.pod.metadata.labels or {}
                keys = cycle.snapshot.gates.values.get(MATCH_LABEL_KEYS_GATE, True)
                # Pods of one workload declare the same constraints: parse each declaration once.
                text = encode_json([raws, labels if keys else None])
                found = self._parsed.get(text)
                if found is None:
                    if len(self._parsed) >= 1024:
                        self._parsed.clear()
                    found = self._parsed[text] = PodConstraints(
                        parse_constraints(raws, labels, DO_NOT_SCHEDULE, keys),
                        parse_constraints(raws, labels, SCHEDULE_ANYWAY, keys), False)
            else:
                selector = self.workload_selectors(cycle).default_selector(pod.pod)
                if self.system_defaulting:
                    found = PodConstraints((), system_default_constraints(selector), True)
                elif selector.empty or not self.default_constraints:
                    found = PodConstraints((), (), False)
                else:
                    labels = pod.pod.metadata.labels or {}
                    hard = parse_constraints(self.default_constraints, labels, DO_NOT_SCHEDULE, False)
                    soft = parse_constraints(self.default_constraints, labels, SCHEDULE_ANYWAY, False)
                    found = PodConstraints(tuple(replace(c, selector=selector) for c in hard),
                                           tuple(replace(c, selector=selector) for c in soft), False)
            self._constraints[pod] = found
        return found

    def workload_selectors(self, cycle: Cycle) -> WorkloadSelectors:
        """The selectors of the snapshot's Services and controllers, built once per snapshot."""
        snap = cycle.snapshot
        if self._selectors is None or self._selectors[0] is not snap:
            self._selectors = (snap, WorkloadSelectors.build(snap.services, snap.controllers))
        return self._selectors[1]

    def index(self, cycle: Cycle) -> SpreadIndex:
        nodes = cycle.snapshot.nodes
        if self._index is None or self._index.nodes is not nodes or self._index.groups is not cycle.snapshot.groups:
            self._index = SpreadIndex(nodes, cycle.snapshot.groups)
        return self._index

    # ------------------------------------------------------------------ PreFilter
    def pre_filter(self, cycle: Cycle) -> Status | set[str] | None:
        try:
            hard, soft, defaulted = self.constraints(cycle)
        except SpreadConstraintError as exc:
            return error(NAME, f"get constraints from pod: {exc}")
        if not hard and not soft:
            return SKIP
        index = self.index(cycle)
        # What a node key reads of a node's labels: the value of each key a domain is counted by, and only
        # whether the node has the hostname key of a score constraint (its own pods are read instead).
        by_value = [c.topology_key for c in hard] + [c.topology_key for c in soft if c.topology_key != HOSTNAME]
        by_presence = [c.topology_key for c in soft if c.topology_key == HOSTNAME]
        own = tuple(i for i, c in enumerate(soft) if c.topology_key == HOSTNAME)
        state = SpreadCycle(self._filter_state(cycle, index, hard) if hard else None,
                            self._score_state(cycle, index, soft, not defaulted) if soft else None,
                            index, index.labelling(tuple(dict.fromkeys(by_value)), tuple(dict.fromkeys(by_presence))),
                            own, {})
        cycle.data[NAME] = state
        cycle.keyed.append(self)
        return None if hard else SKIP

    def _domains(self, cycle: Cycle, index: SpreadIndex, c: SpreadConstraint, required: tuple[str, ...]
                 ) -> tuple[DomainTotals, Callable[[NodeInfo], bool] | None]:
        pod = cycle.pod
        key, admits = inclusion(c, pod)
        eligible = index.eligible_nodes(key, admits) if admits is not None else None
        counts = index.counts(pod.namespace, c.selector)
        domains = counts.by_domain((c.topology_key, required, key),
                                   lambda: index.values(c.topology_key, required, key, eligible))
        return domains, admits

    def _filter_state(self, cycle: Cycle, index: SpreadIndex, hard: tuple[SpreadConstraint, ...]
                      ) -> filtering.FilterState:
        required = tuple(c.topology_key for c in hard)
        counts: list[dict[str, int]] = []
        at_count: list[dict[int, int]] = []
        minimum: list[int] = []
        tests: list[Callable[[NodeInfo], bool] | None] = []
        for c in hard:
            domains, admits = self._domains(cycle, index, c, required)
            counts.append(domains.totals)
            at_count.append(domains.at_count)
            minimum.append(domains.minimum)
            tests.append(admits)
        return filtering.build_state(hard, cycle.pod, counts, at_count, minimum, tuple(tests))

    def _score_state(self, cycle: Cycle, index: SpreadIndex, soft: tuple[SpreadConstraint, ...],
                     require_all: bool) -> scoring.ScoreState:
        required = tuple(c.topology_key for c in soft) if require_all else ()
        totals: list[dict[str, int]] = []
        own = []
        for c in soft:
            own.append(index.counts(cycle.pod.namespace, c.selector))
            if c.topology_key == HOSTNAME:
                totals.append({})
            else:
                domains, _ = self._domains(cycle, index, c, required)
                totals.append(domains.totals)
        return scoring.ScoreState(soft, require_all, totals, own, index.position)

    # ------------------------------------------------------------------ PreFilter extensions
    def add_pod(self, cycle: Cycle, pod: PodInfo, node: NodeInfo) -> Status | None:
        state: SpreadCycle | None = cycle.data.get(NAME)
        if state is not None and state.filter is not None:
            filtering.update_with_pod(state.filter, pod, cycle.pod, node, 1)
        return None

    def remove_pod(self, cycle: Cycle, pod: PodInfo, node: NodeInfo) -> Status | None:
        state: SpreadCycle | None = cycle.data.get(NAME)
        if state is not None and state.filter is not None:
            filtering.update_with_pod(state.filter, pod, cycle.pod, node, -1)
        return None

    # ------------------------------------------------------------------ Filter
    def filter(self, cycle: Cycle, node: NodeInfo) -> Status | None:
        state: SpreadCycle = cycle.data[NAME]
        assert state.filter is not None
        return filtering.spread_filter(state.filter, cycle.pod, node)

    def node_key(self, cycle: Cycle, node: NodeInfo) -> Hashable:
        """Per constraint: whether the node carries its key and its domain's count (or, for a hostname score
        constraint, the node's own count). Nodes labelled alike share the labelling's part."""
        state: SpreadCycle = cycle.data[NAME]
        pos = state.index.position.get(id(node))
        if pos is None or state.index.nodes[pos] is not node:
            return self._key(state, node, with_own=True)
        labelling = state.domains[pos]
        part = state.memo.get(labelling)
        if part is None:
            part = state.memo[labelling] = self._key(state, node, with_own=False)
        if not state.own:
            return part
        assert state.score is not None
        counts = state.score.own
        return (part, *(counts[i].counts[pos] for i in state.own))

    def node_classes(self, cycle: Cycle) -> tuple[bytes, int] | None:
        """Nodes labelled alike and, for a hostname score constraint, with as many matching pods of their own."""
        state: SpreadCycle = cycle.data[NAME]
        found = state.index.classes(state.domains)
        for i in state.own:
            if found is None:
                return None
            assert state.score is not None
            try:
                counts = bytes(state.score.own[i].counts)
            except ValueError:  # a node with 256 matching pods or more
                return None
            found = combine_classes(*found, counts, max(counts, default=0) + 1)
        return found

    @staticmethod
    def _key(state: SpreadCycle, node: NodeInfo, with_own: bool) -> Hashable:
        return (filtering.filter_key(state.filter, node) if state.filter is not None else None,
                scoring.score_key(state.score, node, with_own) if state.score is not None else None)

    # ------------------------------------------------------------------ Score
    def pre_score(self, cycle: Cycle, nodes: list[NodeInfo]) -> Status | None:
        state: SpreadCycle | None = cycle.data.get(NAME)
        if state is None or state.score is None:
            return SKIP
        scoring.pre_score(state.score, nodes, state.index, state.domains)
        return None

    def score(self, cycle: Cycle, node: NodeInfo) -> int:
        state: SpreadCycle = cycle.data[NAME]
        assert state.score is not None
        return scoring.spread_score(state.score, node)

    def normalize(self, cycle: Cycle, scores: dict[K, int]) -> dict[K, int]:
        return scoring.normalize(scores)
