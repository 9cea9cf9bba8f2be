"""The two passes: any body, and every error, read through a message's plan (plans.py). A walk is two
passes over one message: the first reads every field (checking the wire, as Go's decoder does before it
looks at a value), the second converts the fields present in struct order, so errors and keys come out as
they would from a field-by-field reading of the table. The single pass (single_pass.py) steps aside to
these whenever a body is not as Go writes it."""

from __future__ import annotations

import base64
from typing import Any

from dralloc.server.protobuf.apiextensions import json_schema_props
from dralloc.server.protobuf.forms import _int_or_string, _raw_json, _time
from dralloc.server.protobuf.plans import (
    _MAP,
    _MESSAGE,
    _REPEATED,
    _SCALAR,
    _SPECIAL,
    _STRING,
    MAX_DEPTH,
    _Plan,
)
from dralloc.server.protobuf.schema import SCALARS, Field
from dralloc.server.protobuf.wire import (
    ProtobufError,
    _as_bytes,
    _packed,
    _scalar,
    _text,
    _varint,
    _wire2,
    scan,
)


def _walk(plan: _Plan, buf: bytes, depth: int) -> dict[str, Any]:
    if depth > MAX_DEPTH:
        raise ProtobufError(f"messages nested deeper than {MAX_DEPTH}")
    keys = plan.keys
    seen: dict[int, list[Any]] = {}
    in_order = True  # the slots came in struct order: seen's order is the output's
    last = -1
    pos, end = 0, len(buf)
    while pos < end:
        key = buf[pos]
        if key < 0x80:
            pos += 1
        else:
            key, pos = _varint(buf, pos)
        slot = keys.get(key)
        if slot is None:  # a field this table does not know, or a known one in a wrong wire type
            pos = _skip(plan, buf, pos, key)
            continue
        value: Any
        if key & 7:  # length-delimited (the walk's keys have wire types 0 and 2 only)
            if pos < end and buf[pos] < 0x80:
                size = buf[pos]
                pos += 1
            else:
                size, pos = _varint(buf, pos)
            if size > end - pos:
                raise ProtobufError(f"field {key >> 3} is truncated ({size} bytes announced, {end - pos} left)")
            value = buf[pos:pos + size]
            pos += size
        elif pos < end and buf[pos] < 0x80:
            value = buf[pos]
            pos += 1
        else:
            value, pos = _varint(buf, pos)
        values = seen.get(slot)
        if values is None:
            seen[slot] = [value]
        else:
            values.append(value)
        if slot < last:
            in_order = False
        last = slot
    out: dict[str, Any] = {}
    slots = plan.slots
    name = ""
    try:
        for slot in (seen if in_order else sorted(seen)):
            values = seen[slot]
            code, name, keep_zero, inline, kind, f, _ = slots[slot]
            if code == _STRING:
                raw = values[-1]
                if raw or keep_zero:
                    out[name] = raw.decode()
            elif code == _MESSAGE:
                joined = values[0] if len(values) == 1 else b"".join(values)  # occurrences merge
                if inline:
                    out.update(_walk(kind, joined, depth + 1))
                else:
                    out[name] = _walk(kind, joined, depth + 1)
            elif code == _REPEATED:
                out[name] = _items(kind, values, depth)
            elif code == _MAP:
                out[name] = _map(f, kind, values, depth, f.type in plan.message_types)
            elif code == _SPECIAL:
                value = _single(kind, values[-1], depth)
                if value is not None:
                    out[name] = value
            elif code == _SCALAR:
                value = _scalar(kind, values[-1])
                if value or keep_zero:
                    out[name] = value
            else:  # _PACKABLE: unpacked (one varint a field) or packed (one run of varints)
                items: list[Any] = []
                for v in values:
                    items += _packed(kind, v) if isinstance(v, bytes) else [_scalar(kind, v)]
                out[name] = items
    except ProtobufError as exc:
        raise exc.within(name) from None
    except UnicodeDecodeError:
        raise ProtobufError("invalid UTF-8 in a string").within(name) from None
    return out


def _skip(plan: _Plan, buf: bytes, pos: int, key: int) -> int:
    """Past the value of a field the walk has no key for: unknown (skipped) or of a wrong wire type (an
    error, once its value is known to be whole)."""
    number, wire = key >> 3, key & 7
    if number == 0:
        raise ProtobufError(f"illegal field number 0 (wire type {wire})")
    end = len(buf)
    if wire == 0:
        _, pos = _varint(buf, pos)
    else:
        if wire == 2:
            size = buf[pos] if pos < end else 0x80
            size, pos = (size, pos + 1) if size < 0x80 else _varint(buf, pos)
        elif wire in (1, 5):
            size = 8 if wire == 1 else 4
        else:
            raise ProtobufError(f"field {number} has the unsupported wire type {wire}")
        if size > end - pos:
            raise ProtobufError(f"field {number} is truncated ({size} bytes announced, {end - pos} left)")
        pos += size
    f = plan.schema.get(number)
    if f is not None:
        raise ProtobufError(f"wrong wire type {wire} for field {plan.name}.{f.name} (field {number})")
    return pos


def _items(kind: Any, values: list[bytes], depth: int) -> list[Any]:
    """A repeated field's length-delimited items."""
    try:
        if kind == "string":
            return [v.decode() for v in values]
        if isinstance(kind, _Plan):
            return [_walk(kind, v, depth + 1) for v in values]
    except (ProtobufError, UnicodeDecodeError):
        pass  # found again below, item by item, to name the item
    out: list[Any] = []
    for i, v in enumerate(values):
        try:
            out.append(_single(kind, v, depth))
        except ProtobufError as exc:
            raise exc.within(f"[{i}]") from None
    return out


def _map(f: Field, kind: Any, values: list[bytes], depth: int, of_messages: bool) -> dict[str, Any]:
    entries: dict[str, Any] = {}
    for entry in values:
        # the usual entry, {1: key, 2: value} each once and short, read directly; any other by its fields
        size = len(entry)
        if size > 2 and entry[0] == 0x0A and entry[1] < 0x80:
            at = 2 + entry[1]
            if at == size:
                key = _text(entry[2:])
                entries[key] = _zero(f.type, of_messages)
                continue
            if at + 2 <= size and entry[at] == 0x12 and entry[at + 1] < 0x80 and at + 2 + entry[at + 1] == size \
                    and not f.varint:
                key = _text(entry[2:at])
                entries[key] = _map_value(kind, entry[at + 2:], depth, key)
                continue
        key = ""
        value: Any = _OMIT
        for number, wire, raw in scan(entry):
            if number == 1:
                if wire != 2:
                    raise ProtobufError(f"wrong wire type {wire} for a map key")
                key = _text(_as_bytes(raw))
            elif number == 2:
                if wire != (0 if f.varint else 2):
                    raise ProtobufError(f"wrong wire type {wire} for a map value")
                value = raw
        entries[key] = _zero(f.type, of_messages) if value is _OMIT else _map_value(kind, value, depth, key)
    return entries


def _map_value(kind: Any, value: Any, depth: int, key: str) -> Any:
    try:
        if kind in SCALARS:
            return _scalar(kind, value)
        return _single(kind, value, depth)
    except ProtobufError as exc:
        raise exc.within(f"[{key}]") from None


_OMIT: Any = object()


_ZEROS = {"string": "", "bytes": "", "bool": False, "int32": 0, "int64": 0, "Quantity": "0", "IntOrString": 0}


def _zero(type_name: str, is_message: bool) -> Any:
    return _ZEROS.get(type_name, {} if is_message else None)


def _single(kind: Any, raw: bytes, depth: int) -> Any:
    """A length-delimited value of ``kind`` (a type name, or the _Plan of a message): a string, bytes, or a
    message (None: JSON's null)."""
    if isinstance(kind, _Plan):
        return _walk(kind, raw, depth + 1)
    if kind == "string":
        return _text(raw)
    if kind == "Quantity":
        # the usual form, {1: text} alone and short, read directly; any other by its fields
        if len(raw) > 2 and raw[0] == 0x0A and raw[1] < 0x80 and raw[1] == len(raw) - 2:
            return _text(raw[2:])
        text = "0"
        for number, wire, value in scan(raw):
            if number == 1:
                text = _text(_wire2(wire, value, "Quantity.string"))
        return text
    if kind == "bytes":
        return base64.b64encode(raw).decode()
    if kind in ("Time", "MicroTime"):
        return _time(raw, micro=kind == "MicroTime")
    if kind in ("RawExtension", "FieldsV1"):
        return _raw_json(raw, kind)
    if kind == "IntOrString":
        return _int_or_string(raw)
    if kind == "JSONSchemaProps":
        return json_schema_props(raw, depth + 1)
    if kind in SCALARS:
        raise ProtobufError(f"a {kind} is not length-delimited")
    raise ProtobufError(f"no message {kind} in the table")
