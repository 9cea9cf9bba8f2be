"""CEL's arithmetic operators at runtime: int64 and uint64 overflow as errors, double, string, bytes and list
concatenation, durations and timestamps, and ``no such overload`` for anything else."""

from __future__ import annotations

import math
from typing import Any

from dralloc.cel.errors import CELError
from dralloc.cel.syntax import UInt
from dralloc.cel.timevalues import Duration, Timestamp
from dralloc.cel.values import INT64_MIN, UINT64_MAX, check_int, no_overload


def _add(x: Any, y: Any) -> Any:
    tx, ty = type(x), type(y)
    if tx is int and ty is int:
        return check_int(x + y)
    if tx is Duration and ty is Duration:
        return Duration(x.nanos + y.nanos)
    if tx is Timestamp and ty is Duration:
        return Timestamp(x.nanos + y.nanos)
    if tx is Duration and ty is Timestamp:
        return Timestamp(x.nanos + y.nanos)
    if tx is ty:
        if tx is UInt:
            r = int(x) + int(y)
            if r > UINT64_MAX:
                raise CELError("unsigned integer overflow")
            return UInt(r)
        if tx is float or tx is str or tx is bytes:
            return x + y
        if tx is list:
            return x + y
    if tx in (list, tuple) and ty in (list, tuple):
        return list(x) + list(y)
    raise no_overload("_+_", x, y)


def _sub(x: Any, y: Any) -> Any:
    tx, ty = type(x), type(y)
    if tx is int and ty is int:
        return check_int(x - y)
    if tx is Duration and ty is Duration:
        return Duration(x.nanos - y.nanos)
    if tx is Timestamp and ty is Duration:
        return Timestamp(x.nanos - y.nanos)
    if tx is Timestamp and ty is Timestamp:
        return Duration(x.nanos - y.nanos)
    if tx is ty:
        if tx is UInt:
            r = int(x) - int(y)
            if r < 0:
                raise CELError("unsigned integer overflow")
            return UInt(r)
        if tx is float:
            return x - y
    raise no_overload("_-_", x, y)


def _mul(x: Any, y: Any) -> Any:
    tx, ty = type(x), type(y)
    if tx is int and ty is int:
        return check_int(x * y)
    if tx is ty:
        if tx is UInt:
            r = int(x) * int(y)
            if r > UINT64_MAX:
                raise CELError("unsigned integer overflow")
            return UInt(r)
        if tx is float:
            return x * y
    raise no_overload("_*_", x, y)


def _div(x: Any, y: Any) -> Any:
    tx, ty = type(x), type(y)
    if tx is int and ty is int:
        if y == 0:
            raise CELError("division by zero")
        if x == INT64_MIN and y == -1:
            raise CELError("integer overflow")
        q = abs(x) // abs(y)
        return q if (x >= 0) == (y > 0) else -q
    if tx is ty:
        if tx is UInt:
            if y == 0:
                raise CELError("division by zero")
            return UInt(int(x) // int(y))
        if tx is float:
            if y == 0:
                if x == 0 or math.isnan(x):
                    return math.nan
                return math.copysign(math.inf, x) * math.copysign(1, y)
            return x / y
    raise no_overload("_/_", x, y)


def _mod(x: Any, y: Any) -> Any:
    tx, ty = type(x), type(y)
    if tx is int and ty is int:
        if y == 0:
            raise CELError("modulus by zero")
        if x == INT64_MIN and y == -1:
            raise CELError("integer overflow")
        r = abs(x) % abs(y)
        return r if x >= 0 else -r
    if tx is ty and tx is UInt:
        if y == 0:
            raise CELError("modulus by zero")
        return UInt(int(x) % int(y))
    raise no_overload("_%_", x, y)


OPERATORS = {"_+_": _add, "_-_": _sub, "_*_": _mul, "_/_": _div, "_%_": _mod}
