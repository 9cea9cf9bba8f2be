"""RFC 3339 times read as kube-apiserver reads them (``metav1.Time`` decodes with Go's
``time.Parse(time.RFC3339, s)``), with Go's error texts: a time a Go client could not decode back must be
refused when it is written, not stored."""

from __future__ import annotations

import calendar
import functools
from typing import Any

from dralloc.api import core_v1_fields

TIME = "@time"  # the field table's mark of a metav1.Time or MicroTime

LAYOUT = "2006-01-02T15:04:05Z07:00"
# the layout's elements in order: what Go names each in "cannot parse ... as ..."
_ELEMENTS = ("2006", "-", "01", "-", "02", "T", "15", ":", "04", ":", "05", "Z07:00")
# metav1.MicroTime: RFC3339Micro, whose fixed fraction Go's parser requires digit for digit
MICRO_LAYOUT = "2006-01-02T15:04:05.000000Z07:00"
FRACTION = ".000000"
_MICRO_ELEMENTS = (*_ELEMENTS[:-1], FRACTION, _ELEMENTS[-1])
_RANGES = {"01": ("month", 1, 12), "02": ("day", 1, 31), "15": ("hour", 0, 23), "04": ("minute", 0, 59),
           "05": ("second", 0, 59)}


def _quote(text: str) -> str:
    """Go's time package quoting: double quotes, with backslash escapes for quotes and control bytes."""
    out = []
    for ch in text:
        if ch in ('"', "\\"):
            out.append("\\" + ch)
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\x{ord(ch):02x}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def _number(rest: str, fixed: bool) -> tuple[int, str] | None:
    """Go's getnum: two digits, or one when not fixed."""
    if not rest[:1].isdigit() or not rest[:1].isascii():
        return None
    if not (rest[1:2].isdigit() and rest[1:2].isascii()):
        return None if fixed else (int(rest[0]), rest[1:])
    return int(rest[:2]), rest[2:]


def _days_in(month: int, year: int) -> int:
    if month == 2:
        return 29 if calendar.isleap(year) else 28
    return 30 if month in (4, 6, 9, 11) else 31


def parse_error(value: str, micro: bool = False) -> str | None:
    """Go's error for ``time.Parse(time.RFC3339, value)`` (``micro``: a MicroTime's
    ``time.Parse(RFC3339Micro, value)``, exactly six fraction digits), or None when it parses."""
    layout = MICRO_LAYOUT if micro else LAYOUT

    def cannot(rest: str, element: str) -> str:
        return f"parsing time {_quote(value)} as {_quote(layout)}: cannot parse {_quote(rest)} as {_quote(element)}"

    rest = value
    fields: dict[str, int] = {}
    for element in _MICRO_ELEMENTS if micro else _ELEMENTS:
        if element == "2006":
            digits = rest[:4]
            body = digits[1:] if digits[:1] in ("-", "+") else digits
            if len(digits) < 4 or not (body.isdigit() and body.isascii()):
                return cannot(rest, element)
            fields[element], rest = int(digits), rest[4:]
        elif element in _RANGES:
            got = _number(rest, fixed=element != "15")
            if got is None:
                return cannot(rest, element)
            number, after = got
            name, low, high = _RANGES[element]
            if not low <= number <= high:
                return f"parsing time {_quote(value)}: {name} out of range"
            fields[element], rest = number, after
            if element == "05" and not micro and rest[:1] in (".", ",") and rest[1:2].isdigit():
                end = 1
                while end < len(rest) and rest[end].isdigit() and rest[end].isascii():
                    end += 1
                rest = rest[end:]  # fractional seconds, which RFC3339's layout reads without naming them
        elif element == FRACTION:
            if len(rest) < len(FRACTION) or rest[0] not in ".,":
                return cannot(rest, element)
            digits = rest[1:len(FRACTION)]
            unsigned = digits[1:] if digits[:1] in ("+", "-") else digits
            if not (unsigned.isdigit() and unsigned.isascii()):  # (Go's atoi: a sign, then digits only)
                return cannot(rest, element)
            if digits[0] == "-" and int(unsigned):
                return f"parsing time {_quote(value)}: fractional second out of range"
            rest = rest[len(FRACTION):]
        elif element == "Z07:00":
            if rest[:1] == "Z":
                rest = rest[1:]
            elif (len(rest) >= 6 and rest[0] in "+-" and rest[3] == ":" and rest[1:3].isdigit()
                  and rest[4:6].isdigit() and rest[1:3].isascii() and rest[4:6].isascii()):
                rest = rest[6:]
            else:
                return cannot(rest, element)
        else:
            if not rest.startswith(element):
                return cannot(rest, element)
            rest = rest[len(element):]
    if rest:
        return f"parsing time {_quote(value)}: extra text: {_quote(rest)}"
    if fields["02"] > _days_in(fields["01"], fields["2006"]):
        return f"parsing time {_quote(value)}: day out of range"
    return None


# --- the times of a core/v1 object --------------------------------------------------------------------------


def _reaching(type_name: str, seen: frozenset[str] = frozenset()) -> bool:
    """Whether objects of this core/v1 type can hold a time."""
    members = core_v1_fields.FIELDS.get(type_name, {})
    return any(ref == TIME or (ref.strip("[]{}") and ref.strip("[]{}") not in seen
                               and _reaching(ref.strip("[]{}"), seen | {type_name})) for ref in members.values())


# The field table marks metav1.Time and MicroTime alike; these are the MicroTimes of core/v1.
_MICRO_FIELDS = frozenset({("Event", "eventTime"), ("EventSeries", "lastObservedTime")})
# per type: its time fields, and its fields whose values can hold times (derived once from the constant table)
_TIME_FIELDS = {name: tuple(f for f, ref in members.items() if ref == TIME)
                for name, members in core_v1_fields.FIELDS.items()}
_TIME_PATHS = {name: tuple((f, ref) for f, ref in members.items() if ref != TIME and ref.strip("[]{}")
                           and _reaching(ref.strip("[]{}")))
               for name, members in core_v1_fields.FIELDS.items()}


# Text that a JSON body naming a time field of core/v1 holds: "ime" (creationTimestamp, lastTransitionTime, ...)
# or the name of a time field without it (a container state's startedAt and finishedAt, ...).
_CORE_TIME_NEEDLES = (b"ime", *sorted({name.encode() for fields in _TIME_FIELDS.values() for name in fields
                                       if "ime" not in name}))


def may_name_core_time(raw: bytes) -> bool:
    """Whether a JSON text can hold a time field of a core/v1 object. False for a body with no backslash (no
    escaped key) and none of the time fields' names in it: then :func:`time_error` finds nothing, and the
    walk is skipped (every pod create would make it)."""
    return b"\\" in raw or any(needle in raw for needle in _CORE_TIME_NEEDLES)


def time_error(data: dict[str, Any]) -> str | None:
    """The first time (in the order of the schema) of a core/v1 object that Go cannot parse: its error text."""
    kind = data.get("kind")
    return _walk(data, kind) if data.get("apiVersion") == "v1" and kind in core_v1_fields.ROOTS else None


def _walk(value: Any, type_name: str) -> str | None:
    if not isinstance(value, dict):
        return None
    for name in _TIME_FIELDS[type_name]:
        text = value.get(name)
        if isinstance(text, str):
            error = parse_error(text, (type_name, name) in _MICRO_FIELDS)
            if error is not None:
                return error
    for name, ref in _TIME_PATHS[type_name]:
        item = value.get(name)
        if item is None:
            continue
        for element in _elements(item, ref):
            error = _walk(element, ref.strip("[]{}"))
            if error is not None:
                return error
    return None


def _elements(item: Any, ref: str) -> Any:
    """The objects a field's value holds: its items for "[T]", its values for "{T}", itself for "T"."""
    if ref[0] == "[":
        return item if isinstance(item, list) else ()
    if ref[0] == "{":
        return item.values() if isinstance(item, dict) else ()
    return (item,)


# The times of the kinds dralloc models (their models keep times as text), by kind: dotted paths, "[]" for
# every item of a list. Every kind's metadata has its own.
_META_TIMES = ("metadata.creationTimestamp", "metadata.deletionTimestamp", "metadata.managedFields[].time")
_MODEL_TIMES = {
    "ResourceSlice": ("spec.devices[].taints[].timeAdded", "spec.devices[].basic.taints[].timeAdded"),  # (v1beta1)
    "DeviceTaintRule": ("spec.taint.timeAdded", "status.conditions[].lastTransitionTime"),
    "ResourceClaim": ("status.allocation.allocationTimestamp", "status.devices[].conditions[].lastTransitionTime"),
    "Lease": ("spec.acquireTime", "spec.renewTime"),
}
_MODEL_MICRO_TIMES = frozenset({"spec.acquireTime", "spec.renewTime"})  # (a Lease's are MicroTimes)


def model_time_error(data: dict[str, Any]) -> str | None:
    """The first time of a modelled kind's object (resource.k8s.io, Lease, PriorityClass) Go cannot parse."""
    for path, steps in _model_time_steps(data.get("kind")):
        for text in _at(data, steps):
            if isinstance(text, str):
                error = parse_error(text, path in _MODEL_MICRO_TIMES)
                if error is not None:
                    return error
    return None


def model_time_keys(kind: str) -> frozenset[str]:
    """The JSON names of the fields :func:`model_time_error` reads a time from in an object of ``kind`` (the
    last key of each path): an object none of whose keys is one of these has no time to check."""
    return frozenset(steps[-1][0] for _, steps in _kind_time_steps(kind))


def _model_time_steps(kind: Any) -> tuple[tuple[str, tuple[tuple[str, bool], ...]], ...]:
    """A kind's time paths, each with its steps (a key, and whether it is a list's every item); read on every
    write, so split once per kind."""
    return _kind_time_steps(kind) if isinstance(kind, str) else _time_steps(str(kind))


@functools.lru_cache(maxsize=64)
def _kind_time_steps(kind: str) -> tuple[tuple[str, tuple[tuple[str, bool], ...]], ...]:
    return _time_steps(kind)


def _time_steps(kind: str) -> tuple[tuple[str, tuple[tuple[str, bool], ...]], ...]:
    paths = (*_META_TIMES, *_MODEL_TIMES.get(kind, ()))
    return tuple((path, tuple((step.removesuffix("[]"), step.endswith("[]")) for step in path.split(".")))
                 for path in paths)


def _at(value: Any, steps: tuple[tuple[str, bool], ...]) -> list[Any]:
    """The values at ``steps`` below ``value``, in document order (a level at a time: each level keeps the
    order of the one above it)."""
    found = [value]
    for key, every in steps:
        below: list[Any] = []
        for node in found:
            item = node.get(key) if isinstance(node, dict) else None
            if item is None:
                continue
            if not every:
                below.append(item)
            elif isinstance(item, list):
                below.extend(item)
        if not below:
            return below
        found = below
    return found
