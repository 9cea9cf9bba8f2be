"""InterPodAffinity: the plugin that ties Filter (``filtering``) and Score (``scoring``) to the framework.

Node grouping: the plugin's verdict and score for a node read only the node's labels against the pod's
domain counters, so ``node_key`` is exactly (verdict, raw score); nodes that agree on it, and on everything
else the framework keys on, still share one filter run and one score.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from dataclasses import dataclass

from dralloc.scheduler.affinity_terms import NAMESPACE_NAME_LABEL
from dralloc.scheduler.framework import SKIP, Cycle, K, Plugin, Status, error, unresolvable
from dralloc.scheduler.nodeinfo import NodeInfo
from dralloc.scheduler.plugins.inter_pod_affinity.filtering import (
    NAME,
    PASS,
    VERDICTS,
    FilterState,
    resolve_namespaces,
    resolve_weighted,
)
from dralloc.scheduler.plugins.inter_pod_affinity.scoring import (
    DEFAULT_HARD_POD_AFFINITY_WEIGHT,
    ScoreMap,
    node_score,
    normalize,
    score_map,
)
from dralloc.scheduler.podinfo import PodInfo


@dataclass
class AffinityCycle:
    """The plugin's state for one attempt: the Filter state (None: Filter skipped) and the score map
    (empty: Score skipped). Only the Filter part changes in the dry run, so only it is copied."""

    filter: FilterState | None
    scores: ScoreMap

    def clone(self) -> AffinityCycle:
        return AffinityCycle(self.filter.clone() if self.filter is not None else None, self.scores)


class InterPodAffinity(Plugin):
    name = NAME
    weight = 2
    has_filter = True
    has_score = True
    has_pre_filter_extensions = True

    def __init__(self, hard_pod_affinity_weight: int = DEFAULT_HARD_POD_AFFINITY_WEIGHT,
                 ignore_preferred_terms_of_existing_pods: bool = False) -> None:
        """InterPodAffinityArgs: ``hard_pod_affinity_weight`` scores an assigned pod's required affinity term
        that selects the incoming pod; with ``ignore_preferred_terms_of_existing_pods`` a pod without preferred
        terms of its own is not scored at all (the assigned pods' terms are not read)."""
        self.hard_pod_affinity_weight = hard_pod_affinity_weight
        self.ignore_preferred_terms_of_existing_pods = ignore_preferred_terms_of_existing_pods

    def pre_filter(self, cycle: Cycle) -> Status | set[str] | None:
        pod = cycle.pod
        snap = cycle.snapshot
        terms = pod.affinity
        if terms is not None and terms.error:
            return unresolvable(NAME, f"parsing pod: {terms.error}")
        index = snap.pod_index
        # A pod without terms of its own only meets the assigned pods that have some.
        terms_sets = index.terms_sets()
        if not terms_sets and terms is None:
            return SKIP  # no assigned pod has terms: no counts, no scores
        ns_labels = snap.namespace_labels.get(pod.namespace) or {NAMESPACE_NAME_LABEL: pod.namespace}
        known: dict[str, Mapping[str, str]] = {}

        def namespaces() -> Mapping[str, Mapping[str, str]]:
            """The Namespace objects, and the namespace of every pod (a namespace exists while it has pods;
            without its object only kube-apiserver's name label is known)."""
            if not known:
                known.update({g.namespace: {NAMESPACE_NAME_LABEL: g.namespace} for g in index.all_groups()})
                known[pod.namespace] = ns_labels
                known.update(snap.namespace_labels)
            return known

        state = FilterState(pod,
                            resolve_namespaces(terms.required_affinity, namespaces) if terms else (),
                            resolve_namespaces(terms.required_anti_affinity, namespaces) if terms else (),
                            ns_labels)
        state.count(index, terms_sets)
        state.compact()
        preferred = resolve_weighted(terms.preferred_affinity, namespaces) if terms else ()
        preferred_anti = resolve_weighted(terms.preferred_anti_affinity, namespaces) if terms else ()
        if self.ignore_preferred_terms_of_existing_pods and not preferred and not preferred_anti:
            scores: ScoreMap = {}  # PreScore skips the pod: upstream reads none of the assigned pods' terms
        else:
            scores = score_map(pod, preferred, preferred_anti, ns_labels, index, terms_sets,
                               self.hard_pod_affinity_weight)
        active = state.active
        cycle.data[NAME] = AffinityCycle(state if active else None, scores)
        if active or scores:
            cycle.keyed.append(self)
        return None if active else SKIP

    # ------------------------------------------------------------------ PreFilter extensions
    def add_pod(self, cycle: Cycle, pod: PodInfo, node: NodeInfo) -> Status | None:
        st: AffinityCycle | None = cycle.data.get(NAME)
        if st is not None and st.filter is not None:
            st.filter.update_with_pod(pod, node, 1)
        return None

    def remove_pod(self, cycle: Cycle, pod: PodInfo, node: NodeInfo) -> Status | None:
        st: AffinityCycle | None = cycle.data.get(NAME)
        if st is not None and st.filter is not None:
            st.filter.update_with_pod(pod, node, -1)
        return None

    # ------------------------------------------------------------------ Filter
    def filter(self, cycle: Cycle, node: NodeInfo) -> Status | None:
        st: AffinityCycle = cycle.data[NAME]
        assert st.filter is not None  # PreFilter returned Skip otherwise
        return VERDICTS[st.filter.verdict(node.labels)]

    def node_key(self, cycle: Cycle, node: NodeInfo) -> Hashable:
        st: AffinityCycle = cycle.data[NAME]
        labels = node.labels
        verdict = st.filter.verdict(labels) if st.filter is not None and NAME not in cycle.skip_filter else PASS
        return verdict, node_score(st.scores, labels) if st.scores else 0

    # ------------------------------------------------------------------ Score
    def pre_score(self, cycle: Cycle, nodes: list[NodeInfo]) -> Status | None:
        terms = cycle.pod.affinity
        if terms is not None and terms.error:
            # (PreFilter has rejected such a pod already; PreScore on its own says why it cannot score it)
            return error(NAME, f"failed to parse pod: {terms.error}")
        st: AffinityCycle | None = cycle.data.get(NAME)
        return None if st is not None and st.scores else SKIP

    def score(self, cycle: Cycle, node: NodeInfo) -> int:
        st: AffinityCycle = cycle.data[NAME]
        return node_score(st.scores, node.labels)

    def normalize(self, cycle: Cycle, scores: dict[K, int]) -> dict[K, int]:
        return normalize(scores)
