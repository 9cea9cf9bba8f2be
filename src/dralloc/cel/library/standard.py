"""CEL's standard library (cel-go common/stdlib): type conversions, size, the string predicates,
matches, durations, timestamps and their getters, dyn and type."""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any

from dralloc.cel.errors import CELError
from dralloc.cel.library.patterns import PATTERNS, regex
from dralloc.cel.library.registry import GLOBALS, MEMBERS, RESULT_TYPES, function, member, want
from dralloc.cel.syntax import UInt
from dralloc.cel.timevalues import (
    NANOS,
    Duration,
    Timestamp,
    duration_getter,
    parse_duration,
    parse_timestamp,
    timestamp_getter,
    zone,
)
from dralloc.cel.values import INT64_MAX, UINT64_MAX, check_int, format_double, no_overload, type_of


@function("duration", "google.protobuf.Duration")
def _to_duration(v: Any) -> Duration:
    if type(v) is Duration:
        return v
    want("duration", type(v) is str, v)
    return parse_duration(v)


@function("timestamp", "google.protobuf.Timestamp")
def _to_timestamp(v: Any) -> Timestamp:
    t = type(v)
    if t is Timestamp:
        return v
    if t is str:
        return parse_timestamp(v)
    want("timestamp", t is int, v)
    return Timestamp(v * NANOS)


def _time_getter(name: str) -> Callable[..., int]:
    def get(v: Any, tz: Any = None) -> int:
        if type(v) is Timestamp:
            return timestamp_getter(name, v, zone(tz)) if tz is not None else timestamp_getter(name, v)
        if type(v) is Duration and tz is None and name in ("getHours", "getMinutes", "getSeconds",
                                                            "getMilliseconds"):
            return duration_getter(name, v)
        raise no_overload(name, v) if tz is None else no_overload(name, v, tz)

    get.__name__ = name
    return get


for _getter in ("getDate", "getDayOfMonth", "getDayOfWeek", "getDayOfYear", "getFullYear", "getHours",
                "getMilliseconds", "getMinutes", "getMonth", "getSeconds"):
    MEMBERS[_getter] = _time_getter(_getter)
    RESULT_TYPES[_getter] = "int"


def _size(v: Any) -> int:
    t = type(v)
    if t is str:
        return len(v)
    if t is bytes or t is list or t is tuple or isinstance(v, dict):  # dicts include the device's domain maps
        return len(v)
    raise no_overload("size", v)


GLOBALS["size"] = _size
MEMBERS["size"] = _size
RESULT_TYPES["size"] = "int"


@member("contains", "bool")
def _contains(s: Any, sub: Any) -> bool:
    want("contains", type(s) is str and type(sub) is str, s, sub)
    return sub in s


@member("startsWith", "bool")
def _starts_with(s: Any, prefix: Any) -> bool:
    want("startsWith", type(s) is str and type(prefix) is str, s, prefix)
    return s.startswith(prefix)


@member("endsWith", "bool")
def _ends_with(s: Any, suffix: Any) -> bool:
    want("endsWith", type(s) is str and type(suffix) is str, s, suffix)
    return s.endswith(suffix)


def _matches(s: Any, pattern: Any) -> bool:
    want("matches", type(s) is str and type(pattern) in PATTERNS, s, pattern)
    return regex(pattern).search(s) is not None


GLOBALS["matches"] = _matches
MEMBERS["matches"] = _matches
RESULT_TYPES["matches"] = "bool"


_TWO_TO_63 = 9223372036854775808.0


@function("int", "int")
def _to_int(v: Any) -> int:
    t = type(v)
    if t is int:
        return v
    if t is UInt:
        if v > INT64_MAX:
            raise CELError("integer overflow")
        return int(v)
    if t is float:
        # cel-go's doubleToInt64Checked: overflow at or beyond ±2^63 (the double nearest to maxInt)
        if math.isnan(v) or math.isinf(v) or not (-_TWO_TO_63 < v < _TWO_TO_63):
            raise CELError("integer overflow")
        return int(v)
    if t is Duration:
        return v.nanos
    if t is Timestamp:
        return v.nanos // NANOS
    if t is str:
        try:
            return check_int(int(v, 10)) if v.strip() == v and v else _bad_int(v)
        except ValueError:
            raise CELError("type conversion error from 'string' to 'int'") from None
    raise no_overload("int", v)


def _bad_int(v: str) -> int:
    raise ValueError(v)


@function("uint", "uint")
def _to_uint(v: Any) -> UInt:
    t = type(v)
    if t is UInt:
        return v
    if t is int:
        if v < 0:
            raise CELError("unsigned integer overflow")
        return UInt(v)
    if t is float:
        if math.isnan(v) or not (0 <= v < 1.8446744073709552e19):
            raise CELError("unsigned integer overflow")
        return UInt(int(v))
    if t is str:
        if v and v.isdigit() and v.isascii():
            n = int(v)
            if n <= UINT64_MAX:
                return UInt(n)
        raise CELError("type conversion error from 'string' to 'uint'")
    raise no_overload("uint", v)


_FLOAT_RE = re.compile(r"[+-]?(?:(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|[Ii]nf(?:inity)?|NaN)")


@function("double", "double")
def _to_double(v: Any) -> float:
    t = type(v)
    if t is float:
        return v
    if t is int or t is UInt:
        return float(v)
    if t is str:
        if _FLOAT_RE.fullmatch(v):
            return float(v)
        raise CELError("type conversion error from 'string' to 'double'")
    raise no_overload("double", v)


@function("string", "string")
def to_string(v: Any) -> str:
    t = type(v)
    if t is str:
        return v
    if t is bool:
        return "true" if v else "false"
    if t is int or t is UInt:
        return str(int(v))
    if t is float:
        return format_double(v)
    if t is bytes:
        try:
            return v.decode("utf-8")
        except UnicodeDecodeError:
            raise CELError("invalid UTF-8 in bytes, cannot convert to string") from None
    if t is Duration or t is Timestamp:
        return str(v)
    if getattr(v, "cel_type", None) in ("net.IP", "net.CIDR"):
        return str(v)
    # a Semver or Quantity reaching string() through dyn (a version attribute) matches no overload
    raise no_overload("string", v)


@function("bytes", "bytes")
def _to_bytes(v: Any) -> bytes:
    if type(v) is bytes:
        return v
    if type(v) is str:
        return v.encode("utf-8")
    raise no_overload("bytes", v)


_BOOL_STRINGS = {"1": True, "t": True, "T": True, "true": True, "TRUE": True, "True": True,
                 "0": False, "f": False, "F": False, "false": False, "FALSE": False, "False": False}


@function("bool", "bool")
def _to_bool(v: Any) -> bool:
    if type(v) is bool:
        return v
    if type(v) is str:
        if v in _BOOL_STRINGS:
            return _BOOL_STRINGS[v]
        raise CELError("type conversion error from 'string' to 'bool'")
    raise no_overload("bool", v)


GLOBALS["dyn"] = lambda v: v
RESULT_TYPES["dyn"] = "dyn"
GLOBALS["type"] = type_of
RESULT_TYPES["type"] = "type"
