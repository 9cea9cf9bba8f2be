"""Label selectors as apimachinery evaluates them (``metav1.LabelSelectorAsSelector``, ``labels.Selector``),
shared by every rule that selects pods or objects by labels: pod affinity, topology spreading, disruption
budgets, volume and capacity selectors.

An unset selector is ``NOTHING`` (it matches no set); ``{}`` is ``EVERYTHING``. Requirements are kept sorted,
so equal selectors are equal values (usable as cache keys).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from dralloc.api.meta import LabelSelector

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


def compile_selector(raw: Mapping[str, Any] | None) -> Selector:
    """``LabelSelectorAsSelector`` over a label selector as JSON (camelCase keys); SelectorError when refused."""
    if raw is None:
        return NOTHING
    match_labels = raw.get("matchLabels") or {}
    expressions = raw.get("matchExpressions") or []
    if not match_labels and not expressions:
        return EVERYTHING
    reqs = [Requirement(str(k), "In", frozenset((str(v),))) for k, v in match_labels.items()]
    for expr in expressions:
        key = str(expr.get("key") or "")
        op = str(expr.get("operator") or "")
        values = frozenset(str(v) for v in expr.get("values") or ())
        if op in ("In", "NotIn"):
            if not values:
                raise SelectorError("for 'in', 'notin' operators, values set can't be empty")
        elif op in ("Exists", "DoesNotExist"):
            if values:
                raise SelectorError("values set must be empty for exists and does not exist")
        else:
            raise SelectorError(f'"{op}" is not a valid label selector operator')
        reqs.append(Requirement(key, op, values))
    return EVERYTHING.add(tuple(reqs))


def from_model(selector: LabelSelector | None) -> Selector:
    """``compile_selector`` of the typed model; a refused selector selects nothing."""
    if selector is None:
        return NOTHING
    raw = {"matchLabels": selector.match_labels or {},
           "matchExpressions": [{"key": e.key, "operator": e.operator, "values": e.values or []}
                                for e in selector.match_expressions or ()]}
    try:
        return compile_selector(raw)
    except SelectorError:
        return NOTHING
