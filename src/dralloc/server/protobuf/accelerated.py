"""The optional C reader of protobuf bodies (the ``_fastwire`` extension, built from _fastwire.c when the
package is installed with a C compiler at hand): the plans of a schema table (plans.py) handed to it as
tables it reads bodies by.

It reads a message as Go writes it and returns what the walker (walker.py) returns for the same bytes, or
None for anything else (an unknown field, a wrong wire type, a field given twice that is not a list or a
map, a truncation, invalid UTF-8, a special message in an unusual form, too deep, a time out of range):
decoder.py then reads the body in Python, which gives the same object or the error with its field path.

Set ``DRALLOC_PURE_PYTHON=1`` in the environment to read every body in Python (the extension is then not
even imported); :data:`AVAILABLE` says whether the extension was imported, :data:`IMPORT_ERROR` why not."""

from __future__ import annotations

import os
from collections.abc import Callable
from functools import partial
from typing import Any

from dralloc.server.protobuf.forms import _raw_json
from dralloc.server.protobuf.plans import (
    _MAP,
    _MESSAGE,
    _PACKABLE,
    _REPEATED,
    _SCALAR,
    _SPECIAL,
    _STRING,
    MAX_DEPTH,
    _Plan,
    _plans,
)
from dralloc.server.protobuf.schema import SPECIAL, Schema
from dralloc.server.protobuf.walker import _zero

PURE_PYTHON = os.environ.get("DRALLOC_PURE_PYTHON", "") not in ("", "0")
IMPORT_ERROR = ""
try:
    if PURE_PYTHON:
        raise ImportError("DRALLOC_PURE_PYTHON is set")
    from dralloc.server.protobuf import _fastwire
except ImportError as exc:  # not built (no compiler when installed), or switched off
    _fastwire = None  # type: ignore[assignment]
    IMPORT_ERROR = str(exc)
AVAILABLE = _fastwire is not None

# What a field is, as _fastwire.c numbers it: its shape ...
_SHAPE_SCALAR, _SHAPE_MESSAGE, _SHAPE_INLINE, _SHAPE_REPEATED, _SHAPE_MAP, _SHAPE_PACKED = range(6)
# ... and the kind of its values
_KINDS = {name: code for code, name in enumerate(
    ("string", "bytes", "bool", "int32", "int64", "Quantity", "Time", "MicroTime", "IntOrString", "RawExtension",
     "FieldsV1"))}
_KIND_MESSAGE, _KIND_UNSUPPORTED = len(_KINDS), len(_KINDS) + 1

# An object read in C: (body, start, end, apiVersion, kind) → the object, or None (read it in Python)
ObjectReader = Callable[[bytes, int, int, str, str], "dict[str, Any] | None"]


def _field(plan: _Plan, slot: int, index: dict[str, int]) -> tuple[Any, ...]:
    """One field of a plan as _fastwire.c's Tables takes it: (number, wire type, JSON name or None when
    inline, shape, kind, message index, keep_zero, a map entry's value when it has none, whether that is a
    new dict)."""
    code, name, keep_zero, inline, kind, f, _rank = plan.slots[slot]
    number = list(plan.schema)[slot]
    shape = {_STRING: _SHAPE_SCALAR, _SCALAR: _SHAPE_SCALAR, _SPECIAL: _SHAPE_SCALAR, _REPEATED: _SHAPE_REPEATED,
             _MAP: _SHAPE_MAP, _PACKABLE: _SHAPE_PACKED, _MESSAGE: _SHAPE_INLINE if inline else _SHAPE_MESSAGE}[code]
    value_kind = _KIND_MESSAGE if isinstance(kind, _Plan) else _KINDS.get(kind, _KIND_UNSUPPORTED)
    if code == _MAP and f.varint or inline and not isinstance(kind, _Plan):
        value_kind = _KIND_UNSUPPORTED  # (no table has one: the walker reads it)
    message = index[kind.name] if isinstance(kind, _Plan) else -1
    zero = _zero(f.type, f.type in plan.message_types) if code == _MAP else None
    return (number, f.wire, None if shape == _SHAPE_INLINE else name, shape, value_kind, message, keep_zero,
            zero, isinstance(zero, dict))


_TABLES: dict[int, tuple[Schema, _fastwire.Tables, dict[str, int]]] = {}


def _tables(table: Schema) -> tuple[_fastwire.Tables, dict[str, int]]:
    """The C tables of ``table`` and each message's index in them (built on first use; the entry holds the
    table, so its id stays its own)."""
    found = _TABLES.get(id(table))
    if found is not None and found[0] is table:
        return found[1], found[2]
    plans = _plans(table)
    index = {name: i for i, name in enumerate(plans)}
    messages = tuple(tuple(_field(plan, slot, index) for slot in range(len(plan.slots))) for plan in plans.values())
    tables = _fastwire.Tables(messages, _raw_json, MAX_DEPTH)
    _TABLES[id(table)] = (table, tables, index)
    return tables, index


def read_message(buf: bytes, start: int, end: int, table: Schema, name: str, depth: int) -> dict[str, Any] | None:
    """Message ``name`` of ``table`` in buf[start:end] read in C, at ``depth`` (the object is level 1), or
    None: read it in Python (also without the extension)."""
    if _fastwire is None:
        return None
    tables, index = _tables(table)
    return tables.message(index[name], buf, start, end, depth)


def _python_only(table: Schema) -> bool:
    """Whether ``table`` holds a special message the C reader does not read (a CRD's schema): each body of it
    would be handed back, so the Python path reads them from the start."""
    return any(f.type in SPECIAL and f.type not in _KINDS for fields in table.values() for f in fields.values())


def object_reader(table: Schema, name: str, metadata: bool) -> ObjectReader | None:
    """The C reading of message ``name`` of ``table`` as a whole object, apiVersion and kind first (and, with
    ``metadata``, an empty metadata the message's own replaces), as decoder.py's envelope gives them (None
    without the extension, or for a table the C reader hands back)."""
    if _fastwire is None or _python_only(table):
        return None
    tables, index = _tables(table)
    reader: ObjectReader = partial(tables.object, index[name], metadata)
    return reader


# Go's envelopes read in C by their typeMeta's bytes: typeMeta → (tables, message index, metadata, apiVersion,
# kind), filled by decoder.py as it meets the kinds
Envelopes = dict[bytes, tuple["_fastwire.Tables", int, bool, str, str]]


def read_envelope(kinds: Envelopes, body: bytes) -> dict[str, Any] | None:
    """A body in Go's envelope (a one-byte typeMeta size, empty contentEncoding and contentType) of a kind of
    ``kinds`` read in C in one call, or None: the Python path reads it (also without the extension)."""
    return _fastwire.read_envelope(kinds, body) if _fastwire is not None else None


def add_envelope(kinds: Envelopes, type_meta: bytes, table: Schema, name: str, metadata: bool, api_version: str,
                 kind: str) -> None:
    """Message ``name`` of ``table`` read by :func:`read_envelope` in a body of this typeMeta (nothing without
    the extension, or for a table the C reader hands back)."""
    if _fastwire is not None and not _python_only(table):
        tables, index = _tables(table)
        kinds[type_meta] = (tables, index[name], metadata, api_version, kind)
