"""Required pod (anti-)affinity terms added to a pod's affinity, as the JobSet and LeaderWorkerSet pod webhooks
add them for exclusive placement."""

from __future__ import annotations

from msgspec.structs import replace

from dralloc.api.core_v1 import Affinity, PodAffinity, PodAffinityTerm
from dralloc.api.meta import LabelSelector, LabelSelectorRequirement


def requirement(key: str, operator: str, values: list[str] | None = None) -> LabelSelectorRequirement:
    return LabelSelectorRequirement(key=key, operator=operator, values=values)


def required_term(topology: str, *requirements: LabelSelectorRequirement,
                  every_namespace: bool = False) -> PodAffinityTerm:
    """A term over ``topology`` selecting pods by ``requirements`` (in the pod's namespace, or in every
    namespace: an empty namespaceSelector)."""
    return PodAffinityTerm(label_selector=LabelSelector(match_expressions=list(requirements)), topology_key=topology,
                           namespace_selector=LabelSelector() if every_namespace else None)


def _appended(rules: PodAffinity | None, term: PodAffinityTerm) -> PodAffinity:
    rules = rules or PodAffinity()
    terms = rules.required_during_scheduling_ignored_during_execution or []
    return replace(rules, required_during_scheduling_ignored_during_execution=[*terms, term])


def with_required_terms(affinity: Affinity | None, together: PodAffinityTerm,
                        apart: PodAffinityTerm | None) -> Affinity:
    """``affinity`` with a required pod affinity term ``together`` (and a required anti-affinity term
    ``apart``) appended after the terms it already has."""
    affinity = affinity or Affinity()
    anti = affinity.pod_anti_affinity if apart is None else _appended(affinity.pod_anti_affinity, apart)
    return replace(affinity, pod_affinity=_appended(affinity.pod_affinity, together), pod_anti_affinity=anti)


def has_required_term(rules: PodAffinity | None, topology: str) -> bool:
    """Whether ``rules`` hold a required term over ``topology``."""
    terms = rules.required_during_scheduling_ignored_during_execution if rules is not None else None
    return any(t.topology_key == topology for t in terms or ())
