"""How many pods a spread selector matches per node and per topology domain, kept across scheduling cycles.

kube-scheduler counts the matching pods of every node in each PreFilter and PreScore. Pods of one workload
share their selector, so here each (namespace, selector) keeps its per-node counts and is brought up to date
at the start of a cycle by recounting only the nodes whose pods changed since (the node groups' journal). Each
aggregation by domain (a topology key, the keys a node must carry, which nodes are eligible) is kept beside
it, with how many domains hold each count, so the global minimum is exact without a scan.

What is counted is ``countPodsMatchSelector``: pods of the namespace, not terminating (deletionTimestamp set),
whose labels the selector matches; a selector without requirements counts nothing (1.36 short-circuits on
``selector.Empty()``, which is the match-everything selector).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable

from dralloc.scheduler.groups import NodeGroups
from dralloc.scheduler.labels import Selector
from dralloc.scheduler.nodeinfo import NodeInfo

MAX_SELECTORS = 256  # counts kept for at most this many (namespace, selector) pairs


def count_matching(node: NodeInfo, namespace: str, selector: Selector) -> int:
    if selector.empty:
        return 0
    n = 0
    for p in node.pods:
        meta = p.pod.metadata
        if (meta.namespace or "default") == namespace and not meta.deletion_timestamp \
                and selector.matches(meta.labels or {}):
            n += 1
    return n


class DomainTotals:
    """Matching pods per domain of ``topology_key`` over the eligible nodes that carry every required key
    (domains with no matching pod included), and ``at_count``: how many domains hold each total."""

    __slots__ = ("at_count", "minimum", "totals", "value_of")

    def __init__(self, value_of: dict[int, str], counts: list[int]) -> None:
        self.value_of = value_of
        totals: dict[str, int] = {}
        for i, value in value_of.items():
            totals[value] = totals.get(value, 0) + counts[i]
        self.totals = totals
        at_count: dict[int, int] = {}
        for total in totals.values():
            at_count[total] = at_count.get(total, 0) + 1
        self.at_count = at_count
        self.minimum = min(at_count) if at_count else 0

    def moved(self, i: int, delta: int) -> None:
        value = self.value_of.get(i)
        if value is None:
            return
        old = self.totals[value]
        self.totals[value] = new = old + delta
        move_domain(self.at_count, old, new)
        if new < self.minimum:
            self.minimum = new
        elif old == self.minimum and old not in self.at_count:
            self.minimum = min(self.at_count)


def move_domain(at_count: dict[int, int], old: int, new: int) -> None:
    """One domain's total went from ``old`` to ``new``."""
    left = at_count[old] - 1
    if left:
        at_count[old] = left
    else:
        del at_count[old]
    at_count[new] = at_count.get(new, 0) + 1


class SelectorCounts:
    """Per node (by position in the snapshot's node list): pods of ``namespace`` that ``selector`` matches."""

    __slots__ = ("counts", "domains", "groups", "namespace", "nodes", "seen", "selector")

    def __init__(self, nodes: list[NodeInfo], groups: NodeGroups, namespace: str, selector: Selector) -> None:
        self.nodes = nodes
        self.groups = groups
        self.namespace = namespace
        self.selector = selector
        groups.refresh()
        self.seen = groups.journal_start + len(groups.journal)
        self.counts = [count_matching(n, namespace, selector) for n in nodes]
        self.domains: dict[Hashable, DomainTotals] = {}

    def refresh(self) -> None:
        """Recount the nodes whose pods changed since the last look (the node groups' journal)."""
        groups = self.groups
        groups.refresh()
        now = groups.journal_start + len(groups.journal)
        if now == self.seen:
            return
        if self.seen < groups.journal_start:
            changed: Iterable[int] = range(len(self.nodes))  # fell behind the journal: look at every node
        else:
            changed = set(groups.journal[self.seen - groups.journal_start:])
        self.seen = now
        counts = self.counts
        for i in changed:
            fresh = count_matching(self.nodes[i], self.namespace, self.selector)
            delta = fresh - counts[i]
            if delta:
                counts[i] = fresh
                for domains in self.domains.values():
                    domains.moved(i, delta)

    def by_domain(self, key: Hashable, value_of: Callable[[], dict[int, str]]) -> DomainTotals:
        found = self.domains.get(key)
        if found is None:
            found = self.domains[key] = DomainTotals(value_of(), self.counts)
        return found


class SpreadIndex:
    """The counts of one node list (a what-if that changes the nodes starts a new index)."""

    def __init__(self, nodes: list[NodeInfo], groups: NodeGroups) -> None:
        self.nodes = nodes
        self.groups = groups
        self.position = {id(n): i for i, n in enumerate(nodes)}
        self.selectors: dict[tuple[str, Selector], SelectorCounts] = {}
        self.eligible: dict[Hashable, list[bool]] = {}
        self.domain_values: dict[Hashable, dict[int, str]] = {}
        self.labellings: dict[tuple[tuple[str, ...], tuple[str, ...]], list[tuple[str | bool | None, ...]]] = {}
        self._classes: dict[int, tuple[list[tuple[str | bool | None, ...]], tuple[bytes, int] | None]] = {}

    def counts(self, namespace: str, selector: Selector) -> SelectorCounts:
        key = (namespace, selector)
        found = self.selectors.pop(key, None)
        if found is None:
            if len(self.selectors) >= MAX_SELECTORS:
                del self.selectors[next(iter(self.selectors))]  # the least recently used
            found = SelectorCounts(self.nodes, self.groups, namespace, selector)
        else:
            found.refresh()
        self.selectors[key] = found  # most recently used last
        return found

    def eligible_nodes(self, key: Hashable, test: Callable[[NodeInfo], bool]) -> list[bool]:
        found = self.eligible.get(key)
        if found is None:
            found = self.eligible[key] = [test(n) for n in self.nodes]
        return found

    def values(self, topology_key: str, required: tuple[str, ...], eligible_key: Hashable,
               eligible: list[bool] | None) -> dict[int, str]:
        """Node position → its value of ``topology_key`` ("" when absent), for the eligible nodes that carry
        every ``required`` key."""
        key = (topology_key, required, eligible_key)
        found = self.domain_values.get(key)
        if found is None:
            found = {}
            for i, n in enumerate(self.nodes):
                if eligible is not None and not eligible[i]:
                    continue
                labels = n.labels
                if all(k in labels for k in required):
                    found[i] = labels.get(topology_key, "")
            self.domain_values[key] = found
        return found

    def labelling(self, by_value: tuple[str, ...], by_presence: tuple[str, ...]
                  ) -> list[tuple[str | bool | None, ...]]:
        """Per node position: its value of each ``by_value`` key and whether it has each ``by_presence`` key
        (None where absent)."""
        key = (by_value, by_presence)
        found = self.labellings.get(key)
        if found is None:
            found = []
            for n in self.nodes:
                labels = n.labels
                found.append((*(labels.get(k) for k in by_value), *(True if k in labels else None for k in by_presence)))
            self.labellings[key] = found
        return found

    def classes(self, labelling: list[tuple[str | bool | None, ...]]) -> tuple[bytes, int] | None:
        """One class per distinct labelling (in order of first appearance), per node position; None past 256."""
        found = self._classes.get(id(labelling))
        if found is None or found[0] is not labelling:
            ids: dict[tuple[str | bool | None, ...], int] = {}
            per_node = bytearray(len(labelling))
            answer: tuple[bytes, int] | None = None
            for i, lab in enumerate(labelling):
                cid = ids.setdefault(lab, len(ids))
                if cid > 255:
                    break
                per_node[i] = cid
            else:
                answer = (bytes(per_node), len(ids))
            found = self._classes[id(labelling)] = (labelling, answer)
        return found[1]
