"""The protobuf walker as it was before its keys were compiled into plans (dralloc 0.x's server/protobuf/decoder.py,
field by field through the tables): the reference the compiled walker must agree with, value for value and
error for error (tests/server/test_protobuf_reference.py)."""

from __future__ import annotations

import base64
import struct
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import msgspec

from dralloc.server.protobuf.decoder import MAX_DEPTH, ProtobufError
from dralloc.server.protobuf.schema import SCALARS, Field, Schema

_UINT64 = (1 << 64) - 1


# --- the wire -------------------------------------------------------------------------------------------

def _varint(buf: bytes, pos: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if pos >= len(buf):
            raise ProtobufError("truncated varint")
        byte = buf[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return value & _UINT64, pos  # (Go keeps the low 64 bits of a tenth byte)
        shift += 7
        if shift >= 70:
            raise ProtobufError("a varint longer than ten bytes")


def scan(buf: bytes) -> Iterator[tuple[int, int, int | bytes]]:
    """(field number, wire type, value) of each field: an int for a varint, bytes otherwise."""
    pos, end = 0, len(buf)
    while pos < end:
        key = buf[pos]  # one byte for the fields numbered up to 15 (a fast path: most keys and sizes are)
        key, pos = (key, pos + 1) if key < 0x80 else _varint(buf, pos)
        number, wire = key >> 3, key & 7
        if number == 0:
            raise ProtobufError(f"illegal field number 0 (wire type {wire})")
        value: int | bytes
        if wire == 2:
            size = buf[pos] if pos < end else 0x80
            size, pos = (size, pos + 1) if size < 0x80 else _varint(buf, pos)
        elif wire == 0:
            value, pos = _varint(buf, pos)
            yield number, 0, value
            continue
        elif wire in (1, 5):
            size = 8 if wire == 1 else 4
        else:
            raise ProtobufError(f"field {number} has the unsupported wire type {wire}")
        if size > end - pos:
            raise ProtobufError(f"field {number} is truncated ({size} bytes announced, {end - pos} left)")
        yield number, wire, buf[pos:pos + size]
        pos += size


def fields(buf: bytes) -> list[tuple[int, Any]]:
    """(field number, value) pairs: an int for varints, bytes for the other wire types."""
    if not isinstance(buf, bytes):
        raise ProtobufError("expected a message")
    return [(number, value) for number, _, value in scan(buf)]


def _last_values(buf: bytes) -> dict[int, tuple[int, int | bytes]]:
    """The last (wire type, value) of each field number."""
    return {number: (wire, value) for number, wire, value in scan(buf)}


def _length_delimited(found: tuple[int, int | bytes], what: str) -> bytes:
    wire, value = found
    if wire != 2 or not isinstance(value, bytes):
        raise ProtobufError(f"{what} has wire type {wire}, not 2 (length-delimited)")
    return value


# --- the walker -----------------------------------------------------------------------------------------

def message(buf: bytes, table: Schema, name: str, depth: int = 1) -> dict[str, Any]:
    """The JSON object of message ``name`` of ``table`` encoded in ``buf``."""
    if depth > MAX_DEPTH:
        raise ProtobufError(f"messages nested deeper than {MAX_DEPTH}")
    schema = table[name]
    seen: dict[int, list[int | bytes]] = {}
    for number, wire, value in scan(buf):
        f = schema.get(number)
        if f is None:
            continue  # a field this table does not know: skipped, as Go's decoder skips it
        if wire != f.wire and not (wire == 2 and f.varint and f.repeated):
            raise ProtobufError(f"wrong wire type {wire} for field {name}.{f.name} (field {number})")
        seen.setdefault(number, []).append(value)
    out: dict[str, Any] = {}
    for number, f in schema.items():
        values = seen.get(number)
        if values is None:
            continue
        try:
            value = _field_value(f, values, table, depth)
        except ProtobufError as exc:
            raise exc.within("" if f.inline else f.name) from None
        if value is _OMIT:
            continue
        if f.inline:
            out.update(value)
        else:
            out[f.name] = value
    return out


_OMIT: Any = object()


def _field_value(f: Field, values: list[int | bytes], table: Schema, depth: int) -> Any:
    if f.type == "string" and not (f.repeated or f.map):  # the commonest field: a fast path
        text = _text(_as_bytes(values[-1]))
        return text if text or f.keep_zero else _OMIT
    if f.map:
        entries: dict[str, Any] = {}
        for entry in values:
            key, value = _map_entry(f, _as_bytes(entry), table, depth)
            entries[key] = value
        return entries
    if f.repeated:
        if f.varint:  # unpacked (one varint a field) or packed (one run of varints)
            items: list[Any] = []
            for v in values:
                items += _packed(f, v) if isinstance(v, bytes) else [_scalar(f.type, v)]
            return items
        out: list[Any] = []
        for i, v in enumerate(values):
            try:
                out.append(_single(f.type, _as_bytes(v), table, depth))
            except ProtobufError as exc:
                raise exc.within(f"[{i}]") from None
        return out
    if f.type in SCALARS:
        value = _scalar(f.type, values[-1])
        return value if f.keep_zero or value else _OMIT
    if f.type in table:  # an embedded message: its occurrences are merged, as protobuf's rule has it
        joined = values[0] if len(values) == 1 else b"".join(_as_bytes(v) for v in values)
        return _single(f.type, _as_bytes(joined), table, depth)
    value = _single(f.type, _as_bytes(values[-1]), table, depth)  # Time, Quantity...: the last one
    return _OMIT if value is None else value


def _map_entry(f: Field, entry: bytes, table: Schema, depth: int) -> tuple[str, Any]:
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
    try:
        if value is _OMIT:  # no value: the type's zero value
            return key, _zero(f.type, table)
        if f.type in SCALARS:
            return key, _scalar(f.type, value)
        return key, _single(f.type, _as_bytes(value), table, depth)
    except ProtobufError as exc:
        raise exc.within(f"[{key}]") from None


def _zero(kind: str, table: Schema) -> Any:
    zeros = {"string": "", "bytes": "", "bool": False, "int32": 0, "int64": 0, "Quantity": "0", "IntOrString": 0}
    return zeros.get(kind, {} if kind in table else None)


def _single(kind: str, raw: bytes, table: Schema, depth: int) -> Any:
    """A length-delimited value of ``kind``: a string, bytes, or a message (None: JSON's null)."""
    if kind == "string":
        return _text(raw)
    if kind == "bytes":
        return base64.b64encode(raw).decode()
    if kind == "Quantity":
        text = "0"
        for number, wire, value in scan(raw):
            if number == 1:
                text = _text(_wire2(wire, value, "Quantity.string"))
        return text
    if kind in ("Time", "MicroTime"):
        return _time(raw, micro=kind == "MicroTime")
    if kind in ("RawExtension", "FieldsV1"):
        return _raw_json(raw, kind)
    if kind == "IntOrString":
        return _int_or_string(raw)
    if kind == "JSONSchemaProps":
        return _schema_message("JSONSchemaProps", raw, depth + 1)
    if kind in SCALARS:
        raise ProtobufError(f"a {kind} is not length-delimited")
    return message(raw, table, kind, depth + 1)


def _packed(f: Field, run: bytes) -> list[Any]:
    out: list[Any] = []
    pos = 0
    while pos < len(run):
        value, pos = _varint(run, pos)
        out.append(_scalar(f.type, value))
    return out


def _scalar(kind: str, value: int | bytes) -> Any:
    if kind == "string":
        return _text(_as_bytes(value))
    if kind == "bytes":
        return base64.b64encode(_as_bytes(value)).decode()
    if not isinstance(value, int):
        raise ProtobufError(f"a {kind} must be a varint")
    if kind == "bool":
        return value != 0
    if kind == "int32":  # Go keeps the low 32 bits (a negative int32 is sent as ten bytes)
        value &= 0xFFFF_FFFF
        return value - (1 << 32) if value >= 1 << 31 else value
    return value - (1 << 64) if value >= 1 << 63 else value  # int64


def _as_bytes(value: int | bytes) -> bytes:
    if not isinstance(value, bytes):
        raise ProtobufError("expected a length-delimited value, found a varint")
    return value


def _wire2(wire: int, value: int | bytes, what: str) -> bytes:
    if wire != 2:
        raise ProtobufError(f"wrong wire type {wire} for {what}")
    return _as_bytes(value)


def _text(value: bytes) -> str:
    try:
        return value.decode("utf-8")
    except UnicodeDecodeError:
        raise ProtobufError("invalid UTF-8 in a string") from None


# --- the messages with JSON forms of their own ------------------------------------------------------------

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


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def _time(raw: bytes, micro: bool) -> str | None:
    """A Time or MicroTime ({1: seconds, 2: nanos}) as Go's JSON writes it: RFC 3339 in UTC, in whole seconds
    (a Time's nanoseconds are dropped on decoding) or with six fraction digits (truncated). Go writes a zero
    time as an empty message, which is JSON's null (None)."""
    if not raw:
        return None
    seconds, nanos = _varint_fields(raw, "a time's", ("seconds", "int64"), ("nanos", "int32"))
    micros = 0
    if micro:  # toward zero, then a negative part borrows from the seconds (Go's time.Unix)
        micros = nanos // 1000 if nanos >= 0 else -(-nanos // 1000)
        seconds, micros = seconds + micros // 1_000_000, micros % 1_000_000
    if not _FIRST_SECOND <= seconds <= _LAST_SECOND:
        raise ProtobufError(f"a time of {seconds} seconds is out of range")
    when = _EPOCH + timedelta(seconds=seconds, microseconds=micros)
    text = f"{when.year:04d}-{when.month:02d}-{when.day:02d}T{when.hour:02d}:{when.minute:02d}:{when.second:02d}"
    return text + (f".{when.microsecond:06d}Z" if micro else "Z")


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
    for number, wire, value in scan(raw):
        if number == 1:
            data = _wire2(wire, value, f"{kind}.raw")
    if not data:
        return None
    try:
        return msgspec.json.decode(data)
    except (msgspec.DecodeError, ValueError) as exc:  # (UnicodeDecodeError is a ValueError)
        raise ProtobufError(f"the raw bytes of a {kind} are not JSON: {exc}") from None
    except RecursionError:
        raise ProtobufError(f"the JSON of a {kind} is nested too deeply") from None


# --- a CRD's OpenAPI schema (apiextensions/v1 JSONSchemaProps), from its generated.proto and JSON methods ----

# message → {field number: (JSON name, type, kept when empty)}; a type "[]T" is repeated, "{}T" a map of T
_P, _B, _S = "JSONSchemaPropsOrArray", "JSONSchemaPropsOrBool", "JSONSchemaPropsOrStringArray"
_SCHEMA_MESSAGES: dict[str, dict[int, tuple[str, str, bool]]] = {
    "JSONSchemaProps": {
        1: ("id", "string", False), 2: ("$schema", "string", False), 3: ("$ref", "string", True),
        4: ("description", "string", False), 5: ("type", "string", False), 6: ("format", "string", False),
        7: ("title", "string", False), 8: ("default", "json", True), 9: ("maximum", "double", True),
        10: ("exclusiveMaximum", "bool", False), 11: ("minimum", "double", True),
        12: ("exclusiveMinimum", "bool", False), 13: ("maxLength", "int64", True), 14: ("minLength", "int64", True),
        15: ("pattern", "string", False), 16: ("maxItems", "int64", True), 17: ("minItems", "int64", True),
        18: ("uniqueItems", "bool", False), 19: ("multipleOf", "double", True), 20: ("enum", "[]json", False),
        21: ("maxProperties", "int64", True), 22: ("minProperties", "int64", True),
        23: ("required", "[]string", False), 24: ("items", _P, True), 25: ("allOf", "[]JSONSchemaProps", False),
        26: ("oneOf", "[]JSONSchemaProps", False), 27: ("anyOf", "[]JSONSchemaProps", False),
        28: ("not", "JSONSchemaProps", True), 29: ("properties", "{}JSONSchemaProps", False),
        30: ("additionalProperties", _B, True), 31: ("patternProperties", "{}JSONSchemaProps", False),
        32: ("dependencies", "{}" + _S, False), 33: ("additionalItems", _B, True),
        34: ("definitions", "{}JSONSchemaProps", False), 35: ("externalDocs", "ExternalDocumentation", True),
        36: ("example", "json", True), 37: ("nullable", "bool", False),
        38: ("x-kubernetes-preserve-unknown-fields", "bool", True),
        39: ("x-kubernetes-embedded-resource", "bool", False), 40: ("x-kubernetes-int-or-string", "bool", False),
        41: ("x-kubernetes-list-map-keys", "[]string", False), 42: ("x-kubernetes-list-type", "string", True),
        43: ("x-kubernetes-map-type", "string", True), 44: ("x-kubernetes-validations", "[]ValidationRule", False)},
    "ExternalDocumentation": {1: ("description", "string", False), 2: ("url", "string", False)},
    "ValidationRule": {1: ("rule", "string", True), 2: ("message", "string", False),
                       3: ("messageExpression", "string", False), 4: ("reason", "string", True),
                       5: ("fieldPath", "string", False), 6: ("optionalOldSelf", "bool", True)},
    _P: {1: ("schema", "JSONSchemaProps", True), 2: ("jSONSchemas", "[]JSONSchemaProps", False)},
    _B: {1: ("allows", "bool", True), 2: ("schema", "JSONSchemaProps", True)},
    _S: {1: ("schema", "JSONSchemaProps", True), 2: ("property", "[]string", False)},
}


def _schema_message(name: str, raw: bytes, depth: int) -> Any:
    if depth > MAX_DEPTH:
        raise ProtobufError(f"messages nested deeper than {MAX_DEPTH}")
    fields = _SCHEMA_MESSAGES[name]
    seen: dict[int, list[int | bytes]] = {}
    for number, wire, value in scan(raw):
        if number not in fields:
            continue
        json_name, kind, _ = fields[number]
        expected = 0 if kind in ("bool", "int64") else 1 if kind == "double" else 2
        if wire != expected:
            raise ProtobufError(f"wrong wire type {wire} for field {name}.{json_name} (field {number})")
        seen.setdefault(number, []).append(value)
    out: dict[str, Any] = {}
    for number in sorted(seen):
        json_name, kind, kept = fields[number]
        try:
            value = _schema_field(kind, seen[number], depth)
        except ProtobufError as exc:
            raise exc.within(json_name) from None
        if value is None or (value in ("", False, 0) and not kept):
            continue
        out[json_name] = value
    if name == _P:  # the unions: their JSON is one of their fields (Go's MarshalJSON)
        return out["jSONSchemas"] if out.get("jSONSchemas") else out.get("schema")
    if name == _B:
        return out.get("schema", bool(out.get("allows")))
    if name == _S:
        return out["property"] if out.get("property") else out.get("schema")
    return out


def _schema_field(kind: str, values: list[int | bytes], depth: int) -> Any:
    if kind.startswith("[]"):
        items = []
        for i, value in enumerate(values):
            try:
                items.append(_schema_value(kind[2:], value, depth))
            except ProtobufError as exc:
                raise exc.within(f"[{i}]") from None
        return items
    if kind.startswith("{}"):
        entries: dict[str, Any] = {}
        for entry in values:
            key, value = "", b""
            for number, wire, part in scan(_as_bytes(entry)):
                if number == 1:
                    if wire != 2:
                        raise ProtobufError(f"wrong wire type {wire} for a map key")
                    key = _text(_as_bytes(part))
                elif number == 2:
                    if wire != 2:
                        raise ProtobufError(f"wrong wire type {wire} for a map value")
                    value = _as_bytes(part)
            try:
                entries[key] = _schema_value(kind[2:], value, depth)
            except ProtobufError as exc:
                raise exc.within(f"[{key}]") from None
        return entries
    if kind in _SCHEMA_MESSAGES:  # a message given twice: the two merged
        return _schema_value(kind, b"".join(_as_bytes(v) for v in values), depth)
    return _schema_value(kind, values[-1], depth)


def _schema_value(kind: str, value: int | bytes, depth: int) -> Any:
    if kind == "bool":
        return bool(value)
    if kind == "int64":
        return _scalar("int64", value)
    raw = _as_bytes(value)
    if kind == "string":
        return _text(raw)
    if kind == "double":
        number = struct.unpack("<d", raw)[0]
        if number != number or number in (float("inf"), float("-inf")):
            raise ProtobufError(f"a number JSON cannot hold ({number})")
        return int(number) if number == int(number) and abs(number) < 1e21 else number
    if kind == "json":
        return _raw_json(raw, "JSON")
    return _schema_message(kind, raw, depth + 1)
