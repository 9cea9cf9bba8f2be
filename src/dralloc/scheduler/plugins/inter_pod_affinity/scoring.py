"""InterPodAffinity's Score (kube-scheduler 1.36, ``interpodaffinity/scoring.go``), weight 2.

PreScore sums, per topology domain, over the assigned pods (on nodes that have labels at all):
  - + weight of each preferred affinity term of the incoming pod the pod matches, − weight for each preferred
    anti-affinity term (the incoming pod's namespaceSelector resolved to names, as in Filter);
  - + ``hardPodAffinityWeight`` (default 1) for each required affinity term of the assigned pod that selects the
    incoming pod, + weight for each of its preferred affinity terms that does, − weight for each of its
    preferred anti-affinity terms that does (matched against the incoming pod's namespace labels).
Only pods with pod (anti-)affinity contribute unless the incoming pod has preferred terms. With no
contribution anywhere, PreScore skips the plugin for the pod. A node's score is the sum over its domains;
NormalizeScore maps [min, max] of the feasible nodes' scores onto [0, 100] (all 0 when they are equal).
"""

from __future__ import annotations

from collections.abc import Mapping

from dralloc.scheduler.affinity_terms import AffinityTerm, WeightedTerm
from dralloc.scheduler.framework import MAX_NODE_SCORE, K
from dralloc.scheduler.pod_index import Counted, PodIndex, TermsSet
from dralloc.scheduler.podinfo import PodInfo

DEFAULT_HARD_POD_AFFINITY_WEIGHT = 1

# topology key -> (a group's pod count per domain, weight) pairs: a domain scores the weighted sum of its
# counts (``topologyScore``, read from the PodIndex's counters instead of copied domain by domain)
ScoreMap = dict[str, list[tuple[dict[str, int], int]]]


def _add(scores: ScoreMap, term: AffinityTerm, group: Counted, weight: int) -> None:
    counts = group.domain_counts(term.topology_key)
    if counts:
        scores.setdefault(term.topology_key, []).append((counts, weight))


def score_map(pod: PodInfo, preferred: tuple[WeightedTerm, ...], preferred_anti: tuple[WeightedTerm, ...],
              namespace_labels: Mapping[str, str], index: PodIndex, terms_sets: list[TermsSet],
              hard_weight: int) -> ScoreMap:
    """The topology scores PreScore computes, from the groups of assigned pods (``preferred`` terms resolved):
    the groups the incoming pod's preferred terms select, then the existing pods' terms that select the
    incoming pod (each distinct term matched once for all the pods that declare it)."""
    scores: ScoreMap = {}
    for terms_of_pod, sign in ((preferred, 1), (preferred_anti, -1)):
        for wt in terms_of_pod:
            for group in index.selectable(wt.term.selector):
                if wt.term.matches(group.namespace, group.labels, {}):
                    _add(scores, wt.term, group, sign * wt.weight)
    for terms_set in terms_sets:
        terms = terms_set.terms
        if hard_weight > 0:
            for term in terms.required_affinity:
                if term.matches(pod.namespace, pod.labels, namespace_labels):
                    _add(scores, term, terms_set, hard_weight)
        for wt in terms.preferred_affinity:
            if wt.term.matches(pod.namespace, pod.labels, namespace_labels):
                _add(scores, wt.term, terms_set, wt.weight)
        for wt in terms.preferred_anti_affinity:
            if wt.term.matches(pod.namespace, pod.labels, namespace_labels):
                _add(scores, wt.term, terms_set, -wt.weight)
    return scores


def node_score(scores: ScoreMap, labels: Mapping[str, str]) -> int:
    total = 0
    for key, parts in scores.items():
        value = labels.get(key)
        if value is not None:
            for counts, weight in parts:
                total += weight * counts.get(value, 0)
    return total


def normalize(scores: dict[K, int]) -> dict[K, int]:
    """``NormalizeScore``: 100 × (s − min) / (max − min), truncated, in float64 as upstream."""
    if not scores:
        return scores
    low = min(scores.values())
    spread = max(scores.values()) - low
    if spread <= 0:
        return dict.fromkeys(scores, 0)
    return {k: int(float(MAX_NODE_SCORE) * ((s - low) / spread)) for k, s in scores.items()}
