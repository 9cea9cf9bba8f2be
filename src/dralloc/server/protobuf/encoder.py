"""Encoding: an object's messages written as Go's generated code writes them — fields in field-number order,
every field that is not a Go pointer written even when empty, a list's integers one key each, a map's
entries sorted by key. decoder.py's :func:`encode` wraps them in the envelope (the tests' and benchmarks'
bodies)."""

from __future__ import annotations

import base64
from datetime import datetime
from typing import Any

import msgspec

from dralloc.server.protobuf.apiextensions import encode_json_schema_props
from dralloc.server.protobuf.forms import _EPOCH
from dralloc.server.protobuf.schema import Field, Schema
from dralloc.server.protobuf.wire import _delimited, _varint_bytes

# per table and message: its fields in field-number order, each with its key as a varint and as a length-
# delimited value
_ENCODING_ORDER: dict[tuple[int, str], tuple[Schema, list[tuple[Field, bytes, bytes]]]] = {}


def _encoding_order(table: Schema, name: str) -> list[tuple[Field, bytes, bytes]]:
    found = _ENCODING_ORDER.get((id(table), name))
    if found is not None and found[0] is table:
        return found[1]
    order = [(f, _varint_bytes(number << 3), _varint_bytes(number << 3 | 2))
             for number, f in sorted(table[name].items())]
    _ENCODING_ORDER[id(table), name] = (table, order)
    return order


def _encode_message(obj: dict[str, Any], table: Schema, name: str) -> bytes:
    parts: list[bytes] = []
    for f, varint_key, key in _encoding_order(table, name):
        if f.inline:  # an embedded struct: its fields are the object's own
            payload = _encode_message(obj, table, f.type)
            parts += (key, _varint_bytes(len(payload)), payload)
            continue
        value = obj.get(f.name)
        if f.map:
            entries: dict[str, Any] = value or {}
            for entry_key in sorted(entries):
                entry = _delimited(1, entry_key.encode())
                entry += (_varint_bytes(2 << 3) + _varint_bytes(int(entries[entry_key])) if f.varint
                          else _delimited(2, _encode_value(f.type, entries[entry_key], table)))
                parts += (key, _varint_bytes(len(entry)), entry)
        elif f.repeated:
            for item in value or ():
                if f.varint:
                    parts += (varint_key, _varint_bytes(int(item)))
                else:
                    payload = _encode_value(f.type, item, table)
                    parts += (key, _varint_bytes(len(payload)), payload)
        elif value is None and (f.pointer or f.type == "bytes"):
            continue  # (Go writes a nil pointer and nil bytes not at all)
        elif f.varint:
            parts += (varint_key, _varint_bytes(int(value or 0)))
        else:
            payload = _encode_value(f.type, value, table)
            parts += (key, _varint_bytes(len(payload)), payload)
    return b"".join(parts)


def _encode_value(kind: str, value: Any, table: Schema) -> bytes:
    """A length-delimited value of ``kind`` (None: its Go zero value)."""
    if kind == "string":
        return (value or "").encode()
    if kind == "bytes":
        return base64.b64decode(value or "", validate=True)
    if kind == "Quantity":
        return _delimited(1, ("0" if value is None else value).encode())
    if kind in ("Time", "MicroTime"):
        if value is None:
            return b""  # (the zero time)
        seconds, micros = _parse_time(value)
        nanos = micros * 1000 if kind == "MicroTime" else 0  # (a Time's nanoseconds are not sent)
        return _varint_bytes(1 << 3) + _varint_bytes(seconds) + _varint_bytes(2 << 3) + _varint_bytes(nanos)
    if kind in ("RawExtension", "FieldsV1"):
        return b"" if value is None else _delimited(1, msgspec.json.encode(value))
    if kind == "IntOrString":
        is_text = isinstance(value, str)
        return (_varint_bytes(1 << 3) + _varint_bytes(int(is_text)) + _varint_bytes(2 << 3)
                + _varint_bytes(0 if is_text else int(value or 0)) + _delimited(3, value.encode() if is_text else b""))
    if kind == "JSONSchemaProps":
        return encode_json_schema_props(value or {})
    return _encode_message(value or {}, table, kind)


def _parse_time(text: str) -> tuple[int, int]:
    """The seconds since the epoch and the microseconds of an RFC 3339 time in UTC ("...Z")."""
    if not text.endswith("Z"):
        raise ValueError(f"a time must be in UTC: {text!r}")
    when = datetime.fromisoformat(text[:-1])
    seconds = (when.date() - _EPOCH).days * 86400 + when.hour * 3600 + when.minute * 60 + when.second
    return seconds, when.microsecond
