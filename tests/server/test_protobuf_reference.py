"""The compiled protobuf walker (its single pass, and its two passes where the single pass steps aside) reads
every message as the field-by-field walker it replaced (protobuf_reference.py) does: the same JSON object, or
the same error at the same field path, on random messages of every accepted kind built from the schema tables
(fields in Go's order or any other, repeated, merged, packed, unknown, of a wrong wire type, truncated, with
invalid UTF-8), and on random mutations of them."""

from __future__ import annotations

import struct
from typing import Any

import msgspec
import protobuf_reference as reference
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from protobuf_readers import reader  # noqa: F401 (each test: C reader, then Python)

from dralloc.server.protobuf.decoder import (
    KINDS,
    MAGIC,
    OPTIONS,
    ProtobufError,
    _envelope,
    _usual_envelope,
    accelerator_in_use,
    decode,
    message,
)
from dralloc.server.protobuf.schema import Field, Schema
from dralloc.server.protobuf.single_pass import _decoders, _Unusual

TABLES = list({id(table): table for table, _ in [*KINDS.values(), *OPTIONS.values()]}.values())
# every message of every table as the root: a small message's own forms are drawn far more often so
ROOTS = [(table, name) for table in TABLES for name in sorted(table)]


def varint(n: int) -> bytes:
    n &= (1 << 64) - 1
    out = bytearray()
    while True:
        byte, n = n & 0x7F, n >> 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def key(number: int, wire: int) -> bytes:
    return varint(number << 3 | wire)


def delimited(number: int, payload: bytes) -> bytes:
    return key(number, 2) + varint(len(payload)) + payload


TEXT = st.one_of(st.text(max_size=6).map(str.encode), st.sampled_from([b"", b"0", b"1Gi", b"-"]))
BAD_TEXT = st.one_of(TEXT, st.sampled_from([b"\xff", b"\xc3", b"a\xed\xa0\x80"]))
INTS = st.one_of(st.integers(-3, 300), st.integers(-(2**63), 2**64 - 1))
JSON_BYTES = st.sampled_from([b"", b"{}", b'{"a":[1,2]}', b"null", b"[", b"\xff", b"7", b'"x"'])


def seconds_message(draw: st.DrawFn, faults: bool) -> bytes:
    seconds = st.one_of(st.integers(-10**9, 4 * 10**9), INTS) if faults else st.integers(-10**9, 4 * 10**9)
    parts = [key(1, 0) + varint(draw(seconds))] if draw(st.booleans()) else []
    if draw(st.booleans()):
        parts.append(key(2, 0) + varint(draw(st.integers(-2 * 10**9, 2 * 10**9))))
    return b"".join(draw(st.permutations(parts)))


@st.composite
def payload(draw: st.DrawFn, kind: str, table: Schema, depth: int, faults: bool) -> bytes:
    """A length-delimited value of ``kind``: mostly well formed, now and then not (with ``faults``)."""
    if faults and draw(st.integers(0, 30)) == 0:
        return draw(st.binary(max_size=12))  # anything at all
    if kind in ("string", "bytes"):
        return draw(BAD_TEXT if faults else TEXT)
    if kind == "Quantity":
        return b"".join(delimited(1, draw(TEXT)) for _ in range(draw(st.integers(0, 2))))
    if kind in ("Time", "MicroTime"):
        return seconds_message(draw, faults)
    if kind in ("RawExtension", "FieldsV1"):
        return delimited(1, draw(JSON_BYTES if faults else st.just(b'{"a":1}'))) if draw(st.booleans()) else b""
    if kind == "IntOrString":
        parts = [key(1, 0) + varint(draw(st.integers(0, 2 if faults else 1))), key(2, 0) + varint(draw(INTS)),
                 delimited(3, draw(TEXT))]
        return b"".join(draw(st.lists(st.sampled_from(parts), max_size=3)))
    if kind == "JSONSchemaProps":
        return draw(schema_props(depth + 1, faults))
    return draw(encoded(table, kind, depth + 1, faults))


DOUBLES = st.floats(allow_nan=False, allow_infinity=False, width=64)


@st.composite
def schema_props(draw: st.DrawFn, depth: int, faults: bool) -> bytes:
    """A CRD's OpenAPI schema (apiextensions/v1 JSONSchemaProps): some of its fields, in any order, nested
    schemas in its unions and maps, now and then a wrong wire type or a NaN."""
    nested = (lambda: draw(schema_props(depth + 1, faults))) if depth < 5 else (lambda: b"")
    double = st.one_of(DOUBLES, st.sampled_from([float("nan"), float("inf")])) if faults else DOUBLES
    makers = [
        lambda: delimited(5, draw(TEXT)),  # type
        lambda: key(9, 1) + struct.pack("<d", draw(double)),  # maximum
        lambda: key(13, 0) + varint(draw(INTS)),  # maxLength
        lambda: delimited(8, delimited(1, draw(JSON_BYTES if faults else st.just(b'{"a":1}')))),  # default
        lambda: delimited(20, delimited(1, b"7")),  # an enum value
        lambda: delimited(23, draw(TEXT)),  # required
        lambda: delimited(24, delimited(draw(st.sampled_from([1, 2])), nested())),  # items: one, or a list
        lambda: delimited(29, delimited(1, draw(TEXT)) + delimited(2, nested())),  # properties
        lambda: delimited(30, key(1, 0) + varint(draw(st.integers(0, 1)))  # additionalProperties
                          + (delimited(2, nested()) if draw(st.booleans()) else b"")),
        lambda: delimited(32, delimited(1, draw(TEXT)) + delimited(2, delimited(2, draw(TEXT)))),  # dependencies
        lambda: key(38, 0) + varint(draw(st.integers(0, 1))),  # x-kubernetes-preserve-unknown-fields
        lambda: delimited(44, delimited(1, draw(TEXT)) + delimited(4, draw(TEXT))),  # a validation rule
        lambda: delimited(35, delimited(2, draw(BAD_TEXT if faults else TEXT))),  # externalDocs
    ]
    if faults:
        makers.append(lambda: key(draw(st.sampled_from([5, 9, 13, 29])), draw(st.sampled_from([0, 1, 5]))) +
                      bytes(8))  # a wrong wire type
    chosen = draw(st.lists(st.sampled_from(range(len(makers))), max_size=5))
    return b"".join(makers[i]() for i in chosen)


@st.composite
def occurrence(draw: st.DrawFn, number: int, f: Field, table: Schema, depth: int, faults: bool) -> bytes:
    """One occurrence of field ``number`` on the wire."""
    if faults and draw(st.integers(0, 40)) == 0:  # a wrong wire type
        wire = draw(st.sampled_from([0, 1, 2, 5]))
        value = {0: varint(draw(INTS)), 1: bytes(8), 2: varint(1) + b"x", 5: bytes(4)}[wire]
        return key(number, wire) + value
    if f.map:
        entry = []
        if draw(st.booleans()) or draw(st.booleans()):
            entry.append(delimited(1, draw(TEXT)))
        if draw(st.booleans()) or draw(st.booleans()):
            entry.append(key(2, 0) + varint(draw(INTS)) if f.varint
                         else delimited(2, draw(payload(f.type, table, depth, faults))))
        if draw(st.integers(0, 10)) == 0:
            entry.append(delimited(3, b"unknown"))
        return delimited(number, b"".join(draw(st.permutations(entry))))
    if f.varint:
        if f.repeated and draw(st.booleans()):
            return delimited(number, b"".join(varint(draw(INTS)) for _ in range(draw(st.integers(0, 3)))))
        return key(number, 0) + varint(draw(INTS))
    return delimited(number, draw(payload(f.type, table, depth, faults)))


@st.composite
def encoded(draw: st.DrawFn, table: Schema, name: str, depth: int = 1, faults: bool = True) -> bytes:
    """A random encoding of message ``name``: a random subset of its fields, each 1-3 times, in any order."""
    if depth > 6:
        return b""
    schema = table[name]
    if not schema:  # a message of no fields (a marker, as a PodGroup's basic scheduling policy)
        return delimited(99, b"unknown") if draw(st.booleans()) else b""
    numbers = draw(st.lists(st.sampled_from(sorted(schema)), max_size=len(schema) + 2))
    if draw(st.booleans()):
        numbers.sort()  # as Go writes them: in field-number order, a list's items together
    parts = [draw(occurrence(number, schema[number], table, depth, faults)) for number in numbers]
    if draw(st.integers(0, 8)) == 0:
        parts.append(delimited(99, b"unknown") + key(98, 0) + varint(5) + key(97, 5) + bytes(4))
    return b"".join(parts)


def outcome(walk: Any, buf: bytes, table: Schema, name: str) -> tuple[str, Any]:
    """The object as JSON text (its keys' order is part of the answer) or the error with its path."""
    try:
        return "ok", msgspec.json.encode(walk(buf, table, name))
    except ProtobufError as exc:
        return "error", str(exc)


@pytest.mark.slow
@settings(max_examples=600, deadline=None)
@given(st.data())
def test_every_kind_decodes_as_the_reference_walker_decodes_it(data: st.DataObject) -> None:
    table, name = data.draw(st.sampled_from(ROOTS))
    buf = data.draw(encoded(table, name))
    assert outcome(message, buf, table, name) == outcome(reference.message, buf, table, name)


@pytest.mark.slow
@settings(max_examples=400, deadline=None)
@given(st.data())
def test_mutated_and_truncated_bodies_fail_as_the_reference_walker_fails(data: st.DataObject) -> None:
    table, name = data.draw(st.sampled_from(ROOTS))
    buf = bytearray(data.draw(encoded(table, name)))
    if buf:
        for _ in range(data.draw(st.integers(1, 3))):
            buf[data.draw(st.integers(0, len(buf) - 1))] = data.draw(st.integers(0, 255))
        buf = buf[:data.draw(st.integers(0, len(buf)))]
    assert outcome(message, bytes(buf), table, name) == outcome(reference.message, bytes(buf), table, name)


def test_the_bodies_are_not_all_errors() -> None:
    # a generator that only made errors would compare nothing: a claim's plain status decodes alike
    table, name = KINDS["resource.k8s.io/v1", "ResourceClaim"]
    buf = delimited(3, delimited(2, delimited(1, b"pods") + delimited(3, b"pods") + delimited(4, b"w")))
    assert message(buf, table, name) == reference.message(buf, table, name) == {
        "status": {"reservedFor": [{"apiGroup": "pods", "resource": "pods", "name": "w"}]}}


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(st.data())
def test_the_single_pass_reads_what_it_reads_as_the_reference_walker(data: st.DataObject) -> None:
    # where the single pass returns an object at all, it is the reference's (no error hides behind it)
    table, name = data.draw(st.sampled_from(ROOTS))
    buf = data.draw(encoded(table, name, faults=data.draw(st.booleans())))
    try:  # (zero bytes after the message, as decoder.py puts them: the single pass reads past a message's end)
        fast = _decoders(table)[name](buf + bytes(4), 0, len(buf), 1)
    except (_Unusual, ProtobufError, UnicodeDecodeError, IndexError):  # stepped aside, or an error: not its to answer
        return
    assert ("ok", msgspec.json.encode(fast)) == outcome(reference.message, buf, table, name)


# the messages whose struct order (the JSON's) is not their field-number order (the wire's)
REORDERED = [(table, name) for table, name in ROOTS if list(table[name]) != sorted(table[name])]


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(st.data())
def test_fields_come_out_in_the_structs_order_not_the_wires(data: st.DataObject) -> None:
    table, name = data.draw(st.sampled_from(REORDERED))
    buf = data.draw(encoded(table, name, faults=False))
    assert outcome(message, buf, table, name) == outcome(reference.message, buf, table, name)


@pytest.mark.slow
@settings(max_examples=400, deadline=None)
@given(st.data())
def test_the_usual_envelope_is_read_as_any_envelope_is(data: st.DataObject) -> None:
    # Go's envelope is read in place; any other form, field by field: where the first answers, both agree
    api_version, kind = data.draw(st.sampled_from(sorted(KINDS)))
    type_meta = [delimited(1, api_version.encode()), delimited(2, kind.encode())]
    if data.draw(st.booleans()):
        type_meta = data.draw(st.permutations(type_meta + [delimited(3, b"x")]))
    raw = data.draw(st.binary(max_size=300))
    tail = data.draw(st.sampled_from([b"", delimited(3, b"") + delimited(4, b""), delimited(4, b"x"),
                                      delimited(3, b"gzip")]))
    body = bytearray(MAGIC + delimited(1, b"".join(type_meta)) + delimited(2, raw) + tail)
    if data.draw(st.booleans()):  # now and then mangled
        body[data.draw(st.integers(4, len(body) - 1))] = data.draw(st.integers(0, 255))
    usual = _usual_envelope(bytes(body))
    try:
        expected: Any = _envelope(bytes(body))
    except ProtobufError:
        expected = None
    if usual is not None:
        found_version, found_kind, buf, start, end = usual
        assert expected is not None
        assert (found_version, found_kind, buf[start:end]) == expected[:3]


@pytest.mark.slow
@settings(max_examples=400, deadline=None)
@given(st.data())
def test_a_body_decodes_as_the_reference_walker_reads_its_envelope_s_object(data: st.DataObject) -> None:
    # decode reads Go's envelope itself and the object by one call; any other envelope field by field
    (api_version, kind), (table, name) = data.draw(st.sampled_from(sorted({**KINDS, **OPTIONS}.items())))
    raw = data.draw(encoded(table, name, faults=data.draw(st.booleans())))
    type_meta = delimited(1, api_version.encode()) + delimited(2, kind.encode())
    tail = data.draw(st.sampled_from([delimited(3, b"") + delimited(4, b""), b"", delimited(4, b"x"),
                                      delimited(3, b"") + delimited(2, b"")]))
    body = bytearray(MAGIC + delimited(1, type_meta) + delimited(2, raw) + tail)
    if data.draw(st.integers(0, 3)) == 0:  # now and then mangled
        body[data.draw(st.integers(4, len(body) - 1))] = data.draw(st.integers(0, 255))

    def reference_decode(body: bytes, table: Schema, name: str) -> dict[str, Any]:
        found_version, found_kind, found_raw, _, _ = _envelope(body)
        if (found_version, found_kind) != (api_version, kind):
            raise ProtobufError("another kind")
        head: dict[str, Any] = {"apiVersion": api_version, "kind": kind}
        return {**head, **({"metadata": {}} if (api_version, kind) in KINDS else {}),
                **reference.message(found_raw, table, name)}

    expected = outcome(reference_decode, bytes(body), table, name)
    if expected != ("error", "another kind"):  # (a mangled typeMeta: another kind, or none decode reads)
        assert outcome(lambda body, _table, _name: decode(body), bytes(body), table, name) == expected


def test_go_s_envelope_is_the_usual_one() -> None:
    body = MAGIC + delimited(1, delimited(1, b"v1") + delimited(2, b"Pod")) + delimited(2, b"\x0a\x00") \
        + delimited(3, b"") + delimited(4, b"")
    usual = _usual_envelope(body)
    assert usual is not None
    api_version, kind, buf, start, end = usual
    assert (api_version, kind, buf[start:end]) == ("v1", "Pod", b"\x0a\x00") and buf is body  # (not copied)


def test_a_message_is_compiled_when_first_read() -> None:
    # a pod's table is large: a body compiles the messages it holds, not the table's every message
    table = dict(KINDS["v1", "Pod"][0])  # (a table of its own: nothing compiled yet)
    pod = delimited(1, delimited(1, b"web")) + delimited(2, delimited(2, delimited(1, b"app")))
    assert message(pod, table, "Pod") == {"metadata": {"name": "web"}, "spec": {"containers": [{"name": "app"}]}}
    decoders = _decoders(table)
    if accelerator_in_use():  # the C reader read it: no Python function compiled at all
        assert decoders["Pod"].__name__ == "compile_then_read"
        return
    assert decoders["Pod"].__name__ == "m" + str(list(table).index("Pod")) + "_Pod"  # compiled, in its place
    assert decoders["Affinity"].__name__ == "compile_then_read"  # not read: not compiled
