"""A pod's topology spread constraints as PodTopologySpread reads them (``filterTopologySpreadConstraints``),
and the label selectors they carry.

Each constraint keeps ``maxSkew``, ``topologyKey``, its selector, ``minDomains`` (1 when unset) and the two node
inclusion policies: ``nodeAffinityPolicy`` (default Honor: only nodes matching the pod's nodeSelector and
required node affinity count) and ``nodeTaintsPolicy`` (default Ignore). Both policies are GA and locked on in
1.36 (NodeInclusionPolicyInPodTopologySpread), as is ``minDomains``. ``matchLabelKeys`` (gate
MatchLabelKeysInPodTopologySpread, on in 1.36) adds ``key in (value)`` for each listed key the pod has a label for;
kube-apiserver already merges them on create, and merging again selects the same pods.

Selectors follow ``metav1.LabelSelectorAsSelector``: an unset selector matches nothing; an empty one matches
everything. A malformed constraint (an apiserver would refuse it) raises :class:`SpreadConstraintError` with its
field path.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from dralloc.api.meta import LabelSelector
from dralloc.errors import InputError
from dralloc.scheduler.labels import OPERATORS, Requirement, Selector, selector_from_set

DO_NOT_SCHEDULE = "DoNotSchedule"
SCHEDULE_ANYWAY = "ScheduleAnyway"
HONOR = "Honor"
IGNORE = "Ignore"
HOSTNAME = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"
FIELD = "spec.topologySpreadConstraints"


class SpreadConstraintError(InputError):
    """A topology spread constraint kube-apiserver would refuse (the message names the field)."""


def parse_selector(raw: Any, path: str) -> Selector:
    """A ``LabelSelector`` from its JSON form (``matchLabels``, ``matchExpressions``) or the typed model."""
    if raw is None:
        return Selector(nothing=True)
    if isinstance(raw, LabelSelector):
        match_labels: Any = raw.match_labels
        expressions: Any = [{"key": e.key, "operator": e.operator, "values": e.values}
                            for e in raw.match_expressions or ()]
    elif isinstance(raw, dict):
        match_labels = raw.get("matchLabels")
        expressions = raw.get("matchExpressions")
    else:
        raise SpreadConstraintError(f"{path}: must be an object")
    reqs: list[Requirement] = []
    if match_labels is not None:
        if not isinstance(match_labels, dict) or not all(
                isinstance(k, str) and isinstance(v, str) for k, v in match_labels.items()):
            raise SpreadConstraintError(f"{path}.matchLabels: must map strings to strings")
        reqs.extend(Requirement(k, "In", frozenset((v,))) for k, v in match_labels.items())
    if expressions is not None:
        if not isinstance(expressions, list):
            raise SpreadConstraintError(f"{path}.matchExpressions: must be a list")
        for j, expr in enumerate(expressions):
            where = f"{path}.matchExpressions[{j}]"
            if not isinstance(expr, dict):
                raise SpreadConstraintError(f"{where}: must be an object")
            key, op, values = expr.get("key"), expr.get("operator"), expr.get("values") or []
            if not isinstance(key, str) or not key:
                raise SpreadConstraintError(f"{where}.key: Required value")
            if op not in OPERATORS:
                raise SpreadConstraintError(f'{where}.operator: Unsupported value: {op!r}: supported values: '
                                            + ", ".join(f'"{o}"' for o in OPERATORS))
            if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
                raise SpreadConstraintError(f"{where}.values: must be a list of strings")
            if op in ("In", "NotIn") and not values:
                raise SpreadConstraintError(f"{where}.values: Required value: must be specified when "
                                            "`operator` is 'In' or 'NotIn'")
            if op in ("Exists", "DoesNotExist") and values:
                raise SpreadConstraintError(f"{where}.values: Forbidden: may not be specified when "
                                            "`operator` is 'Exists' or 'DoesNotExist'")
            reqs.append(Requirement(key, op, frozenset(values)))
    return Selector().add(tuple(reqs))


@dataclass(frozen=True, slots=True)
class SpreadConstraint:
    """One constraint as the plugin evaluates it (``topologySpreadConstraint``)."""

    max_skew: int
    topology_key: str
    selector: Selector
    min_domains: int = 1
    honor_affinity: bool = True  # nodeAffinityPolicy Honor
    honor_taints: bool = False  # nodeTaintsPolicy Honor


def _int(raw: dict[str, Any], name: str, path: str, default: int | None = None) -> int:
    value = raw.get(name)
    if value is None and default is not None:
        return default
    if not isinstance(value, int) or isinstance(value, bool):
        raise SpreadConstraintError(f"{path}.{name}: Required value: must be an integer")
    if value <= 0:
        raise SpreadConstraintError(f"{path}.{name}: Invalid value: {value}: must be greater than zero")
    return value


def _policy(raw: dict[str, Any], name: str, path: str, default: str) -> bool:
    value = raw.get(name)
    if value is None:
        value = default
    if value not in (HONOR, IGNORE):
        raise SpreadConstraintError(f'{path}.{name}: Unsupported value: {value!r}: supported values: '
                                    '"Honor", "Ignore"')
    return value == HONOR


def parse_constraints(raws: list[Any] | None, pod_labels: Mapping[str, str], action: str,
                      match_label_keys: bool = True) -> tuple[SpreadConstraint, ...]:
    """The constraints whose ``whenUnsatisfiable`` is ``action``, in spec order."""
    out: list[SpreadConstraint] = []
    for i, raw in enumerate(raws or ()):
        path = f"{FIELD}[{i}]"
        if not isinstance(raw, dict):
            raise SpreadConstraintError(f"{path}: must be an object")
        when = raw.get("whenUnsatisfiable")
        if when not in (DO_NOT_SCHEDULE, SCHEDULE_ANYWAY):
            raise SpreadConstraintError(f'{path}.whenUnsatisfiable: Unsupported value: {when!r}: supported '
                                        'values: "DoNotSchedule", "ScheduleAnyway"')
        key = raw.get("topologyKey")
        if not isinstance(key, str) or not key:
            raise SpreadConstraintError(f"{path}.topologyKey: Required value: can not be empty")
        max_skew = _int(raw, "maxSkew", path)
        min_domains = _int(raw, "minDomains", path, default=1)
        honor_affinity = _policy(raw, "nodeAffinityPolicy", path, HONOR)
        honor_taints = _policy(raw, "nodeTaintsPolicy", path, IGNORE)
        selector = parse_selector(raw.get("labelSelector"), f"{path}.labelSelector")
        keys = raw.get("matchLabelKeys")
        if keys is not None and (not isinstance(keys, list) or not all(isinstance(k, str) for k in keys)):
            raise SpreadConstraintError(f"{path}.matchLabelKeys: must be a list of strings")
        if when != action:
            continue
        if match_label_keys and keys:
            found = {k: pod_labels[k] for k in keys if k in pod_labels}
            if found:
                # mergeLabelSetWithSelector: the pod's values, plus the selector's own requirements (an unset
                # selector stays Nothing).
                selector = selector if selector.nothing else selector_from_set(found).add(selector.requirements)
        out.append(SpreadConstraint(max_skew, key, selector, min_domains, honor_affinity, honor_taints))
    return tuple(out)


def spread_constraint_problems(raws: list[Any] | None) -> list[str]:
    """The first problem of each malformed constraint (for load-time validation)."""
    problems: list[str] = []
    for i, raw in enumerate(raws or ()):
        try:
            parse_constraints([raw], {}, DO_NOT_SCHEDULE)
        except SpreadConstraintError as exc:
            problems.append(str(exc).replace(f"{FIELD}[0]", f"{FIELD}[{i}]", 1))
    return problems
