"""policy/v1 PodDisruptionBudget rules of kube-apiserver (pkg/apis/policy/validation), the ones that decide what
a budget means: its disruption bounds, its selector's operators, its eviction policy and a non-negative status."""

from __future__ import annotations

from typing import Any

from dralloc.api.policy_v1 import PodDisruptionBudget
from dralloc.validation import field as f
from dralloc.validation.meta import validate_labels

EVICTION_POLICIES = ["AlwaysAllow", "IfHealthyBudget"]
SELECTOR_OPERATORS = ["In", "NotIn", "Exists", "DoesNotExist"]


def _int_or_percent(value: int | str | None, path: str) -> list[f.FieldError]:
    """``ValidatePositiveIntOrPercent`` and ``IsNotMoreThan100Percent``."""
    if value is None:
        return []
    if isinstance(value, int):
        return [f.invalid(path, value, "must be greater than or equal to 0")] if value < 0 else []
    digits = value[:-1] if value.endswith("%") else ""
    if not digits.isdigit():
        return [f.invalid(path, value, "a valid percent string must be a numeric string followed by an ending '%' "
                                       "(e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')")]
    if int(digits) > 100:
        return [f.invalid(path, value, "must not be greater than 100%")]
    return []


def _selector(selector: Any, path: str) -> list[f.FieldError]:
    if selector is None:
        return []
    errs = validate_labels(selector.match_labels, f.child(path, "matchLabels"))
    for i, req in enumerate(selector.match_expressions or ()):
        where = f.index(f.child(path, "matchExpressions"), i)
        if req.operator not in SELECTOR_OPERATORS:
            errs.append(f.invalid(f.child(where, "operator"), req.operator, "not a valid selector operator"))
        elif req.operator in ("In", "NotIn") and not req.values:
            errs.append(f.required(f.child(where, "values"), "must be specified when `operator` is 'In' or 'NotIn'"))
        elif req.operator in ("Exists", "DoesNotExist") and req.values:
            errs.append(f.forbidden(f.child(where, "values"),
                                    "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"))
    return errs


def validate_pdb(pdb: PodDisruptionBudget) -> list[f.FieldError]:
    """The budget's own rules (its metadata is checked by the caller)."""
    spec = pdb.spec
    errs: list[f.FieldError] = []
    if spec.min_available is not None and spec.max_unavailable is not None:
        errs.append(f.invalid("spec", spec, "minAvailable and maxUnavailable cannot be both set"))
    errs += _int_or_percent(spec.min_available, "spec.minAvailable")
    errs += _int_or_percent(spec.max_unavailable, "spec.maxUnavailable")
    errs += _selector(spec.selector, "spec.selector")
    policy = spec.unhealthy_pod_eviction_policy
    if policy is not None and policy not in EVICTION_POLICIES:
        errs.append(f.not_supported("spec.unhealthyPodEvictionPolicy", policy, EVICTION_POLICIES))
    status = pdb.status
    if status is not None:
        for name in ("disruptions_allowed", "current_healthy", "desired_healthy", "expected_pods"):
            value = getattr(status, name)
            if value < 0:
                camel = name.split("_")[0] + "".join(w.title() for w in name.split("_")[1:])
                errs.append(f.invalid(f"status.{camel}", value, "must be greater than or equal to 0"))
    return errs
