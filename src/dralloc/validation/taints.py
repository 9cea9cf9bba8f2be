"""Node taints and pod tolerations, as kube-apiserver checks them (core validation: validateNodeTaints,
ValidateTolerations, validateTaintEffect)."""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

from dralloc.api.core_v1 import Taint, Toleration
from dralloc.validation import field as f
from dralloc.validation.formats import is_label_value, is_qualified_name

EFFECTS = ["NoSchedule", "PreferNoSchedule", "NoExecute"]
TOLERATION_OPERATORS = ["Equal", "Exists"]


# Keys and values repeat on every node and pod of a dump: their problems are worked out once.
@lru_cache(maxsize=4096)
def _key_problems(key: str) -> tuple[str, ...]:
    return tuple(is_qualified_name(key))


@lru_cache(maxsize=4096)
def _value_problems(value: str) -> str:
    return ";".join(is_label_value(value))


def _key_errors(key: str, path: str) -> list[f.FieldError]:
    return [f.invalid(path, key, m) for m in _key_problems(key)]


def taint_effect_errors(effect: str, path: str, allow_empty: bool) -> list[f.FieldError]:
    if not effect and not allow_empty:
        return [f.required(path, "")]
    return [] if effect in EFFECTS else [f.not_supported(path, effect, EFFECTS)]


def node_taint_errors(taints: Sequence[Taint], path: str) -> list[f.FieldError]:
    """Each taint's key a label name, its value a label value, a known effect, and no two taints with the same
    key and effect (the repeat is reported as a whole)."""
    errs: list[f.FieldError] = []
    seen: set[tuple[str, str]] = set()
    for i, taint in enumerate(taints):
        where = f.index(path, i)
        errs += _key_errors(taint.key, f.child(where, "key"))
        value_problems = _value_problems(taint.value or "")
        if value_problems:
            errs.append(f.invalid(f.child(where, "value"), taint.value or "", value_problems))
        errs += taint_effect_errors(taint.effect, f.child(where, "effect"), allow_empty=False)
        if (taint.key, taint.effect) in seen:
            errs.append(f.FieldError(f.DUPLICATE, where, taint, "taints must be unique by key and effect pair"))
            continue
        seen.add((taint.key, taint.effect))
    return errs


def toleration_errors(tolerations: Sequence[Toleration], path: str) -> list[f.FieldError]:
    """ValidateTolerations: a key (when set) is a label name; no key needs Exists; tolerationSeconds only with
    NoExecute; Equal (or no operator) takes a label value, Exists no value."""
    errs: list[f.FieldError] = []
    for i, toleration in enumerate(tolerations):
        key, operator, value = toleration.key or "", toleration.operator or "", toleration.value or ""
        effect, timed = toleration.effect or "", toleration.toleration_seconds is not None
        if not _good_toleration(key, operator, value, effect, timed):  # (paths made only for a bad one)
            errs += _toleration_errors(key, operator, value, effect, timed, f.index(path, i))
    return errs


@lru_cache(maxsize=1024)
def _good_toleration(key: str, operator: str, value: str, effect: str, timed: bool) -> bool:
    """Whether :func:`_toleration_errors` finds nothing (a pod's tolerations repeat from pod to pod: every
    pod gets the same two from admission)."""
    return not _toleration_errors(key, operator, value, effect, timed, "")


def _toleration_errors(key: str, operator: str, value: str, effect: str, timed: bool,
                       where: str) -> list[f.FieldError]:
    errs: list[f.FieldError] = []
    if key:
        errs += _key_errors(key, f.child(where, "key"))
    if not key and operator != "Exists":
        errs.append(f.invalid(f.child(where, "operator"), operator,
                              'operator must be Exists when `key` is empty, which means "match all values and '
                              'all keys"'))
    if timed and effect != "NoExecute":
        errs.append(f.invalid(f.child(where, "effect"), effect,
                              "effect must be 'NoExecute' when `tolerationSeconds` is set"))
    if operator in ("Equal", ""):
        problems = _value_problems(value)
        if problems:
            errs.append(f.invalid(f.child(where, "operator"), value, problems))
    elif operator == "Exists":
        if value:
            errs.append(f.invalid(f.child(where, "operator"), value,
                                  "value must be empty when `operator` is 'Exists'"))
    else:
        errs.append(f.not_supported(f.child(where, "operator"), operator, TOLERATION_OPERATORS))
    if effect:
        errs += taint_effect_errors(effect, f.child(where, "effect"), allow_empty=True)
    return errs
