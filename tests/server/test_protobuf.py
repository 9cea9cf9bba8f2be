"""Protobuf bodies of the resource.k8s.io kinds, of Events and of Pods (what kube-scheduler,
kube-controller-manager, client-go DRA drivers and the Kubernetes e2e framework send): the table-driven decoder field by field, and creates, updates and status updates
through the server, built with a small protobuf encoder of the test's own."""

from __future__ import annotations

import copy
import json
import re
import warnings
from datetime import datetime
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

warnings.filterwarnings("ignore", message="Using `httpx`")
from cluster import api_client  # noqa: E402
from protobuf_readers import reader  # noqa: E402, F401 (each test: C reader, then Python)
from starlette.testclient import TestClient  # noqa: E402

from dralloc.server.protobuf.decoder import MAX_DEPTH, ProtobufError, decode, message  # noqa: E402
from dralloc.server.protobuf.schema import messages  # noqa: E402

PROTOBUF = {"content-type": "application/vnd.kubernetes.protobuf"}
R = "/apis/resource.k8s.io/v1"
CLAIMS = f"{R}/namespaces/ml-team/resourceclaims"


# --- a protobuf encoder: each helper is one field ------------------------------------------------------

def varint(n: int) -> bytes:
    n &= (1 << 64) - 1  # a negative int32 or int64 is its 64-bit two's complement: ten bytes
    out = bytearray()
    while True:
        byte, n = n & 0x7F, n >> 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def num(number: int, value: int | bool) -> bytes:
    """A varint field (int32, int64, bool)."""
    return varint(number << 3) + varint(int(value))


def ld(number: int, *parts: bytes | str) -> bytes:
    """A length-delimited field: a string, bytes, or a message of the given fields."""
    payload = b"".join(p.encode() if isinstance(p, str) else p for p in parts)
    return varint(number << 3 | 2) + varint(len(payload)) + payload


def entry(number: int, key: str, value: bytes | str) -> bytes:
    """One entry of a map field (a value of a message type is passed encoded)."""
    return ld(number, ld(1, key), ld(2, value))


def quantity(number: int, text: str) -> bytes:
    return ld(number, ld(1, text))


def seconds(text: str) -> int:
    return int(datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp())


def time(number: int, text: str, nanos: int = 0) -> bytes:
    return ld(number, num(1, seconds(text)), *([num(2, nanos)] if nanos else []))


def raw(number: int, value: Any) -> bytes:
    """A RawExtension or FieldsV1: JSON bytes in field 1."""
    return ld(number, ld(1, json.dumps(value)))


def envelope(api_version: str, kind: str, *fields: bytes) -> bytes:
    return b"k8s\x00" + ld(1, ld(1, api_version), ld(2, kind)) + ld(2, *fields) + ld(3, "") + ld(4, "")


def meta(name: str = "", namespace: str = "", **extra: bytes) -> bytes:
    # As Go writes ObjectMeta: every plain string and number, empty or not
    return ld(1, ld(1, name), ld(2, ""), ld(3, namespace), ld(4, ""), ld(5, ""), ld(6, ""), num(7, 0),
              ld(8), *extra.values())


@pytest.fixture
def client() -> TestClient:
    return api_client("ml-team")


# --- the decoder, kind by kind --------------------------------------------------------------------------

def test_object_meta_is_read_whole() -> None:
    owner = ld(13, ld(1, "Pod"), ld(3, "web"), ld(4, "u-1"), ld(5, "v1"), num(6, True), num(7, False))
    managed = ld(17, ld(1, "kube-scheduler"), ld(2, "Update"), ld(3, "resource.k8s.io/v1"),
                 time(4, "2025-03-04T05:06:07Z"), ld(6, "FieldsV1"), raw(7, {"f:status": {"f:allocation": {}}}),
                 ld(8, "status"))
    body = ld(1, ld(1, ""), ld(2, "claim-"), ld(3, "ml-team"), ld(4, ""), ld(5, "u-2"), ld(6, "42"), num(7, 3),
              time(8, "2025-01-02T03:04:05Z", nanos=999), time(9, "2025-01-02T03:05:00Z"), num(10, 0),
              entry(11, "app", "web"), entry(11, "tier", ""), entry(12, "note", "x"), owner,
              ld(14, "a.example/f"), ld(14, "b.example/g"), managed)
    assert decode(envelope("resource.k8s.io/v1", "ResourceClaim", body))["metadata"] == {
        "generateName": "claim-", "namespace": "ml-team", "uid": "u-2", "resourceVersion": "42", "generation": 3,
        "creationTimestamp": "2025-01-02T03:04:05Z", "deletionTimestamp": "2025-01-02T03:05:00Z",
        "deletionGracePeriodSeconds": 0, "labels": {"app": "web", "tier": ""}, "annotations": {"note": "x"},
        "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": "web", "uid": "u-1", "controller": True,
                             "blockOwnerDeletion": False}],
        "finalizers": ["a.example/f", "b.example/g"],
        "managedFields": [{"manager": "kube-scheduler", "operation": "Update", "apiVersion": "resource.k8s.io/v1",
                           "time": "2025-03-04T05:06:07Z", "fieldsType": "FieldsV1",
                           "fieldsV1": {"f:status": {"f:allocation": {}}}, "subresource": "status"}]}


def _claim_spec() -> bytes:
    toleration = ld(6, ld(1, "gpu.example.com/unhealthy"), ld(2, "Exists"), ld(3, ""), ld(4, "NoSchedule"),
                    num(5, -5))
    exactly = ld(2, ld(1, "gpu.example.com"), ld(2, ld(1, ld(1, 'device.driver == "gpu.example.com"'))),
                 ld(3, "ExactCount"), num(4, 2), num(5, False), toleration,
                 ld(7, entry(1, "memory", ld(1, "40Gi"))))
    sub = ld(3, ld(1, "small"), ld(2, "gpu.example.com"), ld(4, "All"), num(5, 0))
    requests = ld(1, ld(1, "gpus"), exactly) + ld(1, ld(1, "either"), sub)
    constraint = ld(2, ld(1, "gpus"), ld(2, "gpu.example.com/model"))
    config = ld(3, ld(1, "gpus"), ld(2, ld(1, ld(1, "gpu.example.com"), raw(2, {"sharing": {"mode": "mps"}}))))
    return ld(2, ld(1, requests, constraint, config))


CLAIM_SPEC = {"devices": {
    "requests": [
        {"name": "gpus", "exactly": {
            "deviceClassName": "gpu.example.com",
            "selectors": [{"cel": {"expression": 'device.driver == "gpu.example.com"'}}],
            "allocationMode": "ExactCount", "count": 2, "adminAccess": False,
            "tolerations": [{"key": "gpu.example.com/unhealthy", "operator": "Exists", "effect": "NoSchedule",
                             "tolerationSeconds": -5}],
            "capacity": {"requests": {"memory": "40Gi"}}}},
        {"name": "either", "firstAvailable": [{"name": "small", "deviceClassName": "gpu.example.com",
                                               "allocationMode": "All"}]}],
    "constraints": [{"requests": ["gpus"], "matchAttribute": "gpu.example.com/model"}],
    "config": [{"requests": ["gpus"], "opaque": {"driver": "gpu.example.com",
                                                 "parameters": {"sharing": {"mode": "mps"}}}}]}}


def _claim_status() -> bytes:
    result = ld(1, ld(1, "gpus"), ld(2, "gpu.example.com"), ld(3, "node-1"), ld(4, "gpu-0"), num(5, True),
                ld(7, "attached"), ld(9, "s-1"), entry(10, "memory", ld(1, "40Gi")))
    config = ld(2, ld(1, "FromClaim"), ld(2, "gpus"), ld(3, ld(1, ld(1, "gpu.example.com"), raw(2, [1, 2]))))
    selector = ld(3, ld(1, ld(1, ld(1, "kubernetes.io/hostname"), ld(2, "In"), ld(3, "node-1")),
                        ld(2, ld(1, "metadata.name"), ld(2, "In"), ld(3, "node-1"))))
    allocation = ld(1, ld(1, result, config), selector, time(5, "2025-05-06T07:08:09Z"))
    reserved = ld(2, ld(1, ""), ld(3, "pods"), ld(4, "web"), ld(5, "pod-uid"))
    condition = ld(4, ld(1, "Ready"), ld(2, "True"), num(3, 4), time(4, "2025-05-06T07:08:10Z"), ld(5, "Up"),
                   ld(6, ""))
    device = ld(4, ld(1, "gpu.example.com"), ld(2, "node-1"), ld(3, "gpu-0"), ld(7, "s-1"), condition,
                raw(5, {"health": "ok"}), ld(6, ld(1, "eth0"), ld(2, "10.0.0.1/24"), ld(3, "")))
    return ld(3, allocation, reserved, device)


CLAIM_STATUS = {
    "allocation": {
        "devices": {
            "results": [{"request": "gpus", "driver": "gpu.example.com", "pool": "node-1", "device": "gpu-0",
                         "adminAccess": True, "bindingConditions": ["attached"], "shareID": "s-1",
                         "consumedCapacity": {"memory": "40Gi"}}],
            "config": [{"source": "FromClaim", "requests": ["gpus"],
                        "opaque": {"driver": "gpu.example.com", "parameters": [1, 2]}}]},
        "nodeSelector": {"nodeSelectorTerms": [{
            "matchExpressions": [{"key": "kubernetes.io/hostname", "operator": "In", "values": ["node-1"]}],
            "matchFields": [{"key": "metadata.name", "operator": "In", "values": ["node-1"]}]}]},
        "allocationTimestamp": "2025-05-06T07:08:09Z"},
    "reservedFor": [{"resource": "pods", "name": "web", "uid": "pod-uid"}],
    "devices": [{"driver": "gpu.example.com", "pool": "node-1", "device": "gpu-0", "shareID": "s-1",
                 "conditions": [{"type": "Ready", "status": "True", "observedGeneration": 4,
                                 "lastTransitionTime": "2025-05-06T07:08:10Z", "reason": "Up", "message": ""}],
                 "data": {"health": "ok"}, "networkData": {"interfaceName": "eth0", "ips": ["10.0.0.1/24"]}}]}


def test_a_resource_claim_is_read_with_every_part_of_its_spec_and_status() -> None:
    claim = decode(envelope("resource.k8s.io/v1", "ResourceClaim", meta("c", "ml-team"), _claim_spec(),
                            _claim_status()))
    assert claim == {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                     "metadata": {"name": "c", "namespace": "ml-team"}, "spec": CLAIM_SPEC, "status": CLAIM_STATUS}


def test_a_resource_slice_keeps_its_attributes_capacity_counters_and_taints() -> None:
    attributes = (entry(2, "model", ld(4, "H100")) + entry(2, "cores", num(2, -3)) + entry(2, "mig", num(3, False))
                  + entry(2, "driverVersion", ld(5, "1.2.3")) + entry(2, "list", num(6, 1) + num(6, -1)))
    policy = ld(2, quantity(1, "1Gi"), quantity(3, "1Gi"), quantity(3, "2Gi"),
                ld(4, quantity(1, "1Gi"), quantity(2, "8Gi"), quantity(3, "1Gi")))
    capacity = entry(3, "memory", quantity(1, "80Gi") + policy)
    consumes = ld(4, ld(1, "shared"), entry(2, "memory", quantity(1, "8Gi")))
    taint = ld(8, ld(1, "broken"), ld(2, ""), ld(3, "NoExecute"), time(4, "2025-02-03T04:05:06Z"))
    device = ld(6, ld(1, "gpu-0"), attributes, capacity, consumes, num(7, False), taint, num(9, True),
                ld(10, "attached"), num(12, True))
    spec = ld(2, ld(1, "gpu.example.com"), ld(2, ld(1, "node-1"), num(2, 0), num(3, 1)), ld(3, "node-1"), device,
              ld(8, ld(1, "shared"), entry(2, "memory", quantity(1, "80Gi"))))
    got = decode(envelope("resource.k8s.io/v1", "ResourceSlice", meta("s"), spec))
    assert got["spec"] == {
        "driver": "gpu.example.com", "pool": {"name": "node-1", "generation": 0, "resourceSliceCount": 1},
        "nodeName": "node-1",
        "devices": [{"name": "gpu-0",
                     "attributes": {"model": {"string": "H100"}, "cores": {"int": -3}, "mig": {"bool": False},
                                    "driverVersion": {"version": "1.2.3"}, "list": {"ints": [1, -1]}},
                     "capacity": {"memory": {"value": "80Gi", "requestPolicy": {
                         "default": "1Gi", "validValues": ["1Gi", "2Gi"],
                         "validRange": {"min": "1Gi", "max": "8Gi", "step": "1Gi"}}}},
                     "consumesCounters": [{"counterSet": "shared", "counters": {"memory": {"value": "8Gi"}}}],
                     "allNodes": False,
                     "taints": [{"key": "broken", "effect": "NoExecute", "timeAdded": "2025-02-03T04:05:06Z"}],
                     "bindsToNode": True, "bindingConditions": ["attached"], "allowMultipleAllocations": True}],
        "sharedCounters": [{"name": "shared", "counters": {"memory": {"value": "80Gi"}}}]}


def test_v1beta1_has_its_own_device_and_request_shapes() -> None:
    device = ld(6, ld(1, "gpu-0"), ld(2, entry(1, "model", ld(4, "H100")), ld(4, "node-1"), num(6, False)))
    spec = ld(2, ld(1, "gpu.example.com"), ld(2, ld(1, "p")), ld(3, ""), num(5, False), device)
    slice_ = decode(envelope("resource.k8s.io/v1beta1", "ResourceSlice", meta("s"), spec))
    # (v1beta1's nodeName and allNodes are plain values: empty ones are left out; BasicDevice's are pointers)
    assert slice_["spec"] == {"driver": "gpu.example.com", "pool": {"name": "p"},
                              "devices": [{"name": "gpu-0", "basic": {"attributes": {"model": {"string": "H100"}},
                                                                      "nodeName": "node-1", "allNodes": False}}]}
    request = ld(1, ld(1, "gpus"), ld(2, "gpu.example.com"), ld(4, "ExactCount"), num(5, 1), num(6, True),
                 ld(8, ld(1, "k"), ld(2, "Equal"), ld(3, "v")))
    claim = decode(envelope("resource.k8s.io/v1beta1", "ResourceClaim", meta("c"), ld(2, ld(1, request))))
    assert claim["spec"] == {"devices": {"requests": [{
        "name": "gpus", "deviceClassName": "gpu.example.com", "allocationMode": "ExactCount", "count": 1,
        "adminAccess": True, "tolerations": [{"key": "k", "operator": "Equal", "value": "v"}]}]}}


def test_device_class_template_and_taint_rule() -> None:
    spec = ld(2, ld(1, ld(1, ld(1, "true"))), ld(2, ld(1, ld(1, ld(1, "d"), raw(2, {"a": 1})))), ld(4, "x.io/gpu"))
    assert decode(envelope("resource.k8s.io/v1beta2", "DeviceClass", meta("c"), spec))["spec"] == {
        "selectors": [{"cel": {"expression": "true"}}], "config": [{"opaque": {"driver": "d", "parameters": {"a": 1}}}],
        "extendedResourceName": "x.io/gpu"}
    template = ld(2, ld(1, ld(11, ld(1, "team"), ld(2, "ml"))), _claim_spec())
    assert decode(envelope("resource.k8s.io/v1", "ResourceClaimTemplate", meta("t"), template))["spec"] == {
        "metadata": {"labels": {"team": "ml"}}, "spec": CLAIM_SPEC}
    rule = ld(2, ld(1, ld(2, "gpu.example.com"), ld(3, ""), ld(4, "gpu-0")),
              ld(2, ld(1, "maintenance"), ld(2, ""), ld(3, "NoSchedule"), ld(4)))
    status = ld(3, ld(1, ld(1, "EvictionInProgress"), ld(2, "False"), num(3, 0), time(4, "2025-01-01T00:00:00Z"),
                      ld(5, "Completed"), ld(6, "0 pods")))
    got = decode(envelope("resource.k8s.io/v1", "DeviceTaintRule", meta("r"), rule, status))
    # a pointer to an empty string is kept (the pool selects the pool ""); an empty time is Go's zero: left out
    assert got["spec"] == {"deviceSelector": {"driver": "gpu.example.com", "pool": "", "device": "gpu-0"},
                           "taint": {"key": "maintenance", "effect": "NoSchedule"}}
    assert got["status"] == {"conditions": [{"type": "EvictionInProgress", "status": "False",
                                             "lastTransitionTime": "2025-01-01T00:00:00Z", "reason": "Completed",
                                             "message": "0 pods"}]}


def test_events_of_both_apis() -> None:
    regarding = ld(8, ld(1, "Pod"), ld(2, "ml-team"), ld(3, "web"), ld(4, "u"), ld(5, "v1"), ld(6, ""), ld(7, ""))
    event = decode(envelope("events.k8s.io/v1", "Event", meta("web.1", "ml-team"),
                            time(2, "2025-06-07T08:09:10Z", nanos=123_456_789), ld(3, num(1, 2), ld(2)),
                            ld(4, "default-scheduler"), ld(5, "sched-1"), ld(6, "Scheduling"),
                            ld(7, "FailedScheduling"), regarding, ld(10, "0/3 nodes are available"),
                            ld(11, "Warning"), ld(12, ld(1, ""), ld(2, "")), ld(13), ld(14), num(15, 0)))
    assert event == {
        "apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": {"name": "web.1", "namespace": "ml-team"},
        "eventTime": "2025-06-07T08:09:10.123456Z", "series": {"count": 2}, "reportingController": "default-scheduler",
        "reportingInstance": "sched-1", "action": "Scheduling", "reason": "FailedScheduling",
        "regarding": {"kind": "Pod", "namespace": "ml-team", "name": "web", "uid": "u", "apiVersion": "v1"},
        "note": "0/3 nodes are available", "type": "Warning", "deprecatedSource": {}}
    core = decode(envelope("v1", "Event", meta("web.2", "ml-team"), ld(2, ld(1, "Pod"), ld(3, "web")),
                           ld(3, "Scheduled"), ld(4, "assigned"), ld(5, ld(1, "default-scheduler"), ld(2, "")),
                           time(6, "2025-06-07T08:09:10Z"), time(7, "2025-06-07T08:09:11Z"), num(8, 1),
                           ld(9, "Normal"), ld(10), ld(12, ""), ld(14, ""), ld(15, "")))
    assert core == {
        "apiVersion": "v1", "kind": "Event", "metadata": {"name": "web.2", "namespace": "ml-team"},
        "involvedObject": {"kind": "Pod", "name": "web"}, "reason": "Scheduled", "message": "assigned",
        "source": {"component": "default-scheduler"}, "firstTimestamp": "2025-06-07T08:09:10Z",
        "lastTimestamp": "2025-06-07T08:09:11Z", "count": 1, "type": "Normal", "reportingComponent": "",
        "reportingInstance": ""}


def test_an_int_or_string_is_its_int_or_its_string() -> None:
    table = messages({"Port": {1: "port IntOrString", 2: "named IntOrString"}})
    body = ld(1, num(1, 0), num(2, 8080), ld(3, "")) + ld(2, num(1, 1), num(2, 0), ld(3, "http"))
    assert message(body, table, "Port") == {"port": 8080, "named": "http"}
    assert message(ld(1) + ld(2, ld(3, "ignored")), table, "Port") == {"port": 0, "named": 0}  # type 0: the int
    with pytest.raises(ProtobufError, match="an IntOrString of type 2"):
        message(ld(1, num(1, 2)), table, "Port")
    with pytest.raises(ProtobufError, match="wrong wire type 2 for an IntOrString's intVal"):
        message(ld(1, ld(2, "80")), table, "Port")


def test_wire_forms_go_accepts_are_read() -> None:
    # metadata in two pieces (protobuf merges them), ints packed into one run, unknown fields of every wire type
    body = (ld(1, ld(1, "c")) + ld(1, ld(3, "ml-team")) + num(99, 7) + b"\x9d\x06" + b"\x00" * 4 +
            b"\x99\x06" + b"\x00" * 8 + ld(98, "x"))
    attribute = entry(2, "ints", ld(6, varint(1) + varint(-2) + varint(300)))
    device = ld(6, ld(1, "d"), attribute)
    got = decode(envelope("resource.k8s.io/v1", "ResourceSlice", body, ld(2, ld(1, "drv"), device)))
    assert got["metadata"] == {"name": "c", "namespace": "ml-team"}
    assert got["spec"]["devices"] == [{"name": "d", "attributes": {"ints": {"ints": [1, -2, 300]}}}]


@pytest.mark.parametrize("value", [0, 1, -1, 2**31 - 1, -(2**31), 2**63 - 1, -(2**63), 300, -300])
def test_negative_and_extreme_integers_come_back(value: int) -> None:
    toleration = ld(6, ld(1, "k"), num(5, value))
    spec = ld(2, ld(1, ld(1, ld(1, "r"), ld(2, ld(1, "c"), toleration))))
    got = decode(envelope("resource.k8s.io/v1", "ResourceClaim", meta("c"), spec))
    assert got["spec"]["devices"]["requests"][0]["exactly"]["tolerations"] == [{"key": "k", "tolerationSeconds": value}]


@given(st.integers(min_value=-(2**31), max_value=2**31 - 1), st.integers(min_value=-(2**63), max_value=2**63 - 1))
def test_int32_and_int64_varints_round_trip(count: int, seconds_: int) -> None:
    series = ld(3, num(1, count))
    got = decode(envelope("events.k8s.io/v1", "Event", meta("e"), series, num(15, count)))
    assert got["series"] == {"count": count}
    assert got.get("deprecatedCount", 0) == count
    sliced = decode(envelope("resource.k8s.io/v1", "ResourceSlice", meta("s"),
                             ld(2, ld(2, ld(1, "p"), num(2, seconds_)))))
    assert sliced["spec"]["pool"]["generation"] == seconds_


def test_a_varint_int32_keeps_its_low_32_bits_as_go_does() -> None:
    got = decode(envelope("v1", "Event", meta("e"), num(8, (1 << 40) + 7)))
    assert got["count"] == 7


# --- bad bodies ----------------------------------------------------------------------------------------

BAD = {
    "truncated": envelope("resource.k8s.io/v1", "ResourceClaim", meta("c"))[:-12],
    "a field longer than its message": b"k8s\x00" + ld(1, ld(1, "resource.k8s.io/v1"), ld(2, "ResourceClaim"))
                                       + b"\x12\x05\x0a\x10ab",
    "metadata sent as a varint": envelope("resource.k8s.io/v1", "ResourceClaim", num(1, 5)),
    "a request's name sent as a varint": envelope("resource.k8s.io/v1", "ResourceClaim",
                                                  ld(2, ld(1, ld(1, num(1, 3))))),
    "a count sent as bytes": envelope("resource.k8s.io/v1", "ResourceClaim",
                                      ld(2, ld(1, ld(1, ld(2, ld(4, "two")))))),
    "an unknown kind": envelope("resource.k8s.io/v1", "ResourcePoolStatusRequest", meta("x")),
    "no envelope": b'{"kind": "ResourceClaim"}',
    "a varint of eleven bytes": envelope("resource.k8s.io/v1", "ResourceSlice",
                                         ld(2, ld(2, b"\x10" + b"\xff" * 10 + b"\x01"))),
    "field number 0": envelope("resource.k8s.io/v1", "ResourceClaim", b"\x02\x00"),
    "a group": envelope("resource.k8s.io/v1", "ResourceClaim", b"\x0b\x0c"),
    "invalid UTF-8": envelope("resource.k8s.io/v1", "ResourceClaim", ld(1, ld(1, b"\xff\xfe"))),
    "parameters that are not JSON": envelope("resource.k8s.io/v1", "ResourceClaim",
                                             ld(2, ld(1, ld(3, ld(2, ld(1, ld(1, "d"), ld(2, ld(1, "{not json")))))))),
    "parameters of invalid UTF-8": envelope("resource.k8s.io/v1", "ResourceClaim",
                                            ld(2, ld(1, ld(3, ld(2, ld(1, ld(2, ld(1, b'{"a": "\x80"}')))))))),
    "a time beyond year 9999": envelope("resource.k8s.io/v1", "ResourceClaim", ld(1, ld(8, num(1, 10**12)))),
}


@pytest.mark.parametrize("name", list(BAD))
def test_a_bad_body_is_a_protobuf_error(name: str) -> None:
    with pytest.raises(ProtobufError):
        decode(BAD[name])


def test_an_error_names_the_field_it_is_in() -> None:
    with pytest.raises(ProtobufError) as info:
        decode(BAD["a count sent as bytes"])
    assert str(info.value) == ("spec.devices.requests[0].exactly: wrong wire type 2 for field "
                               "ExactDeviceRequest.count (field 4)")
    with pytest.raises(ProtobufError) as info:
        decode(BAD["parameters that are not JSON"])
    assert str(info.value).startswith("spec.devices.config[0].opaque.parameters: the raw bytes of a RawExtension "
                                      "are not JSON")


def test_nesting_beyond_the_limit_is_refused() -> None:
    table = messages({"Loop": {1: "next Loop", 2: "name string"}})
    body = ld(2, "end")
    for _ in range(MAX_DEPTH - 1):
        body = ld(1, body)
    assert message(body, table, "Loop")["next"]["next"]
    with pytest.raises(ProtobufError, match=f"deeper than {MAX_DEPTH}"):
        message(ld(1, body), table, "Loop")


@pytest.mark.parametrize("name", list(BAD))
def test_a_bad_body_is_a_400_status(client: TestClient, name: str) -> None:
    r = client.post(CLAIMS, content=BAD[name], headers=PROTOBUF)
    assert r.status_code == 400, r.text
    assert r.json()["kind"] == "Status" and r.json()["message"].startswith("couldn't decode the request body as "
                                                                           "protobuf: ")


WRITES = [("POST", CLAIMS), ("PUT", f"{CLAIMS}/c"), ("PUT", f"{CLAIMS}/c/status"),
          ("POST", "/apis/events.k8s.io/v1/namespaces/ml-team/events"), ("POST", f"{R}/resourceslices"),
          ("POST", "/apis/resource.k8s.io/v1beta1/deviceclasses"), ("POST", "/api/v1/namespaces/ml-team/events"),
          ("POST", "/api/v1/namespaces/ml-team/pods"), ("PUT", "/api/v1/namespaces/ml-team/pods/p/status")]


@pytest.mark.slow
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.binary(max_size=200), st.sampled_from(WRITES))
def test_random_bytes_after_the_prefix_never_make_a_500(client: TestClient, tail: bytes,
                                                        write: tuple[str, str]) -> None:
    r = client.request(write[0], write[1], content=b"k8s\x00" + tail, headers=PROTOBUF)
    assert r.status_code < 500, r.text


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_a_mutated_claim_body_decodes_or_is_a_protobuf_error(data: st.DataObject) -> None:
    body = bytearray(envelope("resource.k8s.io/v1", "ResourceClaim", meta("c", "ml-team"), _claim_spec(),
                              _claim_status()))
    for _ in range(data.draw(st.integers(1, 4))):
        at = data.draw(st.integers(4, len(body) - 1))
        body[at] = data.draw(st.integers(0, 255))
    try:
        decoded = decode(bytes(body))
    except ProtobufError:
        return
    json.dumps(decoded)  # whatever decodes is JSON


# --- through the server --------------------------------------------------------------------------------

def _meta_from(obj: dict[str, Any]) -> bytes:
    """The ObjectMeta of an object as the server returned it, encoded back as a Go client does."""
    m = obj["metadata"]
    managed = [ld(17, ld(1, e["manager"]), ld(2, e["operation"]), ld(3, e["apiVersion"]), time(4, e["time"]),
                  ld(6, e["fieldsType"]), raw(7, e["fieldsV1"]), ld(8, e.get("subresource", "")))
               for e in m.get("managedFields", [])]
    return ld(1, ld(1, m["name"]), ld(2, ""), ld(3, m["namespace"]), ld(4, ""), ld(5, m["uid"]),
              ld(6, m["resourceVersion"]), num(7, m["generation"]), time(8, m["creationTimestamp"]),
              *[ld(14, f) for f in m.get("finalizers", [])], *managed)


def test_a_protobuf_claim_is_created_updated_and_allocated_as_kube_scheduler_does(client: TestClient) -> None:
    r = client.post(CLAIMS, content=envelope("resource.k8s.io/v1", "ResourceClaim", meta("c"), _claim_spec(),
                                             ld(3)), headers=PROTOBUF)
    assert r.status_code == 201, r.text
    created = r.json()
    assert created["spec"] == CLAIM_SPEC and created["metadata"]["namespace"] == "ml-team"
    # Update: the scheduler's finalizer
    with_finalizer = copy.deepcopy(created)
    with_finalizer["metadata"]["finalizers"] = ["resource.kubernetes.io/delete-protection"]
    r = client.put(f"{CLAIMS}/c", content=envelope("resource.k8s.io/v1", "ResourceClaim", _meta_from(with_finalizer),
                                                   _claim_spec(), ld(3)), headers=PROTOBUF)
    assert r.status_code == 200, r.text
    updated = r.json()
    assert updated["metadata"]["finalizers"] == ["resource.kubernetes.io/delete-protection"]
    # UpdateStatus: the allocation and the pod it is reserved for
    status = ld(3, ld(1, ld(1, ld(1, ld(1, "gpus"), ld(2, "gpu.example.com"), ld(3, "node-1"), ld(4, "gpu-0"))),
                      time(5, "2025-05-06T07:08:09Z")),
                ld(2, ld(1, ""), ld(3, "pods"), ld(4, "web"), ld(5, "pod-uid")))
    r = client.put(f"{CLAIMS}/c/status", content=envelope("resource.k8s.io/v1", "ResourceClaim", _meta_from(updated),
                                                          _claim_spec(), status), headers=PROTOBUF)
    assert r.status_code == 200, r.text
    stored = client.get(f"{CLAIMS}/c").json()
    assert stored["status"] == {
        "allocation": {"devices": {"results": [{"request": "gpus", "driver": "gpu.example.com", "pool": "node-1",
                                                "device": "gpu-0"}]},
                       "allocationTimestamp": "2025-05-06T07:08:09Z"},
        "reservedFor": [{"resource": "pods", "name": "web", "uid": "pod-uid"}]}
    assert stored["metadata"]["finalizers"] == ["resource.kubernetes.io/delete-protection"]
    # a stale resourceVersion is a conflict, as with JSON
    r = client.put(f"{CLAIMS}/c/status", content=envelope("resource.k8s.io/v1", "ResourceClaim", _meta_from(updated),
                                                          _claim_spec(), status), headers=PROTOBUF)
    assert r.status_code == 409, r.text


def test_a_protobuf_claim_is_validated_as_a_json_one(client: TestClient) -> None:
    spec = ld(2, ld(1, ld(1, ld(1, "Not_A_Name"), ld(2, ld(1, "gpu.example.com")))))
    r = client.post(CLAIMS, content=envelope("resource.k8s.io/v1", "ResourceClaim", meta("c"), spec),
                    headers=PROTOBUF)
    assert r.status_code == 422 and r.json()["details"]["causes"][0]["field"] == "spec.devices.requests[0].name"
    wrong_kind = client.post(CLAIMS, content=envelope("resource.k8s.io/v1", "DeviceClass", meta("c")), headers=PROTOBUF)
    assert wrong_kind.status_code == 400 and "does not match" in wrong_kind.json()["message"]


def test_older_versions_in_protobuf_are_converted_as_their_json_is(client: TestClient) -> None:
    device = ld(6, ld(1, "gpu-0"), ld(2, entry(1, "model", ld(4, "H100"))))
    spec = ld(2, ld(1, "gpu.example.com"), ld(2, ld(1, "node-1"), num(2, 1), num(3, 1)), ld(3, "node-1"), device)
    r = client.post("/apis/resource.k8s.io/v1beta1/resourceslices",
                    content=envelope("resource.k8s.io/v1beta1", "ResourceSlice", meta("s"), spec), headers=PROTOBUF)
    assert r.status_code == 201, r.text
    stored = client.get(f"{R}/resourceslices/s").json()
    assert stored["spec"]["devices"] == [{"name": "gpu-0", "attributes": {"model": {"string": "H100"}}}]
    assert stored["spec"]["nodeName"] == "node-1"


def test_kube_schedulers_protobuf_event_is_created(client: TestClient) -> None:
    regarding = ld(8, ld(1, "Pod"), ld(2, "ml-team"), ld(3, "web"), ld(4, "u"), ld(5, "v1"))
    body = envelope("events.k8s.io/v1", "Event", meta("web.17f", "ml-team"), time(2, "2025-06-07T08:09:10Z", 5000),
                    ld(4, "default-scheduler"), ld(5, "default-scheduler-node-1"), ld(6, "Scheduling"),
                    ld(7, "FailedScheduling"), regarding, ld(10, "0/1 nodes are available"), ld(11, "Warning"),
                    ld(12), ld(13), ld(14), num(15, 0))
    r = client.post("/apis/events.k8s.io/v1/namespaces/ml-team/events", content=body, headers=PROTOBUF)
    assert r.status_code == 201, r.text
    assert r.json()["reportingController"] == "default-scheduler" and r.json()["eventTime"] == "2025-06-07T08:09:10.000005Z"
    legacy = client.get("/api/v1/namespaces/ml-team/events/web.17f").json()
    assert legacy["involvedObject"]["name"] == "web" and legacy["message"] == "0/1 nodes are available"
    # the same Event through core/v1, as client-go's legacy recorder sends it
    core = envelope("v1", "Event", meta("web.180", "ml-team"), ld(2, ld(1, "Pod"), ld(2, "ml-team"), ld(3, "web")),
                    ld(3, "Scheduled"), ld(4, "Successfully assigned"), ld(5, ld(1, "default-scheduler")),
                    time(6, "2025-06-07T08:09:10Z"), time(7, "2025-06-07T08:09:10Z"), num(8, 1), ld(9, "Normal"),
                    ld(10), ld(14, ""), ld(15, ""))
    r = client.post("/api/v1/namespaces/ml-team/events", content=core, headers=PROTOBUF)
    assert r.status_code == 201, r.text
    assert r.json()["count"] == 1 and r.json()["source"] == {"component": "default-scheduler"}


# --- pods (the Kubernetes e2e framework's typed client creates them with protobuf bodies) --------------

PODS = "/api/v1/namespaces/ml-team/pods"


def int_or_string(number: int, value: int | str) -> bytes:
    """An IntOrString as Go writes it: its type, its int and its string, the unused ones empty."""
    if isinstance(value, int):
        return ld(number, num(1, 0), num(2, value), ld(3, ""))
    return ld(number, num(1, 1), num(2, 0), ld(3, value))


POD_SPEC = {
    "volumes": [{"name": "data", "emptyDir": {"sizeLimit": "1Gi"}}],
    "containers": [{
        "name": "app", "image": "registry.example/app:1", "command": ["/app", "--serve"],
        "ports": [{"name": "http", "containerPort": 8080, "protocol": "TCP"}],
        "env": [{"name": "MODE", "value": "fast"}],
        "resources": {"limits": {"cpu": "1", "memory": "128Mi"}, "requests": {"cpu": "500m"},
                      "claims": [{"name": "gpu", "request": "r0"}]},
        "volumeMounts": [{"name": "data", "mountPath": "/data"}],
        "livenessProbe": {"httpGet": {"path": "/healthz", "port": 8080}, "periodSeconds": 5},
        "readinessProbe": {"tcpSocket": {"port": "http"}},
        "securityContext": {"allowPrivilegeEscalation": False, "runAsNonRoot": True},
    }],
    "restartPolicy": "Never",
    "tolerations": [{"key": "gpu.example.com/busy", "operator": "Exists", "effect": "NoSchedule"}],
    "resourceClaims": [{"name": "gpu", "resourceClaimName": "shared-gpu"}],
}


def _pod_spec() -> bytes:
    """POD_SPEC as a Go client encodes it (its non-pointer fields written even when empty)."""
    container = ld(2, ld(1, "app"), ld(2, "registry.example/app:1"), ld(3, "/app"), ld(3, "--serve"), ld(5, ""),
                   ld(6, ld(1, "http"), num(2, 0), num(3, 8080), ld(4, "TCP"), ld(5, "")),
                   ld(7, ld(1, "MODE"), ld(2, "fast")),
                   ld(8, entry(1, "cpu", ld(1, "1")), entry(1, "memory", ld(1, "128Mi")),
                      entry(2, "cpu", ld(1, "500m")), ld(3, ld(1, "gpu"), ld(2, "r0"))),
                   ld(9, ld(1, "data"), num(2, False), ld(3, "/data"), ld(4, ""), ld(6, "")),
                   ld(10, ld(1, ld(2, ld(1, "/healthz"), int_or_string(2, 8080), ld(3, ""), ld(4, ""))),
                      num(2, 0), num(3, 0), num(4, 5), num(5, 0), num(6, 0)),
                   ld(11, ld(1, ld(3, int_or_string(1, "http"), ld(2, ""))), num(2, 0), num(3, 0), num(4, 0)),
                   ld(13, ""), ld(14, ""), ld(15, num(5, True), num(7, False)), num(16, False), num(17, False),
                   num(18, False), ld(20, ""))
    return ld(2, ld(1, ld(1, "data"), ld(2, ld(2, ld(1, ""), quantity(2, "1Gi")))), container,
              ld(3, "Never"), ld(6, ""), ld(8, ""), ld(9, ""), ld(10, ""), num(11, False), num(12, False),
              num(13, False), ld(16, ""), ld(17, ""), ld(19, ""),
              ld(22, ld(1, "gpu.example.com/busy"), ld(2, "Exists"), ld(3, ""), ld(4, "NoSchedule")), ld(24, ""),
              ld(39, ld(1, "gpu"), ld(3, "shared-gpu")))


def _unstamped(pod: dict[str, Any]) -> dict[str, Any]:
    """A stored pod without what differs between two creates (name, uid, times, versions, the generated name of
    the token volume)."""
    out = json.loads(re.sub(r'"kube-api-access-[a-z0-9]+"', '"kube-api-access"', json.dumps(pod)))
    for key in ("name", "uid", "resourceVersion", "creationTimestamp", "managedFields"):
        out["metadata"].pop(key, None)
    return out


def test_a_protobuf_pod_is_stored_as_the_same_json_pod_is(client: TestClient) -> None:
    spec = decode(envelope("v1", "Pod", meta("p"), _pod_spec(), ld(3)))["spec"]
    assert spec == POD_SPEC  # the false pointer bool, the int and the named port, the quantities...
    r = client.post(PODS, content=envelope("v1", "Pod", meta("from-protobuf"), _pod_spec(), ld(3)), headers=PROTOBUF)
    assert r.status_code == 201, r.text
    from_protobuf = client.get(f"{PODS}/from-protobuf").json()
    r = client.post(PODS, json={"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "from-json"},
                                "spec": POD_SPEC, "status": {}})
    assert r.status_code == 201, r.text
    from_json = client.get(f"{PODS}/from-json").json()
    assert _unstamped(from_protobuf) == _unstamped(from_json)
    # both went through the same admission: the namespace's default ServiceAccount and its token volume
    assert from_protobuf["spec"]["serviceAccountName"] == "default"
    assert len(from_protobuf["spec"]["volumes"]) == len(from_json["spec"]["volumes"])


def test_a_pods_status_is_updated_with_a_protobuf_body(client: TestClient) -> None:
    r = client.post(PODS, content=envelope("v1", "Pod", meta("p"), _pod_spec(), ld(3)), headers=PROTOBUF)
    assert r.status_code == 201, r.text
    created = r.json()
    running = ld(2, time(1, "2025-07-08T09:10:11Z"))  # a ContainerState's running.startedAt
    status = ld(3, ld(1, "Running"), ld(2, ld(1, "Ready"), ld(2, "True"), ld(3), time(4, "2025-07-08T09:10:12Z"),
                                        ld(5, ""), ld(6, ""), num(7, 0)),
                ld(5, "10.0.0.1"), ld(6, "10.1.0.7"), time(7, "2025-07-08T09:10:10Z"),
                ld(8, ld(1, "app"), ld(2, running), ld(3), num(4, True), num(5, 0), ld(6, "registry.example/app:1"),
                   ld(7, "registry.example/app@sha256:00"), ld(8, "containerd://c1"), num(9, True)),
                ld(9, "Burstable"), ld(12, ld(1, "10.1.0.7")), ld(16, ld(1, "10.0.0.1")))
    r = client.put(f"{PODS}/p/status", content=envelope("v1", "Pod", _meta_from(created), _pod_spec(), status),
                   headers=PROTOBUF)
    assert r.status_code == 200, r.text
    stored = client.get(f"{PODS}/p").json()["status"]
    assert stored["phase"] == "Running" and stored["podIPs"] == [{"ip": "10.1.0.7"}]
    assert stored["hostIPs"] == [{"ip": "10.0.0.1"}] and stored["startTime"] == "2025-07-08T09:10:10Z"
    assert stored["conditions"] == [{"type": "Ready", "status": "True", "lastTransitionTime": "2025-07-08T09:10:12Z"}]
    assert stored["containerStatuses"] == [{
        "name": "app", "state": {"running": {"startedAt": "2025-07-08T09:10:11Z"}}, "lastState": {}, "ready": True,
        "restartCount": 0, "image": "registry.example/app:1", "imageID": "registry.example/app@sha256:00",
        "containerID": "containerd://c1", "started": True}]


# a bad body → where its error is found
POD_BAD = {
    envelope("v1", "Pod", meta("p"), ld(2, ld(2, ld(1, "app"), num(2, 5)))): "spec.containers[0]: wrong wire type",
    envelope("v1", "Pod", meta("p"), ld(2, ld(2, ld(1, "app"), ld(11, ld(1, ld(3, ld(1, num(1, 7), num(2, 80)))))))):
        "spec.containers[0].readinessProbe.tcpSocket.port: an IntOrString of type 7",
    envelope("v1", "Pod", meta("p"), ld(2, b"\x12\x09\x0a\x03app")): "spec: field 2 is truncated",
}


@pytest.mark.parametrize(("body", "error"), list(POD_BAD.items()))
def test_a_bad_protobuf_pod_is_a_400(client: TestClient, body: bytes, error: str) -> None:
    r = client.post(PODS, content=body, headers=PROTOBUF)
    assert r.status_code == 400, r.text
    assert r.json()["message"].startswith(f"couldn't decode the request body as protobuf: {error}")
    assert client.get(f"{PODS}/p").status_code == 404


@pytest.mark.slow
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.data())
def test_a_mutated_pod_body_is_created_or_refused_never_a_500(client: TestClient, data: st.DataObject) -> None:
    body = bytearray(envelope("v1", "Pod", meta("p"), _pod_spec(), ld(3)))
    for _ in range(data.draw(st.integers(1, 4))):
        at = data.draw(st.integers(4, len(body) - 1))
        body[at] = data.draw(st.integers(0, 255))
    r = client.post(PODS, content=bytes(body), headers=PROTOBUF)
    assert r.status_code < 500, r.text
