"""The assigned pods grouped by what inter-pod affinity reads of them, kept up to date as pods come and go.

InterPodAffinity asks, for every scheduling attempt, how many assigned pods a term selects in each topology
domain (``topologyKey=value``). Walking every pod of every node for that is what kube-scheduler does in
parallel Go; here pods that agree on namespace, labels and their own pod (anti-)affinity form one group —
any term selects all of a group or none of it — and each group keeps its pod count per node and, per
topology key asked for, per domain. An attempt then reads a few counters per group.

Nodes report every pod added or removed to ``changes`` (``NodeInfo.pod_sink``); ``refresh`` folds them in.
"""

from __future__ import annotations

from collections.abc import Iterable

from dralloc.scheduler.affinity_terms import PodAffinityTerms
from dralloc.scheduler.nodeinfo import NodeInfo
from dralloc.scheduler.podinfo import PodInfo

GroupKey = tuple[str, tuple[tuple[str, str], ...], bytes]


class PodGroup:
    """Assigned pods of one namespace, one label set and one pod (anti-)affinity."""

    __slots__ = ("affinity", "domains", "key", "labels", "namespace", "nodes", "size")

    def __init__(self, key: GroupKey, pod: PodInfo) -> None:
        self.key = key
        self.namespace = pod.namespace
        self.labels = pod.labels
        self.affinity: PodAffinityTerms | None = pod.affinity
        self.nodes: dict[NodeInfo, int] = {}
        self.size = 0
        self.domains: dict[str, dict[str, int]] = {}

    def domain_counts(self, topology_key: str) -> dict[str, int]:
        """How many of the group's pods run in each domain of ``topology_key`` (nodes without the label: none)."""
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
        self.with_affinity: dict[GroupKey, PodGroup] = {}  # the groups whose pods declare pod (anti-)affinity
        self.nodes: list[NodeInfo] = []
        self.watch(nodes)

    def watch(self, nodes: Iterable[NodeInfo]) -> None:
        """Start from scratch over ``nodes`` (a new snapshot, or the node set changed)."""
        for node in self.nodes:
            node.pod_sink = None
        self.groups = {}
        self.with_affinity = {}
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
        for node, pod, sign in changes:
            key = group_key(pod)
            group = groups.get(key)
            if group is None:
                group = groups[key] = PodGroup(key, pod)
                if group.affinity is not None:
                    self.with_affinity[key] = group
            group._move(node, sign)
            if group.size == 0:
                del groups[key]
                self.with_affinity.pop(key, None)
        changes.clear()

    def all_groups(self) -> list[PodGroup]:
        self.refresh()
        return list(self.groups.values())

    def affinity_groups(self) -> list[PodGroup]:
        """The groups of assigned pods with pod (anti-)affinity (kube-scheduler's HavePodsWithAffinityList)."""
        self.refresh()
        return list(self.with_affinity.values())
