"""The messages with JSON forms of their own: Time and MicroTime (RFC 3339 text), IntOrString (an int or a
string), RawExtension and FieldsV1 (the JSON their raw bytes hold), each read from its message's bytes, and
the caches of the times read (bodies repeat times), which the single pass looks up in place."""

from __future__ import annotations

from datetime import date, timedelta
from functools import lru_cache
from typing import Any

import msgspec

from dralloc.api.parsing import too_deep_to_decode
from dralloc.server.protobuf.wire import ProtobufError, _scalar, _text, _varint, _wire2, scan

# the seconds of 0001-01-01T00:00:00Z and 9999-12-31T23:59:59Z: the times RFC 3339 text can hold
_FIRST_SECOND, _LAST_SECOND = -62_135_596_800, 253_402_300_799


def _varint_fields(raw: bytes, owner: str, first: tuple[str, str], second: tuple[str, str]) -> tuple[int, int]:
    """Fields 1 and 2 of a small message of two integers (a time's seconds and nanos, an IntOrString's type
    and int): (name, int kind) each; 0 when absent, the last one when repeated."""
    values = [0, 0]
    for number, wire, value in scan(raw):
        if number in (1, 2):
            name, kind = (first, second)[number - 1]
            if wire != 0 or not isinstance(value, int):
                raise ProtobufError(f"wrong wire type {wire} for {owner} {name}")
            values[number - 1] = _scalar(kind, value)
    return values[0], values[1]


_EPOCH = date(1970, 1, 1)


@lru_cache(maxsize=1024)
def _day(days: int) -> str:
    """The date ``days`` after 1970-01-01, as RFC 3339 writes it (a year of four digits)."""
    return (_EPOCH + timedelta(days=days)).isoformat()


def _time(raw: bytes, micro: bool) -> str | None:
    """A Time or MicroTime ({1: seconds, 2: nanos}) as Go's JSON writes it: RFC 3339 in UTC, in whole seconds
    (a Time's nanoseconds are dropped on decoding) or with six fraction digits (truncated). Go writes a zero
    time as an empty message, which is JSON's null (None)."""
    if not raw:
        return None
    seconds = nanos = at = 0
    if raw[0] == 0x08:  # the usual forms, {1: seconds} or {1: seconds, 2: nanos} as Go writes them, read directly
        seconds, at = _varint(raw, 1)
        if at + 1 < len(raw) and raw[at] == 0x10:
            nanos, at = _varint(raw, at + 1)
            nanos = ((nanos & 0xFFFF_FFFF) ^ 0x8000_0000) - 0x8000_0000
        seconds = (seconds ^ 1 << 63) - (1 << 63)
    if at != len(raw):  # any other form, by its fields
        seconds, nanos = _varint_fields(raw, "a time's", ("seconds", "int64"), ("nanos", "int32"))
    micros = 0
    if micro:  # toward zero, then a negative part borrows from the seconds (Go's time.Unix)
        micros = nanos // 1000 if nanos >= 0 else -(-nanos // 1000)
        seconds, micros = seconds + micros // 1_000_000, micros % 1_000_000
    if not _FIRST_SECOND <= seconds <= _LAST_SECOND:
        raise ProtobufError(f"a time of {seconds} seconds is out of range")
    days, second = divmod(seconds, 86400)
    hour, second = divmod(second, 3600)
    minute, second = divmod(second, 60)
    text = f"{_day(days)}T{hour:02d}:{minute:02d}:{second:02d}"
    return text + (f".{micros:06d}Z" if micro else "Z")


# The JSON text of the times read, by their bytes (bodies repeat times: an object's creation, its managed fields';
# objects created in the same second): Time's and MicroTime's, each emptied when it reaches _TIMES_KEPT
_TIMES: dict[bytes, str] = {}
_MICROTIMES: dict[bytes, str] = {}
_TIMES_KEPT = 4096


def _remembered_time(raw: bytes, micro: bool) -> str | None:
    """:func:`_time`, kept in _TIMES or _MICROTIMES."""
    text = _time(raw, micro)
    if text is not None:
        cache = _MICROTIMES if micro else _TIMES
        if len(cache) >= _TIMES_KEPT:
            cache.clear()
        cache[raw] = text
    return text


def _int_or_string(raw: bytes) -> int | str:
    """An IntOrString ({1: type, 2: intVal, 3: strVal}): its int (type 0) or its string (type 1)."""
    kind, int_value = _varint_fields(raw, "an IntOrString's", ("type", "int64"), ("intVal", "int32"))
    text = ""
    for number, wire, value in scan(raw):
        if number == 3:
            text = _text(_wire2(wire, value, "IntOrString.strVal"))
    if kind not in (0, 1):
        raise ProtobufError(f"an IntOrString of type {kind} (0: an int, 1: a string)")
    return text if kind == 1 else int_value


def _raw_json(raw: bytes, kind: str) -> Any:
    """A RawExtension or FieldsV1 ({1: raw}): the JSON its raw bytes hold (none: JSON's null, None)."""
    data = b""
    size, at = _varint(raw, 1) if raw[:1] == b"\x0a" else (-1, 0)
    if at + size == len(raw):  # {1: raw} alone, as Go writes it: read directly
        data = raw[at:]
    else:
        for number, wire, value in scan(raw):
            if number == 1:
                data = _wire2(wire, value, f"{kind}.raw")
    if not data:
        return None
    if too_deep_to_decode(data):  # (before the decoder recurses down it: see parsing.SAFE_BRACKETS)
        raise ProtobufError(f"the JSON of a {kind} is nested too deeply")
    try:
        return msgspec.json.decode(data)
    except (msgspec.DecodeError, ValueError) as exc:  # (UnicodeDecodeError is a ValueError)
        raise ProtobufError(f"the raw bytes of a {kind} are not JSON: {exc}") from None
    except RecursionError:
        raise ProtobufError(f"the JSON of a {kind} is nested too deeply") from None
