"""The single pass (server/protobuf/single_pass.py's compiled functions) on the forms it reads in place: every field of
every kind at once, key order where Go's field numbers and the struct's order differ, times found by their
bytes, sizes of one to three bytes — each read without the two passes and equal to what they read."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest
from protobuf_readers import reader  # noqa: F401 (each test: C reader, then Python)
from test_protobuf_limits import full

from dralloc.server.protobuf import decoder, forms
from dralloc.server.protobuf.decoder import KINDS, OPTIONS, _usual_envelope, decode, encode
from dralloc.server.protobuf.plans import _plans
from dralloc.server.protobuf.single_pass import _ENTRIES_KEPT, _decoders, _Unusual, object_reader
from dralloc.server.protobuf.walker import _walk

ROOTS = {**KINDS, **OPTIONS}


def single_pass(body: bytes) -> dict[str, Any]:
    """The object of a body as Go writes it, read by the compiled function alone (it raises where it would
    leave the body to the two passes)."""
    usual = _usual_envelope(body)
    assert usual is not None
    api_version, kind, buf, start, end = usual
    table, name = ROOTS[api_version, kind]
    return _decoders(table)[name](buf, start, end, 1)


def two_passes(body: bytes) -> dict[str, Any]:
    usual = _usual_envelope(body)
    assert usual is not None
    api_version, kind, buf, start, end = usual
    table, name = ROOTS[api_version, kind]
    return _walk(_plans(table)[name], buf[start:end], 1)


def same_json(a: Any, b: Any) -> bool:
    """Equal, keys in the same order."""
    return bool(msgspec.json.encode(a) == msgspec.json.encode(b))


@pytest.mark.parametrize(("api_version", "kind"), sorted(ROOTS))
def test_every_field_of_a_kind_is_read_by_the_single_pass(api_version: str, kind: str) -> None:
    table, name = ROOTS[api_version, kind]
    body = encode({"apiVersion": api_version, "kind": kind, **full(table, name)})
    assert same_json(single_pass(body), two_passes(body))


def pod(spec: dict[str, Any]) -> bytes:
    return encode({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": spec})


CONTAINER = {"name": "app", "image": "busybox", "terminationMessagePath": "/dev/termination-log",
             "terminationMessagePolicy": "File", "imagePullPolicy": "IfNotPresent", "tty": True}


@pytest.mark.parametrize("spec", [
    # fields in field-number order are struct order here: nothing to move
    {"containers": [{"name": "app"}], "restartPolicy": "Never", "nodeName": "n"},
    # initContainers (20) comes before containers (2) in the struct; the keys from it on are written again
    {"volumes": [{"name": "v"}], "initContainers": [{"name": "init"}], "containers": [CONTAINER],
     "restartPolicy": "Never", "automountServiceAccountToken": False, "nodeName": "n", "priority": 5},
    # an early field further on (automountServiceAccountToken: 21, before nodeName: 10)
    {"containers": [CONTAINER], "serviceAccountName": "sa", "automountServiceAccountToken": True,
     "nodeName": "n", "hostNetwork": True, "schedulerName": "s"},
    # early fields only
    {"ephemeralContainers": [{"name": "debug"}], "shareProcessNamespace": True},
])
def test_a_pod_spec_comes_out_in_struct_order(spec: dict[str, Any]) -> None:
    body = pod(spec)
    decoded = single_pass(body)["spec"]
    assert same_json(decoded, two_passes(body)["spec"])
    struct_order = [f.name for f in ROOTS["v1", "Pod"][0]["PodSpec"].values()]
    assert list(decoded) == [name for name in struct_order if name in decoded]
    assert set(decoded) >= set(spec)
    container_order = [f.name for f in ROOTS["v1", "Pod"][0]["Container"].values()]
    for container in decoded.get("containers", []):
        assert list(container) == [name for name in container_order if name in container]


def test_a_time_and_a_micro_time_of_the_same_bytes_are_each_their_own() -> None:
    event = {"apiVersion": "v1", "kind": "Event", "metadata": {"name": "e", "namespace": "default"},
             "firstTimestamp": "2025-01-02T03:04:05Z", "eventTime": "2025-01-02T03:04:05.000000Z",
             "reportingComponent": "", "reportingInstance": ""}
    for _ in range(2):  # (the second time from the caches)
        decoded = decode(encode(event))
        assert decoded["firstTimestamp"] == "2025-01-02T03:04:05Z"
        assert decoded["eventTime"] == "2025-01-02T03:04:05.000000Z"


def test_the_times_kept_are_bounded() -> None:
    for second in range(forms._TIMES_KEPT + 10):
        when = f"2025-01-01T{second // 3600:02d}:{second // 60 % 60:02d}:{second % 60:02d}Z"
        node = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "n", "creationTimestamp": when}}
        assert decode(encode(node))["metadata"]["creationTimestamp"] == when
    assert len(forms._TIMES) <= forms._TIMES_KEPT


@pytest.mark.parametrize("length", [0, 1, 127, 128, 300, 16383, 16384, 70000])
def test_sizes_of_one_to_three_bytes_are_read_in_place(length: int) -> None:
    # a label value, a map entry of that size, and the objects around it: sizes of one, two and three bytes
    namespace = {"apiVersion": "v1", "kind": "Namespace",
                 "metadata": {"name": "n", "labels": {"k": "v" * length}, "annotations": {"a" * length: "x"}}}
    body = encode(namespace)
    assert same_json(single_pass(body), two_passes(body))
    assert decode(body)["metadata"] == namespace["metadata"]


# --- map entries read before, found by their bytes --------------------------------------------------------

def resource_slice(attributes: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "s"},
            "spec": {"driver": "gpu.example.com", "pool": {"name": "p", "generation": 1, "resourceSliceCount": 1},
                     "nodeName": "n", "devices": [{"name": "gpu-0", "attributes": attributes,
                                                   "capacity": {"memory": {"value": "80Gi"}}}]}}


def test_a_map_value_found_by_its_bytes_is_a_new_object_each_time() -> None:
    body = encode(resource_slice({"model": {"string": "h100"}, "slots": {"ints": [1, 2]}}))
    first = decode(body)
    device = first["spec"]["devices"][0]
    device["attributes"]["model"]["string"] = "changed"
    device["attributes"]["slots"]["ints"].append(3)
    device["capacity"]["memory"]["value"] = "1Gi"
    again = decode(body)["spec"]["devices"][0]
    assert again["attributes"] == {"model": {"string": "h100"}, "slots": {"ints": [1, 2]}}
    assert again["capacity"] == {"memory": {"value": "80Gi"}}


def test_the_same_entry_bytes_in_two_maps_are_each_their_maps() -> None:
    # a label whose bytes are those of a capacity entry {cpu: Quantity "4"}: a string in one, a Quantity in the other
    label = "\n\x014"
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n", "labels": {"cpu": label}},
            "status": {"capacity": {"cpu": "4"}}}
    body = encode(node)
    assert body.count(b"\n\x03cpu\x12\x03\n\x014") == 2
    for _ in range(2):
        decoded = decode(body)
        assert decoded["metadata"]["labels"] == {"cpu": label}
        assert decoded["status"]["capacity"] == {"cpu": "4"}


def test_the_entries_kept_are_bounded() -> None:
    for index in range(_ENTRIES_KEPT + 10):
        body = encode(resource_slice({"index": {"int": index}}))
        assert decode(body)["spec"]["devices"][0]["attributes"] == {"index": {"int": index}}
    table, _ = KINDS["resource.k8s.io/v1", "ResourceSlice"]
    memos = {name: memo for name, memo in _decoders(table)["Device"].__globals__.items() if name.startswith("_entries")}
    assert memos and all(len(memo) <= _ENTRIES_KEPT for memo in memos.values())


def test_a_list_item_found_by_its_bytes_is_a_new_object_each_time() -> None:
    toleration = {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute",
                  "tolerationSeconds": 300}
    requirement = {"key": "zone", "operator": "In", "values": ["a"]}
    spec = {"containers": [{"name": "app"}], "tolerations": [toleration, toleration],
            "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [{"matchExpressions": [requirement]}]}}}}
    body = pod(spec)
    for _ in range(3):
        decoded = decode(body)["spec"]
        assert decoded["tolerations"] == [toleration, toleration]
        terms = decoded["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
        assert terms["nodeSelectorTerms"][0]["matchExpressions"] == [requirement]
        assert decoded["tolerations"][0] is not decoded["tolerations"][1]
        decoded["tolerations"][0]["key"] = "changed"
        terms["nodeSelectorTerms"][0]["matchExpressions"][0]["values"].append("b")


@pytest.mark.parametrize("value", [0, 1, 127, 128, 300, 16383, 16384, 2**31 - 1, -1, -(2**31)])
def test_integers_of_one_to_ten_bytes_are_read_in_place(value: int) -> None:
    spec = {"containers": [{"name": "app"}], "priority": value, "terminationGracePeriodSeconds": value * 3}
    decoded = single_pass(pod(spec))["spec"]
    assert decoded.get("priority", 0) == value and decoded.get("terminationGracePeriodSeconds", 0) == value * 3
    assert same_json(decoded, two_passes(pod(spec))["spec"])


# --- a whole object in one call -----------------------------------------------------------------------------

@pytest.mark.parametrize(("api_version", "kind"), sorted(ROOTS))
def test_an_object_is_read_with_its_api_version_and_kind_first(api_version: str, kind: str) -> None:
    table, name = ROOTS[api_version, kind]
    head: dict[str, Any] = {"apiVersion": api_version, "kind": kind}
    if (api_version, kind) in KINDS:
        head["metadata"] = {}  # (its place is the third, even when the body holds none)
    read = object_reader(table, name, (api_version, kind) in KINDS)
    for fields in (full(table, name), {}):
        body = encode({"apiVersion": api_version, "kind": kind, **fields})
        usual = _usual_envelope(body)
        assert usual is not None
        _, _, buf, start, end = usual
        assert same_json(read(buf, start, end, api_version, kind), {**head, **two_passes(body)})
        assert same_json(decode(body), {**head, **two_passes(body)})


def test_go_s_envelope_is_read_by_decode_itself(monkeypatch: pytest.MonkeyPatch) -> None:
    def not_here(body: bytes) -> None:
        raise AssertionError("read by _usual_object")

    event = {"apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": {"name": "e", "namespace": "default"},
             "eventTime": "2025-01-02T03:04:05.000006Z", "note": "x" * 200,  # (a raw of two size bytes)
             "regarding": {}, "deprecatedSource": {}}  # (Go writes them, empty)
    body = encode(event)
    decode(body)  # (the kind now known by its typeMeta's bytes)
    monkeypatch.setattr(decoder, "_usual_object", not_here)
    assert decode(body) == event


def test_an_object_that_ends_its_body_is_read_by_the_single_pass() -> None:
    # Go writes the envelope's empty contentEncoding and contentType after the object; without them, the object
    # ends the body and the single pass reads zero bytes after it (it reads past a message's end)
    event = {"apiVersion": "v1", "kind": "Event", "metadata": {"name": "e", "namespace": "default"},
             "involvedObject": {}, "source": {}, "reportingComponent": "", "reportingInstance": ""}
    body = encode(event).removesuffix(b"\x1a\x00\x22\x00")
    assert same_json(single_pass(body), two_passes(body))
    assert decode(body) == event


def test_a_message_short_of_fields_go_always_writes_is_read_as_the_two_passes_read_it() -> None:
    # The next key is read without a test of the message's end where Go always writes the next field: here the
    # metadata ends after its name (Go writes generateName, 2, and more after it), and the byte after it is the
    # Event's eventTime key (2), which is the key of the metadata's generateName as well
    def delimited(number: int, value: bytes) -> bytes:
        return bytes([number << 3 | 2, len(value)]) + value

    seconds = 1_735_787_045
    time = b"\x08" + bytes([seconds & 0x7F | 0x80, seconds >> 7 & 0x7F | 0x80, seconds >> 14 & 0x7F | 0x80,
                            seconds >> 21 & 0x7F | 0x80, seconds >> 28])
    raw = delimited(1, delimited(1, b"e")) + delimited(2, time) + delimited(6, b"Scheduling")
    type_meta = delimited(1, b"events.k8s.io/v1") + delimited(2, b"Event")
    body = b"k8s\x00" + delimited(1, type_meta) + delimited(2, raw) + b"\x1a\x00\x22\x00"
    with pytest.raises((_Unusual, UnicodeDecodeError)):  # (the single pass steps aside: it read a field past the end)
        single_pass(body)
    assert decode(body) == {"apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": {"name": "e"},
                            "eventTime": "2025-01-02T03:04:05.000000Z", "action": "Scheduling"}
