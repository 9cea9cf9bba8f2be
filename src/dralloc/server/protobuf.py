"""Kubernetes protobuf request bodies for the core/v1 kinds this server keeps (Namespace, Node, ConfigMap,
Secret, ServiceAccount), the bodies of
pod subresources and deletes (Binding, policy Eviction, DeleteOptions), PriorityClass, Lease and the self
reviews (SelfSubjectAccessReview, SelfSubjectRulesReview, SelfSubjectReview).

kubectl's typed clients (``kubectl create namespace``, ``kubectl drain``'s evictions and deletes) and
kube-scheduler's binds send them as ``application/vnd.kubernetes.protobuf``: the magic ``k8s\\0`` and a
``runtime.Unknown`` envelope (typeMeta, raw) around the object's protobuf encoding. Only the fields this
server uses are decoded (object metadata, Namespace spec, Node spec and capacity/allocatable, a Binding's
target, delete options); other fields are skipped. Responses stay JSON, which those clients accept as well.
"""

from __future__ import annotations

import base64
from datetime import UTC, datetime, timedelta
from typing import Any

MAGIC = b"k8s\x00"
CONTENT_TYPE = "application/vnd.kubernetes.protobuf"


class ProtobufError(ValueError):
    pass


def _varint(buf: bytes, pos: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if pos >= len(buf):
            raise ProtobufError("truncated varint")
        byte = buf[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return value, pos
        shift += 7
        if shift > 63:
            raise ProtobufError("varint too long")


def fields(buf: bytes) -> list[tuple[int, Any]]:
    """(field number, value) pairs: an int for varints, bytes for length-delimited fields."""
    if not isinstance(buf, bytes):
        raise ProtobufError("expected a message")
    out: list[tuple[int, Any]] = []
    pos = 0
    while pos < len(buf):
        key, pos = _varint(buf, pos)
        number, wire = key >> 3, key & 7
        value: int | bytes
        if wire == 0:
            value, pos = _varint(buf, pos)
        elif wire == 2:
            size, pos = _varint(buf, pos)
            if pos + size > len(buf):
                raise ProtobufError("truncated field")
            value, pos = buf[pos:pos + size], pos + size
        elif wire == 1:
            value, pos = buf[pos:pos + 8], pos + 8
        elif wire == 5:
            value, pos = buf[pos:pos + 4], pos + 4
        else:
            raise ProtobufError(f"unsupported wire type {wire}")
        out.append((number, value))
    return out


def _text(value: Any) -> str:
    if not isinstance(value, bytes):
        raise ProtobufError("expected a string")
    try:
        return value.decode("utf-8")
    except UnicodeDecodeError:
        raise ProtobufError("invalid UTF-8 in a string") from None


def _signed(value: Any) -> int:
    if not isinstance(value, int):
        raise ProtobufError("expected an integer")
    return value - (1 << 64) if value >= 1 << 63 else value


def _map(entries: list[bytes], value: Any = _text) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for entry in entries:
        k = v = None
        for number, raw in fields(entry):
            if number == 1:
                k = _text(raw)
            elif number == 2:
                v = value(raw)
        if k is not None:
            out[k] = v if v is not None else ""
    return out


# the seconds of 0001-01-01T00:00:00Z and 9999-12-31T23:59:59Z: the times RFC 3339 text can hold
_FIRST_SECOND, _LAST_SECOND = -62_135_596_800, 253_402_300_799


def _utc(seconds: int, micros: int = 0) -> datetime:
    if not _FIRST_SECOND <= seconds <= _LAST_SECOND:
        raise ProtobufError(f"a time of {seconds} seconds is out of range")
    return datetime(1970, 1, 1, tzinfo=UTC) + timedelta(seconds=seconds, microseconds=max(0, min(micros, 999_999)))


def _rfc3339(when: datetime, micros: bool = False) -> str:
    """As Go writes a time (four-digit years included: strftime writes year 1 as "1")."""
    text = f"{when.year:04d}-{when.month:02d}-{when.day:02d}T{when.hour:02d}:{when.minute:02d}:{when.second:02d}"
    return text + (f".{when.microsecond:06d}Z" if micros else "Z")


def _time(raw: bytes) -> str:
    seconds = 0
    for number, value in fields(raw):
        if number == 1:
            seconds = _signed(value)
    return _rfc3339(_utc(seconds))


def _quantity(raw: bytes) -> str:
    return next((_text(v) for n, v in fields(raw) if n == 1), "0")


def _grouped(buf: bytes) -> dict[int, list[Any]]:
    out: dict[int, list[Any]] = {}
    for number, value in fields(buf):
        out.setdefault(number, []).append(value)
    return out


def object_meta(buf: bytes) -> dict[str, Any]:
    f = _grouped(buf)
    meta: dict[str, Any] = {}
    # Go's encoder writes every scalar, set or not: empty strings and zeros mean "unset" here.
    for number, key in ((1, "name"), (2, "generateName"), (3, "namespace"), (5, "uid"), (6, "resourceVersion")):
        if number in f and f[number][-1]:
            meta[key] = _text(f[number][-1])
    if 7 in f and f[7][-1]:
        meta["generation"] = _signed(f[7][-1])
    if 8 in f and any(n == 1 and v for n, v in fields(f[8][-1])):
        meta["creationTimestamp"] = _time(f[8][-1])
    if 11 in f:
        meta["labels"] = _map(f[11])
    if 12 in f:
        meta["annotations"] = _map(f[12])
    if 14 in f:
        meta["finalizers"] = [_text(v) for v in f[14]]
    return meta


def _namespace(f: dict[int, list[Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if 2 in f:
        spec = _grouped(f[2][-1])
        if 1 in spec:
            out["spec"] = {"finalizers": [_text(v) for v in spec[1]]}
    return out


def _taint(raw: bytes) -> dict[str, Any]:
    f = _grouped(raw)
    taint: dict[str, Any] = {}
    for number, key in ((1, "key"), (2, "value"), (3, "effect")):
        if number in f and (f[number][-1] or key == "key"):
            taint[key] = _text(f[number][-1])
    if 4 in f and any(n == 1 and v for n, v in fields(f[4][-1])):
        taint["timeAdded"] = _time(f[4][-1])
    return taint


def _node(f: dict[int, list[Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if 2 in f:
        s = _grouped(f[2][-1])
        spec: dict[str, Any] = {}
        if s.get(1, [b""])[-1]:
            spec["podCIDR"] = _text(s[1][-1])
        if 7 in s:
            spec["podCIDRs"] = [_text(v) for v in s[7]]
        if s.get(3, [b""])[-1]:
            spec["providerID"] = _text(s[3][-1])
        if s.get(4, [0])[-1]:
            spec["unschedulable"] = True
        if 5 in s:
            spec["taints"] = [_taint(v) for v in s[5]]
        if spec:
            out["spec"] = spec
    if 3 in f:
        st = _grouped(f[3][-1])
        status: dict[str, Any] = {}
        if 1 in st:
            status["capacity"] = _map(st[1], _quantity)
        if 2 in st:
            status["allocatable"] = _map(st[2], _quantity)
        if status:
            out["status"] = status
    return out


def _strings(raw: bytes, names: tuple[str, ...]) -> dict[str, str]:
    """A message of string fields numbered 1, 2, ... in the order of ``names`` (empty ones left out)."""
    f = _grouped(raw)
    return {name: _text(f[i][-1]) for i, name in enumerate(names, 1) if i in f and f[i][-1]}


_RESOURCE_ATTRIBUTES = ("namespace", "verb", "group", "version", "resource", "subresource", "name")


def _access_review(f: dict[int, list[Any]]) -> dict[str, Any]:
    spec: dict[str, Any] = {}
    if 2 in f:
        s = _grouped(f[2][-1])
        if 1 in s:
            spec["resourceAttributes"] = _strings(s[1][-1], _RESOURCE_ATTRIBUTES)
        if 2 in s:
            spec["nonResourceAttributes"] = _strings(s[2][-1], ("path", "verb"))
    return {"spec": spec}


def _rules_review(f: dict[int, list[Any]]) -> dict[str, Any]:
    return {"spec": _strings(f[2][-1], ("namespace",)) if 2 in f else {}}


def _self_review(f: dict[int, list[Any]]) -> dict[str, Any]:
    return {}


_OBJECT_REFERENCE = ("kind", "namespace", "name", "uid", "apiVersion", "resourceVersion", "fieldPath")


def _binding(f: dict[int, list[Any]]) -> dict[str, Any]:
    return {"target": _strings(f[2][-1], _OBJECT_REFERENCE)} if 2 in f else {}


def delete_options(raw: bytes) -> dict[str, Any]:
    """A DeleteOptions message (proto2: a field is present when it was set, zero included, so a grace period
    of 0, a force delete, is kept)."""
    f = _grouped(raw)
    out: dict[str, Any] = {}
    if 1 in f:
        out["gracePeriodSeconds"] = _signed(f[1][-1])
    if 2 in f:
        out["preconditions"] = _strings(f[2][-1], ("uid", "resourceVersion"))
    if 3 in f:
        out["orphanDependents"] = bool(_signed(f[3][-1]))
    if 4 in f:
        out["propagationPolicy"] = _text(f[4][-1])
    if 5 in f:
        out["dryRun"] = [_text(v) for v in f[5]]
    return out


def _priority_class(f: dict[int, list[Any]]) -> dict[str, Any]:
    # Go writes value, globalDefault and description always; preemptionPolicy when set
    out: dict[str, Any] = {"value": _signed(f[2][-1]) if 2 in f else 0}
    if 3 in f and _signed(f[3][-1]):
        out["globalDefault"] = True
    if 4 in f and f[4][-1]:
        out["description"] = _text(f[4][-1])
    if 5 in f:
        out["preemptionPolicy"] = _text(f[5][-1])
    return out


def _micro_time(raw: bytes) -> str:
    """A MicroTime (seconds, nanos) as its JSON text: RFC 3339 in UTC with microseconds."""
    f = _grouped(raw)
    seconds = _signed(f[1][-1]) if 1 in f else 0
    nanos = _signed(f[2][-1]) if 2 in f else 0
    return _rfc3339(_utc(seconds, nanos // 1000), micros=True)


def _lease(f: dict[int, list[Any]]) -> dict[str, Any]:
    if 2 not in f:
        return {}
    s = _grouped(f[2][-1])
    spec: dict[str, Any] = {}
    for number, key, read in ((1, "holderIdentity", _text), (2, "leaseDurationSeconds", _signed),
                              (3, "acquireTime", _micro_time), (4, "renewTime", _micro_time),
                              (5, "leaseTransitions", _signed), (6, "strategy", _text),
                              (7, "preferredHolder", _text)):
        if number in s:  # proto2: present when set (client-go's leader election sets them)
            spec[key] = read(s[number][-1])
    return {"spec": spec}


def _bytes_map(entries: list[bytes]) -> dict[str, str]:
    """A map<string, bytes> as JSON writes it: base64 values."""
    def b64(raw: Any) -> str:
        if not isinstance(raw, bytes):
            raise ProtobufError("expected bytes")
        return base64.b64encode(raw).decode()
    return _map(entries, b64)


def _configmap(f: dict[int, list[Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if 4 in f:  # proto2: present when set
        out["immutable"] = bool(_signed(f[4][-1]))
    if 2 in f:
        out["data"] = _map(f[2])
    if 3 in f:
        out["binaryData"] = _bytes_map(f[3])
    return out


def _secret(f: dict[int, list[Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if 5 in f:
        out["immutable"] = bool(_signed(f[5][-1]))
    if 2 in f:
        out["data"] = _bytes_map(f[2])
    if 4 in f:
        out["stringData"] = _map(f[4])
    if 3 in f and f[3][-1]:
        out["type"] = _text(f[3][-1])
    return out


def _service_account(f: dict[int, list[Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if 2 in f:
        out["secrets"] = [_strings(v, _OBJECT_REFERENCE) for v in f[2]]
    if 3 in f:
        out["imagePullSecrets"] = [_strings(v, ("name",)) for v in f[3]]
    if 4 in f:
        out["automountServiceAccountToken"] = bool(_signed(f[4][-1]))
    return out


def _eviction(f: dict[int, list[Any]]) -> dict[str, Any]:
    return {"deleteOptions": delete_options(f[2][-1])} if 2 in f else {}


KINDS = {("v1", "Namespace"): _namespace, ("v1", "Node"): _node, ("v1", "Binding"): _binding,
         # kubectl create configmap / secret / serviceaccount
         ("v1", "ConfigMap"): _configmap, ("v1", "Secret"): _secret, ("v1", "ServiceAccount"): _service_account,
         ("policy/v1", "Eviction"): _eviction, ("policy/v1beta1", "Eviction"): _eviction,
         ("scheduling.k8s.io/v1", "PriorityClass"): _priority_class,  # kubectl create priorityclass
         ("coordination.k8s.io/v1", "Lease"): _lease,  # leader election of protobuf clients
         # kubectl auth can-i / whoami send their reviews as protobuf
         ("authorization.k8s.io/v1", "SelfSubjectAccessReview"): _access_review,
         ("authorization.k8s.io/v1", "SelfSubjectRulesReview"): _rules_review,
         ("authentication.k8s.io/v1", "SelfSubjectReview"): _self_review}


# Messages without object metadata (field 1 is their own)
OPTIONS = {("v1", "DeleteOptions"): delete_options, ("meta.k8s.io/v1", "DeleteOptions"): delete_options}


def accepts(api_version: str, kind: str) -> bool:
    """Whether objects of this kind may be created or updated with a protobuf body."""
    return (api_version, kind) in KINDS


def decode(body: bytes) -> dict[str, Any]:
    """The JSON form of a protobuf-encoded kind of :data:`KINDS` or :data:`OPTIONS`; ProtobufError when it is
    none of them."""
    if not body.startswith(MAGIC):
        raise ProtobufError("the body does not start with the Kubernetes protobuf prefix")
    envelope = _grouped(body[len(MAGIC):])
    api_version = kind = ""
    if 1 in envelope:
        type_meta = _grouped(envelope[1][-1])
        api_version = _text(type_meta[1][-1]) if 1 in type_meta else ""
        kind = _text(type_meta[2][-1]) if 2 in type_meta else ""
    raw = envelope.get(2, [b""])[-1]
    if not isinstance(raw, bytes):
        raise ProtobufError("the envelope's raw field is not a message")
    options = OPTIONS.get((api_version, kind))
    if options is not None:
        return {"apiVersion": api_version, "kind": kind, **options(raw)}
    decoder = KINDS.get((api_version, kind))
    if decoder is None:
        raise ProtobufError(f"protobuf bodies are accepted for core/v1 Namespace, Node, ConfigMap, Secret, ServiceAccount, Binding and "
                            f"DeleteOptions, policy Eviction, PriorityClass, Lease and the self reviews only, not "
                            f"{api_version or '?'}/{kind or '?'}")
    obj = _grouped(raw)
    out: dict[str, Any] = {"apiVersion": api_version, "kind": kind,
                           "metadata": object_meta(obj[1][-1]) if 1 in obj else {}}
    out.update(decoder(obj))
    return out
