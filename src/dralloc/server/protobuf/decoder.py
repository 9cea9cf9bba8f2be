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
ServiceAccount, Binding, Service, Endpoints, LimitRange, ResourceQuota, ReplicationController, PersistentVolume and
PersistentVolumeClaim, Node, every field; the apps/v1 workloads and
ControllerRevision, batch/v1 Job and CronJob; the storage.k8s.io/v1 kinds; rbac.authorization.k8s.io/v1 Role,
ClusterRole, RoleBinding and ClusterRoleBinding; networking.k8s.io Ingress, IngressClass and NetworkPolicy;
autoscaling HorizontalPodAutoscaler; admissionregistration.k8s.io webhook configurations and
ValidatingAdmissionPolicies with their bindings; discovery.k8s.io EndpointSlice, policy PodDisruptionBudget;
scheduling.k8s.io PriorityClass (and v1alpha2 Workload and PodGroup), apiextensions.k8s.io
CustomResourceDefinition, coordination.k8s.io Lease, policy Eviction, the self reviews', TokenReview's and TokenRequest's specs, and
DeleteOptions. Responses stay JSON, which those clients accept as well.

Every message is read through the schema tables (server/protobuf/schema.py, server/protobuf/pod.py,
server/protobuf/resource.py): a body as Go writes it by the C reader where it is built (accelerated.py; see
:func:`use_accelerator`), else by a single pass, each message compiled once into a Python function of
straight-line code for Go's field order; any other body, and every error, by two passes over a map from each
field's raw key to what it becomes. Fields it does not know are skipped, as Go's decoder
skips them; a known field of the wrong wire type, a truncated field, a varint of more than ten bytes, nesting
deeper than :data:`MAX_DEPTH`, invalid UTF-8, a time RFC 3339 cannot hold, a RawExtension that is not JSON
and an IntOrString of neither type are a :class:`ProtobufError` (a 400) that names the field. Sizes are
checked before anything is sliced, so the work is linear in the body. :func:`encode` writes an object as a Go
client does (the tests' and benchmarks' bodies).

This module holds the envelope and the public API; the rest lives beside it, one concern a module:
wire.py (varints, fields, :class:`ProtobufError`), plans.py (the tables' messages compiled for reading),
walker.py (the two passes), single_pass.py (the compiled functions), accelerated.py (the plans handed to the
optional C reader, _fastwire.c), forms.py (Time, MicroTime, IntOrString,
RawExtension and FieldsV1) and encoder.py (the messages as Go writes them).
"""

from __future__ import annotations

import sys
from typing import Any

from dralloc.server.protobuf import (
    accelerated,
    admission_registration,
    apiextensions,
    ingress_autoscaling,
    pod_groups,
    rbac,
    services,
    volumes,
    workloads,
)
from dralloc.server.protobuf.encoder import _delimited, _encode_message
from dralloc.server.protobuf.plans import MAX_DEPTH as MAX_DEPTH
from dralloc.server.protobuf.plans import _nesting, _plans
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
    SCHEDULING_V1,
    Schema,
)
from dralloc.server.protobuf.single_pass import _decoders, _Unusual, object_reader
from dralloc.server.protobuf.walker import _walk
from dralloc.server.protobuf.wire import ProtobufError, _last_values, _length_delimited, _text, _varint
from dralloc.server.protobuf.wire import fields as fields
from dralloc.server.protobuf.wire import scan as scan

MAGIC = b"k8s\x00"
CONTENT_TYPE = "application/vnd.kubernetes.protobuf"


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
    **workloads.KINDS,  # apps/v1 and batch/v1 workloads, ControllerRevisions, CronJobs
    **services.KINDS,  # Services, Endpoints, EndpointSlices, PodDisruptionBudgets
    **ingress_autoscaling.KINDS,  # Ingresses, IngressClasses, NetworkPolicies, HorizontalPodAutoscalers
    **volumes.KINDS,  # PersistentVolumes and their claims, the storage.k8s.io kinds
    **rbac.KINDS,  # Roles, ClusterRoles and their bindings
    **pod_groups.KINDS,  # scheduling.k8s.io/v1alpha2 Workloads and PodGroups
    **apiextensions.KINDS,  # CustomResourceDefinitions
    **admission_registration.KINDS,  # webhook configurations, ValidatingAdmissionPolicies and their bindings
}
# Messages that are not objects (no metadata of their own)
OPTIONS: dict[tuple[str, str], tuple[Schema, str]] = {
    ("v1", "DeleteOptions"): (META, "DeleteOptions"), ("meta.k8s.io/v1", "DeleteOptions"): (META, "DeleteOptions")}


def accepts(api_version: str, kind: str) -> bool:
    """Whether objects of this kind may be created or updated with a protobuf body."""
    return (api_version, kind) in KINDS


def custom_resource_refusal(body: bytes, kind: str, version: str) -> str:
    """kube-apiserver's 400 message for a protobuf body sent for a custom resource (of ``kind`` in ``version``,
    the URL's): its handler lists protobuf among its media types, but an unstructured object has no protobuf
    form, so the decoding fails once the envelope is read (its typeMeta, else the URL's, names the kind)."""
    if not body:
        error = "empty data"
    elif not body.startswith(MAGIC):
        prefix = " ".join(str(byte) for byte in MAGIC)  # (Go's %v of a byte slice)
        error = f"provided data does not appear to be a protobuf message, expected prefix [{prefix}]"
    elif len(body) == len(MAGIC):
        error = "empty body"
    else:
        try:
            api_version, sent_kind, *_ = _envelope(body)
        except (ProtobufError, UnicodeDecodeError) as exc:
            error = str(exc)
        else:
            sent_version = api_version.rpartition("/")[2]
            return (f'{sent_kind or kind} in version "{sent_version or version}" cannot be handled as a {kind}: '
                    f"Object 'Kind' is missing in 'object has no kind field '")
    summary = body[:30].hex() + (" ..." if len(body) > 30 else "") if body else "<empty>"
    if body[:1] == b"{":
        summary = body[:30].decode(errors="replace") + (" ..." if len(body) > 30 else "")
    return f"the object provided is unrecognized (must be of type {kind}): {error} ({summary})"


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
    if _ACCELERATED:  # Go's envelope of a kind met before: read in C in one call
        decoded = accelerated.read_envelope(_C_ENVELOPES, body)
        if decoded is not None:
            return decoded
    if body.startswith(_GO_START) and len(body) > 9:  # the commonest envelope, read here as _usual_object reads it
        raw_at = 7 + body[5]
        known = _TYPE_METAS.get(body[6:raw_at - 1])
        if known is not None and raw_at + 1 < len(body) and body[raw_at - 1] == 0x12:
            size, start = body[raw_at], raw_at + 1
            if size > 0x7F:  # (a second byte: an object of 128 bytes to 16 KiB)
                size, start = (size & 0x7F | body[start] << 7, start + 1) if body[start] < 0x80 else (0, 0)
            end = start + size
            if start and end == len(body) - 4 and body.endswith(_EMPTY_ENCODING_AND_TYPE):
                try:
                    decoded = known.read(body, start, end, known.api_version, known.kind)
                except (_Unusual, ProtobufError, UnicodeDecodeError, IndexError):
                    return _walked(known, body, start, end)
                return decoded if decoded is not None else _walked(known, body, start, end)
    elif not body.startswith(MAGIC):
        raise ProtobufError("the body does not start with the Kubernetes protobuf prefix")
    usual = _usual_object(body)
    if usual is not None:  # Go's envelope: its object read by one call of its compiled function
        known, buf, start, end = usual
        try:
            decoded = known.read(buf, start, end, known.api_version, known.kind)
        except (_Unusual, ProtobufError, UnicodeDecodeError, IndexError):
            return _walked(known, body, start, end)
        return decoded if decoded is not None else _walked(known, body, start, end)
    api_version, kind, raw, start, end = _envelope(body)
    found = KINDS.get((api_version, kind)) or OPTIONS.get((api_version, kind))
    if found is None:
        raise ProtobufError(f"protobuf bodies are not accepted for {api_version or '?'}/{kind or '?'} (JSON and "
                            f"YAML are)")
    return _object(api_version, kind, _message_at(raw, start, end, *found))


def _walked(known: _Known, body: bytes, start: int, end: int) -> dict[str, Any]:
    """The object in body[start:end] read again by the two passes: the same object where the single pass stepped
    aside, or the error a field-by-field reading meets first, with its path."""
    return _object(known.api_version, known.kind, _walk(_plans(known.table)[known.name], body[start:end], 1))


def _object(api_version: str, kind: str, message_of: dict[str, Any]) -> dict[str, Any]:
    """The object of a kind's message: its apiVersion and kind first, then (an object of :data:`KINDS`) its
    metadata, even when the message has none."""
    out: dict[str, Any] = {"apiVersion": api_version, "kind": kind}
    if (api_version, kind) in KINDS:
        out["metadata"] = {}
    out.update(message_of)
    return out


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


# Go's envelope starts with the magic and its typeMeta's key, and ends with its empty contentEncoding and
# contentType
_GO_START = MAGIC + b"\x0a"
_EMPTY_ENCODING_AND_TYPE = b"\x1a\x00\x22\x00"
# what the single pass finds after an object that ends its bytes (it reads a key and a size past a message: no
# field's key is 0)
_AFTER_LAST = b"\0\0\0\0"


def use_accelerator(enabled: bool) -> bool:
    """Read bodies with the C reader (accelerated.py; where the extension is built) or in Python alone, from
    the next body on; the setting before. At import: the C reader where built, unless ``DRALLOC_PURE_PYTHON``
    is set."""
    global _ACCELERATED, _TYPE_METAS
    before = _ACCELERATED
    _ACCELERATED = enabled and accelerated.AVAILABLE
    _TYPE_METAS = _TYPE_METAS_OF[_ACCELERATED]  # (each setting's kinds keep the readers it picked)
    return before


def accelerator_in_use() -> bool:
    """Whether bodies are read by the C reader (the Python path reads those it leaves)."""
    return _ACCELERATED


_ACCELERATED = accelerated.AVAILABLE


class _Known:
    """A kind of :data:`KINDS` or :data:`OPTIONS` met in a body: its names and its reader (compiled when first
    read): the C reader, or the single pass; a reader's None (the C reader's) or error is the walker's to
    read again."""

    __slots__ = ("api_version", "kind", "table", "name", "read")

    def __init__(self, api_version: str, kind: str) -> None:
        self.api_version, self.kind = api_version, kind
        self.table, self.name = KINDS.get((api_version, kind)) or OPTIONS[api_version, kind]
        self.read: accelerated.ObjectReader = self.compile_then_read

    def compile_then_read(self, buf: bytes, start: int, end: int, api_version: str,
                          kind: str) -> dict[str, Any] | None:
        metadata = (api_version, kind) in KINDS
        fast = accelerated.object_reader(self.table, self.name, metadata) if _ACCELERATED else None
        self.read = fast if fast is not None else object_reader(self.table, self.name, metadata)
        return self.read(buf, start, end, api_version, kind)


def _usual_envelope(body: bytes) -> tuple[str, str, bytes, int, int] | None:
    """:func:`_envelope`'s answer (the raw object left within the body) for an envelope as Go writes it —
    {1: {1: apiVersion, 2: kind}, 2: raw} and empty fields 3 and 4, each short enough for a one-byte size but
    the raw — or None (then it is read field by field)."""
    size = len(body)
    if size < 10 or body[4] != 0x0A or body[5] > 0x7F:
        return None
    type_meta = body[6:6 + body[5]]
    found = _type_meta(type_meta)
    usual = _usual_object(body) if found is not None else None
    if found is None or usual is None:
        return None
    return found[0], found[1], usual[1], usual[2], usual[3]


def _usual_object(body: bytes) -> tuple[_Known, bytes, int, int] | None:
    """The kind of the object of :func:`_usual_envelope`'s envelope, when it is one this decoder reads (else
    None), the bytes that hold the object (the body, or the body and zero bytes when the object ends it: the
    single pass reads the bytes after a message) and where the object starts and ends in them."""
    try:
        raw_at = 7 + body[5]  # (the raw's size, after the typeMeta and the raw's key)
        known = _TYPE_METAS.get(body[6:raw_at - 1]) or _new_kind(body)
        if known is None or body[4] != 0x0A or body[raw_at - 1] != 0x12:
            return None
        start, raw_size = raw_at + 1, body[raw_at]
        if raw_size > 0x7F:
            if body[start] < 0x80:  # an object of 128 bytes to 16 KiB
                raw_size, start = raw_size & 0x7F | body[start] << 7, start + 1
            else:
                raw_size, start = _varint(body, raw_at)
    except (IndexError, ProtobufError):
        return None
    end = start + raw_size
    size = len(body)
    if end == size - 4 and body.endswith(_EMPTY_ENCODING_AND_TYPE):
        return known, body, start, end
    return (known, body + _AFTER_LAST, start, end) if end == size else None


def _new_kind(body: bytes) -> _Known | None:
    """The kind of a body whose typeMeta is not yet in _TYPE_METAS, put there when it is Go's typeMeta of a kind
    this decoder reads (else None)."""
    if body[5] > 0x7F:
        return None
    type_meta = body[6:6 + body[5]]
    names = _type_meta(type_meta)
    if names is None or not (names in KINDS or names in OPTIONS):
        return None
    known = _TYPE_METAS[type_meta] = _Known(*names)
    if _ACCELERATED:
        accelerated.add_envelope(_C_ENVELOPES, type_meta, known.table, known.name, names in KINDS, *names)
    return known


# each typeMeta {1: apiVersion, 2: kind} as Go writes it, of a kind of KINDS or OPTIONS, by its bytes: with the
# C reader and without it
_TYPE_METAS_OF: dict[bool, dict[bytes, _Known]] = {True: {}, False: {}}
_TYPE_METAS = _TYPE_METAS_OF[_ACCELERATED]
_C_ENVELOPES: accelerated.Envelopes = {}  # the kinds of _TYPE_METAS_OF[True], for the C reader's envelope


def _type_meta(type_meta: bytes) -> tuple[str, str] | None:
    """(apiVersion, kind) of a typeMeta as Go writes it, each with a one-byte size (else None)."""
    size = len(type_meta)
    if size < 4 or type_meta[0] != 0x0A or type_meta[1] > 0x7F:
        return None
    kind_at = 2 + type_meta[1]
    if kind_at + 2 > size or type_meta[kind_at] != 0x12 or type_meta[kind_at + 1] > 0x7F \
            or kind_at + 2 + type_meta[kind_at + 1] != size:
        return None
    try:
        return type_meta[2:kind_at].decode(), type_meta[kind_at + 2:].decode()
    except UnicodeDecodeError:
        return None


def message(buf: bytes, table: Schema, name: str, depth: int = 1) -> dict[str, Any]:
    """The JSON object of message ``name`` of ``table`` encoded in ``buf``."""
    return _message_at(buf, 0, len(buf), table, name, depth)


def _message_at(buf: bytes, start: int, end: int, table: Schema, name: str, depth: int = 1) -> dict[str, Any]:
    """The JSON object of message ``name`` of ``table`` encoded in ``buf[start:end]``."""
    if _ACCELERATED:
        found = accelerated.read_message(buf, start, end, table, name, depth)
        if found is not None:
            return found
        return _walk(_plans(table)[name], buf[start:end], depth)  # (the single pass would leave it too)
    try:  # (the single pass reads the bytes after a message: zero bytes after one that ends buf)
        return _decoders(table)[name](buf if end < len(buf) else buf + _AFTER_LAST, start, end, depth)
    except (_Unusual, ProtobufError, UnicodeDecodeError, IndexError):
        # read again by the two passes: the same object where the single pass stepped aside, or the error a
        # field-by-field reading meets first, with its path (at most twice the work, whatever the body)
        return _walk(_plans(table)[name], buf[start:end], depth)


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
