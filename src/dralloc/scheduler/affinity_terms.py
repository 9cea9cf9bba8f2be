"""A pod's inter-pod (anti-)affinity as kube-scheduler parses it into its ``PodInfo`` (``framework.AffinityTerm``).

A term selects pods by namespace and labels: ``namespaces`` (the pod's own namespace when both ``namespaces`` and
``namespaceSelector`` are unset) or a ``namespaceSelector`` over the Namespace objects' labels, then
``labelSelector`` over the pod's labels (``metav1.LabelSelectorAsSelector``: an unset selector matches nothing,
an empty one everything). ``matchLabelKeys`` / ``mismatchLabelKeys`` (MatchLabelKeysInPodAffinity, GA and locked
on since 1.33) are merged into the label selector as ``key in (value)`` / ``key notin (value)`` with the pod's own
label values, as kube-apiserver does when the pod is created; merging again is harmless (the same requirement
twice selects the same pods), so pods read from a dump and pods dralloc creates are treated alike.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TypeVar

import msgspec

from dralloc.api.core_v1 import Pod, PodAffinity, PodAffinityTerm, WeightedPodAffinityTerm
from dralloc.api.meta import LabelSelectorRequirement
from dralloc.scheduler.labels import NOTHING, Selector, SelectorError, compile_selector

# kube-apiserver labels every Namespace with its own name
NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class AffinityTerm:
    namespaces: frozenset[str]
    selector: Selector
    topology_key: str
    namespace_selector: Selector

    def matches(self, namespace: str, labels: Mapping[str, str], namespace_labels: Mapping[str, str]) -> bool:
        """``AffinityTerm.Matches``: the pod's namespace is listed or selected, and its labels are selected."""
        if namespace in self.namespaces or self.namespace_selector.matches(namespace_labels):
            return self.selector.matches(labels)
        return False

    def with_namespaces(self, names: frozenset[str]) -> AffinityTerm:
        """The namespaces the selector selected, merged in; the selector then matches nothing."""
        return AffinityTerm(self.namespaces | names, self.selector, self.topology_key, NOTHING)


@dataclass(frozen=True, slots=True)
class WeightedTerm:
    term: AffinityTerm
    weight: int


@dataclass(frozen=True, slots=True)
class PodAffinityTerms:
    """What ``NewPodInfo`` keeps of a pod's pod affinity and anti-affinity; ``error`` is its ParseError."""

    required_affinity: tuple[AffinityTerm, ...] = ()
    required_anti_affinity: tuple[AffinityTerm, ...] = ()
    preferred_affinity: tuple[WeightedTerm, ...] = ()
    preferred_anti_affinity: tuple[WeightedTerm, ...] = ()
    error: str = ""


def _term(term: PodAffinityTerm, namespace: str, labels: Mapping[str, str]) -> AffinityTerm:
    label_selector = term.label_selector
    match_keys = term.match_label_keys or ()
    mismatch_keys = term.mismatch_label_keys or ()
    if label_selector is not None and (match_keys or mismatch_keys):
        extra = [LabelSelectorRequirement(k, "In", [labels[k]]) for k in match_keys if k in labels]
        extra += [LabelSelectorRequirement(k, "NotIn", [labels[k]]) for k in mismatch_keys if k in labels]
        label_selector = msgspec.structs.replace(
            label_selector, match_expressions=[*(label_selector.match_expressions or ()), *extra])
    selector = compile_selector(label_selector)
    names = term.namespaces or ()
    namespaces = frozenset((namespace,)) if not names and term.namespace_selector is None else frozenset(names)
    return AffinityTerm(namespaces, selector, term.topology_key, compile_selector(term.namespace_selector))


def _terms(terms: list[PodAffinityTerm] | None, namespace: str, labels: Mapping[str, str]
           ) -> tuple[AffinityTerm, ...]:
    return tuple(_term(term, namespace, labels) for term in terms or ())


def _weighted(terms: list[WeightedPodAffinityTerm] | None, namespace: str, labels: Mapping[str, str]
              ) -> tuple[WeightedTerm, ...]:
    return tuple(WeightedTerm(_term(w.pod_affinity_term, namespace, labels), w.weight) for w in terms or ())


def selects_namespaces_by_label(terms: PodAffinityTerms) -> bool:
    """Whether some term's namespaceSelector reads a namespace label other than its name."""
    every = (*terms.required_affinity, *terms.required_anti_affinity,
             *(w.term for w in terms.preferred_affinity), *(w.term for w in terms.preferred_anti_affinity))
    return any(req.key != NAMESPACE_NAME_LABEL for t in every for req in t.namespace_selector.requirements)


def has_pod_affinity(pod: Pod) -> bool:
    """``podWithAffinity``: the pod declares pod affinity or anti-affinity (NodeInfo.PodsWithAffinity)."""
    affinity = pod.spec.affinity
    return affinity is not None and (affinity.pod_affinity is not None or affinity.pod_anti_affinity is not None)


def parse_pod_affinity(pod: Pod) -> PodAffinityTerms | None:
    """The pod's parsed terms, or None when it declares neither pod affinity nor anti-affinity."""
    if not has_pod_affinity(pod):
        return None
    affinity = pod.spec.affinity
    assert affinity is not None
    namespace = pod.metadata.namespace or "default"
    labels = pod.metadata.labels or {}
    affine = affinity.pod_affinity or PodAffinity()
    anti = affinity.pod_anti_affinity or PodAffinity()
    errors: list[str] = []

    def parsed(what: str, build: Callable[[], tuple[T, ...]]) -> tuple[T, ...]:
        try:
            return build()
        except SelectorError as exc:
            errors.append(f"{what}: {exc}")
            return ()

    required = parsed("requiredAffinityTerms", lambda: _terms(
        affine.required_during_scheduling_ignored_during_execution, namespace, labels))
    required_anti = parsed("requiredAntiAffinityTerms", lambda: _terms(
        anti.required_during_scheduling_ignored_during_execution, namespace, labels))
    preferred = parsed("preferredAffinityTerms", lambda: _weighted(
        affine.preferred_during_scheduling_ignored_during_execution, namespace, labels))
    preferred_anti = parsed("preferredAntiAffinityTerms", lambda: _weighted(
        anti.preferred_during_scheduling_ignored_during_execution, namespace, labels))
    error = errors[0] if len(errors) == 1 else ("[" + ", ".join(errors) + "]" if errors else "")
    return PodAffinityTerms(required, required_anti, preferred, preferred_anti, error)
