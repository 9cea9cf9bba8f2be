"""JSON ↔ protobuf: random objects of every accepted kind, in the JSON form Go writes, encoded as a Go client
encodes them (server/protobuf/decoder.py's ``encode``) and decoded back byte for byte the same (key order included),
by the single pass (not by the two passes it leaves unusual bodies to)."""

from __future__ import annotations

import base64
from datetime import datetime
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from protobuf_readers import reader  # noqa: F401 (each test: C reader, then Python)

from dralloc.server.protobuf.decoder import (
    KINDS,
    OPTIONS,
    ProtobufError,
    _usual_envelope,
    decode,
    encode,
)
from dralloc.server.protobuf.schema import SPECIAL, Field, Schema
from dralloc.server.protobuf.single_pass import _decoders

ROOTS = sorted({**KINDS, **OPTIONS}.items())
ABSENT = object()
INT32 = st.integers(-(2**31), 2**31 - 1)
INT64 = st.integers(-(2**63), 2**63 - 1)
TEXT = st.text(max_size=8)
# times RFC 3339 text can hold, but the zero time (Go writes it as nothing, which is JSON's null)
WHEN = st.datetimes(min_value=datetime(1, 1, 1, 0, 0, 1), max_value=datetime(9999, 12, 31, 23, 59, 59))
ZERO = {"string": "", "bool": False, "int32": 0, "int64": 0, "bytes": ""}


def scalar(kind: str) -> st.SearchStrategy[Any]:
    return {"string": TEXT, "bool": st.booleans(), "int32": INT32, "int64": INT64,
            "bytes": st.binary(max_size=8).map(lambda b: base64.b64encode(b).decode())}[kind]


def special(kind: str) -> st.SearchStrategy[Any]:
    if kind == "Quantity":
        return st.one_of(st.sampled_from(["0", "1", "1500m", "80Gi", "1e3"]), TEXT)
    if kind == "Time":
        return WHEN.map(lambda w: f"{w.year:04d}-{w.month:02d}-{w.day:02d}T{w.hour:02d}:{w.minute:02d}:"
                                  f"{w.second:02d}Z")
    if kind == "MicroTime":
        return WHEN.map(lambda w: f"{w.year:04d}-{w.month:02d}-{w.day:02d}T{w.hour:02d}:{w.minute:02d}:"
                                  f"{w.second:02d}.{w.microsecond:06d}Z")
    if kind in ("RawExtension", "FieldsV1"):
        return st.dictionaries(TEXT, st.one_of(st.integers(-5, 5), TEXT, st.booleans()), min_size=1, max_size=3)
    if kind == "JSONSchemaProps":
        return SCHEMAS
    assert kind == "IntOrString"
    return st.one_of(INT32, TEXT)


# a CRD's OpenAPI schema in Go's JSON form: keys in the struct's order, a map's keys sorted, a float64 that is
# whole written as an integer
_NUMBERS = st.one_of(st.integers(-(2**53), 2**53), st.floats(allow_nan=False, allow_infinity=False).filter(
    lambda x: not x.is_integer()))
_LEAF = st.fixed_dictionaries({"type": st.sampled_from(["string", "integer", "object", "array"])}, optional={
    "default": st.one_of(st.integers(-5, 5), TEXT), "maximum": _NUMBERS,
    "required": st.lists(TEXT, min_size=1, max_size=2), "x-kubernetes-preserve-unknown-fields": st.booleans()})
SCHEMAS = st.recursive(_LEAF, lambda inner: st.fixed_dictionaries({"type": st.just("object")}, optional={
    "items": st.one_of(inner, st.lists(inner, min_size=1, max_size=2)),
    "properties": st.dictionaries(TEXT, inner, min_size=1, max_size=2).map(lambda d: dict(sorted(d.items()))),
    "additionalProperties": st.one_of(st.booleans(), inner)}), max_leaves=4)


def element(kind: str, table: Schema, depth: int) -> st.SearchStrategy[Any]:
    """A value of a list, a map, or a field."""
    if kind in ZERO:
        return scalar(kind)
    if kind in SPECIAL:
        return special(kind)
    return go_json(table, kind, depth + 1)


@st.composite
def field_value(draw: st.DrawFn, f: Field, table: Schema, depth: int) -> Any:
    # an optional part is there one time in three, and not at all below the third level (small bodies)
    left_out = depth > 2 or draw(st.integers(0, 2)) > 0
    if f.map or f.repeated:
        if left_out:
            return ABSENT  # (Go writes an empty list or map as nothing, and its JSON leaves it out)
        items = draw(st.lists(element(f.type, table, depth), min_size=1, max_size=3))
        if f.repeated:
            return items
        keys = sorted(draw(st.lists(TEXT, min_size=len(items), max_size=len(items), unique=True)))
        return dict(zip(keys, items, strict=True))  # (Go writes a map's keys sorted)
    if f.pointer and left_out:
        return ABSENT
    if f.type in ZERO:
        value = draw(scalar(f.type))
        return ABSENT if (value == ZERO[f.type] or left_out) and not f.keep_zero else value  # (omitempty)
    if f.type in ("Time", "MicroTime", "RawExtension", "FieldsV1") and left_out:
        return ABSENT  # the zero value: nothing on the wire, null in JSON
    return draw(element(f.type, table, depth))


@st.composite
def go_json(draw: st.DrawFn, table: Schema, name: str, depth: int = 0) -> dict[str, Any]:
    """An object of message ``name`` in Go's JSON form: every field that is not a pointer and not omitted when
    empty, present; keys in the struct's order."""
    out: dict[str, Any] = {}
    for f in table[name].values():
        if f.inline:
            out.update(draw(go_json(table, f.type, depth + 1)))
            continue
        value = draw(field_value(f, table, depth))
        if value is not ABSENT:
            out[f.name] = value
    return out


@pytest.mark.slow
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.data())
def test_every_kind_comes_back_from_protobuf_as_it_went_in(data: st.DataObject) -> None:
    (api_version, kind), (table, name) = data.draw(st.sampled_from(ROOTS))
    head: dict[str, Any] = {"apiVersion": api_version, "kind": kind}
    if (api_version, kind) in KINDS:
        head["metadata"] = {}  # (every object has metadata; its place is the third)
    obj = {**head, **data.draw(go_json(table, name))}
    body = encode(obj)
    assert msgspec.json.encode(decode(body)) == msgspec.json.encode(obj)
    # Go's envelope and Go's object are read by the single pass, at once (it raises where it steps aside)
    usual = _usual_envelope(body)
    assert usual is not None
    _, _, buf, start, end = usual
    assert msgspec.json.encode({**head, **_decoders(table)[name](buf, start, end, 1)}) == msgspec.json.encode(obj)


def test_an_object_of_another_kind_is_not_encoded() -> None:
    with pytest.raises(ProtobufError, match="^no protobuf encoding of stable.example.com/v1/CronTab$"):
        encode({"apiVersion": "stable.example.com/v1", "kind": "CronTab"})


def test_a_value_of_the_wrong_json_type_is_a_protobuf_error() -> None:
    with pytest.raises(ProtobufError, match="cannot encode v1/Namespace"):
        encode({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": 7}})
