"""A pod's topology spread constraints as PodTopologySpread reads them (``filterTopologySpreadConstraints``),
and the label selectors they carry.

Each constraint keeps ``maxSkew``, ``topologyKey``, its selector, ``minDomains`` (1 when unset) and the two node
inclusion policies: ``nodeAffinityPolicy`` (default Honor: only nodes matching the pod's nodeSelector and
required node affinity count) and ``nodeTaintsPolicy`` (default Ignore). Both policies are GA and locked on in
1.36 (NodeInclusionPolicyInPodTopologySpread), as is ``minDomains``. ``matchLabelKeys`` (gate
MatchLabelKeysInPodTopologySpread, on in 1.36) adds ``key in (value)`` for each listed key the pod has a label for;
kube-apiserver already merges them on create, and merging again selects the same pods.

Selectors follow ``metav1.LabelSelectorAsSelector``: an unset selector matches nothing; an empty one matches
everything. The constraints' rules are kube-apiserver's (``dralloc.validation``); a selector that cannot be read
raises :class:`SpreadConstraintError` with its field path.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import msgspec

from dralloc.api.core_v1 import TopologySpreadConstraint
from dralloc.api.meta import LabelSelector
from dralloc.errors import InputError
from dralloc.scheduler.config.types import DefaultConstraint
from dralloc.scheduler.labels import Selector, SelectorError, compile_selector, selector_from_set

DO_NOT_SCHEDULE = "DoNotSchedule"
SCHEDULE_ANYWAY = "ScheduleAnyway"
HONOR = "Honor"
IGNORE = "Ignore"
HOSTNAME = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"
FIELD = "spec.topologySpreadConstraints"


class SpreadConstraintError(InputError):
    """A topology spread constraint kube-apiserver would refuse (the message names the field)."""


def parse_selector(raw: LabelSelector | dict[str, Any] | None, path: str) -> Selector:
    """``LabelSelectorAsSelector`` of a typed selector, or of one kept as JSON (a controller's
    ``spec.selector`` read from its object); SpreadConstraintError, naming ``path``, when it is refused."""
    if isinstance(raw, dict):
        try:
            raw = msgspec.convert(raw, LabelSelector)
        except msgspec.ValidationError as exc:
            raise SpreadConstraintError(f"{path}: {exc}") from None
    try:
        return compile_selector(raw)
    except SelectorError as exc:
        raise SpreadConstraintError(f"{path}: {exc}") from None


@dataclass(frozen=True, slots=True)
class SpreadConstraint:
    """One constraint as the plugin evaluates it (``topologySpreadConstraint``)."""

    max_skew: int
    topology_key: str
    selector: Selector
    min_domains: int = 1
    honor_affinity: bool = True  # nodeAffinityPolicy Honor
    honor_taints: bool = False  # nodeTaintsPolicy Honor


def parse_constraints(constraints: Sequence[TopologySpreadConstraint | DefaultConstraint] | None,
                      pod_labels: Mapping[str, str], action: str, match_label_keys: bool = True
                      ) -> tuple[SpreadConstraint, ...]:
    """The constraints whose ``whenUnsatisfiable`` is ``action``, in spec order (kube-apiserver has checked
    them; a selector that cannot be read raises SpreadConstraintError)."""
    out: list[SpreadConstraint] = []
    for i, constraint in enumerate(constraints or ()):
        if constraint.when_unsatisfiable != action:
            continue
        selector = parse_selector(constraint.label_selector, f"{FIELD}[{i}].labelSelector")
        keys = constraint.match_label_keys
        if match_label_keys and keys:
            found = {k: pod_labels[k] for k in keys if k in pod_labels}
            if found:
                # mergeLabelSetWithSelector: the pod's values, plus the selector's own requirements (an unset
                # selector stays Nothing).
                selector = selector if selector.nothing else selector_from_set(found).add(selector.requirements)
        min_domains = constraint.min_domains if constraint.min_domains is not None else 1
        out.append(SpreadConstraint(constraint.max_skew, constraint.topology_key, selector, min_domains,
                                    (constraint.node_affinity_policy or HONOR) == HONOR,
                                    (constraint.node_taints_policy or IGNORE) == HONOR))
    return tuple(out)
