"""Label selectors as apimachinery evaluates them (``metav1.LabelSelectorAsSelector``, ``labels.Selector``),
shared by every rule that selects pods or objects by labels: pod affinity, topology spreading, disruption
budgets, volume and capacity selectors.

An unset selector is ``NOTHING`` (it matches no set); ``{}`` is ``EVERYTHING``. Requirements are kept sorted,
so equal selectors are equal values (usable as cache keys).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

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


def compile_selector(selector: LabelSelector | None) -> Selector:
    """``LabelSelectorAsSelector``: an unset selector selects nothing, an empty one everything; SelectorError
    when a requirement is refused."""
    if selector is None:
        return NOTHING
    match_labels = selector.match_labels or {}
    expressions = selector.match_expressions or []
    if not match_labels and not expressions:
        return EVERYTHING
    reqs = [Requirement(k, "In", frozenset((v,))) for k, v in match_labels.items()]
    for expr in expressions:
        op = expr.operator
        values = frozenset(expr.values or ())
        if op in ("In", "NotIn"):
            if not values:
                raise SelectorError("for 'in', 'notin' operators, values set can't be empty")
        elif op in ("Exists", "DoesNotExist"):
            if values:
                raise SelectorError("values set must be empty for exists and does not exist")
        else:
            raise SelectorError(f'"{op}" is not a valid label selector operator')
        reqs.append(Requirement(expr.key, op, values))
    return EVERYTHING.add(tuple(reqs))


def from_model(selector: LabelSelector | None) -> Selector:
    """``compile_selector``, where a refused selector selects nothing."""
    try:
        return compile_selector(selector)
    except SelectorError:
        return NOTHING
