"""Label selectors as apimachinery evaluates them (``metav1.LabelSelectorAsSelector``, ``labels.Selector``),
shared by every rule that selects pods or objects by labels: pod affinity, topology spreading, disruption
budgets, volume and capacity selectors.

An unset selector is ``NOTHING`` (it matches no set); ``{}`` is ``EVERYTHING``. Requirements are kept sorted,
so equal selectors are equal values (usable as cache keys).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache

from dralloc.api.meta import LabelSelector
from dralloc.validation.formats import is_label_value, is_qualified_name

OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist")


class SelectorError(ValueError):
    """A label selector ``LabelSelectorAsSelector`` refuses (kube-apiserver's validation refuses it first)."""


@dataclass(frozen=True, slots=True)
class Requirement:
    key: str
    operator: str  # In, NotIn, Exists, DoesNotExist
    values: frozenset[str] = frozenset()

    def matches(self, labels: Mapping[str, str]) -> bool:
        op = self.operator
        if op == "In":
            value = labels.get(self.key)
            return value is not None and value in self.values
        if op == "NotIn":
            value = labels.get(self.key)
            return value is None or value not in self.values
        if op == "Exists":
            return self.key in labels
        return self.key not in labels


def _order(r: Requirement) -> tuple[str, str, tuple[str, ...]]:
    return (r.key, r.operator, tuple(sorted(r.values)))


@dataclass(frozen=True, slots=True)
class Selector:
    """Every requirement must hold; ``nothing`` is ``labels.Nothing()`` (the unset selector)."""

    requirements: tuple[Requirement, ...] = ()
    nothing: bool = False

    @property
    def empty(self) -> bool:
        """``labels.Selector.Empty()``: no requirements (true for the match-everything selector only)."""
        return not self.nothing and not self.requirements

    def matches(self, labels: Mapping[str, str]) -> bool:
        if self.nothing:
            return False
        for r in self.requirements:
            if not r.matches(labels):
                return False
        return True

    def add(self, extra: tuple[Requirement, ...]) -> Selector:
        """``selector.Add``: these requirements too (on Nothing, still nothing)."""
        if self.nothing:
            return self
        return Selector(tuple(sorted(set(self.requirements) | set(extra), key=_order)))


NOTHING = Selector(nothing=True)
EVERYTHING = Selector()


def selector_from_set(labels: Mapping[str, str]) -> Selector:
    """``labels.SelectorFromSet``: ``key = value`` for every pair (empty set: everything)."""
    return EVERYTHING.add(tuple(Requirement(k, "In", frozenset((v,))) for k, v in labels.items()))


def _go_strings(values: tuple[str, ...]) -> str:
    """Go's ``%#v`` of the ``[]string`` a requirement was given (nil when there were none)."""
    if not values:
        return "[]string(nil)"
    return "[]string{" + ", ".join(json.dumps(v, ensure_ascii=False) for v in values) + "}"


def _key_problem(key: str) -> str:
    errs = is_qualified_name(key)
    return f'key: Invalid value: {json.dumps(key, ensure_ascii=False)}: {"; ".join(errs)}' if errs else ""


def _value_problem(key: str, index: int, value: str) -> str:
    errs = is_label_value(value)
    if not errs:
        return ""
    return f'values[{index}][{key}]: Invalid value: {json.dumps(value, ensure_ascii=False)}: {"; ".join(errs)}'


@lru_cache(maxsize=4096)
def _requirement(key: str, operator: str, values: tuple[str, ...]) -> Requirement:
    """``labels.NewRequirement``: the key must be a qualified name, the operator must fit the number of
    values, every value must be a label value; all problems of the one requirement are reported together
    (``[a, b]`` when there are several, as an aggregate error prints). Pods of a workload repeat their
    requirements, so each is checked once (a refused one raises each time: exceptions are not cached)."""
    problems = requirement_problems(key, operator, values)
    if problems:
        raise SelectorError(problems[0] if len(problems) == 1 else "[" + ", ".join(problems) + "]")
    return Requirement(key, operator, frozenset(values))


def requirement_problems(key: str, operator: str, values: tuple[str, ...]) -> list[str]:
    """Each problem ``labels.NewRequirement`` finds in one requirement, worded with its path below the
    requirement (``key: Invalid value: ...``, ``values[0][key]: ...``), without repeats."""
    problems = [_key_problem(key)]
    if operator in ("In", "NotIn"):
        if not values:
            problems.append(f"values: Invalid value: {_go_strings(values)}: "
                            "for 'in', 'notin' operators, values set can't be empty")
    elif operator in ("Exists", "DoesNotExist"):
        if values:
            problems.append(f"values: Invalid value: {_go_strings(values)}: "
                            "values set must be empty for exists and does not exist")
    elif operator in ("Gt", "Lt"):  # node selectors only
        if len(values) != 1:
            problems.append(f"values: Invalid value: {_go_strings(values)}: "
                            "for 'Gt', 'Lt' operators, exactly one value is required")
        problems += [f"values[{i}]: Invalid value: {json.dumps(v, ensure_ascii=False)}: "
                     "for 'Gt', 'Lt' operators, the value must be an integer"
                     for i, v in enumerate(values) if not _is_int64(v)]
    problems += [_value_problem(key, i, v) for i, v in enumerate(values)]
    return list(dict.fromkeys(p for p in problems if p))


def _is_int64(text: str) -> bool:
    """strconv.ParseInt(text, 10, 64) succeeds."""
    body = text[1:] if text[:1] in ("+", "-") else text
    return body.isascii() and body.isdigit() and -(2 ** 63) <= int(text) < 2 ** 63


def requirement_problem(key: str, operator: str, values: tuple[str, ...]) -> str:
    """What ``labels.NewRequirement`` refuses in one requirement (a label selector's or a node selector's
    matchExpressions entry, Gt/Lt included); "" when it is fine."""
    try:
        _requirement(key, operator, values)
    except SelectorError as exc:
        return str(exc)
    return ""


def compile_selector(selector: LabelSelector | None) -> Selector:
    """``LabelSelectorAsSelector``: an unset selector selects nothing, an empty one everything; SelectorError
    (with apimachinery's text) for the first requirement ``labels.NewRequirement`` refuses."""
    if selector is None:
        return NOTHING
    match_labels = selector.match_labels or {}
    expressions = selector.match_expressions or []
    if not match_labels and not expressions:
        return EVERYTHING
    # (Go ranges over matchLabels in random order; sorted keys make the first refused one deterministic.)
    reqs = [_requirement(k, "In", (match_labels[k],)) for k in sorted(match_labels)]
    for expr in expressions:
        op = expr.operator
        if op not in OPERATORS:
            raise SelectorError(f'"{op}" is not a valid label selector operator')
        reqs.append(_requirement(expr.key, op, tuple(expr.values or ())))
    return EVERYTHING.add(tuple(reqs))


def from_model(selector: LabelSelector | None) -> Selector:
    """``compile_selector``, where a refused selector selects nothing."""
    try:
        return compile_selector(selector)
    except SelectorError:
        return NOTHING
