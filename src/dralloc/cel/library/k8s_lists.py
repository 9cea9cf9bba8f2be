"""The Kubernetes lists library (library/lists.go): isSorted, sum, min, max, indexOf and lastIndexOf on
lists, and DRA's includes() for list attributes."""

from __future__ import annotations

from typing import Any

from dralloc.cel.errors import CELError
from dralloc.cel.library.lists import COMPARERS
from dralloc.cel.library.registry import member, want
from dralloc.cel.syntax import UInt
from dralloc.cel.timevalues import Duration
from dralloc.cel.values import check_int, check_uint, compare, equals

MAX_LIST_ATTRIBUTE_VALUES = 48  # ResourceSliceMaxAttributeValuesPerDevice

# The Kubernetes lists library declares isSorted/min/max for lists of each comparable type; a dyn list is
# dispatched on its first element's type (none matches: "no such overload: isSorted(list)"). The function
# then walks the list with each element's Compare: a later element that is no Comparer is the bare error
# "no such overload"; a comparison that errs (two types that do not order) is ignored.


def _ordered_list(fn: str, items: Any) -> None:
    want(fn, type(items) in (list, tuple) and (not items or type(items[0]) in COMPARERS), items)


def _comparer(x: Any) -> None:
    if type(x) not in COMPARERS:
        raise CELError("no such overload")


def _order(a: Any, b: Any) -> int | None:
    """cel-go's ``a.Compare(b)``: -1, 0 or 1, None where it is an error."""
    try:
        r = compare(a, b, "_<_")
    except CELError:
        return None
    return None if r == 2 else r


@member("isSorted", "bool")
def _is_sorted(items: Any) -> bool:
    _ordered_list("isSorted", items)
    prev = None
    for i, x in enumerate(items):
        _comparer(x)
        if i and _order(prev, x) == 1:
            return False
        prev = x
    return True


@member("sum")
def _sum(items: Any) -> Any:
    # dispatched on the first element's type (list(int), list(uint), list(double), list(duration)); an
    # element of another type fails the running sum's Add with the bare "no such overload"
    want("sum", type(items) in (list, tuple) and (not items or type(items[0]) in (int, UInt, float, Duration)),
          items)
    if not items:
        return 0
    kind = type(items[0])
    total = items[0]
    for x in items[1:]:
        if type(x) is not kind:
            raise CELError("no such overload")
        if kind is int:
            total = check_int(total + x)
        elif kind is UInt:
            total = check_uint(int(total) + int(x))
        else:
            total = total + x
    return total


@member("min")
def _min(items: Any) -> Any:
    _ordered_list("min", items)
    return _extreme("min", items, 1)


@member("max")
def _max(items: Any) -> Any:
    _ordered_list("max", items)
    return _extreme("max", items, -1)


def _extreme(fn: str, items: Any, replace_when: int) -> Any:
    """min (the best compares 1 to a later element) or max (-1); the first of equals is kept."""
    best = None
    for i, x in enumerate(items):
        _comparer(x)
        if i == 0 or _order(best, x) == replace_when:
            best = x
    if not items:
        raise CELError(f"{fn} called on empty list")
    return best


def list_index_of(items: Any, x: Any) -> int:
    for i, y in enumerate(items):
        if equals(y, x):
            return i
    return -1


def list_last_index_of(items: Any, x: Any) -> int:
    for i in range(len(items) - 1, -1, -1):
        if equals(items[i], x):
            return i
    return -1


# --- DRA includes() for (list) attributes ---------------------------------------------------------------


@member("includes", "bool")
def _includes(attr: Any, x: Any) -> bool:
    if type(attr) in (list, tuple):
        if len(attr) > MAX_LIST_ATTRIBUTE_VALUES:
            raise CELError(f"'includes' function cannot be applied to lists longer than {MAX_LIST_ATTRIBUTE_VALUES} values")
        return any(equals(y, x) for y in attr)  # each item.Equal(x), as upstream
    return equals(attr, x)
