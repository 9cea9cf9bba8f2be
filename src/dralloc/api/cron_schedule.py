"""CronJob schedules as the CronJob controller reads them: robfig/cron v3's ParseStandard (five fields —
minute, hour, day of month, month, day of week — or a descriptor: ``@yearly``/``@annually``, ``@monthly``,
``@weekly``, ``@daily``/``@midnight``, ``@hourly``, ``@every <duration>``; an optional ``TZ=``/``CRON_TZ=``
prefix) with its error texts, and its Next: the first matching second after a time, in the schedule's time
zone. A day matches when its day of month and its day of week both match if either field is ``*`` or ``?``,
else when either does (as cron does); ``*/n`` and ranges are not ``*``.

A small parser of our own rather than a library: croniter and its kin differ from robfig in those day rules,
in the descriptors and in the errors the controller's events quote."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, tzinfo
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

STAR = 1 << 63  # starBit: the field was * or ?


@dataclass(frozen=True)
class Bounds:
    low: int
    high: int
    names: dict[str, int] | None = None


MINUTES = Bounds(0, 59)
HOURS = Bounds(0, 23)
DAYS_OF_MONTH = Bounds(1, 31)
MONTHS = Bounds(1, 12, {m: i + 1 for i, m in enumerate(
    ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"))})
DAYS_OF_WEEK = Bounds(0, 6, {d: i for i, d in enumerate(("sun", "mon", "tue", "wed", "thu", "fri", "sat"))})


class ScheduleError(ValueError):
    """A schedule robfig/cron refuses; the text is its error's."""


def load_location(name: str) -> tzinfo:
    """time.LoadLocation: "" and "UTC" are UTC, "Local" the process's zone (kube-controller-manager's here:
    UTC); otherwise the IANA zone (ScheduleError: Go's text)."""
    if name in ("", "UTC", "Local"):
        return UTC
    try:
        if name.startswith("/") or ".." in name:
            raise ValueError
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        raise ScheduleError(f"unknown time zone {name}") from None


def _bits(low: int, high: int, step: int) -> int:
    return sum(1 << i for i in range(low, high + 1, step))


def _every(bounds: Bounds) -> int:
    return _bits(bounds.low, bounds.high, 1) | STAR


def _go_atoi(text: str) -> int:
    """strconv.Atoi, with its error text."""
    if not re.fullmatch(r"[+-]?[0-9]+", text):
        raise ScheduleError(f'failed to parse int from {text}: strconv.Atoi: parsing "{text}": invalid syntax')
    value = int(text)
    if not -(2**63) <= value < 2**63:
        raise ScheduleError(f'failed to parse int from {text}: strconv.Atoi: parsing "{text}": value out of range')
    return value


def _number(text: str) -> int:
    """mustParseInt."""
    value = _go_atoi(text)
    if value < 0:
        raise ScheduleError(f"negative number ({value}) not allowed: {text}")
    return value


def _int_or_name(text: str, names: dict[str, int] | None) -> int:
    if names is not None and text.lower() in names:
        return names[text.lower()]
    return _number(text)


def _range(expr: str, bounds: Bounds) -> int:
    """getRange: ``*``, ``?``, ``n``, ``a-b``, each with an optional ``/step`` (``n/step`` runs to the end)."""
    range_and_step = expr.split("/")
    low_and_high = range_and_step[0].split("-")
    extra = 0
    if low_and_high[0] in ("*", "?"):
        start, end, extra = bounds.low, bounds.high, STAR
    else:
        start = _int_or_name(low_and_high[0], bounds.names)
        if len(low_and_high) == 1:
            end = start
        elif len(low_and_high) == 2:
            end = _int_or_name(low_and_high[1], bounds.names)
        else:
            raise ScheduleError(f"too many hyphens: {expr}")
    if len(range_and_step) == 1:
        step = 1
    elif len(range_and_step) == 2:
        step = _number(range_and_step[1])
        if len(low_and_high) == 1:
            end = bounds.high
        if step > 1:
            extra = 0
    else:
        raise ScheduleError(f"too many slashes: {expr}")
    if start < bounds.low:
        raise ScheduleError(f"beginning of range ({start}) below minimum ({bounds.low}): {expr}")
    if end > bounds.high:
        raise ScheduleError(f"end of range ({end}) above maximum ({bounds.high}): {expr}")
    if start > end:
        raise ScheduleError(f"beginning of range ({start}) beyond end of range ({end}): {expr}")
    if step == 0:
        raise ScheduleError(f"step of range should be a positive number: {expr}")
    return _bits(start, end, step) | extra


def _field(text: str, bounds: Bounds) -> int:
    bits = 0
    for expr in (part for part in text.split(",") if part):
        bits |= _range(expr, bounds)
    return bits


_DURATION_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "μs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}
_DURATION_PART = re.compile(r"([0-9]*(?:\.[0-9]*)?)([^0-9.]*)")


def go_duration(text: str) -> float:
    """time.ParseDuration, in seconds (its error texts)."""
    original, sign = text, 1.0
    if text[:1] in ("-", "+"):
        sign, text = (-1.0 if text[0] == "-" else 1.0), text[1:]
    if text == "0":
        return 0.0
    if not text:
        raise ScheduleError(f'time: invalid duration "{original}"')
    total, position = 0.0, 0
    while position < len(text):
        match = _DURATION_PART.match(text, position)
        assert match is not None  # (the pattern matches the empty string)
        number, unit = match.groups()
        if number in ("", "."):
            raise ScheduleError(f'time: invalid duration "{original}"')
        if not unit:
            raise ScheduleError(f'time: missing unit in duration "{original}"')
        if unit not in _DURATION_UNITS:
            raise ScheduleError(f'time: unknown unit "{unit}" in duration "{original}"')
        total += float(number) * _DURATION_UNITS[unit]
        position = match.end()
    return sign * total


@dataclass(frozen=True)
class Schedule:
    """A parsed schedule: the fields' bits (SpecSchedule) or, for ``@every``, the delay in seconds."""

    minute: int = 0
    hour: int = 0
    day_of_month: int = 0
    month: int = 0
    day_of_week: int = 0
    location: tzinfo = UTC
    every: float | None = None  # ConstantDelaySchedule

    def next(self, after: datetime) -> datetime | None:
        """The first time after ``after`` (aware) the schedule fires; None past five years (robfig's zero)."""
        if self.every is not None:
            return after.replace(microsecond=0) + timedelta(seconds=self.every)
        return _next(self, after)


_DESCRIPTORS = {
    "@yearly": ("0", "0", "1", "1", "*"), "@annually": ("0", "0", "1", "1", "*"),
    "@monthly": ("0", "0", "1", "*", "*"), "@weekly": ("0", "0", "*", "*", "0"),
    "@daily": ("0", "0", "*", "*", "*"), "@midnight": ("0", "0", "*", "*", "*"), "@hourly": ("0", "*", "*", "*", "*"),
}


def parse(spec: str) -> Schedule:
    """cron.ParseStandard."""
    if not spec:
        raise ScheduleError("empty spec string")
    location: tzinfo = UTC  # (kube-controller-manager's local time: UTC)
    if spec.startswith(("TZ=", "CRON_TZ=")):
        space, equals = spec.find(" "), spec.find("=")
        name = spec[equals + 1:space] if space >= 0 else spec[equals + 1:-1]
        try:
            location = load_location(name)
        except ScheduleError as exc:
            raise ScheduleError(f"provided bad location {name}: {exc}") from None
        spec = spec[space:].strip() if space >= 0 else ""
    if spec.startswith("@"):
        if spec.startswith("@every "):
            try:
                delay = go_duration(spec[len("@every "):])
            except ScheduleError as exc:
                raise ScheduleError(f"failed to parse duration {spec}: {exc}") from None
            delay = max(float(int(delay)), 1.0)  # whole seconds, at least one
            return Schedule(location=location, every=delay)
        if spec not in _DESCRIPTORS:
            raise ScheduleError(f"unrecognized descriptor: {spec}")
        fields = list(_DESCRIPTORS[spec])
    else:
        fields = spec.split()
        if len(fields) != 5:
            raise ScheduleError(f"expected exactly 5 fields, found {len(fields)}: [{' '.join(fields)}]")
    return Schedule(_field(fields[0], MINUTES), _field(fields[1], HOURS), _field(fields[2], DAYS_OF_MONTH),
                    _field(fields[3], MONTHS), _field(fields[4], DAYS_OF_WEEK), location)


# --- Next -------------------------------------------------------------------------------------------


def _wall(year: int, month: int, day: int, hour: int, minute: int, location: tzinfo) -> datetime:
    """time.Date: a wall time in the zone, normalised (overflowing fields carry; a time a DST gap skips
    lands on a real instant)."""
    year += (month - 1) // 12
    month = (month - 1) % 12 + 1
    naive = datetime(year, month, 1) + timedelta(days=day - 1, hours=hour, minutes=minute)
    return naive.replace(tzinfo=location).astimezone(UTC).astimezone(location)


def _plus(t: datetime, seconds: int) -> datetime:
    """t.Add: absolute time, whatever the wall clock does."""
    return (t.astimezone(UTC) + timedelta(seconds=seconds)).astimezone(t.tzinfo)


def _day_matches(s: Schedule, t: datetime) -> bool:
    dom = bool(1 << t.day & s.day_of_month)
    dow = bool(1 << (t.isoweekday() % 7) & s.day_of_week)
    if s.day_of_month & STAR or s.day_of_week & STAR:
        return dom and dow
    return dom or dow


def _next(s: Schedule, after: datetime) -> datetime | None:
    """SpecSchedule.Next: field by field from the month down, going back to the month when one wraps."""
    loc = s.location
    original = after.tzinfo
    t = _plus(after.astimezone(loc).replace(microsecond=0), 1)
    added = False
    year_limit = t.year + 5
    while True:
        if t.year > year_limit:
            return None
        wrapped = False
        while not 1 << t.month & s.month:
            if not added:
                added = True
                t = _wall(t.year, t.month, 1, 0, 0, loc)
            t = _wall(t.year, t.month + 1, t.day, t.hour, t.minute, loc)
            if t.month == 1:
                wrapped = True
                break
        if wrapped:
            continue
        while not _day_matches(s, t):
            if not added:
                added = True
                t = _wall(t.year, t.month, t.day, 0, 0, loc)
            t = _wall(t.year, t.month, t.day + 1, t.hour, t.minute, loc)
            if t.hour != 0:  # midnight skipped by DST: back to the day's start
                t = _plus(t, (24 - t.hour) * 3600 if t.hour > 12 else -t.hour * 3600)
            if t.day == 1:
                wrapped = True
                break
        if wrapped:
            continue
        while not 1 << t.hour & s.hour:
            if not added:
                added = True
                t = _wall(t.year, t.month, t.day, t.hour, 0, loc)
            t = _plus(t, 3600)
            if t.hour == 0:
                wrapped = True
                break
        if wrapped:
            continue
        while not 1 << t.minute & s.minute:
            if not added:
                added = True
                t = t.replace(second=0)
            t = _plus(t, 60)
            if t.minute == 0:
                wrapped = True
                break
        if wrapped:
            continue
        if t.second != 0:  # (the seconds field of a standard schedule is 0: on to the next minute, again)
            added = True
            t = _plus(t, 60 - t.second)
            continue
        return t.astimezone(original)
