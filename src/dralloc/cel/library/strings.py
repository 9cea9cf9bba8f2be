"""cel-go's strings extension (ext/strings.go), version 2 as Kubernetes enables it: charAt, indexOf,
lastIndexOf, lowerAscii, upperAscii, replace, split, substring, trim, join, strings.quote and format."""

from __future__ import annotations

import math
from typing import Any

from dralloc.api.quantity import Quantity
from dralloc.api.semver import Semver
from dralloc.cel.errors import CELError
from dralloc.cel.library.k8s_lists import list_index_of, list_last_index_of
from dralloc.cel.library.registry import function, member, want
from dralloc.cel.library.standard import to_string
from dralloc.cel.syntax import UInt
from dralloc.cel.values import CelType, format_double, type_name


def _str_args(fn: str, s: Any, *args: Any) -> None:
    want(fn, type(s) is str, s, *args)


@member("charAt", "string")
def _char_at(s: Any, i: Any) -> str:
    want("charAt", type(s) is str and type(i) is int, s, i)
    if i < 0 or i > len(s):
        raise CELError(f"index out of range: {i}")
    return s[i:i + 1]


@member("indexOf", "int")
def _index_of(s: Any, sub: Any, offset: Any = None) -> int:
    if type(s) in (list, tuple):  # k8s lists library
        return list_index_of(s, sub)
    want("indexOf", type(s) is str and type(sub) is str and (offset is None or type(offset) is int), s, sub)
    start = 0 if offset is None else offset
    if start < 0 or start > len(s):
        raise CELError(f"index out of range: {start}")
    return s.find(sub, start)


@member("lastIndexOf", "int")
def _last_index_of(s: Any, sub: Any, offset: Any = None) -> int:
    if type(s) in (list, tuple):
        return list_last_index_of(s, sub)
    want("lastIndexOf", type(s) is str and type(sub) is str and (offset is None or type(offset) is int), s, sub)
    if offset is None:
        return s.rfind(sub)
    if offset < 0 or offset > len(s):
        raise CELError(f"index out of range: {offset}")
    return s.rfind(sub, 0, offset + len(sub))


@member("lowerAscii", "string")
def _lower_ascii(s: Any) -> str:
    want("lowerAscii", type(s) is str, s)
    return "".join(c.lower() if "A" <= c <= "Z" else c for c in s)


@member("upperAscii", "string")
def _upper_ascii(s: Any) -> str:
    want("upperAscii", type(s) is str, s)
    return "".join(c.upper() if "a" <= c <= "z" else c for c in s)


@member("replace", "string")
def _replace(s: Any, old: Any, new: Any, n: Any = None) -> str:
    want("replace", type(s) is str and type(old) is str and type(new) is str, s, old, new)
    if n is None or n < 0:
        return s.replace(old, new)
    want("replace", type(n) is int, s, old, new, n)
    return s.replace(old, new, n)


@member("split", "list")
def _split(s: Any, sep: Any, n: Any = None) -> list[str]:
    want("split", type(s) is str and type(sep) is str, s, sep)
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


@member("substring", "string")
def _substring(s: Any, start: Any, end: Any = None) -> str:
    want("substring", type(s) is str and type(start) is int and (end is None or type(end) is int), s, start)
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


@member("trim", "string")
def _trim(s: Any) -> str:
    want("trim", type(s) is str, s)
    return s.strip(_TRIM)


@member("join", "string")
def _join(items: Any, sep: Any = "") -> str:
    want("join", type(items) in (list, tuple) and type(sep) is str, items, sep)
    for item in items:
        want("join", type(item) is str, items, sep)
    return sep.join(items)


@function("strings.quote", "string")
def _quote(s: Any) -> str:
    want("strings.quote", type(s) is str, s)
    out = ['"']
    for ch in s:
        out.append({"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\v": "\\v",
                    "\\": "\\\\", '"': '\\"'}.get(ch, ch))
    out.append('"')
    return "".join(out)


@member("format", "string")
def _format(fmt: Any, args: Any) -> str:
    want("format", type(fmt) is str and type(args) in (list, tuple), fmt, args)
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
    return to_string(v)
