"""PodTopologySpread's PreScore, Score and NormalizeScore: the ScheduleAnyway constraints (weight 2).

A node's raw score sums, over the constraints whose topology key it carries, ``matching pods in its domain x
ln(domains + 2) + (maxSkew - 1)``, rounded half away from zero. Domains are counted among the feasible nodes
(for ``kubernetes.io/hostname``: the feasible nodes scored); the pods of a hostname domain are the node's own,
counted without the inclusion policies. With the pod's own constraints (or non-system defaults) a feasible
node lacking any topology key is ignored: it scores 0 and takes no part in the normalisation. The system
defaults do not require every key, so nodes without a zone label still spread by hostname. Normalised as
``100 x (max + min - score) / max`` over the scored nodes (100 for all when the maximum is 0): fewer matching
pods score higher.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from dralloc.scheduler.framework import MAX_NODE_SCORE, K
from dralloc.scheduler.nodeinfo import NodeInfo
from dralloc.scheduler.plugins.pod_topology_spread.constraints import HOSTNAME, SpreadConstraint
from dralloc.scheduler.plugins.pod_topology_spread.counting import SelectorCounts, SpreadIndex, count_matching

IGNORED = -1  # a raw score no scored node can have: marks ignored nodes for the normalisation


@dataclass(eq=False)
class ScoreState:
    """``preScoreState``: the constraints, whether nodes must carry every key, the matching pods per domain
    (for hostname constraints: per node, from ``own``) and, after PreScore, each constraint's weight."""

    constraints: tuple[SpreadConstraint, ...]
    require_all: bool
    totals: list[dict[str, int]]
    own: list[SelectorCounts]
    position: dict[int, int]
    weights: list[float] = field(default_factory=list)

    def clone(self) -> ScoreState:
        return self  # never changed after PreScore, as upstream's Clone


def ignored(state: ScoreState, node: NodeInfo) -> bool:
    if not state.require_all:
        return False
    labels = node.labels
    return any(c.topology_key not in labels for c in state.constraints)


def pre_score(state: ScoreState, feasible: list[NodeInfo], index: SpreadIndex | None = None,
              labellings: list[tuple[str | bool | None, ...]] | None = None) -> None:
    """The weight of each constraint: ln of its number of domains among the scored feasible nodes, + 2.
    Nodes labelled alike (``labellings``, by node position in ``index``) are looked at once."""
    sizes = [0] * len(state.constraints)
    seen: list[set[str]] = [set() for _ in state.constraints]
    skipped = 0
    groups = [(n, 1) for n in feasible] if index is None or labellings is None else []
    if not groups:
        assert index is not None and labellings is not None
        try:
            labs = list(map(labellings.__getitem__, map(index.position.__getitem__, map(id, feasible))))
        except KeyError:  # a node outside the snapshot's list (never in a scheduling cycle)
            groups = [(n, 1) for n in feasible]
        else:
            first = dict(zip(reversed(labs), reversed(feasible)))
            groups = [(node, labs.count(lab) if state.require_all else 1) for lab, node in first.items()]
    for node, count in groups:
        if ignored(state, node):
            skipped += count
            continue
        labels = node.labels
        for i, c in enumerate(state.constraints):
            if c.topology_key != HOSTNAME:
                seen[i].add(labels.get(c.topology_key, ""))
    for i, c in enumerate(state.constraints):
        sizes[i] = len(feasible) - skipped if c.topology_key == HOSTNAME else len(seen[i])
    state.weights = [math.log(size + 2) for size in sizes]


def _round_half_away(x: float) -> int:
    """Go's ``math.Round`` for a non-negative value."""
    whole = math.floor(x)
    return whole + 1 if x - whole >= 0.5 else whole


def matching(state: ScoreState, i: int, node: NodeInfo, value: str) -> int:
    c = state.constraints[i]
    if c.topology_key == HOSTNAME:
        own = state.own[i]
        pos = state.position.get(id(node))
        if pos is not None and own.nodes[pos] is node:
            return own.counts[pos]
        return count_matching(node, own.namespace, own.selector)
    return state.totals[i].get(value, 0)


def spread_score(state: ScoreState, node: NodeInfo) -> int:
    if ignored(state, node):
        return IGNORED
    labels = node.labels
    score = 0.0
    for i, c in enumerate(state.constraints):
        value = labels.get(c.topology_key)
        if value is not None:
            score += matching(state, i, node, value) * state.weights[i] + float(c.max_skew - 1)
    return _round_half_away(score)


def score_key(state: ScoreState, node: NodeInfo, with_own: bool = True) -> tuple[object, ...]:
    """What ``spread_score`` reads of the node (PreScore's weights are the same for every node); without
    ``with_own``, a hostname constraint gives only whether the node has the key (the caller adds its count)."""
    if ignored(state, node):
        return (IGNORED,)
    labels = node.labels
    out: list[object] = []
    for i, c in enumerate(state.constraints):
        value = labels.get(c.topology_key)
        if value is None:
            out.append(None)
        elif c.topology_key == HOSTNAME and not with_own:
            out.append(True)
        else:
            out.append(matching(state, i, node, value))
    return tuple(out)


def normalize(scores: dict[K, int]) -> dict[K, int]:
    counted = [s for s in scores.values() if s != IGNORED]
    low = min(counted) if counted else 0
    high = max(counted, default=0)
    high = max(high, 0)
    out: dict[K, int] = {}
    for key, s in scores.items():
        if s == IGNORED:
            out[key] = 0
        elif high == 0:
            out[key] = MAX_NODE_SCORE
        else:
            out[key] = MAX_NODE_SCORE * (high + low - s) // high
    return out
