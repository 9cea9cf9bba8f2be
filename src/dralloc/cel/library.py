"""The functions of the Kubernetes DRA CEL environment.

Standard library (size, contains, startsWith, endsWith, matches, conversions), cel-go extensions that
Kubernetes enables (strings v2, sets, lists v3, optionals) and the Kubernetes libraries (quantity, semver,
regex, lists, IP/CIDR, URL, format) plus DRA's ``includes()``. Each function takes evaluated argument
values and raises :class:`CELError` for a wrong type (``no such overload``) or a failure.

``GLOBALS`` maps a (possibly qualified) global function name to its implementation; ``MEMBERS`` maps a member
function name to an implementation taking the receiver first. ``RESULT_TYPES`` gives static result types
for the checker ("dyn" when unknown).
"""

from __future__ import annotations

import ipaddress
import math
import re
import urllib.parse
from collections.abc import Callable
from typing import Any

import re2

from dralloc.api.quantity import Quantity
from dralloc.api.semver import Semver
from dralloc.cel import kquantity
from dralloc.cel.errors import CELError
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
from dralloc.cel.values import (
    INT64_MAX,
    INT64_MIN,
    NONE,
    UINT64_MAX,
    CelType,
    Optional,
    check_int,
    check_uint,
    compare,
    equals,
    format_double,
    no_overload,
    type_name,
    type_of,
)

GLOBALS: dict[str, Callable[..., Any]] = {}
MEMBERS: dict[str, Callable[..., Any]] = {}
RESULT_TYPES: dict[str, str] = {}

MAX_LIST_ATTRIBUTE_VALUES = 48  # ResourceSliceMaxAttributeValuesPerDevice


def _global(name: str, result: str = "dyn") -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    def deco(fn: Callable[..., Any]) -> Callable[..., Any]:
        GLOBALS[name] = fn
        RESULT_TYPES.setdefault(name, result)
        return fn

    return deco


def _member(name: str, result: str = "dyn") -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    def deco(fn: Callable[..., Any]) -> Callable[..., Any]:
        MEMBERS[name] = fn
        RESULT_TYPES.setdefault(name, result)
        return fn

    return deco


def _want(fn: str, cond: bool, *args: Any) -> None:
    if not cond:
        raise no_overload(fn, *args)


# --- regular expressions: RE2, as Go's regexp ---------------------------------------------------------
# google-re2 runs RE2 itself: time linear in the input whatever the pattern, as Go's regexp. Python's re
# backtracks, and a selector such as '^(a+)+$' over a long attribute would stall the allocator for minutes.

_RE2_OPTIONS = re2.Options()
_RE2_OPTIONS.log_errors = False  # a bad pattern is the caller's error (a 422), not a line on stderr
# RE2's parse errors in Go's words (regexp/syntax ErrorCode texts), keyed by RE2's
_GO_REGEX_ERRORS = {"missing )": "missing closing )", "missing ]": "missing closing ]",
                    "invalid repetition size": "invalid repeat count",
                    "trailing \\": "trailing backslash at end of expression",
                    "invalid perl operator": "invalid or unsupported Perl syntax",
                    "no argument for repetition operator": "missing argument to repetition operator",
                    "bad repetition operator": "invalid nested repetition operator",
                    "invalid named capture group": "invalid named capture",
                    "pattern too large - compile failed": "expression too large",
                    "pattern too large - reverse compile failed": "expression too large"}


def _re2_unsupported(pattern: str) -> str | None:
    """What RE2 (Go's regexp) refuses that Python's re accepts: look-arounds, atomic groups, conditionals,
    backreferences and ``\\Z``. Returns Go's error text, or None."""
    i, n, in_class = 0, len(pattern), False
    while i < n:
        c = pattern[i]
        if c == "\\" and i + 1 < n:
            nxt = pattern[i + 1]
            if nxt in "123456789Z" and not in_class:
                return f"invalid escape sequence: `\\{nxt}`"
            i += 2
            continue
        if in_class:
            in_class = c != "]"
        elif c == "[":
            in_class = True
            if pattern[i + 1:i + 2] == "]" or pattern[i + 1:i + 3] == "^]":
                i += 2 if pattern[i + 1] == "]" else 3  # a leading ] is a literal member of the class
                continue
        elif c == "(" and pattern[i + 1:i + 2] == "?":
            rest = pattern[i + 2:i + 4]
            if rest[:1] in ("=", "!", ">", "(") or rest in ("<=", "<!"):
                return f"invalid or unsupported Perl syntax: `{pattern[i:i + 3]}`"
        i += 1
    return None


class ConstantPattern(str):
    """A pattern written as a literal, compiled once when its program is planned (as cel-go's regex
    optimisation does): the program keeps it; a pattern computed while evaluating is compiled each time."""

    __slots__ = ("compiled",)
    compiled: Any


def constant_pattern(pattern: str) -> ConstantPattern:
    """``pattern`` with its compiled RE2 program; CELError with Go's text when RE2 refuses it."""
    constant = ConstantPattern(pattern)
    constant.compiled = regex(pattern)
    return constant


def regex(pattern: str) -> Any:
    """The compiled RE2 pattern (``search``, ``finditer``); CELError with Go's text when RE2 refuses it."""
    if type(pattern) is ConstantPattern:
        return pattern.compiled
    unsupported = _re2_unsupported(pattern)
    if unsupported is not None:
        raise CELError(f"error parsing regexp: {unsupported}")
    try:
        return re2.compile(pattern, _RE2_OPTIONS)
    except re2.error as exc:
        raise CELError(f"error parsing regexp: {_go_regex_error(exc)}") from None


_PATTERNS = (str, ConstantPattern)  # a pattern's types: computed or written as a literal


def _go_regex_error(exc: Exception) -> str:
    """RE2's "<what>: <where>" as Go's "<what>: `<where>`"."""
    raw = exc.args[0] if exc.args else ""
    text = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else str(raw)
    what, sep, where = text.partition(": ")
    return f"{_GO_REGEX_ERRORS.get(what, what)}: `{where}`" if sep else _GO_REGEX_ERRORS.get(text, text)


# --- standard library -------------------------------------------------------------------------------


@_global("duration", "google.protobuf.Duration")
def _to_duration(v: Any) -> Duration:
    if type(v) is Duration:
        return v
    _want("duration", type(v) is str, v)
    return parse_duration(v)


@_global("timestamp", "google.protobuf.Timestamp")
def _to_timestamp(v: Any) -> Timestamp:
    t = type(v)
    if t is Timestamp:
        return v
    if t is str:
        return parse_timestamp(v)
    _want("timestamp", t is int, v)
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


@_member("contains", "bool")
def _contains(s: Any, sub: Any) -> bool:
    _want("contains", type(s) is str and type(sub) is str, s, sub)
    return sub in s


@_member("startsWith", "bool")
def _starts_with(s: Any, prefix: Any) -> bool:
    _want("startsWith", type(s) is str and type(prefix) is str, s, prefix)
    return s.startswith(prefix)


@_member("endsWith", "bool")
def _ends_with(s: Any, suffix: Any) -> bool:
    _want("endsWith", type(s) is str and type(suffix) is str, s, suffix)
    return s.endswith(suffix)


def _matches(s: Any, pattern: Any) -> bool:
    _want("matches", type(s) is str and type(pattern) in _PATTERNS, s, pattern)
    return regex(pattern).search(s) is not None


GLOBALS["matches"] = _matches
MEMBERS["matches"] = _matches
RESULT_TYPES["matches"] = "bool"


_TWO_TO_63 = 9223372036854775808.0


@_global("int", "int")
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


@_global("uint", "uint")
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


@_global("double", "double")
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


@_global("string", "string")
def _to_string(v: Any) -> str:
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
    if isinstance(v, (IPValue, CIDRValue)):
        return str(v)
    # a Semver or Quantity reaching string() through dyn (a version attribute) matches no overload
    raise no_overload("string", v)


@_global("bytes", "bytes")
def _to_bytes(v: Any) -> bytes:
    if type(v) is bytes:
        return v
    if type(v) is str:
        return v.encode("utf-8")
    raise no_overload("bytes", v)


_BOOL_STRINGS = {"1": True, "t": True, "T": True, "true": True, "TRUE": True, "True": True,
                 "0": False, "f": False, "F": False, "false": False, "FALSE": False, "False": False}


@_global("bool", "bool")
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


# --- strings extension (v2) -------------------------------------------------------------------------


def _str_args(fn: str, s: Any, *args: Any) -> None:
    _want(fn, type(s) is str, s, *args)


@_member("charAt", "string")
def _char_at(s: Any, i: Any) -> str:
    _want("charAt", type(s) is str and type(i) is int, s, i)
    if i < 0 or i > len(s):
        raise CELError(f"index out of range: {i}")
    return s[i:i + 1]


@_member("indexOf", "int")
def _index_of(s: Any, sub: Any, offset: Any = None) -> int:
    if type(s) in (list, tuple):  # k8s lists library
        return _list_index_of(s, sub)
    _want("indexOf", type(s) is str and type(sub) is str and (offset is None or type(offset) is int), s, sub)
    start = 0 if offset is None else offset
    if start < 0 or start > len(s):
        raise CELError(f"index out of range: {start}")
    return s.find(sub, start)


@_member("lastIndexOf", "int")
def _last_index_of(s: Any, sub: Any, offset: Any = None) -> int:
    if type(s) in (list, tuple):
        return _list_last_index_of(s, sub)
    _want("lastIndexOf", type(s) is str and type(sub) is str and (offset is None or type(offset) is int), s, sub)
    if offset is None:
        return s.rfind(sub)
    if offset < 0 or offset > len(s):
        raise CELError(f"index out of range: {offset}")
    return s.rfind(sub, 0, offset + len(sub))


@_member("lowerAscii", "string")
def _lower_ascii(s: Any) -> str:
    _want("lowerAscii", type(s) is str, s)
    return "".join(c.lower() if "A" <= c <= "Z" else c for c in s)


@_member("upperAscii", "string")
def _upper_ascii(s: Any) -> str:
    _want("upperAscii", type(s) is str, s)
    return "".join(c.upper() if "a" <= c <= "z" else c for c in s)


@_member("replace", "string")
def _replace(s: Any, old: Any, new: Any, n: Any = None) -> str:
    _want("replace", type(s) is str and type(old) is str and type(new) is str, s, old, new)
    if n is None or n < 0:
        return s.replace(old, new)
    _want("replace", type(n) is int, s, old, new, n)
    return s.replace(old, new, n)


@_member("split", "list")
def _split(s: Any, sep: Any, n: Any = None) -> list[str]:
    _want("split", type(s) is str and type(sep) is str, s, sep)
    if n is None or n < 0:
        return list(s) if sep == "" else s.split(sep)
    if n == 0:
        return []
    if n == 1:
        return [s]
    if sep == "":
        chars = list(s)
        return chars[: n - 1] + ["".join(chars[n - 1:])] if len(chars) > n - 1 else chars
    return s.split(sep, n - 1)


@_member("substring", "string")
def _substring(s: Any, start: Any, end: Any = None) -> str:
    _want("substring", type(s) is str and type(start) is int and (end is None or type(end) is int), s, start)
    stop = len(s) if end is None else end
    if start < 0 or start > len(s):
        raise CELError(f"index out of range: {start}")
    if stop < 0 or stop > len(s):
        raise CELError(f"index out of range: {stop}")
    if start > stop:
        raise CELError(f"invalid substring range. start: {start}, end: {stop}")
    return s[start:stop]


_TRIM = "".join(chr(c) for c in (0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x20, 0x85, 0xA0, 0x1680, 0x2000, 0x2001, 0x2002,
                                 0x2003, 0x2004, 0x2005, 0x2006, 0x2007, 0x2008, 0x2009, 0x200A, 0x2028, 0x2029,
                                 0x202F, 0x205F, 0x3000))


@_member("trim", "string")
def _trim(s: Any) -> str:
    _want("trim", type(s) is str, s)
    return s.strip(_TRIM)


@_member("join", "string")
def _join(items: Any, sep: Any = "") -> str:
    _want("join", type(items) in (list, tuple) and type(sep) is str, items, sep)
    for item in items:
        _want("join", type(item) is str, items, sep)
    return sep.join(items)


@_global("strings.quote", "string")
def _quote(s: Any) -> str:
    _want("strings.quote", type(s) is str, s)
    out = ['"']
    for ch in s:
        out.append({"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\v": "\\v",
                    "\\": "\\\\", '"': '\\"'}.get(ch, ch))
    out.append('"')
    return "".join(out)


@_member("format", "string")
def _format(fmt: Any, args: Any) -> str:
    _want("format", type(fmt) is str and type(args) in (list, tuple), fmt, args)
    out: list[str] = []
    i, argi, n = 0, 0, len(fmt)
    while i < n:
        ch = fmt[i]
        if ch != "%":
            out.append(ch)
            i += 1
            continue
        i += 1
        if i >= n:
            raise CELError("unexpected end of format string")
        if fmt[i] == "%":
            out.append("%")
            i += 1
            continue
        precision = None
        if fmt[i] == ".":
            j = i + 1
            while j < n and fmt[j].isdigit():
                j += 1
            precision = int(fmt[i + 1:j] or "0")
            i = j
        if i >= n:
            raise CELError("unexpected end of format string")
        verb = fmt[i]
        i += 1
        if argi >= len(args):
            raise CELError(f"index {argi} out of range")
        out.append(_format_one(verb, args[argi], precision))
        argi += 1
    return "".join(out)


def _format_one(verb: str, v: Any, precision: int | None) -> str:
    t = type(v)
    if verb == "s":
        return _format_string(v)
    if verb == "d":
        if t in (int, UInt):
            return str(int(v))
        if t is float and (math.isnan(v) or math.isinf(v)):
            return format_double(v).replace("+Inf", "Infinity").replace("-Inf", "-Infinity")
        raise CELError(f"error during formatting: decimal clause can only be used on integers, was given {type_name(v)}")
    if verb in "fe":
        if t not in (int, UInt, float):
            raise CELError(f"error during formatting: fixed-point clause can only be used on doubles, was given {type_name(v)}")
        f = float(v)
        if math.isnan(f):
            return "NaN"
        if math.isinf(f):
            return "Infinity" if f > 0 else "-Infinity"
        p = 6 if precision is None else precision
        if verb == "f":
            return f"{f:.{p}f}"
        s = f"{f:.{p}e}"
        return s
    if verb == "b":
        if t in (int, UInt):
            return format(int(v), "b")
        if t is bool:
            return "1" if v else "0"
        raise CELError(f"error during formatting: only integers and bools can be formatted as binary, was given {type_name(v)}")
    if verb in "xX":
        if t in (int, UInt):
            s = format(int(v), "x")
        elif t is str:
            s = v.encode("utf-8").hex()
        elif t is bytes:
            s = v.hex()
        else:
            raise CELError(f"error during formatting: only integers, byte buffers, and strings can be formatted as hex, was given {type_name(v)}")
        return s.upper() if verb == "X" else s
    if verb == "o":
        if t in (int, UInt):
            return format(int(v), "o")
        raise CELError(f"error during formatting: octal clause can only be used on integers, was given {type_name(v)}")
    raise CELError(f'could not parse formatting clause: unrecognized formatting clause "{verb}"')


def _format_string(v: Any) -> str:
    t = type(v)
    if t is str:
        return v
    if t is list or t is tuple:
        return "[" + ", ".join(_format_string(x) if type(x) is not str else x for x in v) + "]"
    if isinstance(v, dict):
        items = sorted(((_format_string(k), _format_string(x)) for k, x in v.items()))
        return "{" + ", ".join(f"{k}: {x}" for k, x in items) + "}"
    if t is bytes:
        return v.decode("utf-8", errors="replace")
    if v is None:
        return "null"
    if t is CelType:
        return v.name
    if t is float:
        if math.isnan(v):
            return "NaN"
        if math.isinf(v):
            return "Infinity" if v > 0 else "-Infinity"
    if isinstance(v, (Quantity, Semver)):
        return str(v)
    return _to_string(v)


# --- sets extension ---------------------------------------------------------------------------------


def _lists(fn: str, a: Any, b: Any) -> None:
    _want(fn, type(a) in (list, tuple) and type(b) in (list, tuple), a, b)


@_global("sets.contains", "bool")
def _sets_contains(a: Any, b: Any) -> bool:
    _lists("sets.contains", a, b)
    return all(any(equals(x, y) for y in a) for x in b)


@_global("sets.equivalent", "bool")
def _sets_equivalent(a: Any, b: Any) -> bool:
    return _sets_contains(a, b) and _sets_contains(b, a)


@_global("sets.intersects", "bool")
def _sets_intersects(a: Any, b: Any) -> bool:
    _lists("sets.intersects", a, b)
    return any(equals(x, y) for x in a for y in b)


# --- lists extension (v3; no reverse) and Kubernetes lists library ------------------------------------


@_global("lists.range", "list")
def _range(n: Any) -> list[int]:
    _want("lists.range", type(n) is int, n)
    return list(range(max(n, 0)))


@_member("slice", "list")
def _slice(items: Any, start: Any, end: Any) -> list[Any]:
    _want("slice", type(items) in (list, tuple) and type(start) is int and type(end) is int, items, start, end)
    if start < 0 or end < 0:
        raise CELError(f"cannot slice({start}, {end}), negative indexes not supported")
    if start > end:
        raise CELError(f"cannot slice({start}, {end}), start index must be less than or equal to end index")
    if end > len(items):
        raise CELError(f"cannot slice({start}, {end}), list is length {len(items)}")
    return list(items[start:end])


@_member("flatten", "list")
def _flatten(items: Any, depth: Any = 1) -> list[Any]:
    _want("flatten", type(items) in (list, tuple) and type(depth) is int, items)
    if depth < 0:
        raise CELError("level must be non-negative")
    out: list[Any] = []
    for x in items:
        if type(x) in (list, tuple) and depth > 0:
            out.extend(_flatten(x, depth - 1))
        else:
            out.append(x)
    return out


@_member("distinct", "list")
def _distinct(items: Any) -> list[Any]:
    _want("distinct", type(items) in (list, tuple), items)
    out: list[Any] = []
    for x in items:
        if not any(equals(x, y) for y in out):
            out.append(x)
    return out


# The values that implement cel-go's traits.Comparer. Kubernetes' Quantity and Semver do not: they have
# compareTo()/isLessThan() functions but no Compare method, so the list functions cannot order them.
COMPARERS = (int, UInt, float, str, bytes, bool, Duration, Timestamp)


def _sort_key_check(items: Any, fn: str) -> None:
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


@_member("sort", "list")
def _sort(items: Any) -> list[Any]:
    _want("sort", type(items) in (list, tuple), items)
    _sort_key_check(items, "sort")
    return sorted(items)


@_member("reverse", "list")
def _reverse(items: Any) -> list[Any]:
    _want("reverse", type(items) in (list, tuple), items)
    return list(reversed(items))


def _no_authorizer(name: str) -> Callable[..., Any]:
    # the authorization library's functions need an authorizer, which the DRA environment does not provide
    def call(*args: Any) -> Any:
        raise no_overload(name, *args)

    call.__name__ = name
    return call


for _authz in ("path", "group", "serviceAccount", "resource", "subresource", "namespace", "name", "check",
               "errored", "error", "allowed", "reason", "fieldSelector", "labelSelector"):
    MEMBERS.setdefault(_authz, _no_authorizer(_authz))


def _unwrap(items: Any) -> list[Any]:
    """The values of the present optionals of a list."""
    _want("optional.unwrap", type(items) in (list, tuple) and all(type(o) is Optional for o in items), items)
    return [o.value for o in items if o.present]


GLOBALS["optional.unwrap"] = _unwrap
MEMBERS["unwrapOpt"] = _unwrap
RESULT_TYPES["optional.unwrap"] = RESULT_TYPES["unwrapOpt"] = "list"


@_member("first", "optional_type")
def _first(items: Any) -> Optional:
    _want("first", type(items) in (list, tuple), items)
    return Optional(items[0], True) if items else NONE


@_member("last", "optional_type")
def _last(items: Any) -> Optional:
    _want("last", type(items) in (list, tuple), items)
    return Optional(items[-1], True) if items else NONE


# The Kubernetes lists library declares isSorted/min/max for lists of each comparable type; a dyn list is
# dispatched on its first element's type (none matches: "no such overload: isSorted(list)"). The function
# then walks the list with each element's Compare: a later element that is no Comparer is the bare error
# "no such overload"; a comparison that errs (two types that do not order) is ignored.


def _ordered_list(fn: str, items: Any) -> None:
    _want(fn, type(items) in (list, tuple) and (not items or type(items[0]) in COMPARERS), items)


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


@_member("isSorted", "bool")
def _is_sorted(items: Any) -> bool:
    _ordered_list("isSorted", items)
    prev = None
    for i, x in enumerate(items):
        _comparer(x)
        if i and _order(prev, x) == 1:
            return False
        prev = x
    return True


@_member("sum")
def _sum(items: Any) -> Any:
    # dispatched on the first element's type (list(int), list(uint), list(double), list(duration)); an
    # element of another type fails the running sum's Add with the bare "no such overload"
    _want("sum", type(items) in (list, tuple) and (not items or type(items[0]) in (int, UInt, float, Duration)),
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


@_member("min")
def _min(items: Any) -> Any:
    _ordered_list("min", items)
    return _extreme("min", items, 1)


@_member("max")
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


def _list_index_of(items: Any, x: Any) -> int:
    for i, y in enumerate(items):
        if equals(x, y):
            return i
    return -1


def _list_last_index_of(items: Any, x: Any) -> int:
    for i in range(len(items) - 1, -1, -1):
        if equals(x, items[i]):
            return i
    return -1


# --- DRA includes() for (list) attributes ---------------------------------------------------------------


@_member("includes", "bool")
def _includes(attr: Any, x: Any) -> bool:
    if type(attr) in (list, tuple):
        if len(attr) > MAX_LIST_ATTRIBUTE_VALUES:
            raise CELError(f"'includes' function cannot be applied to lists longer than {MAX_LIST_ATTRIBUTE_VALUES} values")
        return any(equals(x, y) for y in attr)
    return equals(attr, x)


# --- Kubernetes regex library -----------------------------------------------------------------------


@_member("find", "string")
def _find(s: Any, pattern: Any) -> str:
    _want("find", type(s) is str and type(pattern) in _PATTERNS, s, pattern)
    m = regex(pattern).search(s)
    return m.group(0) if m else ""


@_member("findAll", "list")
def _find_all(s: Any, pattern: Any, limit: Any = -1) -> list[str]:
    _want("findAll", type(s) is str and type(pattern) in _PATTERNS and type(limit) is int, s, pattern)
    if limit == 0:
        return []
    out = [m.group(0) for m in regex(pattern).finditer(s)]
    return out if limit < 0 else out[:limit]


# --- Kubernetes quantity library --------------------------------------------------------------------


@_global("quantity", "kubernetes.Quantity")
def _quantity(s: Any) -> Quantity:
    _want("quantity", type(s) is str, s)
    try:
        return kquantity.parse(s)
    except ValueError as exc:
        raise CELError(str(exc)) from None


@_global("isQuantity", "bool")
def _is_quantity(s: Any) -> bool:
    _want("isQuantity", type(s) is str, s)
    try:
        Quantity(s)
    except ValueError:
        return False
    return True


def _q(fn: str, q: Any, *args: Any) -> None:
    _want(fn, isinstance(q, Quantity), q, *args)


@_global("sign", "int")
def _sign(q: Any) -> int:
    _q("sign", q)
    return q.sign()


@_member("isInteger", "bool")
def _is_integer(q: Any) -> bool:
    _q("isInteger", q)
    return kquantity.as_int64(q) is not None


@_member("asInteger", "int")
def _as_integer(q: Any) -> int:
    _q("asInteger", q)
    v = kquantity.as_int64(q)
    if v is None:
        raise CELError("cannot convert value to integer")
    return v


@_member("asApproximateFloat", "double")
def _as_approximate_float(q: Any) -> float:
    _q("asApproximateFloat", q)
    return q.as_approximate_float()


def _quantity_operand(fn: str, q: Any, other: Any) -> Quantity:
    if isinstance(other, Quantity):
        return other
    if type(other) is int:
        return kquantity.from_int(other)
    raise no_overload(fn, q, other)


@_member("add", "kubernetes.Quantity")
def _add(q: Any, other: Any) -> Quantity:
    _q("add", q, other)
    return kquantity.add(q, _quantity_operand("add", q, other))


@_member("sub", "kubernetes.Quantity")
def _sub(q: Any, other: Any) -> Quantity:
    _q("sub", q, other)
    return kquantity.add(q, _quantity_operand("sub", q, other), negate_b=True)


@_member("isGreaterThan", "bool")
def _is_greater_than(a: Any, b: Any) -> bool:
    return _cmp("isGreaterThan", a, b) > 0


@_member("isLessThan", "bool")
def _is_less_than(a: Any, b: Any) -> bool:
    return _cmp("isLessThan", a, b) < 0


@_member("compareTo", "int")
def _compare_to(a: Any, b: Any) -> int:
    return _cmp("compareTo", a, b)


def _cmp(fn: str, a: Any, b: Any) -> int:
    if isinstance(a, Quantity) and isinstance(b, Quantity):
        return a.cmp(b)
    if type(a) is Semver and type(b) is Semver:
        return a.compare(b)
    raise no_overload(fn, a, b)


# --- Kubernetes semver library ----------------------------------------------------------------------


@_global("semver", "kubernetes.Semver")
def _semver(s: Any, normalize: Any = False) -> Semver:
    _want("semver", type(s) is str and type(normalize) is bool, s, normalize)
    try:
        return Semver.parse(s, normalize=normalize)
    except ValueError:
        raise CELError("invalid semver") from None


@_global("isSemver", "bool")
def _is_semver(s: Any, normalize: Any = False) -> bool:
    _want("isSemver", type(s) is str and type(normalize) is bool, s, normalize)
    try:
        Semver.parse(s, normalize=normalize)
    except ValueError:
        return False
    return True


@_member("major", "int")
def _major(v: Any) -> int:
    _want("major", type(v) is Semver, v)
    return v.major


@_member("minor", "int")
def _minor(v: Any) -> int:
    _want("minor", type(v) is Semver, v)
    return v.minor


@_member("patch", "int")
def _patch(v: Any) -> int:
    _want("patch", type(v) is Semver, v)
    return v.patch


# --- Kubernetes IP / CIDR libraries -----------------------------------------------------------------


class IPValue:
    cel_type = "net.IP"
    __slots__ = ("addr",)

    def __init__(self, addr: ipaddress.IPv4Address | ipaddress.IPv6Address) -> None:
        self.addr = addr

    def __eq__(self, other: object) -> bool:
        return isinstance(other, IPValue) and other.addr == self.addr

    def __hash__(self) -> int:
        return hash(self.addr)

    def __str__(self) -> str:
        return str(self.addr)


class CIDRValue:
    cel_type = "net.CIDR"
    __slots__ = ("net", "ip")

    def __init__(self, net: ipaddress.IPv4Network | ipaddress.IPv6Network, ip: Any) -> None:
        self.net = net
        self.ip = ip

    def __eq__(self, other: object) -> bool:
        return isinstance(other, CIDRValue) and other.net == self.net and other.ip == self.ip

    def __hash__(self) -> int:
        return hash(self.net)

    def __str__(self) -> str:
        return f"{self.ip}/{self.net.prefixlen}"


def _parse_ip(s: str) -> IPValue:
    if "%" in s:
        raise CELError("IP address with zone value is not allowed")
    try:
        addr = ipaddress.ip_address(s)
    except ValueError:
        raise CELError(f"IP Address {s!r} parse error during conversion from string") from None
    if isinstance(addr, ipaddress.IPv6Address) and addr.ipv4_mapped is not None and "." in s:
        raise CELError("IPv4-mapped IPv6 address is not allowed")
    return IPValue(addr)


@_global("ip", "net.IP")
def _ip(s: Any) -> IPValue:
    _want("ip", type(s) is str, s)
    return _parse_ip(s)


@_global("isIP", "bool")
def _is_ip(s: Any) -> bool:
    _want("isIP", type(s) is str, s)
    try:
        _parse_ip(s)
    except CELError:
        return False
    return True


@_global("ip.isCanonical", "bool")
def _ip_is_canonical(s: Any) -> bool:
    _want("ip.isCanonical", type(s) is str, s)
    return str(_parse_ip(s).addr) == s


def _ipv(fn: str, v: Any) -> Any:
    _want(fn, type(v) is IPValue, v)
    return v.addr


@_member("family", "int")
def _family(v: Any) -> int:
    return _ipv("family", v).version


@_member("isUnspecified", "bool")
def _is_unspecified(v: Any) -> bool:
    return _ipv("isUnspecified", v).is_unspecified


@_member("isLoopback", "bool")
def _is_loopback(v: Any) -> bool:
    return _ipv("isLoopback", v).is_loopback


@_member("isLinkLocalMulticast", "bool")
def _is_link_local_multicast(v: Any) -> bool:
    a = _ipv("isLinkLocalMulticast", v)
    if a.version == 4:
        return a in ipaddress.ip_network("224.0.0.0/24")
    return a in ipaddress.ip_network("ff02::/16")


@_member("isLinkLocalUnicast", "bool")
def _is_link_local_unicast(v: Any) -> bool:
    a = _ipv("isLinkLocalUnicast", v)
    return a.is_link_local and not a.is_multicast


@_member("isGlobalUnicast", "bool")
def _is_global_unicast(v: Any) -> bool:
    a = _ipv("isGlobalUnicast", v)
    if a.version == 4 and a == ipaddress.IPv4Address("255.255.255.255"):
        return False
    return not (a.is_unspecified or a.is_loopback or a.is_multicast or a.is_link_local)


def _parse_cidr(s: str) -> CIDRValue:
    if "/" not in s:
        raise CELError(f"network address parse error during conversion from string: {s!r}")
    addr, _, _prefix = s.partition("/")
    ip = _parse_ip(addr)
    try:
        net = ipaddress.ip_network(s, strict=False)
    except ValueError:
        raise CELError(f"network address parse error during conversion from string: {s!r}") from None
    return CIDRValue(net, ip.addr)


@_global("cidr", "net.CIDR")
def _cidr(s: Any) -> CIDRValue:
    _want("cidr", type(s) is str, s)
    return _parse_cidr(s)


@_global("isCIDR", "bool")
def _is_cidr(s: Any) -> bool:
    _want("isCIDR", type(s) is str, s)
    try:
        _parse_cidr(s)
    except CELError:
        return False
    return True


@_member("containsIP", "bool")
def _contains_ip(c: Any, ip: Any) -> bool:
    _want("containsIP", type(c) is CIDRValue, c, ip)
    addr = _parse_ip(ip).addr if type(ip) is str else (ip.addr if type(ip) is IPValue else None)
    if addr is None:
        raise no_overload("containsIP", c, ip)
    return addr.version == c.net.version and addr in c.net


@_member("containsCIDR", "bool")
def _contains_cidr(c: Any, other: Any) -> bool:
    _want("containsCIDR", type(c) is CIDRValue, c, other)
    o = _parse_cidr(other) if type(other) is str else other
    if type(o) is not CIDRValue:
        raise no_overload("containsCIDR", c, other)
    return o.net.version == c.net.version and o.net.subnet_of(c.net)


@_member("masked", "net.CIDR")
def _masked(c: Any) -> CIDRValue:
    _want("masked", type(c) is CIDRValue, c)
    return CIDRValue(c.net, c.net.network_address)


@_member("prefixLength", "int")
def _prefix_length(c: Any) -> int:
    _want("prefixLength", type(c) is CIDRValue, c)
    return c.net.prefixlen


def _cidr_ip(c: Any) -> IPValue:
    return IPValue(c.ip)


# --- Kubernetes URL library -------------------------------------------------------------------------


class URLValue:
    cel_type = "kubernetes.URL"
    __slots__ = ("parts", "text")

    def __init__(self, text: str) -> None:
        self.text = text
        self.parts = urllib.parse.urlsplit(text)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, URLValue) and other.text == self.text

    def __hash__(self) -> int:
        return hash(self.text)


def _parse_url(s: str) -> URLValue:
    try:
        u = URLValue(s)
    except ValueError:
        raise CELError(f"URL parse error during conversion from string: {s!r}") from None
    if not (u.parts.scheme or s.startswith("/")):
        raise CELError(f"URL parse error during conversion from string: {s!r}")
    return u


@_global("url", "kubernetes.URL")
def _url(s: Any) -> URLValue:
    _want("url", type(s) is str, s)
    return _parse_url(s)


@_global("isURL", "bool")
def _is_url(s: Any) -> bool:
    _want("isURL", type(s) is str, s)
    try:
        _parse_url(s)
    except CELError:
        return False
    return True


def _urlv(fn: str, u: Any) -> URLValue:
    _want(fn, type(u) is URLValue, u)
    return u


MEMBERS["getScheme"] = lambda u: _urlv("getScheme", u).parts.scheme
MEMBERS["getHost"] = lambda u: _urlv("getHost", u).parts.netloc.rpartition("@")[2]
MEMBERS["getHostname"] = lambda u: (_urlv("getHostname", u).parts.hostname or "")
MEMBERS["getPort"] = lambda u: (str(_urlv("getPort", u).parts.port) if _urlv("getPort", u).parts.port else "")
MEMBERS["getEscapedPath"] = lambda u: _urlv("getEscapedPath", u).parts.path
for _n in ("getScheme", "getHost", "getHostname", "getPort", "getEscapedPath"):
    RESULT_TYPES[_n] = "string"


@_member("getQuery", "map")
def _get_query(u: Any) -> dict[str, list[str]]:
    return {k: v for k, v in urllib.parse.parse_qs(_urlv("getQuery", u).parts.query, keep_blank_values=True).items()}


# --- Kubernetes format library ----------------------------------------------------------------------


class FormatValue:
    cel_type = "kubernetes.NamedFormat"
    __slots__ = ("name", "check")

    def __init__(self, name: str, check: Callable[[str], list[str]]) -> None:
        self.name = name
        self.check = check


def _regex_format(name: str, pattern: str, max_len: int, what: str) -> FormatValue:
    compiled = re.compile(pattern)

    def check(s: str) -> list[str]:
        errs = []
        if len(s) > max_len:
            errs.append(f"must be no more than {max_len} characters")
        if not compiled.fullmatch(s):
            errs.append(what)
        return errs

    return FormatValue(name, check)


_DNS_LABEL = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"
FORMATS = {
    "dns1123Label": _regex_format("dns1123Label", _DNS_LABEL, 63,
                                  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character"),
    "dns1123Subdomain": _regex_format("dns1123Subdomain", rf"{_DNS_LABEL}(\.{_DNS_LABEL})*", 253,
                                      "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character"),
    "dns1035Label": _regex_format("dns1035Label", r"[a-z]([-a-z0-9]*[a-z0-9])?", 63,
                                  "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character"),
    "qualifiedName": _regex_format("qualifiedName", r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]", 63,
                                   "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character"),
    "labelValue": _regex_format("labelValue", r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?", 63,
                                "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character"),
    "uri": FormatValue("uri", lambda s: [] if _is_url(s) else ["invalid URI"]),
    "uuid": _regex_format("uuid", r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", 36, "invalid UUID"),
    "byte": FormatValue("byte", lambda s: []),
    "date": _regex_format("date", r"\d{4}-\d{2}-\d{2}", 10, "invalid date"),
    "datetime": _regex_format("datetime", r"\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})", 64, "invalid datetime"),
}


def _prefix_format(name: str, base: FormatValue) -> FormatValue:
    """A format for a name prefix (generateName): a trailing dash is allowed, as apimachinery's
    maskTrailingDash does before validating."""

    def check(s: str) -> list[str]:
        return base.check(s[:-1] + "a" if len(s) > 1 and s.endswith("-") else s)

    return FormatValue(name, check)


for _base in ("dns1123Label", "dns1123Subdomain", "dns1035Label"):
    FORMATS[f"{_base}Prefix"] = _prefix_format(f"{_base}Prefix", FORMATS[_base])

for _name, _fmt in FORMATS.items():
    GLOBALS[f"format.{_name}"] = (lambda f: (lambda: f))(_fmt)
    RESULT_TYPES[f"format.{_name}"] = "kubernetes.NamedFormat"


@_global("format.named", "optional_type")
def _format_named(name: Any) -> Optional:
    _want("format.named", type(name) is str, name)
    f = FORMATS.get(name)
    return Optional(f, True) if f else NONE


@_member("validate", "optional_type")
def _validate(f: Any, s: Any) -> Optional:
    _want("validate", type(f) is FormatValue and type(s) is str, f, s)
    errs = f.check(s)
    return Optional(errs, True) if errs else NONE


# --- optionals --------------------------------------------------------------------------------------


@_global("optional.of", "optional_type")
def _opt_of(v: Any) -> Optional:
    return Optional(v, True)


@_global("optional.none", "optional_type")
def _opt_none() -> Optional:
    return NONE


_ZERO = {bool: False, int: 0, UInt: 0, float: 0.0, str: "", bytes: b""}


@_global("optional.ofNonZeroValue", "optional_type")
def _opt_of_non_zero(v: Any) -> Optional:
    if v is None:
        return NONE
    t = type(v)
    if t in _ZERO and v == _ZERO[t] and (t is not bool or v is False):
        return NONE
    if (t in (list, tuple) or isinstance(v, dict)) and not v:
        return NONE
    return Optional(v, True)


@_member("hasValue", "bool")
def _has_value(o: Any) -> bool:
    _want("hasValue", type(o) is Optional, o)
    return o.present


@_member("value")
def _opt_value(o: Any) -> Any:
    _want("value", type(o) is Optional, o)
    if not o.present:
        raise CELError("optional.none() dereference")
    return o.value


@_member("orValue")
def _or_value(o: Any, default: Any) -> Any:
    _want("orValue", type(o) is Optional, o, default)
    return o.value if o.present else default


@_member("or", "optional_type")
def _or(o: Any, other: Any) -> Any:
    _want("or", type(o) is Optional and type(other) is Optional, o, other)
    return o if o.present else other


# --- ip(cidr) / string(url) overloads folded into the generic ones ------------------------------------

_plain_ip = GLOBALS["ip"]


def _ip_any(v: Any) -> IPValue:
    if type(v) is CIDRValue:
        return _cidr_ip(v)
    return _plain_ip(v)


GLOBALS["ip"] = _ip_any
MEMBERS["ip"] = lambda c: _cidr_ip(c) if type(c) is CIDRValue else (_ for _ in ()).throw(no_overload("ip", c))

__all__ = ["GLOBALS", "MEMBERS", "RESULT_TYPES", "regex", "INT64_MIN", "INT64_MAX"]
