"""NodeAffinity: ``spec.nodeSelector`` and required node affinity must match; preferred terms score.

PreFilter narrows the candidates when every required term pins node names with ``matchFields
metadata.name In [...]`` (how DaemonSet pods are pinned); nodes outside that set are reported as
``node(s) didn't satisfy plugin(s) [NodeAffinity]``. Score: the weights of the matching preferred terms,
normalised to 0..100. Weight 2.

Node grouping: the verdict and score read only the node labels the pod's selector and terms name (and the
node's name when a term uses ``matchFields``), so ``node_key`` is those values: nodes that agree on them share
one filter run and one score.
"""

from __future__ import annotations

import functools
from collections.abc import Hashable

from dralloc.allocator.nodes import NodeSelectorError, node_selector_matches
from dralloc.api.core_v1 import NodeSelector, NodeSelectorTerm
from dralloc.scheduler.framework import SKIP, Cycle, K, Plugin, Status, default_normalize, error, unresolvable
from dralloc.scheduler.labels import requirement_problem, requirement_problems
from dralloc.scheduler.nodeinfo import NodeInfo

NAME = "NodeAffinity"
REASON = "node(s) didn't match Pod's node affinity/selector"
REASON_ENFORCED = "node(s) didn't match scheduler-enforced node affinity"
REASON_CONFLICT = "pod affinity terms conflict"


@functools.lru_cache(maxsize=4096)
def _requirement_parses(key: str, operator: str, values: tuple[str, ...]) -> bool:
    """Whether ``labels.NewRequirement`` takes one matchExpressions entry (a key that is a qualified name,
    values that are label values, one integer for Gt/Lt). Asked per node, so remembered by value."""
    return not requirement_problem(key, operator, values)


def _parses(term: NodeSelectorTerm) -> bool:
    """Whether every matchExpressions requirement of the term parses, as nodeaffinity parses a term."""
    return all(_requirement_parses(r.key, r.operator, tuple(r.values or ())) for r in term.match_expressions or ())


def _matches(selector: NodeSelector, node: NodeInfo) -> bool:
    # Terms that do not parse match nothing (upstream ignores parse errors for backwards compatibility).
    for term in selector.node_selector_terms or ():
        if not _parses(term):
            continue
        try:
            if node_selector_matches(NodeSelector(node_selector_terms=[term]), node.name, node.labels):
                return True
        except NodeSelectorError:
            continue
    return False


def _term_matches(term: NodeSelectorTerm, node: NodeInfo) -> bool:
    return _matches(NodeSelector(node_selector_terms=[term]), node)


def required_matches(cycle_pod_selector: dict[str, str], required: NodeSelector | None, node: NodeInfo) -> bool:
    labels = node.labels
    for key, value in cycle_pod_selector.items():
        if labels.get(key) != value:
            return False
    return required is None or _matches(required, node)


def preferred_terms_problem(preferred: list[tuple[int, NodeSelectorTerm]]) -> str:
    """What ``NewPreferredSchedulingTerms`` refuses in a pod's preferred terms (each term with a weight and
    a requirement, its problems with their paths, ``[0].matchExpressions[1].values[0][zone]: ...``, all of
    them in one aggregate), or "". Unlike a required term, which then matches no node, a preferred term that
    does not parse fails the pod's PreScore."""
    problems: list[str] = []
    for i, (weight, term) in enumerate(preferred):
        if not weight or not (term.match_expressions or term.match_fields):
            continue
        for j, r in enumerate(term.match_expressions or ()):
            problems += [f"[{i}].matchExpressions[{j}].{p}"
                         for p in requirement_problems(r.key, r.operator, tuple(r.values or ()))]
    problems = list(dict.fromkeys(problems))
    return problems[0] if len(problems) == 1 else "[" + ", ".join(problems) + "]" if problems else ""


def pinned_node_names(required: NodeSelector | None) -> set[str] | None:
    """The node names every required term pins with ``metadata.name In``; None when some term does not."""
    if required is None or not required.node_selector_terms:
        return None
    names: set[str] = set()
    for term in required.node_selector_terms:
        term_names: set[str] | None = None
        for r in term.match_fields or ():
            if r.key == "metadata.name" and r.operator == "In":
                values = set(r.values or ())
                term_names = values if term_names is None else term_names & values
        if term_names is None:
            return None
        names |= term_names
    return names


def read_labels(pod_selector: dict[str, str], required: NodeSelector | None,
                preferred: list[tuple[int, NodeSelectorTerm]]) -> tuple[tuple[str, ...], bool]:
    """The node label keys the pod's constraints read, and whether they read the node's name."""
    keys = set(pod_selector)
    uses_name = False
    terms = list(required.node_selector_terms or ()) if required is not None else []
    terms += [term for _, term in preferred]
    for term in terms:
        keys.update(r.key for r in term.match_expressions or ())
        uses_name = uses_name or bool(term.match_fields)
    return tuple(sorted(keys)), uses_name


class NodeAffinity(Plugin):
    """``added_required`` / ``added_preferred``: the profile's ``NodeAffinityArgs.addedAffinity``, which every
    pod of the profile must match too (``node(s) didn't match scheduler-enforced node affinity``) and whose
    preferred terms add to every pod's score."""

    name = NAME
    weight = 2
    has_filter = True
    has_score = True

    def __init__(self, added_required: NodeSelector | None = None,
                 added_preferred: list[tuple[int, NodeSelectorTerm]] | None = None) -> None:
        self.added_required = added_required
        self.added_preferred = list(added_preferred or ())

    def pre_filter(self, cycle: Cycle) -> Status | set[str] | None:
        pod = cycle.pod
        added = self.added_required is not None or bool(self.added_preferred)
        if pod.required_affinity is not None or pod.node_selector or pod.preferred_affinity or added:
            keys, uses_name = read_labels(pod.node_selector, pod.required_affinity, pod.preferred_affinity)
            if added:
                more, more_name = read_labels({}, self.added_required, self.added_preferred)
                keys, uses_name = tuple(sorted(set(keys) | set(more))), uses_name or more_name
            cycle.data[NAME] = (keys, uses_name)
            cycle.keyed.append(self)
        if pod.required_affinity is None and not pod.node_selector and self.added_required is None:
            return SKIP
        names = pinned_node_names(pod.required_affinity)
        if names is not None and not names:
            return unresolvable(NAME, REASON_CONFLICT)
        return names

    def filter(self, cycle: Cycle, node: NodeInfo) -> Status | None:
        pod = cycle.pod
        if self.added_required is not None and not _matches(self.added_required, node):
            return unresolvable(NAME, REASON_ENFORCED)
        if not required_matches(pod.node_selector, pod.required_affinity, node):
            return unresolvable(NAME, REASON)
        return None

    def node_key(self, cycle: Cycle, node: NodeInfo) -> Hashable:
        keys, uses_name = cycle.data[NAME]
        labels = node.labels
        values = tuple(labels.get(k) for k in keys)
        return (values, node.name) if uses_name else values

    def pre_score(self, cycle: Cycle, nodes: list[NodeInfo]) -> Status | None:
        preferred = cycle.pod.preferred_affinity
        problem = preferred_terms_problem(preferred) if preferred else ""
        if problem:
            return error(NAME, problem)
        return None if preferred or self.added_preferred else SKIP

    def score(self, cycle: Cycle, node: NodeInfo) -> int:
        total = sum(weight for weight, term in cycle.pod.preferred_affinity if weight and _term_matches(term, node))
        return total + sum(weight for weight, term in self.added_preferred if weight and _term_matches(term, node))

    def normalize(self, cycle: Cycle, scores: dict[K, int]) -> dict[K, int]:
        return default_normalize(scores, reverse=False)
