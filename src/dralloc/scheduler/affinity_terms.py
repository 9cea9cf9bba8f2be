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

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from dralloc.api.core_v1 import Pod
from dralloc.scheduler.labels import NOTHING, Selector, SelectorError, compile_selector

REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"
# kube-apiserver labels every Namespace with its own name
NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"
PREFERRED = "preferredDuringSchedulingIgnoredDuringExecution"


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


def _term(raw: Mapping[str, Any], namespace: str, labels: Mapping[str, str]) -> AffinityTerm:
    label_selector = raw.get("labelSelector")
    match_keys = raw.get("matchLabelKeys") or ()
    mismatch_keys = raw.get("mismatchLabelKeys") or ()
    if label_selector is not None and (match_keys or mismatch_keys):
        extra = [{"key": k, "operator": "In", "values": [labels[k]]} for k in match_keys if k in labels]
        extra += [{"key": k, "operator": "NotIn", "values": [labels[k]]} for k in mismatch_keys if k in labels]
        label_selector = {**label_selector,
                          "matchExpressions": list(label_selector.get("matchExpressions") or ()) + extra}
    selector = compile_selector(label_selector)
    names = raw.get("namespaces") or ()
    ns_selector_raw = raw.get("namespaceSelector")
    namespaces = frozenset((namespace,)) if not names and ns_selector_raw is None else frozenset(names)
    return AffinityTerm(namespaces, selector, str(raw.get("topologyKey") or ""), compile_selector(ns_selector_raw))


def _terms(raws: Any, namespace: str, labels: Mapping[str, str]) -> tuple[AffinityTerm, ...]:
    return tuple(_term(raw, namespace, labels) for raw in raws or ())


def _weighted(raws: Any, namespace: str, labels: Mapping[str, str]) -> tuple[WeightedTerm, ...]:
    return tuple(WeightedTerm(_term(raw.get("podAffinityTerm") or {}, namespace, labels), int(raw.get("weight") or 0))
                 for raw in raws or ())


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
    affine = affinity.pod_affinity or {}
    anti = affinity.pod_anti_affinity or {}
    errors: list[str] = []
    parts: list[Any] = []
    for what, build, raws in (("requiredAffinityTerms", _terms, affine.get(REQUIRED)),
                              ("requiredAntiAffinityTerms", _terms, anti.get(REQUIRED)),
                              ("preferredAffinityTerms", _weighted, affine.get(PREFERRED)),
                              ("preferredAntiAffinityTerms", _weighted, anti.get(PREFERRED))):
        try:
            parts.append(build(raws, namespace, labels))
        except SelectorError as exc:
            errors.append(f"{what}: {exc}")
            parts.append(())
    error = errors[0] if len(errors) == 1 else ("[" + ", ".join(errors) + "]" if errors else "")
    return PodAffinityTerms(parts[0], parts[1], parts[2], parts[3], error)
