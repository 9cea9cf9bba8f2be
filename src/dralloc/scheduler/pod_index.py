"""The assigned pods grouped by what inter-pod affinity reads of them, kept up to date as pods come and go.

InterPodAffinity asks, for every scheduling attempt, how many assigned pods a term selects in each topology
domain (``topologyKey=value``). Walking every pod of every node for that is what kube-scheduler does in
parallel Go; here pods that agree on namespace, labels and their own pod (anti-)affinity form one group —
any term selects all of a group or none of it — and each group keeps its pod count per node and, per
topology key asked for, per domain. Two side indexes keep an attempt from reading every group when every
pod has labels of its own (a StatefulSet's or an indexed Job's): the groups by each label, so that a term with
an ``In`` requirement reads only the groups that can match it, and the pods with pod (anti-)affinity by their
parsed terms (``TermsSet``: the pods of one workload declare the same), so that an existing pod's term is
matched against the incoming pod once for all the pods that declare it.

Nodes report every pod added or removed to ``changes`` (``NodeInfo.pod_sink``); ``refresh`` folds them in.
"""

from __future__ import annotations

from collections.abc import Iterable

from dralloc.scheduler.affinity_terms import PodAffinityTerms
from dralloc.scheduler.labels import Selector
from dralloc.scheduler.nodeinfo import NodeInfo
from dralloc.scheduler.podinfo import PodInfo

GroupKey = tuple[str, tuple[tuple[str, str], ...], bytes]


class Counted:
    """Assigned pods counted per node and, per topology key asked for, per domain."""

    __slots__ = ("domains", "nodes", "size")

    def __init__(self) -> None:
        self.nodes: dict[NodeInfo, int] = {}
        self.size = 0
        self.domains: dict[str, dict[str, int]] = {}

    def domain_counts(self, topology_key: str) -> dict[str, int]:
        """How many of the pods run in each domain of ``topology_key`` (nodes without the label: none)."""
        counts = self.domains.get(topology_key)
        if counts is None:
            counts = {}
            for node, n in self.nodes.items():
                value = node.labels.get(topology_key)
                if value is not None:
                    counts[value] = counts.get(value, 0) + n
            self.domains[topology_key] = counts
        return counts

    def _move(self, node: NodeInfo, delta: int) -> None:
        left = self.nodes.get(node, 0) + delta
        if left:
            self.nodes[node] = left
        else:
            self.nodes.pop(node, None)
        self.size += delta
        labels = node.labels
        for topology_key, counts in self.domains.items():
            value = labels.get(topology_key)
            if value is not None:
                n = counts.get(value, 0) + delta
                if n:
                    counts[value] = n
                else:
                    del counts[value]


class PodGroup(Counted):
    """Assigned pods of one namespace, one label set and one pod (anti-)affinity."""

    __slots__ = ("affinity", "key", "labels", "namespace")

    def __init__(self, key: GroupKey, pod: PodInfo) -> None:
        super().__init__()
        self.key = key
        self.namespace = pod.namespace
        self.labels = pod.labels
        self.affinity: PodAffinityTerms | None = pod.affinity


class TermsSet(Counted):
    """The assigned pods that declare the same parsed pod (anti-)affinity terms, whatever their labels: a term
    of theirs that selects the incoming pod counts all of them at once."""

    __slots__ = ("terms",)

    def __init__(self, terms: PodAffinityTerms) -> None:
        super().__init__()
        self.terms = terms


def group_key(pod: PodInfo) -> GroupKey:
    key = pod.index_group
    if key is None:
        from dralloc.api.codec import encode_json

        affinity = pod.pod.spec.affinity
        raw = encode_json([affinity.pod_affinity, affinity.pod_anti_affinity]) \
            if pod.affinity is not None and affinity is not None else b""
        key = pod.index_group = (pod.namespace, tuple(sorted(pod.labels.items())), raw)
    return key  # type: ignore[return-value]


class PodIndex:
    def __init__(self, nodes: Iterable[NodeInfo] = ()) -> None:
        self.changes: list[tuple[NodeInfo, PodInfo, int]] = []
        self.groups: dict[GroupKey, PodGroup] = {}
        # The groups with affinity by their parsed terms (pods of one workload share them: a term is matched
        # against the incoming pod once for all of them), and every group by each of its labels (a term
        # with an ``In`` requirement reads only the groups that can match it).
        self.by_terms: dict[PodAffinityTerms, TermsSet] = {}
        self.by_label: dict[tuple[str, str], dict[GroupKey, PodGroup]] = {}
        self.nodes: list[NodeInfo] = []
        self.watch(nodes)

    def watch(self, nodes: Iterable[NodeInfo]) -> None:
        """Start from scratch over ``nodes`` (a new snapshot, or the node set changed)."""
        for node in self.nodes:
            node.pod_sink = None
        self.groups = {}
        self.by_terms = {}
        self.by_label = {}
        self.changes = []
        self.nodes = list(nodes)
        for node in self.nodes:
            node.pod_sink = self.changes
            self.changes.extend((node, pod, 1) for pod in node.pods)

    def refresh(self) -> None:
        changes = self.changes
        if not changes:
            return
        groups = self.groups
        by_terms = self.by_terms
        for node, pod, sign in changes:
            key = group_key(pod)
            group = groups.get(key)
            if group is None:
                group = groups[key] = PodGroup(key, pod)
                self._indexed(group, True)
            group._move(node, sign)
            if group.affinity is not None:
                terms = by_terms.get(group.affinity)
                if terms is None:
                    terms = by_terms[group.affinity] = TermsSet(group.affinity)
                terms._move(node, sign)
                if terms.size == 0:
                    del by_terms[group.affinity]
            if group.size == 0:
                del groups[key]
                self._indexed(group, False)
        changes.clear()

    def _indexed(self, group: PodGroup, present: bool) -> None:
        """Enter a new group into the label index, or take a group that emptied out of it."""
        for item in group.labels.items():
            if present:
                self.by_label.setdefault(item, {})[group.key] = group
                continue
            groups = self.by_label.get(item)
            if groups is not None:
                groups.pop(group.key, None)
                if not groups:
                    del self.by_label[item]

    def all_groups(self) -> list[PodGroup]:
        self.refresh()
        return list(self.groups.values())

    def terms_sets(self) -> list[TermsSet]:
        """The assigned pods with pod (anti-)affinity, gathered by their parsed terms."""
        self.refresh()
        return list(self.by_terms.values())

    def selectable(self, selector: Selector) -> list[PodGroup]:
        """Every group ``selector`` may select (a superset: the caller still matches each one): through its
        ``In`` requirement that reads the fewest groups, else all of them."""
        self.refresh()
        if selector.nothing:
            return []
        best: list[dict[GroupKey, PodGroup]] | None = None
        best_size = len(self.groups)
        for req in selector.requirements:
            if req.operator != "In":
                continue
            found = [self.by_label[(req.key, v)] for v in req.values if (req.key, v) in self.by_label]
            size = sum(len(groups) for groups in found)
            if best is None or size < best_size:
                best, best_size = found, size
        if best is None:
            return list(self.groups.values())
        if len(best) == 1:
            return list(best[0].values())
        merged: dict[GroupKey, PodGroup] = {}
        for groups in best:
            merged.update(groups)
        return list(merged.values())
