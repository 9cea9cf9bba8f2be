"""cel-go's lists extension (ext/lists.go, version 3): lists.range, slice, flatten, distinct, sort (and
sortBy's keys) and reverse."""

from __future__ import annotations

from typing import Any

from dralloc.cel.errors import CELError
from dralloc.cel.library.registry import function, member, want
from dralloc.cel.syntax import UInt
from dralloc.cel.timevalues import Duration, Timestamp
from dralloc.cel.values import equals


@function("lists.range", "list")
def _range(n: Any) -> list[int]:
    want("lists.range", type(n) is int, n)
    return list(range(max(n, 0)))


@member("slice", "list")
def _slice(items: Any, start: Any, end: Any) -> list[Any]:
    want("slice", type(items) in (list, tuple) and type(start) is int and type(end) is int, items, start, end)
    if start < 0 or end < 0:
        raise CELError(f"cannot slice({start}, {end}), negative indexes not supported")
    if start > end:
        raise CELError(f"cannot slice({start}, {end}), start index must be less than or equal to end index")
    if end > len(items):
        raise CELError(f"cannot slice({start}, {end}), list is length {len(items)}")
    return list(items[start:end])


@member("flatten", "list")
def _flatten(items: Any, depth: Any = 1) -> list[Any]:
    want("flatten", type(items) in (list, tuple) and type(depth) is int, items)
    if depth < 0:
        raise CELError("level must be non-negative")
    out: list[Any] = []
    for x in items:
        if type(x) in (list, tuple) and depth > 0:
            out.extend(_flatten(x, depth - 1))
        else:
            out.append(x)
    return out


@member("distinct", "list")
def _distinct(items: Any) -> list[Any]:
    want("distinct", type(items) in (list, tuple), items)
    out: list[Any] = []
    for x in items:
        if not any(equals(x, y) for y in out):
            out.append(x)
    return out


# The values that implement cel-go's traits.Comparer. Kubernetes' Quantity and Semver do not: they have
# compareTo()/isLessThan() functions but no Compare method, so the list functions cannot order them.
COMPARERS = (int, UInt, float, str, bytes, bool, Duration, Timestamp)


def sort_key_check(items: Any, fn: str) -> None:
    if not items:
        return
    first = type(items[0])
    if first not in COMPARERS:
        raise CELError("list elements must be comparable")  # cel-go: the first element is no Comparer
    if len(items) == 1:
        return  # sort.Slice compares nothing
    for x in items:
        if type(x) is not first:
            raise CELError("list elements must have the same type")


@member("sort", "list")
def _sort(items: Any) -> list[Any]:
    want("sort", type(items) in (list, tuple), items)
    sort_key_check(items, "sort")
    return sorted(items)


@member("reverse", "list")
def _reverse(items: Any) -> list[Any]:
    want("reverse", type(items) in (list, tuple), items)
    return list(reversed(items))
