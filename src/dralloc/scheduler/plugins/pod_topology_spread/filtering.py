"""PodTopologySpread's PreFilter, Filter and PreFilter extensions: the DoNotSchedule constraints.

PreFilter counts, per constraint, the matching pods of every eligible domain: nodes that carry every
constraint's topology key and pass the constraint's node inclusion policies. Filter then admits a node when,
for every constraint, ``matching pods in its domain + (1 if the pod matches its own selector) - global minimum
<= maxSkew``; the global minimum is 0 while there are fewer eligible domains than ``minDomains``. A node
without a constraint's topology key is UnschedulableAndUnresolvable, with the missing-label reason; a skew
too large is Unschedulable (preemption may help). AddPod/RemovePod move one pod in or out of the counts
(pods of other namespaces and nodes lacking a key do not count; a terminating pod is not skipped there, as
upstream's ``updateWithPod`` does not).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from dralloc.scheduler.framework import Status, unresolvable, unschedulable
from dralloc.scheduler.nodeinfo import NodeInfo
from dralloc.scheduler.plugins.pod_topology_spread.constraints import SpreadConstraint
from dralloc.scheduler.plugins.pod_topology_spread.counting import move_domain
from dralloc.scheduler.podinfo import PodInfo

NAME = "PodTopologySpread"
ERR_REASON_CONSTRAINTS_NOT_MATCH = "node(s) didn't match pod topology spread constraints"
ERR_REASON_NODE_LABEL_NOT_MATCH = ERR_REASON_CONSTRAINTS_NOT_MATCH + " (missing required label)"

INT32_MAX = 2**31 - 1


@dataclass(eq=False)
class FilterState:
    """``preFilterState``: per constraint, matching pods per eligible domain, how many domains hold each
    count, and the global minimum. The dicts may be shared with the index until the first change."""

    constraints: tuple[SpreadConstraint, ...]
    counts: list[dict[str, int]]
    at_count: list[dict[int, int]]
    minimum: list[int]
    self_match: tuple[bool, ...]
    # per constraint: which nodes its node inclusion policies admit (None: all)
    eligible: tuple[Callable[[NodeInfo], bool] | None, ...]
    owned: bool = False

    def clone(self) -> FilterState:
        return FilterState(self.constraints, [dict(c) for c in self.counts], [dict(h) for h in self.at_count],
                           list(self.minimum), self.self_match, self.eligible, owned=True)

    def min_match(self, i: int) -> int:
        if len(self.counts[i]) < self.constraints[i].min_domains:
            return 0
        return self.minimum[i]

    def moved(self, i: int, value: str, delta: int) -> None:
        if not self.owned:
            self.counts = [dict(c) for c in self.counts]
            self.at_count = [dict(h) for h in self.at_count]
            self.minimum = list(self.minimum)
            self.owned = True
        counts = self.counts[i]
        old = counts.get(value)
        if old is None:  # upstream's map creates the domain with the pod (it was not eligible: no node of it)
            counts[value] = delta
            self.at_count[i][delta] = self.at_count[i].get(delta, 0) + 1
            if delta < self.minimum[i]:
                self.minimum[i] = delta
            return
        new = counts[value] = old + delta
        move_domain(self.at_count[i], old, new)
        if new < self.minimum[i]:
            self.minimum[i] = new
        elif old == self.minimum[i] and old not in self.at_count[i]:
            self.minimum[i] = min(self.at_count[i])


def node_has_keys(labels: dict[str, str], constraints: tuple[SpreadConstraint, ...]) -> bool:
    """``nodeLabelsMatchSpreadConstraints``: the node carries every constraint's topology key."""
    for c in constraints:
        if c.topology_key not in labels:
            return False
    return True


def spread_filter(state: FilterState, pod: PodInfo, node: NodeInfo) -> Status | None:
    labels = node.labels
    for i, c in enumerate(state.constraints):
        value = labels.get(c.topology_key)
        if value is None:
            return unresolvable(NAME, ERR_REASON_NODE_LABEL_NOT_MATCH)
        skew = state.counts[i].get(value, 0) + state.self_match[i] - state.min_match(i)
        if skew > c.max_skew:
            return unschedulable(NAME, ERR_REASON_CONSTRAINTS_NOT_MATCH)
    return None


def filter_key(state: FilterState, node: NodeInfo) -> tuple[object, ...]:
    """What ``spread_filter`` reads of the node: per constraint, None for a missing key or its domain's count."""
    labels = node.labels
    out: list[object] = []
    for i, c in enumerate(state.constraints):
        value = labels.get(c.topology_key)
        if value is None:
            out.append(None)
            break
        out.append(state.counts[i].get(value, 0))
    return tuple(out)


def update_with_pod(state: FilterState, moved: PodInfo, pod: PodInfo, node: NodeInfo, delta: int) -> None:
    """``updateWithPod``: count ``moved`` in (delta 1) or out (-1) of ``node``'s domains."""
    if moved.namespace != pod.namespace:
        return
    labels = node.labels
    if not node_has_keys(labels, state.constraints):
        return
    moved_labels = moved.pod.metadata.labels or {}
    for i, c in enumerate(state.constraints):
        if not c.selector.matches(moved_labels):
            continue
        test = state.eligible[i]
        if test is not None and not test(node):
            continue
        state.moved(i, labels[c.topology_key], delta)


def build_state(constraints: tuple[SpreadConstraint, ...], pod: PodInfo, counts: list[dict[str, int]],
                at_count: list[dict[int, int]], minimum: list[int],
                eligible: tuple[Callable[[NodeInfo], bool] | None, ...]) -> FilterState:
    labels = pod.pod.metadata.labels or {}
    self_match = tuple(c.selector.matches(labels) for c in constraints)
    minimum = [m if counts[i] else INT32_MAX for i, m in enumerate(minimum)]
    return FilterState(constraints, counts, at_count, minimum, self_match, eligible)
