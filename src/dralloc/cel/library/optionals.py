"""cel-go's optional library: optional.of, optional.none, optional.ofNonZeroValue, hasValue, value,
orValue, or, a list's first() and last(), optional.unwrap and unwrapOpt."""

from __future__ import annotations

from typing import Any

from dralloc.cel.errors import CELError
from dralloc.cel.library.registry import GLOBALS, MEMBERS, RESULT_TYPES, function, member, want
from dralloc.cel.syntax import UInt
from dralloc.cel.values import NONE, Optional


def _unwrap(items: Any) -> list[Any]:
    """The values of the present optionals of a list."""
    want("optional.unwrap", type(items) in (list, tuple) and all(type(o) is Optional for o in items), items)
    return [o.value for o in items if o.present]


GLOBALS["optional.unwrap"] = _unwrap
MEMBERS["unwrapOpt"] = _unwrap
RESULT_TYPES["optional.unwrap"] = RESULT_TYPES["unwrapOpt"] = "list"


@member("first", "optional_type")
def _first(items: Any) -> Optional:
    want("first", type(items) in (list, tuple), items)
    return Optional(items[0], True) if items else NONE


@member("last", "optional_type")
def _last(items: Any) -> Optional:
    want("last", type(items) in (list, tuple), items)
    return Optional(items[-1], True) if items else NONE


@function("optional.of", "optional_type")
def _opt_of(v: Any) -> Optional:
    return Optional(v, True)


@function("optional.none", "optional_type")
def _opt_none() -> Optional:
    return NONE


_ZERO = {bool: False, int: 0, UInt: 0, float: 0.0, str: "", bytes: b""}


@function("optional.ofNonZeroValue", "optional_type")
def _opt_of_non_zero(v: Any) -> Optional:
    if v is None:
        return NONE
    t = type(v)
    if t in _ZERO and v == _ZERO[t] and (t is not bool or v is False):
        return NONE
    if (t in (list, tuple) or isinstance(v, dict)) and not v:
        return NONE
    return Optional(v, True)


@member("hasValue", "bool")
def _has_value(o: Any) -> bool:
    want("hasValue", type(o) is Optional, o)
    return o.present


@member("value")
def _opt_value(o: Any) -> Any:
    want("value", type(o) is Optional, o)
    if not o.present:
        raise CELError("optional.none() dereference")
    return o.value


@member("orValue")
def _or_value(o: Any, default: Any) -> Any:
    want("orValue", type(o) is Optional, o, default)
    return o.value if o.present else default


@member("or", "optional_type")
def _or(o: Any, other: Any) -> Any:
    want("or", type(o) is Optional and type(other) is Optional, o, other)
    return o if o.present else other
