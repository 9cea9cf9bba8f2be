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

One walker reads every message through the schema tables (server/protobuf_schema.py, server/protobuf_pod.py,
server/protobuf_resource.py), each message compiled once into a map from its fields' raw keys to what they
become: a single pass reads a body as Go writes it, two passes anything else. Fields it does not know are
skipped, as Go's decoder skips them; a known field of the wrong wire type, a truncated field, a varint of more
than ten bytes, nesting deeper than :data:`MAX_DEPTH`, invalid UTF-8, a time RFC 3339 cannot hold, a
RawExtension that is not JSON and an IntOrString of neither type are a :class:`ProtobufError` (a 400). Sizes are checked before anything is sliced,
so the work is linear in the body.
"""

from __future__ import annotations

import base64
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
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


def decode(body: bytes) -> dict[str, Any]:
    """The JSON form of a protobuf-encoded kind of :data:`KINDS` or :data:`OPTIONS`; ProtobufError when the body
    is not one of them or is malformed."""
    if not body.startswith(MAGIC):
        raise ProtobufError("the body does not start with the Kubernetes protobuf prefix")
    envelope = _last_values(body[len(MAGIC):])
    api_version = kind = ""
    if 1 in envelope:
        type_meta = _last_values(_length_delimited(envelope[1], "the envelope's typeMeta"))
        api_version = _text(_length_delimited(type_meta[1], "apiVersion")) if 1 in type_meta else ""
        kind = _text(_length_delimited(type_meta[2], "kind")) if 2 in type_meta else ""
    raw = _length_delimited(envelope.get(2, (2, b"")), "the envelope's raw")
    head = {"apiVersion": api_version, "kind": kind}
    options = OPTIONS.get((api_version, kind))
    if options is not None:
        return {**head, **message(raw, *options)}
    found = KINDS.get((api_version, kind))
    if found is None:
        raise ProtobufError(f"protobuf bodies are not accepted for {api_version or '?'}/{kind or '?'} (JSON and "
                            f"YAML are)")
    return {**head, "metadata": {}, **message(raw, *found)}


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

# What a field becomes (a _Plan's codes; the commonest first in the walk's chain of tests; the single pass
# relies on the string and the message coming before the lists and maps)
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
    plan = _plans(table)[name]
    try:
        return _fast(plan, buf, depth)
    except (_Unusual, ProtobufError, UnicodeDecodeError):
        # read again by the two passes: the same object where the single pass stepped aside, or the error a
        # field-by-field reading meets first, with its path (at most twice the work, whatever the body)
        return _walk(plan, buf, depth)


class _Unusual(Exception):
    """A body the single pass leaves to the two passes: a field repeated that is not a list or a map, fields
    out of the struct's order, a map entry in an unusual form."""


def _fast(plan: _Plan, buf: bytes, depth: int) -> dict[str, Any]:
    """One pass over a message as Go writes it (each field once, a list's or a map's items together, in
    field-number order); _Unusual, a ProtobufError or a UnicodeDecodeError otherwise, without a path. Where it
    returns, its object is the two passes' object: it reads the same fields with the same checks."""
    if depth > MAX_DEPTH:
        raise _Unusual
    keys = plan.keys
    slots = plan.slots
    out: dict[str, Any] = {}
    last = -1
    container: Any = None  # the list or the map of the last slot
    pos, end = 0, len(buf)
    while pos < end:
        key = buf[pos]
        if key < 0x80:
            pos += 1
        else:
            key, pos = _varint(buf, pos)
        slot = keys.get(key)
        if slot is None:
            pos = _skip(plan, buf, pos, key)
            continue
        value: Any
        if key & 7:
            if pos < end and buf[pos] < 0x80:
                size = buf[pos]
                pos += 1
            else:
                size, pos = _varint(buf, pos)
            if size > end - pos:
                raise _Unusual
            value = buf[pos:pos + size]
            pos += size
        elif pos < end and buf[pos] < 0x80:
            value = buf[pos]
            pos += 1
        else:
            value, pos = _varint(buf, pos)
        code, name, keep_zero, inline, kind, f, rank = slots[slot]
        if rank != last:  # a new field
            if rank < last:
                raise _Unusual
            last = rank
            if code == _STRING:
                if value or keep_zero:
                    out[name] = value.decode()
                continue
            if code == _MESSAGE:
                if inline:
                    out.update(_fast(kind, value, depth + 1))
                else:
                    out[name] = _fast(kind, value, depth + 1)
                continue
            if code == _SPECIAL:
                if kind == "Quantity" and len(value) > 2 and value[0] == 0x0A and value[1] == len(value) - 2 < 0x80:
                    out[name] = value[2:].decode()  # {1: text} alone and short: _single's first reading
                    continue
                value = _single(kind, value, depth)
                if value is not None:
                    out[name] = value
                continue
            if code == _SCALAR:
                value = _scalar(kind, value)
                if value or keep_zero:
                    out[name] = value
                continue
            container = out[name] = {} if code == _MAP else []  # then its first item, as the next ones
        elif code < _REPEATED:  # a string or a message again (the last one wins, messages merge)
            raise _Unusual
        if code == _MAP:
            # an entry {1: key, 2: value}, each once and short, as Go writes them
            size = len(value)
            if size < 2 or value[0] != 0x0A or value[1] >= 0x80:
                raise _Unusual
            at = 2 + value[1]
            entry_key = value[2:at].decode()
            if at == size:
                container[entry_key] = _zero(f.type, f.type in plan.message_types)
                continue
            if at + 2 > size or value[at] != 0x12 or value[at + 1] >= 0x80 or at + 2 + value[at + 1] != size \
                    or f.varint:
                raise _Unusual
            value = value[at + 2:]
            if kind.__class__ is _Plan:
                container[entry_key] = _fast(kind, value, depth + 1)
            elif kind == "string":
                container[entry_key] = value.decode()
            elif kind in SCALARS:
                container[entry_key] = _scalar(kind, value)
            else:
                container[entry_key] = _single(kind, value, depth)
        elif code == _REPEATED:
            container.append(value.decode() if kind == "string" else
                             _fast(kind, value, depth + 1) if kind.__class__ is _Plan else
                             _single(kind, value, depth))
        elif code == _PACKABLE:
            container += _packed(kind, value) if key & 7 else [_scalar(kind, value)]
        else:  # a scalar or a Time, Quantity... again
            raise _Unusual
    if plan.reorder and len(out) > 1:
        return {name: out[name] for name in plan.reorder if name in out}
    return out


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


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def _time(raw: bytes, micro: bool) -> str | None:
    """A Time or MicroTime ({1: seconds, 2: nanos}) as Go's JSON writes it: RFC 3339 in UTC, in whole seconds
    (a Time's nanoseconds are dropped on decoding) or with six fraction digits (truncated). Go writes a zero
    time as an empty message, which is JSON's null (None)."""
    if not raw:
        return None
    seconds = nanos = -1
    if raw[0] == 0x08:  # the usual form, {1: seconds} alone, read directly; any other by its fields
        seconds, end = _varint(raw, 1)
        nanos = 0 if end == len(raw) and seconds < 1 << 63 else -1
    if nanos:
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
