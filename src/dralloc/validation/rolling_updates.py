"""The rolling update budgets of StatefulSets and DaemonSets as kube-apiserver's apps validation checks them
(validateRollingUpdateStatefulSet, ValidateRollingUpdateDaemonSet), with its field paths and texts: a count
not negative or a percentage (``[0-9]+%``) of at most 100%; a StatefulSet's ``maxUnavailable`` not 0 and its
``partition`` not negative; a DaemonSet's ``maxSurge`` and ``maxUnavailable`` not both set, nor both 0."""

from __future__ import annotations

import re
from typing import Any

from dralloc.validation import field as f
from dralloc.validation.formats import regex_error
from dralloc.validation.quantities import NEGATIVE

_PERCENT = re.compile(r"[0-9]+%")


def int_or_percent_errors(value: Any, path: str) -> list[f.FieldError]:
    """ValidatePositiveIntOrPercent and IsNotMoreThan100Percent."""
    if value is None:
        return []
    if isinstance(value, int) and not isinstance(value, bool):
        return [f.invalid(path, value, NEGATIVE)] if value < 0 else []
    if not isinstance(value, str) or not _PERCENT.fullmatch(value):
        return [f.invalid(path, value, regex_error("a valid percent string must be a numeric string followed by "
                                                   "an ending '%'", "[0-9]+%", "1%", "93%"))]
    if int(value[:-1]) > 100:
        return [f.invalid(path, value, "must not be greater than 100%")]
    return []


def _value(value: Any) -> int:
    """getIntOrPercentValue: a percentage's number, an integer as it is (anything else: 0)."""
    if isinstance(value, str) and _PERCENT.fullmatch(value):
        return int(value[:-1])
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _rolling_update(strategy: dict[str, Any] | None) -> dict[str, Any] | None:
    if not isinstance(strategy, dict) or strategy.get("type", "RollingUpdate") != "RollingUpdate":
        return None
    rolling = strategy.get("rollingUpdate")
    return rolling if isinstance(rolling, dict) else None


def stateful_set_rolling_errors(strategy: dict[str, Any] | None) -> list[f.FieldError]:
    """validateRollingUpdateStatefulSet."""
    rolling = _rolling_update(strategy)
    if rolling is None:
        return []
    path = "spec.updateStrategy.rollingUpdate"
    errs: list[f.FieldError] = []
    partition = rolling.get("partition")
    if isinstance(partition, int) and not isinstance(partition, bool) and partition < 0:
        errs.append(f.invalid(f.child(path, "partition"), partition, NEGATIVE))
    budget = rolling.get("maxUnavailable")
    if budget is not None:
        where = f.child(path, "maxUnavailable")
        checked = int_or_percent_errors(budget, where)
        errs += [e for e in checked if e.detail != "must not be greater than 100%"]
        if _value(budget) == 0:
            errs.append(f.invalid(where, budget, "cannot be 0"))
        errs += [e for e in checked if e.detail == "must not be greater than 100%"]
    return errs


def daemon_set_rolling_errors(strategy: dict[str, Any] | None) -> list[f.FieldError]:
    """ValidateRollingUpdateDaemonSet (over the defaulted strategy: unset counts as 0)."""
    rolling = _rolling_update(strategy)
    if rolling is None:
        return []
    path = "spec.updateStrategy.rollingUpdate"
    unavailable, surge = rolling.get("maxUnavailable"), rolling.get("maxSurge")
    checks = [int_or_percent_errors(v, f.child(path, k)) for k, v in (("maxUnavailable", unavailable),
                                                                        ("maxSurge", surge))]
    # (the format errors of both first, then the over-100% ones, as upstream checks them)
    errs = [e for c in checks for e in c if e.detail != "must not be greater than 100%"]
    errs += [e for c in checks for e in c if e.detail == "must not be greater than 100%"]
    if _value(unavailable) != 0 and _value(surge) != 0:
        errs.append(f.invalid(f.child(path, "maxSurge"), surge, "may not be set when maxUnavailable is non-zero"))
    elif _value(unavailable) == 0 and _value(surge) == 0:
        errs.append(f.required(f.child(path, "maxUnavailable"), "cannot be 0 when maxSurge is 0"))
    return errs
