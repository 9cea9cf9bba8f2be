"""Toleration matching (``v1.Toleration.ToleratesTaint``), shared by TaintToleration and NodeUnschedulable."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from dralloc.api.core_v1 import Taint, Toleration


def tolerates(t: Toleration, taint: Taint) -> bool:
    """Effect empty or equal, key empty or equal, then Exists matches any value and Equal (or "") needs
    equal values. The alpha Gt/Lt operators are off by default and match nothing."""
    if t.effect and t.effect != taint.effect:
        return False
    if t.key and t.key != taint.key:
        return False
    op = t.operator or "Equal"
    if op == "Exists":
        return True
    if op == "Equal":
        return (t.value or "") == (taint.value or "")
    return False


def tolerated(taint: Taint, tolerations: Iterable[Toleration]) -> bool:
    return any(tolerates(t, taint) for t in tolerations)


def first_untolerated(taints: Iterable[Taint], tolerations: list[Toleration],
                      applies: Callable[[Taint], bool]) -> Taint | None:
    for taint in taints:
        if applies(taint) and not tolerated(taint, tolerations):
            return taint
    return None
