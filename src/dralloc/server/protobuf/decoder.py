"""Kubernetes protobuf request bodies (``application/vnd.kubernetes.protobuf``), decoded into the JSON form a
JSON body of the same object carries.

Typed clients send them: kubectl (``create namespace|configmap|secret|serviceaccount|priorityclass|token``,
``auth can-i|whoami``, ``drain``'s evictions and deletes), kube-scheduler (bindings; a ResourceClaim's finalizer,
allocation and reservation with ``Update`` and ``UpdateStatus``; events.k8s.io Events), kube-controller-manager
and DRA drivers built on client-go (ResourceSlices, ResourceClaims, leader election Leases, Events), and the
Kubernetes e2e framework (test/e2e: its pods' creates and status updates). A body is the magic ``k8s\\0`` and
a ``runtime.Unknown`` envelope: ``{1: typeMeta {1: apiVersion, 2: kind}, 2: raw}``, raw being the object's own
encoding.

Accepted (:data:`KINDS`): resource.k8s.io v1, v1beta2 and v1beta1 ResourceClaim, ResourceClaimTemplate,
ResourceSlice and DeviceClass, and v1 and v1beta2 DeviceTaintRule, every field; core/v1 and events.k8s.io/v1
Event, every field; core/v1 Pod, every field of its spec and status; core/v1 Namespace, ConfigMap, Secret,
ServiceAccount and Binding, and a Node's spec, capacity and allocatable; scheduling.k8s.io PriorityClass,
coordination.k8s.io Lease, policy Eviction, the self reviews', TokenReview's and TokenRequest's specs, and
DeleteOptions. Responses stay JSON, which those clients accept as well.

Every message is read through the schema tables (server/protobuf/schema.py, server/protobuf/pod.py,
server/protobuf/resource.py): a body as Go writes it by a single pass, each message compiled once into a
Python function of straight-line code for Go's field order; any other body, and every error, by two passes
over a map from each field's raw key to what it becomes. Fields it does not know are skipped, as Go's decoder
skips them; a known field of the wrong wire type, a truncated field, a varint of more than ten bytes, nesting
deeper than :data:`MAX_DEPTH`, invalid UTF-8, a time RFC 3339 cannot hold, a RawExtension that is not JSON
and an IntOrString of neither type are a :class:`ProtobufError` (a 400) that names the field. Sizes are
checked before anything is sliced, so the work is linear in the body. :func:`encode` writes an object as a Go
client does (the tests' and benchmarks' bodies).
"""

from __future__ import annotations

import base64
import sys
from collections.abc import Callable, Iterator
from datetime import date, datetime, timedelta
from functools import lru_cache
from typing import Any

import msgspec

from dralloc.server.protobuf.pod import POD
from dralloc.server.protobuf.resource import RESOURCE_V1, RESOURCE_V1BETA1, RESOURCE_V1BETA2
from dralloc.server.protobuf.schema import (
    AUTHENTICATION_V1,
    AUTHORIZATION_V1,
    COORDINATION_V1,
    CORE,
    EVENTS_V1,
    META,
    POLICY_V1,
    SCALARS,
    SCHEDULING_V1,
    SPECIAL,
    Field,
    Schema,
)

MAGIC = b"k8s\x00"
CONTENT_TYPE = "application/vnd.kubernetes.protobuf"
# Nesting of messages (the tables' own depth is far less; this bounds a walk should a table ever recurse)
MAX_DEPTH = 100
_UINT64 = (1 << 64) - 1


class ProtobufError(ValueError):
    """A body that cannot be decoded: what is wrong and, below the envelope, in which field."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason
        self.path = ""  # JSON path of the field, e.g. "spec.devices.requests[0].name"

    def within(self, segment: str) -> ProtobufError:
        """The same error, one field further out (``segment``: a name, "[3]" or "[key]")."""
        if segment:
            joined = "" if not self.path or self.path.startswith("[") else "."
            self.path = segment + joined + self.path
        return self

    def __str__(self) -> str:
        return f"{self.path}: {self.reason}" if self.path else self.reason


# (apiVersion, kind) → the table and the message of that kind
_RESOURCE_KINDS = ("ResourceClaim", "ResourceClaimTemplate", "ResourceSlice", "DeviceClass")
KINDS: dict[tuple[str, str], tuple[Schema, str]] = {
    **{(f"resource.k8s.io/{version}", kind): (table, kind)
       for version, table in (("v1", RESOURCE_V1), ("v1beta2", RESOURCE_V1BETA2), ("v1beta1", RESOURCE_V1BETA1))
       for kind in _RESOURCE_KINDS},
    ("resource.k8s.io/v1", "DeviceTaintRule"): (RESOURCE_V1, "DeviceTaintRule"),
    ("resource.k8s.io/v1beta2", "DeviceTaintRule"): (RESOURCE_V1BETA2, "DeviceTaintRule"),
    ("events.k8s.io/v1", "Event"): (EVENTS_V1, "Event"),
    **{("v1", kind): (CORE, kind)
       for kind in ("Event", "Namespace", "Node", "ConfigMap", "Secret", "ServiceAccount", "Binding")},
    ("v1", "Pod"): (POD, "Pod"),
    ("policy/v1", "Eviction"): (POLICY_V1, "Eviction"), ("policy/v1beta1", "Eviction"): (POLICY_V1, "Eviction"),
    ("scheduling.k8s.io/v1", "PriorityClass"): (SCHEDULING_V1, "PriorityClass"),
    ("coordination.k8s.io/v1", "Lease"): (COORDINATION_V1, "Lease"),
    ("authorization.k8s.io/v1", "SelfSubjectAccessReview"): (AUTHORIZATION_V1, "SelfSubjectAccessReview"),
    ("authorization.k8s.io/v1", "SelfSubjectRulesReview"): (AUTHORIZATION_V1, "SelfSubjectRulesReview"),
    **{("authentication.k8s.io/v1", kind): (AUTHENTICATION_V1, kind)
       for kind in ("SelfSubjectReview", "TokenReview", "TokenRequest")},
}
# Messages that are not objects (no metadata of their own)
OPTIONS: dict[tuple[str, str], tuple[Schema, str]] = {
    ("v1", "DeleteOptions"): (META, "DeleteOptions"), ("meta.k8s.io/v1", "DeleteOptions"): (META, "DeleteOptions")}


def accepts(api_version: str, kind: str) -> bool:
    """Whether objects of this kind may be created or updated with a protobuf body."""
    return (api_version, kind) in KINDS


def nesting(api_version: str, kind: str) -> int:
    """How deep the JSON form of a body of this kind can nest (the object itself is level 1), the JSON embedded
    in it (RawExtension, FieldsV1) aside: a bound fixed by the schema table, since a body's messages are the
    table's (a kind it does not know, or a table whose messages can hold themselves: unbounded, sys.maxsize).
    Every integer of a protobuf body is an int64 or an int32, so beyond this bound only the embedded JSON can
    take a decoded body past a JSON body's limits (depth, integers beyond int64), and a body holds that JSON
    verbatim: its brackets and digits are in the body's bytes."""
    found = KINDS.get((api_version, kind)) or OPTIONS.get((api_version, kind))
    if found is None:
        return sys.maxsize
    table, name = found
    return _nesting(table, name)


def decode(body: bytes) -> dict[str, Any]:
    """The JSON form of a protobuf-encoded kind of :data:`KINDS` or :data:`OPTIONS`; ProtobufError when the body
    is not one of them or is malformed."""
    if not body.startswith(MAGIC):
        raise ProtobufError("the body does not start with the Kubernetes protobuf prefix")
    api_version, kind, body, start, end = _usual_envelope(body) or _envelope(body)
    found = KINDS.get((api_version, kind))
    if found is not None:
        out: dict[str, Any] = {"apiVersion": api_version, "kind": kind, "metadata": {}}
        out.update(_message_at(body, start, end, *found))
        return out
    options = OPTIONS.get((api_version, kind))
    if options is None:
        raise ProtobufError(f"protobuf bodies are not accepted for {api_version or '?'}/{kind or '?'} (JSON and "
                            f"YAML are)")
    return {"apiVersion": api_version, "kind": kind, **_message_at(body, start, end, *options)}


def _envelope(body: bytes) -> tuple[str, str, bytes, int, int]:
    """(apiVersion, kind, the raw object and where in it the object starts and ends) of any envelope."""
    envelope = _last_values(body[len(MAGIC):])
    api_version = kind = ""
    if 1 in envelope:
        type_meta = _last_values(_length_delimited(envelope[1], "the envelope's typeMeta"))
        api_version = _text(_length_delimited(type_meta[1], "apiVersion")) if 1 in type_meta else ""
        kind = _text(_length_delimited(type_meta[2], "kind")) if 2 in type_meta else ""
    raw = _length_delimited(envelope.get(2, (2, b"")), "the envelope's raw")
    return api_version, kind, raw, 0, len(raw)


# Go's envelope ends with its empty contentEncoding and contentType
_EMPTY_ENCODING_AND_TYPE = b"\x1a\x00\x22\x00"


def _usual_envelope(body: bytes) -> tuple[str, str, bytes, int, int] | None:
    """:func:`_envelope`'s answer (the raw object left within the body) for an envelope as Go writes it —
    {1: {1: apiVersion, 2: kind}, 2: raw} and empty fields 3 and 4, each short enough for a one-byte size but
    the raw — or None (then it is read field by field)."""
    size = len(body)
    if size < 10 or body[4] != 0x0A or body[5] > 0x7F:
        return None
    type_meta_end = 6 + body[5]
    if type_meta_end + 2 > size or body[type_meta_end] != 0x12:
        return None
    names = _TYPE_METAS.get(body[6:type_meta_end]) or _type_meta(body[6:type_meta_end])
    if names is None:
        return None
    start = type_meta_end + 2
    raw_size = body[start - 1]
    if raw_size > 0x7F and start < size and body[start] < 0x80:  # an object of 128 bytes to 16 KiB
        raw_size = raw_size & 0x7F | body[start] << 7
        start += 1
    elif raw_size > 0x7F:
        try:
            raw_size, start = _varint(body, start - 1)
        except ProtobufError:
            return None
    end = start + raw_size
    if end > size or (end < size and body[end:] != _EMPTY_ENCODING_AND_TYPE):
        return None
    return names[0], names[1], body, start, end


# the apiVersion and kind of each typeMeta {1: apiVersion, 2: kind} as Go writes it, by its bytes (one entry for
# each kind of KINDS and OPTIONS at most)
_TYPE_METAS: dict[bytes, tuple[str, str]] = {}


def _type_meta(type_meta: bytes) -> tuple[str, str] | None:
    """(apiVersion, kind) of a typeMeta as Go writes it, each with a one-byte size (else None), remembered in
    _TYPE_METAS when the kind is one this decoder reads."""
    size = len(type_meta)
    if size < 4 or type_meta[0] != 0x0A or type_meta[1] > 0x7F:
        return None
    kind_at = 2 + type_meta[1]
    if kind_at + 2 > size or type_meta[kind_at] != 0x12 or type_meta[kind_at + 1] > 0x7F \
            or kind_at + 2 + type_meta[kind_at + 1] != size:
        return None
    try:
        names = type_meta[2:kind_at].decode(), type_meta[kind_at + 2:].decode()
    except UnicodeDecodeError:
        return None
    if names in KINDS or names in OPTIONS:
        _TYPE_METAS[type_meta] = names
    return names


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
#
# Each message of a table is compiled once into a _Plan: its fields' raw keys (number << 3 | wire type) mapped
# to a slot (the field's place in the Go struct's order) and, per slot, what the field becomes. A walk is two
# passes over one message: the first reads every field (checking the wire, as Go's decoder does before it
# looks at a value), the second converts the fields present in struct order, so errors and keys come out as
# they would from a field-by-field reading of the table.

# What a field becomes (a _Plan's codes; the commonest first in the walk's chain of tests)
_STRING, _MESSAGE, _REPEATED, _MAP, _PACKABLE, _SCALAR, _SPECIAL = range(7)


class _Plan:
    """A message of a table, compiled for the walk."""

    __slots__ = ("name", "schema", "keys", "slots", "message_types", "reorder")

    def __init__(self, name: str, schema: dict[int, Field]) -> None:
        self.name = name
        self.schema = schema
        self.keys: dict[int, int] = {}  # raw key of a field in a wire type it may come in → slot
        # per slot: (code, JSON name or "" when inline, keep_zero, inline, kind: a _Plan or a type name, Field,
        # rank: the field's place in field-number order, the order Go writes fields in)
        self.slots: list[tuple[int, str, bool, bool, Any, Field, int]] = []
        # the JSON names in struct order, when it is not field-number order (the single pass reorders)
        self.reorder: tuple[str, ...] = ()
        self.message_types: frozenset[str] = frozenset()  # the table's messages (a map's zero value)


_PLANS: dict[int, tuple[Schema, dict[str, _Plan]]] = {}


def _plans(table: Schema) -> dict[str, _Plan]:
    """The compiled messages of ``table`` (compiled on first use; the entry holds the table, so its id stays
    its own)."""
    found = _PLANS.get(id(table))
    if found is not None and found[0] is table:
        return found[1]
    plans = {name: _Plan(name, schema) for name, schema in table.items()}
    for plan in plans.values():
        plan.message_types = frozenset(table)
        for slot, (number, f) in enumerate(plan.schema.items()):
            plan.keys[number << 3 | f.wire] = slot
            if f.varint and f.repeated:
                plan.keys[number << 3 | 2] = slot  # packed
            # a type name, or the _Plan of a message (as the old reading, a SPECIAL name in a table is that
            # message only when the field is a single one)
            kind: Any = f.type if f.type in SCALARS or f.type in SPECIAL else plans.get(f.type, f.type)
            if f.map:
                code = _MAP
            elif f.repeated:
                code = _PACKABLE if f.varint else _REPEATED
            elif f.type == "string":
                code = _STRING
            elif f.type in SCALARS:
                code = _SCALAR
            elif f.type in table:
                code, kind = _MESSAGE, plans[f.type]
            else:
                code = _SPECIAL
            rank = sorted(plan.schema).index(number)
            plan.slots.append((code, "" if f.inline else f.name, f.keep_zero, f.inline, kind, f, rank))
        if list(plan.schema) != sorted(plan.schema):
            plan.reorder = tuple(f.name for f in plan.schema.values())
            if any(f.inline for f in plan.schema.values()):
                raise ValueError(f"{plan.name}: an inline field in a message whose struct order is not its "
                                 f"field-number order")
    _PLANS[id(table)] = (table, plans)
    return plans


def message(buf: bytes, table: Schema, name: str, depth: int = 1) -> dict[str, Any]:
    """The JSON object of message ``name`` of ``table`` encoded in ``buf``."""
    return _message_at(buf, 0, len(buf), table, name, depth)


def _message_at(buf: bytes, start: int, end: int, table: Schema, name: str, depth: int = 1) -> dict[str, Any]:
    """The JSON object of message ``name`` of ``table`` encoded in ``buf[start:end]``."""
    try:
        return _decoders(table)[name](buf, start, end, depth)
    except (_Unusual, ProtobufError, UnicodeDecodeError, IndexError):
        # read again by the two passes: the same object where the single pass stepped aside, or the error a
        # field-by-field reading meets first, with its path (at most twice the work, whatever the body)
        return _walk(_plans(table)[name], buf[start:end], depth)


class _Unusual(Exception):
    """A body the single pass leaves to the two passes: a field repeated that is not a list or a map, fields
    out of field-number order, unknown fields, a map entry in an unusual form, anything truncated."""


# --- the single pass ------------------------------------------------------------------------------------
#
# Go writes a message's fields in field-number order, each once, a list's items and a map's entries
# together, every map entry as {1: key, 2: value}. Each message of a table is compiled once into a Python
# function that reads exactly that form as straight-line code: per field, in field-number order, one
# comparison of the next key with the field's own, then its value read in place; small messages are read in
# place in the code of the message that holds them (no call). Anything else — another order, an unknown
# field, a truncation, a bad byte — makes the function give up (_Unusual, or an IndexError,
# UnicodeDecodeError or ProtobufError on the way) and :func:`message` reads the body again with the two
# passes, which answer every form and every error. Where a function returns, its object is the two passes'
# object, key order included (tests/server/test_protobuf_reference.py compares them on random bodies, and
# tests/server/test_protobuf_round_trip.py checks that Go's bodies are read by the single pass).
#
# A length read past the end of its message is not checked where it is read: the position then lies past
# the message's end, no key matches any more, and the message's final check (its position is its end) fails.
#
# What Go writes most is read with the fewest steps: sizes and integers of one byte (two for a size) without a
# call, an empty string or time (a size of 0) skipped at once, a time seen before found by its bytes, a value
# read by one expression written straight where it goes. A large message whose struct order is not its
# field-number order (a PodSpec) is built in field-number order and rewritten in struct order only when a
# field that breaks the order is in it (_struct_order); a small one is read into locals. A map entry or a
# list item read a second time is kept by its bytes and then found (_Writer.memo): Go's bodies repeat them
# (a driver's devices share most attributes, pods their tolerations), and what is found is what reading
# those bytes gives, a new object each time.

# A compiled message: (body, start, end, depth) → the JSON object of body[start:end]
_Decoder = Callable[[bytes, int, int, int], dict[str, Any]]
_DECODERS: dict[int, tuple[Schema, dict[str, _Decoder]]] = {}
_ABSENT = object()  # a field not read, in a small message whose struct order is restored at its end
_REORDERED_IN_LOCALS = 12  # the most fields of a message out of field-number order read into locals
_INLINE_LINES = 150  # a message whose code is at most this long is read in place (not called) ...
_INLINE_LEVELS = 3  # ... up to this many levels deep in one function


def _decoders(table: Schema) -> dict[str, _Decoder]:
    """The messages of ``table``, each compiled when it is first read (a table's every message at once would
    take a pod's first body some 0.4 s; the messages a body holds take a fraction of it)."""
    found = _DECODERS.get(id(table))
    if found is not None and found[0] is table:
        return found[1]
    writer = _Writer(_plans(table))
    namespace: dict[str, Any] = {
        "_Unusual": _Unusual, "_ABSENT": _ABSENT, "_rewritten": _rewritten, "_varint": _varint, "_single": _single,
        "_packed": _packed, "_TIMES": _TIMES, "_MICROTIMES": _MICROTIMES, "_remembered_time": _remembered_time,
        "_raw_json": _raw_json, "_int_or_string": _int_or_string, "b64encode": base64.b64encode}
    decoders: dict[str, _Decoder] = {}
    for name, function in writer.functions.items():
        namespace[function] = decoders[name] = _compiled_on_first_call(writer, name, namespace, decoders)
    _DECODERS[id(table)] = (table, decoders)
    return decoders


def _compiled_on_first_call(writer: _Writer, name: str, namespace: dict[str, Any],
                            decoders: dict[str, _Decoder]) -> _Decoder:
    """A stand-in for message ``name``'s function: the first call compiles it, puts it in the stand-in's
    place (where the other functions and :func:`_decoders` find it) and reads with it."""
    function = writer.functions[name]

    def compile_then_read(buf: bytes, pos: int, end: int, depth: int) -> dict[str, Any]:
        compiled = namespace[function]
        if compiled is compile_then_read:
            source = writer.function(writer.plans[name])
            namespace.update(writer.memos)
            exec(compile(source, f"<protobuf single pass: {name}>", "exec"), namespace)  # noqa: S102 (the tables' own code)
            compiled = decoders[name] = namespace[function]
        result: dict[str, Any] = compiled(buf, pos, end, depth)
        return result

    return compile_then_read


# the special messages whose empty form (a size of 0) is JSON's null: the field is left out
_NULL_WHEN_EMPTY = frozenset({"Time", "MicroTime", "RawExtension", "FieldsV1"})
_SIGNED = {"bool": "{v} != 0", "int32": "(({v} & 0xFFFFFFFF) ^ 0x80000000) - 0x80000000",
           "int64": "({v} ^ 0x8000000000000000) - 0x8000000000000000"}


def _indent(lines: list[str]) -> list[str]:
    return ["    " + line for line in lines]


def _string(start: str, end: str) -> str:
    return f"buf[{start}:{end}].decode()"


class _Writer:
    """The source of the single pass's functions of one table. The code of the message read at inline level
    L names its variables with the suffix L: it reads buf[posL:endL] into outL, its next key's first byte in
    kL (-1 at its end)."""

    def __init__(self, plans: dict[str, _Plan]) -> None:
        self.plans = plans
        self.functions = {name: f"m{index}_{name}" for index, name in enumerate(plans)}
        self.recursive = _recursive(plans)
        # each map's entries read before, by their bytes: its name in the code → the dict
        self.memos: dict[str, dict[bytes, tuple[str, Any]] | set[bytes]] = {}

    def source(self) -> str:
        """Every message's function."""
        return "\n".join(self.function(plan) for plan in self.plans.values())

    def function(self, plan: _Plan) -> str:
        body, height = self.body(plan, 0)
        return "\n".join([f"def {self.functions[plan.name]}(buf, pos0, end0, depth):",
                          f"    if depth > {MAX_DEPTH - height}: raise _Unusual", *_indent(body), "    return out0", ""])

    def body(self, plan: _Plan, level: int) -> tuple[list[str], int]:
        """The code that reads ``plan`` at ``level`` and the inline levels it goes below it."""
        pos, end, out, k = f"pos{level}", f"end{level}", f"out{level}", f"k{level}"
        # a small message out of field-number order: each field into a local, the object built at its end in
        # struct order; a larger one: built in field-number order, then put in struct order (_struct_order)
        in_locals = bool(plan.reorder) and len(plan.slots) <= _REORDERED_IN_LOCALS
        code = [f"{k} = buf[{pos}] if {pos} < {end} else -1"]
        if in_locals:
            code.append(" = ".join(f"v{level}_{slot}" for slot in range(len(plan.slots))) + " = _ABSENT")
        else:
            code.append(f"{out} = {{}}")
        height = 0
        fields: list[list[str]] = []
        for slot in sorted(range(len(plan.slots)), key=lambda s: plan.slots[s][6]):  # field-number order
            target = f"v{level}_{slot}" if in_locals else f"{out}[{plan.slots[slot][1]!r}]"
            lines, below = self.field(plan, slot, target, level)
            fields.append(lines)
            height = max(height, below)
        code += _guarded(fields, k)
        code.append(f"if {pos} != {end}: raise _Unusual")
        if in_locals:
            code.append(f"{out} = {{}}")
            code += [f"if v{level}_{slot} is not _ABSENT: {out}[{name!r}] = v{level}_{slot}"
                     for slot, (_, name, *_rest) in enumerate(plan.slots)]
            return code, height
        return code + _struct_order(plan, out), height

    def value(self, kind: Any, start: str, end: str, level: int) -> tuple[list[str], int]:
        """Code that sets x<level> to the value of ``kind`` in buf[start:end] (None: the field is left out),
        and the inline levels it goes below ``level``."""
        x = f"x{level}"
        if isinstance(kind, _Plan):
            if kind.name not in self.recursive and level + 1 < _INLINE_LEVELS:
                inner, height = self.body(kind, level + 1)
                if len(inner) <= _INLINE_LINES:
                    return [f"pos{level + 1} = {start}", f"end{level + 1} = {end}", *inner,
                            f"{x} = out{level + 1}"], height + 1
            return [f"{x} = {self.functions[kind.name]}(buf, {start}, {end}, depth + {level + 1})"], 0
        if kind == "string":
            return [f"{x} = {_string(start, end)}"], 0
        if kind == "bytes":
            return [f"{x} = b64encode(buf[{start}:{end}]).decode()"], 0
        if kind == "Quantity":  # its usual form, {1: text} alone and short, read in place
            return [f"if buf[{start}] == 10 and buf[{start} + 1] == {end} - {start} - 2 < 128:",
                    f"    {x} = {_string(f'{start} + 2', end)}",
                    f"else: {x} = _single('Quantity', buf[{start}:{end}], depth)"], 0
        if kind in ("Time", "MicroTime"):  # a time read before is found by its bytes
            cache = "_MICROTIMES" if kind == "MicroTime" else "_TIMES"
            return [f"r{level} = buf[{start}:{end}]", f"{x} = {cache}.get(r{level})",
                    f"if {x} is None: {x} = _remembered_time(r{level}, {kind == 'MicroTime'})"], 0
        if kind in ("RawExtension", "FieldsV1"):
            return [f"{x} = _raw_json(buf[{start}:{end}], {kind!r})"], 0
        if kind == "IntOrString":
            return [f"{x} = _int_or_string(buf[{start}:{end}])"], 0
        raise ValueError(f"no single-pass reading of {kind}")

    def memo(self, kind: Any, raw: str, key: str, x: str) -> tuple[str, list[str]]:
        """A new memo of a map's entries or a list's items read before, by their bytes (``raw``: None when
        too long to keep), and the code that keeps the one just read: ``x`` (and ``key``, a map's) — kept the
        second time it is read (an entry read once costs a set's add); a message (a copy) only when it holds
        no list or object, so that a copy of the copy is a whole new object."""
        memo = f"_entries{len(self.memos)}"
        seen = f"{memo}_seen"
        self.memos[memo], self.memos[seen] = {}, set()
        flat = "".join(f" and {name!r} not in {x}"
                       for name in (_mutable_fields(kind) if isinstance(kind, _Plan) else ()))
        copy = f"dict({x})" if isinstance(kind, _Plan) else x
        return memo, [f"if {raw} is None: pass",
                      f"elif {raw} not in {seen}:",
                      f"    if len({seen}) >= {_ENTRIES_KEPT}: {seen}.clear()",
                      f"    {seen}.add({raw})",
                      f"elif True{flat}:",
                      f"    if len({memo}) >= {_ENTRIES_KEPT}: {memo}.clear()",
                      f"    {memo}[{raw}] = {f'({key}, {copy})' if key else copy}"]

    def field(self, plan: _Plan, slot: int, target: str, level: int) -> tuple[list[str], int]:
        """The code of one field (read when the next key is its own, then the key after it taken), and the
        inline levels it goes below ``level``."""
        code, _name, keep_zero, inline, kind, f, _rank = plan.slots[slot]
        pos, end, k, s, e, x, v = (f"{name}{level}" for name in ("pos", "end", "k", "s", "e", "x", "v"))
        number = next(n for n, field in plan.schema.items() if field is f)
        test, after = _key_test(number, f.wire, level)
        def rest_of_size(after: int) -> list[str]:  # its first byte in s; a size of one or two bytes in place
            return [f"if {s} < 128: {pos} += {after + 1}",
                    f"elif buf[{pos} + {after + 1}] < 128: "
                    f"{s}, {pos} = {s} & 127 | buf[{pos} + {after + 1}] << 7, {pos} + {after + 2}",
                    f"else: {s}, {pos} = _varint(buf, {pos} + {after})",
                    f"{e} = {pos} + {s}"]

        def sized(after: int) -> list[str]:  # a length-delimited value: its bytes are buf[pos:e]
            return [f"{s} = buf[{pos} + {after}]", *rest_of_size(after)]

        size = sized(after)
        varint = [f"{v} = buf[{pos} + {after}]",
                  f"if {v} < 128: {pos} += {after + 1}",
                  f"else: {v}, {pos} = _varint(buf, {pos} + {after})"]
        next_key = f"{k} = buf[{pos}] if {pos} < {end} else -1"
        height = 0
        body: list[str]
        if (code == _STRING or (code == _SCALAR and kind == "bytes")) and not inline \
                or code == _SPECIAL and kind in _NULL_WHEN_EMPTY:
            # Go writes an empty string or bytes, and a zero time, as a size of 0: left out (or "" when kept)
            if code == _SPECIAL:
                lines, height = self.value(kind, pos, e, level)
                read = [*lines, f"if {x} is not None: {target} = {x}"]
            elif kind == "string":
                read = [f"{target} = {_string(pos, e)}"]
            else:
                lines, height = self.value(kind, pos, e, level)
                lines, value = _folded(lines, x)
                read = [*lines, f"{target} = {value}"]
            body = [f"{s} = buf[{pos} + {after}]",
                    f"if {s} == 0:",
                    f"    {pos} += {after + 1}",
                    *([f"    {target} = ''"] if keep_zero and code != _SPECIAL else []),
                    "else:",
                    *_indent([*rest_of_size(after), *read, f"{pos} = {e}"]),
                    next_key]
        elif code == _MESSAGE:
            lines, height = self.value(kind, pos, e, level)
            lines, value = _folded(lines, x)
            body = [*size, *lines, f"out{level}.update({value})" if inline else f"{target} = {value}",
                    f"{pos} = {e}", next_key]
        elif code == _SCALAR and f.varint:
            # a value below 128 is its own signed value (and a bool's 0 or 1): read in place
            small = f"{v} != 0" if kind == "bool" else v
            store = f"{target} = {small}" if keep_zero else f"if {v}: {target} = {'True' if kind == 'bool' else v}"
            body = [f"{v} = buf[{pos} + {after}]",
                    f"if {v} < 128:",
                    f"    {pos} += {after + 1}",
                    f"    {store}",
                    f"elif buf[{pos} + {after + 1}] < 128:",  # (two bytes: below 16384, its own value too)
                    f"    {v}, {pos} = {v} & 127 | buf[{pos} + {after + 1}] << 7, {pos} + {after + 2}",
                    f"    {store}",
                    "else:",
                    f"    {v}, {pos} = _varint(buf, {pos} + {after})",
                    f"    {v} = {_SIGNED[kind].format(v=v)}",
                    f"    {target} = {v}" if keep_zero else f"    if {v}: {target} = {v}",
                    next_key]
        elif code in (_SCALAR, _SPECIAL):
            lines, height = self.value(kind, pos, e, level)
            keep = (f"{target} = {x}" if keep_zero else f"if {e} > {pos}: {target} = {x}") if code == _SCALAR \
                else f"if {x} is not None: {target} = {x}"
            body = [*size, *lines, keep, f"{pos} = {e}", next_key]
        elif code == _REPEATED:
            lines, height = self.value(kind, pos, e, level)
            raw, hit, items = f"raw{level}", f"hit{level}", f"items{level}"
            memo = self.memo(kind, raw, "", x) if isinstance(kind, _Plan) and _may_be_flat(kind) else None
            if memo is None:
                lines, value = _folded(lines, x)
                item = [*lines, f"{items}.append({value})"]
            else:  # an item read before, found by its bytes
                item = [f"{raw} = buf[{pos}:{e}] if {s} < 128 else None",
                        f"{hit} = {memo[0]}.get({raw})",
                        f"if {hit} is not None: {items}.append(dict({hit}))",
                        "else:",
                        *_indent([*lines, f"{items}.append({x})", *memo[1]])]
            body = [f"{items} = []", "while True:",
                    *_indent([*size, *item, f"{pos} = {e}", next_key, f"if not ({test}): break"]),
                    f"{target} = {items}"]
        elif code == _MAP:
            if f.varint:
                return [], 0  # (no table has one: left to the two passes, as an unknown field)
            ks, ke, at, vs, key, entries, raw, hit = (
                f"{name}{level}" for name in ("ks", "ke", "at", "vs", "key", "entries", "raw", "hit"))
            lines, height = self.value(kind, at, e, level)
            # an entry of a string, a Quantity, a time or an IntOrString, or of a message all of whose values
            # are such (a DeviceAttribute, a DeviceCapacity), read before: found by its bytes
            memo = None if kind in ("RawExtension", "FieldsV1") else self.memo(kind, raw, key, x)
            if memo is None:
                lines, value = _folded(lines, x)
            else:
                lines, value = [*lines, *memo[1]], x
            entry = [f"{ks} = buf[{pos} + 1]",  # {1: key, 2: value}, each once
                     f"if buf[{pos}] != 10: raise _Unusual",
                     f"if {ks} < 128: {at} = {pos} + 2",
                     f"else: {ks}, {at} = _varint(buf, {pos} + 1)",
                     f"{ke} = {at} + {ks}",
                     f"{key} = {_string(at, ke)}",
                     f"if {ke} == {e}: {entries}[{key}] = {_zero_source(f, plan)}",
                     "else:",
                     f"    {vs} = buf[{ke} + 1]",
                     f"    if {vs} < 128: {at} = {ke} + 2",
                     f"    else: {vs}, {at} = _varint(buf, {ke} + 1)",
                     f"    if buf[{ke}] != 18 or {at} + {vs} != {e}: raise _Unusual",  # (a value past e, too)
                     *_indent(lines),
                     f"    {entries}[{key}] = {value}"]
            if memo is not None:
                found = f"dict({hit}[1])" if isinstance(kind, _Plan) else f"{hit}[1]"
                entry = [f"{raw} = buf[{pos}:{e}] if {s} < 128 else None",
                         f"{hit} = {memo[0]}.get({raw})",
                         f"if {hit} is not None: {entries}[{hit}[0]] = {found}",
                         "else:",
                         *_indent(entry)]
            body = [f"{entries} = {{}}", "while True:",
                    *_indent([*size, *entry, f"{pos} = {e}", next_key, f"if not ({test}): break"]),
                    f"{target} = {entries}"]
        else:  # _PACKABLE: one varint a key (as Go writes them), or one packed run
            packed_test, packed_after = _key_test(number, 2, level)
            return [f"if {test}:",
                    *_indent([f"items{level} = []", "while True:",
                              *_indent([*varint, f"items{level}.append({_SIGNED[kind].format(v=v)})", next_key,
                                        f"if not ({test}): break"]),
                              f"{target} = items{level}"]),
                    f"elif {packed_test}:",
                    *_indent([*sized(packed_after), f"{target} = _packed({kind!r}, buf[{pos}:{e}])", f"{pos} = {e}",
                              next_key])], 0
        return [f"if {test}:", *_indent(body)], height


_ENTRIES_KEPT = 512  # the entries or items a map or list field keeps, and has seen once (each emptied when full)


def _may_be_flat(plan: _Plan) -> bool:
    """Whether an object of ``plan`` may well hold no list or object: its message fields are pointers (Go writes
    every other message field, even empty: an object), and it has no map (a map is usually there, as a device's
    attributes, and looking such an item up would cost a few percent of reading it, for nothing)."""
    return not any(code == _MAP or code == _MESSAGE and not f.pointer
                   for code, _name, _keep, _inline, _kind, f, _rank in plan.slots)


def _mutable_fields(plan: _Plan) -> list[str]:
    """The JSON names of the fields of ``plan`` whose value can be a list or an object."""
    return [name for code, name, _keep, _inline, kind, _f, _rank in plan.slots
            if code in (_MESSAGE, _REPEATED, _MAP, _PACKABLE) or kind in ("RawExtension", "FieldsV1")]


def _folded(lines: list[str], x: str) -> tuple[list[str], str]:
    """The code of a value and the expression to use it by: a last line ``x = EXPR`` becomes EXPR at the one
    place that uses it (no store and load of x)."""
    if lines and lines[-1].startswith(f"{x} = "):
        return lines[:-1], lines[-1][len(x) + 3:]
    return lines, x


def _struct_order(plan: _Plan, out: str) -> list[str]:
    """Code that puts the keys of ``out``, written in field-number order, in struct order.

    A field is out of place only after a field that comes before it in the struct but has a greater number
    (an "early" field: a PodSpec's initContainers, number 20, before its containers, number 2). When no early
    field is in the object, field-number order is struct order; when some are, the keys before the first of
    them are in place (none of them is early, so each has a smaller number than every key after it) and
    the keys from it on are written again in struct order (a key written again goes last)."""
    if not plan.reorder:
        return []
    names = [slot[1] for slot in plan.slots]
    ranks = [slot[6] for slot in plan.slots]
    code: list[str] = []
    for index, name in enumerate(names):
        if any(rank < ranks[index] for rank in ranks[index + 1:]):
            test = "if" if not code else "elif"
            code.append(f"{test} {name!r} in {out}: _rewritten({out}, {tuple(names[index:])!r})")
    return code


def _rewritten(out: dict[str, Any], names: tuple[str, ...]) -> None:
    """Each of ``names`` in ``out`` written again, in this order (each goes last)."""
    for name in names:
        if name in out:
            out[name] = out.pop(name)


_GUARDED_FIELDS = 4  # fields tested one by one before a test of the message's end skips the rest


def _guarded(fields: list[list[str]], k: str) -> list[str]:
    """The fields' code, every few fields the rest behind one test that the message goes on (most messages
    set their first fields only: their end then costs one test, not one per field left)."""
    code = [line for lines in fields[:_GUARDED_FIELDS] for line in lines]
    if len(fields) > _GUARDED_FIELDS:
        code += [f"if {k} != -1:", *_indent(_guarded(fields[_GUARDED_FIELDS:], k))]
    return code


def _key_test(number: int, wire: int, level: int) -> tuple[str, int]:
    """The test that the key at pos<level> (its first byte in k<level>) is this field's, and its length."""
    raw, key = [], number << 3 | wire
    while True:
        raw.append(key & 0x7F | (0x80 if key > 0x7F else 0))
        key >>= 7
        if not key:
            break
    tests = [f"k{level} == {raw[0]}"] + [f"buf[pos{level} + {i}] == {byte}" for i, byte in enumerate(raw[1:], 1)]
    return " and ".join(tests), len(raw)


def _recursive(plans: dict[str, _Plan]) -> set[str]:
    """The messages that can hold themselves, at any depth."""
    def reaches(start: _Plan) -> set[str]:
        seen: set[str] = set()
        stack = [start]
        while stack:
            for slot in stack.pop().slots:
                kind = slot[4]
                if isinstance(kind, _Plan) and kind.name not in seen:
                    seen.add(kind.name)
                    stack.append(kind)
        return seen
    return {name for name, plan in plans.items() if name in reaches(plan)}


_NESTING: dict[tuple[int, str], tuple[Schema, int]] = {}


def _nesting(table: Schema, name: str) -> int:
    """:func:`nesting` of message ``name`` of ``table`` (computed once)."""
    found = _NESTING.get((id(table), name))
    if found is not None and found[0] is table:
        return found[1]
    plans = _plans(table)
    depths: dict[str, int] = {}

    def depth(plan: _Plan) -> int:  # the plan's object is level 1
        if plan.name not in depths:
            deepest = 0
            for code, _name, _keep, inline, kind, _f, _rank in plan.slots:
                below = depth(kind) if isinstance(kind, _Plan) else 0
                if inline:
                    below -= 1  # (its fields are the object's own)
                elif code in (_REPEATED, _MAP, _PACKABLE):
                    below += 1  # the list or the map
                deepest = max(deepest, below)
            depths[plan.name] = 1 + deepest
        return depths[plan.name]

    value = sys.maxsize if _recursive(plans) else depth(plans[name])
    _NESTING[id(table), name] = (table, value)
    return value


def _zero_source(f: Field, plan: _Plan) -> str:
    """The value of a map entry that has no value, as code (a fresh {} for a message)."""
    return repr(_zero(f.type, f.type in plan.message_types))


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
    if kind in SCALARS:
        raise ProtobufError(f"a {kind} is not length-delimited")
    raise ProtobufError(f"no message {kind} in the table")


def _packed(kind: str, run: bytes) -> list[Any]:
    out: list[Any] = []
    pos = 0
    while pos < len(run):
        value, pos = _varint(run, pos)
        out.append(_scalar(kind, value))
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
    try:
        return msgspec.json.decode(data)
    except (msgspec.DecodeError, ValueError) as exc:  # (UnicodeDecodeError is a ValueError)
        raise ProtobufError(f"the raw bytes of a {kind} are not JSON: {exc}") from None
    except RecursionError:
        raise ProtobufError(f"the JSON of a {kind} is nested too deeply") from None


# --- encoding: the bodies Go clients send ---------------------------------------------------------------

def encode(obj: dict[str, Any]) -> bytes:
    """The protobuf body a Go client sends for ``obj``, an object of :data:`KINDS` or :data:`OPTIONS` in its
    JSON form: the envelope, and the object as Go's generated code writes it — fields in field-number order,
    every field that is not a Go pointer written even when empty (an absent one as its zero value), a list's
    integers one key each, a map's entries sorted by key. :func:`decode` reads it back as ``obj`` where
    ``obj`` is in the JSON form Go writes. ProtobufError for an object of another kind or a value of the
    wrong JSON type."""
    api_version, kind = obj.get("apiVersion", ""), obj.get("kind", "")
    found = OPTIONS.get((api_version, kind)) or KINDS.get((api_version, kind))
    if found is None:
        raise ProtobufError(f"no protobuf encoding of {api_version or '?'}/{kind or '?'}")
    type_meta = _delimited(1, api_version.encode()) + _delimited(2, kind.encode())
    try:
        raw = _encode_message(obj, found[0], found[1])
    except (TypeError, ValueError, AttributeError, OverflowError) as exc:
        raise ProtobufError(f"cannot encode {api_version}/{kind}: {exc}") from None
    return MAGIC + _delimited(1, type_meta) + _delimited(2, raw) + _EMPTY_ENCODING_AND_TYPE


_ONE_BYTE = [bytes((value,)) for value in range(0x80)]


def _varint_bytes(value: int) -> bytes:
    value &= _UINT64  # a negative number is its 64-bit two's complement: ten bytes, as Go writes it
    if value < 0x80:
        return _ONE_BYTE[value]
    out = bytearray()
    while value > 0x7F:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _delimited(number: int, payload: bytes) -> bytes:
    return _varint_bytes(number << 3 | 2) + _varint_bytes(len(payload)) + payload


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
    return _encode_message(value or {}, table, kind)


def _parse_time(text: str) -> tuple[int, int]:
    """The seconds since the epoch and the microseconds of an RFC 3339 time in UTC ("...Z")."""
    if not text.endswith("Z"):
        raise ValueError(f"a time must be in UTC: {text!r}")
    when = datetime.fromisoformat(text[:-1])
    seconds = (when.date() - _EPOCH).days * 86400 + when.hour * 3600 + when.minute * 60 + when.second
    return seconds, when.microsecond
