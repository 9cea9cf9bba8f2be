"""Wire formats besides JSON: protobuf bodies for core kinds (kubectl's typed clients), Table columns (the
resource.k8s.io kinds' and Events' protobuf bodies: test_protobuf.py)."""

from __future__ import annotations

import copy
import warnings
from pathlib import Path

import pytest
import yaml

warnings.filterwarnings("ignore", message="Using `httpx`")
from cluster import api_client  # noqa: E402
from starlette.testclient import TestClient  # noqa: E402

from dralloc.server.protobuf.decoder import ProtobufError, decode  # noqa: E402

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
PROTOBUF = {"content-type": "application/vnd.kubernetes.protobuf"}
TABLE = {"accept": "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"}


def _varint(n: int) -> bytes:
    out = b""
    while True:
        byte, n = n & 0x7F, n >> 7
        if n:
            out += bytes([byte | 0x80])
        else:
            return out + bytes([byte])


def field(number: int, value: bytes | str | int) -> bytes:
    if isinstance(value, int):
        return _varint(number << 3) + _varint(value)
    if isinstance(value, str):
        value = value.encode()
    return _varint(number << 3 | 2) + _varint(len(value)) + value


def envelope(kind: str, raw: bytes) -> bytes:
    type_meta = field(1, "v1") + field(2, kind)
    return b"k8s\x00" + field(1, type_meta) + field(2, raw) + field(3, "") + field(4, "")


def namespace(name: str, labels: dict[str, str] | None = None) -> bytes:
    # As Go writes it: every scalar present, empty ones included.
    meta = field(1, name) + field(2, "") + field(3, "") + field(7, 0)
    for k, v in (labels or {}).items():
        meta += field(11, field(1, k) + field(2, v))
    return envelope("Namespace", field(1, meta) + field(2, b"") + field(3, b""))


@pytest.fixture
def client() -> TestClient:
    return api_client("ml-team")


def test_protobuf_namespace_is_decoded_without_the_empty_scalars() -> None:
    # (the spec and status Go writes, empty, are kept as Go's JSON writes them: empty objects)
    assert decode(namespace("team-a", {"env": "dev"})) == {
        "apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team-a", "labels": {"env": "dev"}}, "spec": {},
        "status": {}}


def test_protobuf_node_keeps_spec_and_capacity() -> None:
    quantity = lambda q: field(1, q)  # noqa: E731
    spec = field(4, 1) + field(5, field(1, "gpu") + field(2, "") + field(3, "NoSchedule"))
    status = field(1, field(1, "cpu") + field(2, quantity("8")))
    node = decode(envelope("Node", field(1, field(1, "n1")) + field(2, spec) + field(3, status)))
    assert node["spec"] == {"unschedulable": True, "taints": [{"key": "gpu", "effect": "NoSchedule"}]}
    assert node["status"] == {"capacity": {"cpu": "8"}}


@pytest.mark.parametrize("body", [b"{}", b"k8s\x00\xff", envelope("PodTemplate", b""), b"k8s\x00" + field(2, b"\x0a\x05ab")])
def test_bad_protobuf_is_refused(body: bytes) -> None:
    with pytest.raises(ProtobufError):
        decode(body)


def test_protobuf_create_of_a_namespace(client: TestClient) -> None:
    r = client.post("/api/v1/namespaces?fieldValidation=Strict", content=namespace("team-a"), headers=PROTOBUF)
    assert r.status_code == 201 and r.json()["metadata"]["name"] == "team-a"
    assert client.post("/api/v1/namespaces", content=b"k8s\x00\xff", headers=PROTOBUF).status_code == 400
    # resource.k8s.io kinds are read from protobuf too (tests/server/test_protobuf.py): a Namespace is not one
    r = client.post("/apis/resource.k8s.io/v1/deviceclasses", content=namespace("x"), headers=PROTOBUF)
    assert r.status_code == 400 and 'the kind "Namespace" does not match' in r.json()["message"]


def test_claim_table_shows_its_state(client: TestClient) -> None:
    claims = "/apis/resource.k8s.io/v1/namespaces/ml-team/resourceclaims"
    claim = [d for d in yaml.safe_load_all((EXAMPLES / "30-claims.yaml").read_text()) if d][0]
    created = client.post(claims, json=claim).json()
    table = client.get(claims, headers=TABLE).json()
    assert [c["name"] for c in table["columnDefinitions"]] == ["Name", "State", "Age"]
    assert table["rows"][0]["cells"][1] == "pending"
    request = created["spec"]["devices"]["requests"][0]["name"]
    status = {"allocation": {"devices": {"results": [{"request": request, "driver": "gpu.nvidia.com",
                                                      "pool": "gpu-node-1", "device": "gpu-0"}]}},
              "reservedFor": [{"resource": "pods", "name": "p", "uid": "u1"}]}
    body = copy.deepcopy(created)
    body["status"] = status
    r = client.put(f"{claims}/{created['metadata']['name']}/status", json=body)
    assert r.status_code == 200, r.text
    assert client.get(claims, headers=TABLE).json()["rows"][0]["cells"][1] == "allocated,reserved"
