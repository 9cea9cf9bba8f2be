"""cel-go's sets extension (ext/sets.go): sets.contains, sets.equivalent, sets.intersects."""

from __future__ import annotations

from typing import Any

from dralloc.cel.library.registry import function, want
from dralloc.cel.values import equals


def _lists(fn: str, a: Any, b: Any) -> None:
    want(fn, type(a) in (list, tuple) and type(b) in (list, tuple), a, b)


@function("sets.contains", "bool")
def _sets_contains(a: Any, b: Any) -> bool:
    _lists("sets.contains", a, b)
    return all(any(equals(x, y) for y in a) for x in b)


@function("sets.equivalent", "bool")
def _sets_equivalent(a: Any, b: Any) -> bool:
    return _sets_contains(a, b) and _sets_contains(b, a)


@function("sets.intersects", "bool")
def _sets_intersects(a: Any, b: Any) -> bool:
    _lists("sets.intersects", a, b)
    return any(equals(x, y) for x in a for y in b)
