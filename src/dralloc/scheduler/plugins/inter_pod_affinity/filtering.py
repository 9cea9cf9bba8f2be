"""InterPodAffinity's Filter (kube-scheduler 1.36, ``interpodaffinity/filtering.go``).

PreFilter counts, per topology domain (``topologyKey=value``):
  - the assigned pods with a required anti-affinity term that selects the incoming pod (matched against the
    incoming pod's namespace labels),
  - the assigned pods that match every required affinity term of the incoming pod (one count per term),
  - the assigned pods that match each required anti-affinity term of the incoming pod.
The incoming pod's ``namespaceSelector`` is resolved to namespace names first (the Namespace objects it
selects). Filter then rejects a node, in this order:
  - affinity: the node lacks a term's topology label, or a term's domain holds no matching pod — unless no pod
    anywhere matches and the pod matches its own terms (the first pod of a group with affinity to itself):
    UnschedulableAndUnresolvable (evicting pods cannot create a match, so preemption skips the node);
  - the pod's anti-affinity: a term's domain on this node holds a matching pod: Unschedulable;
  - existing pods' anti-affinity: a domain of this node holds a pod whose anti-affinity selects this pod:
    Unschedulable (preemption may evict those pods).
AddPod/RemovePod move the same counters for the preemption dry run and for nominated pods.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from dralloc.scheduler.affinity_terms import AffinityTerm, PodAffinityTerms, WeightedTerm
from dralloc.scheduler.framework import Status, unresolvable, unschedulable
from dralloc.scheduler.nodeinfo import NodeInfo
from dralloc.scheduler.pod_index import PodIndex, TermsSet
from dralloc.scheduler.podinfo import PodInfo

NAME = "InterPodAffinity"
ERR_EXISTING_ANTI_AFFINITY = "node(s) didn't satisfy existing pods anti-affinity rules"
ERR_AFFINITY = "node(s) didn't match pod affinity rules"
ERR_ANTI_AFFINITY = "node(s) didn't match pod anti-affinity rules"

# Filter verdicts, as small integers (they also key node grouping).
PASS, AFFINITY_FAILS, ANTI_AFFINITY_FAILS, EXISTING_ANTI_AFFINITY_FAILS = 0, 1, 2, 3
VERDICTS: dict[int, Status | None] = {
    PASS: None,
    AFFINITY_FAILS: unresolvable(NAME, ERR_AFFINITY),
    ANTI_AFFINITY_FAILS: unschedulable(NAME, ERR_ANTI_AFFINITY),
    EXISTING_ANTI_AFFINITY_FAILS: unschedulable(NAME, ERR_EXISTING_ANTI_AFFINITY),
}

Domain = tuple[str, str]  # (topology key, value)


class DomainCounts:
    """``topologyToMatchedTermCount``: a count per topology domain, read straight from the PodIndex's
    per-group domain counters (``parts``, never written here) plus the AddPod/RemovePod changes (``changes``),
    so PreFilter costs one entry per group and term, not one per domain."""

    __slots__ = ("changes", "parts")

    def __init__(self) -> None:
        self.parts: dict[str, list[dict[str, int]]] = {}
        self.changes: dict[Domain, int] = {}

    def clone(self) -> DomainCounts:
        out = DomainCounts()
        out.parts = {k: list(v) for k, v in self.parts.items()}
        out.changes = dict(self.changes)
        return out

    def add_counts(self, topology_key: str, counts: dict[str, int]) -> None:
        if counts:
            self.parts.setdefault(topology_key, []).append(counts)

    def compact(self) -> None:
        """Sum each key's parts into one dict of this state's own, so a node's check reads one dict per key
        however many groups PreFilter counted (pods with distinct labels are a group each)."""
        for key, parts in self.parts.items():
            if len(parts) > 1:
                total: dict[str, int] = {}
                for counts in parts:
                    for value, n in counts.items():
                        total[value] = total.get(value, 0) + n
                self.parts[key] = [total]

    def add(self, topology_key: str, value: str, n: int) -> None:
        domain = (topology_key, value)
        left = self.changes.get(domain, 0) + n
        if left:
            self.changes[domain] = left
        else:
            del self.changes[domain]

    def get(self, topology_key: str, value: str) -> int:
        total = self.changes.get((topology_key, value), 0) if self.changes else 0
        for counts in self.parts.get(topology_key, ()):
            total += counts.get(value, 0)
        return total

    def empty(self) -> bool:
        """No domain with a non-zero count (upstream drops entries that fall to zero)."""
        if not self.changes:
            return not self.parts
        totals: dict[Domain, int] = dict(self.changes)
        for key, parts in self.parts.items():
            for counts in parts:
                for value, n in counts.items():
                    totals[(key, value)] = totals.get((key, value), 0) + n
        return not any(totals.values())


def matches_all(terms: Iterable[AffinityTerm], namespace: str, labels: Mapping[str, str]) -> bool:
    """``podMatchesAllAffinityTerms`` (the incoming pod's terms, namespaces already resolved): False for none."""
    found = False
    for term in terms:
        if not term.matches(namespace, labels, {}):
            return False
        found = True
    return found


@dataclass
class FilterState:
    """``preFilterState``: the incoming pod's resolved required terms and the three domain counters."""

    pod: PodInfo
    affinity: tuple[AffinityTerm, ...]
    anti_affinity: tuple[AffinityTerm, ...]
    namespace_labels: Mapping[str, str]
    existing_anti: DomainCounts = field(default_factory=DomainCounts)
    affinity_counts: DomainCounts = field(default_factory=DomainCounts)
    anti_counts: DomainCounts = field(default_factory=DomainCounts)
    # the topology keys existing_anti counts in (kept with it)
    existing_keys: set[str] = field(default_factory=set)

    def clone(self) -> FilterState:
        return FilterState(self.pod, self.affinity, self.anti_affinity, self.namespace_labels,
                           self.existing_anti.clone(), self.affinity_counts.clone(), self.anti_counts.clone(),
                           set(self.existing_keys))

    @property
    def active(self) -> bool:
        """Whether Filter has anything to check (otherwise PreFilter returns Skip)."""
        return bool(self.existing_keys or self.affinity or self.anti_affinity)

    def count(self, index: PodIndex, terms_sets: list[TermsSet]) -> None:
        """PreFilter's counting over the assigned pods: the existing pods' required anti-affinity terms that
        select the incoming pod (each distinct term matched once for all the pods that declare it), then the
        groups the incoming pod's own terms select (read through the index's label entries)."""
        for terms_set in terms_sets:
            for term in terms_set.terms.required_anti_affinity:
                if term.matches(self.pod.namespace, self.pod.labels, self.namespace_labels):
                    key = term.topology_key
                    counts = terms_set.domain_counts(key)
                    if counts:
                        self.existing_anti.add_counts(key, counts)
                        self.existing_keys.add(key)
        if self.affinity:
            for group in index.selectable(self.affinity[0].selector):
                if matches_all(self.affinity, group.namespace, group.labels):
                    for term in self.affinity:
                        self.affinity_counts.add_counts(term.topology_key, group.domain_counts(term.topology_key))
        for term in self.anti_affinity:
            for group in index.selectable(term.selector):
                if term.matches(group.namespace, group.labels, {}):
                    self.anti_counts.add_counts(term.topology_key, group.domain_counts(term.topology_key))

    def compact(self) -> None:
        """After PreFilter's counting: each counter reads one dict per topology key."""
        self.existing_anti.compact()
        self.affinity_counts.compact()
        self.anti_counts.compact()

    def update_with_pod(self, pod: PodInfo, node: NodeInfo, sign: int) -> None:
        """``updateWithPod``: ``pod`` counted on (+1) or taken off (-1) ``node``."""
        labels = node.labels
        terms: PodAffinityTerms | None = pod.affinity
        if terms is not None:
            for term in terms.required_anti_affinity:
                value = labels.get(term.topology_key)
                if value is not None and term.matches(self.pod.namespace, self.pod.labels, self.namespace_labels):
                    self.existing_anti.add(term.topology_key, value, sign)
                    self.existing_keys.add(term.topology_key)
        if self.affinity and matches_all(self.affinity, pod.namespace, pod.labels):
            for term in self.affinity:
                value = labels.get(term.topology_key)
                if value is not None:
                    self.affinity_counts.add(term.topology_key, value, sign)
        for term in self.anti_affinity:
            value = labels.get(term.topology_key)
            if value is not None and term.matches(pod.namespace, pod.labels, {}):
                self.anti_counts.add(term.topology_key, value, sign)

    def verdict(self, labels: Mapping[str, str]) -> int:
        """One of PASS, AFFINITY_FAILS, ANTI_AFFINITY_FAILS, EXISTING_ANTI_AFFINITY_FAILS for a node's labels.
        (``DomainCounts.get`` inlined: this runs for every node examined.)"""
        if self.affinity and not self._satisfies_affinity(labels):
            return AFFINITY_FAILS
        if self.anti_affinity:
            parts, changes = self.anti_counts.parts, self.anti_counts.changes
            for term in self.anti_affinity:
                key = term.topology_key
                value = labels.get(key)
                if value is not None:
                    n = changes.get((key, value), 0) if changes else 0
                    for counts in parts.get(key, ()):
                        n += counts.get(value, 0)
                    if n > 0:
                        return ANTI_AFFINITY_FAILS
        if self.existing_keys:
            parts, changes = self.existing_anti.parts, self.existing_anti.changes
            for key in self.existing_keys:
                value = labels.get(key)
                if value is not None:
                    n = changes.get((key, value), 0) if changes else 0
                    for counts in parts.get(key, ()):
                        n += counts.get(value, 0)
                    if n > 0:
                        return EXISTING_ANTI_AFFINITY_FAILS
        return PASS

    def _satisfies_affinity(self, labels: Mapping[str, str]) -> bool:
        pods_exist = True
        for term in self.affinity:
            value = labels.get(term.topology_key)
            if value is None:
                return False  # every topology label must be on the node
            if self.affinity_counts.get(term.topology_key, value) <= 0:
                pods_exist = False
        if pods_exist:
            return True
        # The first pod of a group with affinity to itself: no pod anywhere matches, but the pod matches its
        # own terms (and the node has every topology label).
        return self.affinity_counts.empty() and matches_all(self.affinity, self.pod.namespace, self.pod.labels)


def resolve_namespaces(terms: Iterable[AffinityTerm], namespaces: Callable[[], Mapping[str, Mapping[str, str]]]
                       ) -> tuple[AffinityTerm, ...]:
    """``mergeAffinityTermNamespacesIfNotEmpty``: a term's non-empty namespaceSelector becomes the names of the
    namespaces it selects (an empty selector keeps selecting every namespace). ``namespaces`` gives every
    namespace with its labels, asked only when a term needs it."""
    out = []
    for term in terms:
        selector = term.namespace_selector
        if not selector.empty:
            names = frozenset(name for name, labels in namespaces().items() if selector.matches(labels))
            term = term.with_namespaces(names)
        out.append(term)
    return tuple(out)


def resolve_weighted(terms: tuple[WeightedTerm, ...], namespaces: Callable[[], Mapping[str, Mapping[str, str]]]
                     ) -> tuple[WeightedTerm, ...]:
    """``resolve_namespaces`` for preferred terms."""
    if not terms:
        return terms
    resolved = resolve_namespaces((w.term for w in terms), namespaces)
    return tuple(WeightedTerm(term, w.weight) for w, term in zip(terms, resolved))
