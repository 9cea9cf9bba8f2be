"""CEL ``duration`` and ``timestamp`` values and functions, as cel-go implements them.

A duration is a signed count of nanoseconds within int64 (Go's time.Duration), parsed from Go's duration
syntax (``"1h30m"``, ``"-1.5s"``, ``"300ms"``) and printed as seconds (``"5400s"``). A timestamp is a UTC
instant in nanoseconds between 0001-01-01 and 9999-12-31T23:59:59, parsed from RFC 3339 and printed in
RFC 3339 with as many fractional digits as needed. Getters take an optional time zone: an IANA name or a
``±HH:MM`` offset.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from dralloc.cel.errors import CELError

NANOS = 1_000_000_000
INT64_MIN, INT64_MAX = -(1 << 63), (1 << 63) - 1
MIN_UNIX, MAX_UNIX = -62135596800, 253402300799
_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)


class Duration:
    __slots__ = ("nanos",)
    cel_type = "google.protobuf.Duration"

    def __init__(self, nanos: int) -> None:
        if not INT64_MIN <= nanos <= INT64_MAX:
            raise CELError("integer overflow")
        self.nanos = nanos

    def __eq__(self, other: object) -> bool:
        return type(other) is Duration and other.nanos == self.nanos

    def __hash__(self) -> int:
        return hash(("duration", self.nanos))

    def __lt__(self, other: Duration) -> bool:
        return self.nanos < other.nanos

    def __gt__(self, other: Duration) -> bool:
        return self.nanos > other.nanos

    def __str__(self) -> str:
        return _seconds_text(self.nanos) + "s"

    def __repr__(self) -> str:
        return f'duration("{self}")'


class Timestamp:
    __slots__ = ("nanos",)
    cel_type = "google.protobuf.Timestamp"

    def __init__(self, nanos: int) -> None:
        if not MIN_UNIX * NANOS <= nanos <= MAX_UNIX * NANOS + NANOS - 1:
            raise CELError("timestamp overflow")
        self.nanos = nanos

    def __eq__(self, other: object) -> bool:
        return type(other) is Timestamp and other.nanos == self.nanos

    def __hash__(self) -> int:
        return hash(("timestamp", self.nanos))

    def __lt__(self, other: Timestamp) -> bool:
        return self.nanos < other.nanos

    def __gt__(self, other: Timestamp) -> bool:
        return self.nanos > other.nanos

    def datetime(self, tz: dt.tzinfo = dt.UTC) -> dt.datetime:
        seconds, _ = divmod(self.nanos, NANOS)
        return (_EPOCH + dt.timedelta(seconds=seconds)).astimezone(tz)

    def __str__(self) -> str:
        seconds, frac = divmod(self.nanos, NANOS)
        base = (_EPOCH + dt.timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%S")
        if frac:
            base += "." + f"{frac:09d}".rstrip("0")
        return base + "Z"

    def __repr__(self) -> str:
        return f'timestamp("{self}")'


def _seconds_text(nanos: int) -> str:
    # strconv.FormatFloat(seconds, 'f', -1, 64): the shortest decimal that reads back as the same float
    text = repr(nanos / NANOS)
    if "e" in text or "E" in text:
        text = f"{nanos / NANOS:f}".rstrip("0").rstrip(".")
    return text.removesuffix(".0")


_UNITS = {"ns": 1, "us": 1_000, "µs": 1_000, "μs": 1_000, "ms": 1_000_000, "s": NANOS, "m": 60 * NANOS,
          "h": 3600 * NANOS}
_PART = re.compile(r"([0-9]*(?:\.[0-9]*)?)(ns|us|µs|μs|ms|s|m|h)")


def parse_duration(text: str) -> Duration:
    """Go's time.ParseDuration."""
    bad = CELError("type conversion error from 'string' to 'google.protobuf.Duration'")
    s = text
    sign = 1
    if s[:1] in "+-" and s:
        sign = -1 if s[0] == "-" else 1
        s = s[1:]
    if s == "0":
        return Duration(0)
    if not s:
        raise bad
    total = 0
    pos = 0
    while pos < len(s):
        m = _PART.match(s, pos)
        if m is None or m.group(1) in ("", "."):
            raise bad
        number, unit = m.group(1), m.group(2)
        whole, _, frac = number.partition(".")
        scale = _UNITS[unit]
        total += int(whole or "0") * scale
        if frac:
            total += int(frac) * scale // 10 ** len(frac)
        pos = m.end()
    if total > (1 << 63) - (0 if sign < 0 else 1):
        raise bad
    return Duration(sign * total)


_RFC3339 = re.compile(r"(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?([Zz]|[+-]\d{2}:\d{2})")


def parse_timestamp(text: str) -> Timestamp:
    m = _RFC3339.fullmatch(text)
    if m is None:
        raise CELError("type conversion error from 'string' to 'google.protobuf.Timestamp'")
    y, mo, d, h, mi, sec = (int(g) for g in m.groups()[:6])
    frac = int((m.group(7) or "0").ljust(9, "0"))
    zone = m.group(8)
    offset = 0 if zone in ("Z", "z") else (1 if zone[0] == "+" else -1) * (int(zone[1:3]) * 3600 + int(zone[4:6]) * 60)
    try:
        base = dt.datetime(y, mo, d, h, mi, sec, tzinfo=dt.UTC)
    except ValueError:
        raise CELError("type conversion error from 'string' to 'google.protobuf.Timestamp'") from None
    seconds = int((base - _EPOCH).total_seconds()) - offset
    if not MIN_UNIX <= seconds <= MAX_UNIX:
        raise CELError("timestamp overflow")
    return Timestamp(seconds * NANOS + frac)


def zone(name: Any) -> dt.tzinfo:
    if type(name) is not str:
        raise CELError(f"no such overload: {name!r}")
    if ":" not in name:
        try:
            return ZoneInfo(name) if name not in ("UTC", "") else dt.UTC
        except (ZoneInfoNotFoundError, ValueError):
            raise CELError(f"unknown time zone {name}") from None
    hours, _, minutes = name.partition(":")
    try:
        h, mins = int(hours), int(minutes)
    except ValueError:
        raise CELError(f'strconv.Atoi: parsing "{hours}": invalid syntax') from None
    if not 0 <= mins <= 59:
        raise CELError(f"timezone offset minutes out of range [0, 59]: {name}")
    offset = h * 60 - mins if name.startswith("-") else h * 60 + mins
    return dt.timezone(dt.timedelta(minutes=offset))


def timestamp_getter(name: str, ts: Timestamp, tz: dt.tzinfo = dt.UTC) -> int:
    t = ts.datetime(tz)
    if name == "getFullYear":
        return t.year
    if name == "getMonth":
        return t.month - 1
    if name == "getDayOfYear":
        return t.timetuple().tm_yday - 1
    if name == "getDayOfMonth":
        return t.day - 1
    if name == "getDate":
        return t.day
    if name == "getDayOfWeek":
        return (t.weekday() + 1) % 7
    if name == "getHours":
        return t.hour
    if name == "getMinutes":
        return t.minute
    if name == "getSeconds":
        return t.second
    return (ts.nanos % NANOS) // 1_000_000  # getMilliseconds


def duration_getter(name: str, d: Duration) -> int:
    n = d.nanos
    unit = {"getHours": 3600 * NANOS, "getMinutes": 60 * NANOS, "getSeconds": NANOS,
            "getMilliseconds": 1_000_000}[name]
    q = abs(n) // unit
    return q if n >= 0 else -q
