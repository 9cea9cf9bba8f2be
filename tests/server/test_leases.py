"""coordination.k8s.io/v1 Leases: leader election as client-go's LeaseLock does it (create, renew at the
version read, a stale renewal refused), validation, discovery and the protobuf body of protobuf clients."""

from __future__ import annotations

import warnings

import pytest

warnings.filterwarnings("ignore", message="Using `httpx`")
from cluster import api_client  # noqa: E402
from starlette.testclient import TestClient  # noqa: E402
from test_wire import PROTOBUF, field  # noqa: E402

LEASES = "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases"


@pytest.fixture
def client() -> TestClient:
    return api_client()


def lease(name: str, **spec: object) -> dict[str, object]:
    return {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": name}, "spec": spec}


def test_leader_election_takes_renews_and_loses_a_lease_as_client_go_does(client: TestClient) -> None:
    taken = client.post(LEASES, json=lease("my-driver-controller", holderIdentity="a", leaseDurationSeconds=15,
                                           acquireTime="2026-11-24T01:00:00.000000Z",
                                           renewTime="2026-11-24T01:00:00.000000Z", leaseTransitions=0))
    assert taken.status_code == 201
    renewed = {**taken.json(), "spec": {**taken.json()["spec"], "renewTime": "2026-11-24T01:00:02.000000Z"}}
    assert client.put(f"{LEASES}/my-driver-controller", json=renewed).status_code == 200
    # a candidate that read the lease before that renewal cannot take it over
    stale = {**taken.json(), "spec": {**taken.json()["spec"], "holderIdentity": "b", "leaseTransitions": 1}}
    r = client.put(f"{LEASES}/my-driver-controller", json=stale)
    assert r.status_code == 409 and r.json()["reason"] == "Conflict"
    listed = client.get("/apis/coordination.k8s.io/v1/leases").json()["items"]
    assert [(x["metadata"]["name"], x["spec"]["holderIdentity"]) for x in listed] == [("my-driver-controller", "a")]


@pytest.mark.parametrize("spec,message", [
    ({"leaseDurationSeconds": 0}, "spec.leaseDurationSeconds: Invalid value: 0: must be greater than 0"),
    ({"leaseTransitions": -1}, "spec.leaseTransitions: Invalid value: -1: must be greater than or equal to 0"),
    ({"strategy": "Nope"},
     'spec.strategy.strategy: Unsupported value: "Nope": supported values: "OldestEmulationVersion"'),
    ({"preferredHolder": "b"}, "spec.preferredHolder: Forbidden: may only be specified if `strategy` is defined"),
])
def test_a_lease_is_validated_as_kube_apiserver_validates_it(client: TestClient, spec: dict[str, object],
                                                             message: str) -> None:
    r = client.post(LEASES, json=lease("l", **spec))
    assert r.status_code == 422 and message in r.json()["message"], r.text


def test_leases_are_discovered_and_printed_with_their_holder(client: TestClient) -> None:
    groups = [g["name"] for g in client.get("/apis").json()["groups"]]
    assert groups.index("scheduling.k8s.io") < groups.index("coordination.k8s.io") < groups.index("discovery.k8s.io")
    assert client.post(LEASES, json=lease("l", holderIdentity="node-1")).status_code == 201
    table = client.get(LEASES, headers={"accept": "application/json;as=Table;v=v1;g=meta.k8s.io"}).json()
    assert [c["name"] for c in table["columnDefinitions"]] == ["Name", "Holder", "Age"]
    assert table["rows"][0]["cells"][:2] == ["l", "node-1"]


def test_a_protobuf_lease_is_read_as_go_writes_it(client: TestClient) -> None:
    micro = field(1, 1_795_000_000) + field(2, 123_456_000)
    spec = field(1, "a") + field(2, 15) + field(3, micro) + field(4, micro) + field(5, 0)
    body = field(1, field(1, "pb") + field(3, "kube-system")) + field(2, spec)
    envelope = b"k8s\x00" + field(1, field(1, "coordination.k8s.io/v1") + field(2, "Lease")) + field(2, body)
    r = client.post(LEASES, content=envelope, headers=PROTOBUF)
    assert r.status_code == 201, r.text
    assert r.json()["spec"] == {"holderIdentity": "a", "leaseDurationSeconds": 15,
                                "acquireTime": "2026-11-18T11:06:40.123456Z",
                                "renewTime": "2026-11-18T11:06:40.123456Z", "leaseTransitions": 0}


@pytest.mark.parametrize("seconds", [1 << 62, (1 << 64) - (1 << 62), 10**12])
def test_a_protobuf_time_beyond_what_rfc3339_holds_is_a_400(client: TestClient, seconds: int) -> None:
    spec = field(1, "a") + field(3, field(1, seconds))
    body = field(1, field(1, "far") + field(3, "kube-system")) + field(2, spec)
    envelope = b"k8s\x00" + field(1, field(1, "coordination.k8s.io/v1") + field(2, "Lease")) + field(2, body)
    r = client.post(LEASES, content=envelope, headers=PROTOBUF)
    assert r.status_code == 400 and "out of range" in r.json()["message"], r.text


def test_the_first_second_is_written_with_four_digits() -> None:
    from dralloc.server.protobuf.decoder import decode

    spec = field(3, field(1, (1 << 64) - 62_135_596_800))
    envelope = b"k8s\x00" + field(1, field(1, "coordination.k8s.io/v1") + field(2, "Lease")) + field(2, field(2, spec))
    assert decode(envelope)["spec"] == {"acquireTime": "0001-01-01T00:00:00.000000Z"}
