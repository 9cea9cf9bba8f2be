"""pods/{name}/log without a kubelet: the answers of a kube-apiserver whose kubelets cannot be reached."""

from __future__ import annotations

import warnings
from typing import Any

import pytest

warnings.filterwarnings("ignore", message="Using `httpx`")
from cluster import api_client  # noqa: E402
from starlette.testclient import TestClient  # noqa: E402

PODS = "/api/v1/namespaces/default/pods"


def pod(name: str, *containers: str, node: str = "") -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [{"name": c, "image": "x:1"} for c in containers]}
    if node:
        spec["nodeName"] = node
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec}


def node(name: str, **status: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}, "status": status}


@pytest.fixture
def client() -> TestClient:
    c = api_client()
    for body in (node("bare"), node("addressed", addresses=[{"type": "ExternalIP", "address": "203.0.113.9"},
                                                            {"type": "InternalIP", "address": "10.1.2.3"}],
                                    daemonEndpoints={"kubeletEndpoint": {"Port": 10255}})):
        assert c.post("/api/v1/nodes", json=body).status_code == 201
    return c


def status_of(r: Any) -> tuple[int, str, str]:
    body = r.json()
    assert body["kind"] == "Status"
    return r.status_code, body.get("reason", ""), body["message"]


def test_the_log_of_a_pod_on_a_node_names_the_kubelet_url_that_could_not_be_reached(client: TestClient) -> None:
    assert client.post(PODS, json=pod("web", "main", node="addressed")).status_code == 201
    r = client.get(f"{PODS}/web/log", params={"tailLines": "3", "follow": "true", "sinceSeconds": "60"})
    # the InternalIP is preferred to the ExternalIP; the port is the node's kubelet endpoint; no reason, as upstream
    url = "https://10.1.2.3:10255/containerLogs/default/web/main?follow=true&sinceSeconds=60&tailLines=3"
    assert status_of(r) == (500, "", f'Get "{url}": dial tcp 10.1.2.3:10255: connect: connection refused')


def test_a_node_without_a_preferred_address_says_so(client: TestClient) -> None:
    assert client.post(PODS, json=pod("web", "main", node="bare")).status_code == 201
    assert status_of(client.get(f"{PODS}/web/log")) == (
        500, "", "no preferred addresses found; known addresses: []")


def test_a_pod_not_bound_to_a_node_has_an_empty_log(client: TestClient) -> None:
    assert client.post(PODS, json=pod("pending", "main")).status_code == 201
    r = client.get(f"{PODS}/pending/log")
    assert r.status_code == 200 and r.content == b""


def test_bad_log_requests_are_4xx(client: TestClient) -> None:
    assert client.post(PODS, json=pod("two", "a", "b", node="gone")).status_code == 201
    assert status_of(client.get(f"{PODS}/two/log")) == (
        400, "BadRequest", "a container name must be specified for pod two, choose one of: [a b]")
    assert status_of(client.get(f"{PODS}/two/log", params={"container": "c"})) == (
        400, "BadRequest", "container c is not valid for pod two")
    assert status_of(client.get(f"{PODS}/two/log", params={"container": "a"})) == (
        404, "NotFound", 'nodes "gone" not found')
    assert status_of(client.get(f"{PODS}/nope/log")) == (404, "NotFound", 'pods "nope" not found')
    assert client.get(f"{PODS}/two/log", params={"container": "a", "tailLines": "x"}).status_code == 400
    assert client.post(f"{PODS}/two/log", json={}).status_code == 405


def test_discovery_lists_pods_log_and_nodes_status(client: TestClient) -> None:
    names = {r["name"]: r for r in client.get("/api/v1").json()["resources"]}
    assert names["pods/log"]["verbs"] == ["get"] and names["pods/log"]["kind"] == "Pod"
    assert names["nodes/status"]["verbs"] == ["get", "patch", "update"]


def test_node_status_is_written_through_its_subresource_only(client: TestClient) -> None:
    merge = {"content-type": "application/merge-patch+json"}
    r = client.patch("/api/v1/nodes/bare", json={"status": {"addresses": [{"type": "InternalIP", "address": "10.0.0.9"}]},
                                                "metadata": {"labels": {"a": "b"}}}, headers=merge)
    assert r.status_code == 200 and "addresses" not in r.json()["status"] and r.json()["metadata"]["labels"] == {"a": "b"}
    r = client.patch("/api/v1/nodes/bare/status",
                     json={"status": {"addresses": [{"type": "InternalIP", "address": "10.0.0.9"}]}}, headers=merge)
    assert r.status_code == 200 and r.json()["status"]["addresses"] == [{"type": "InternalIP", "address": "10.0.0.9"}]


@pytest.mark.parametrize("path,code,reason", [
    (f"{PODS}/web/exec?command=ls&stdout=true", 404, "NotFound"),
    (f"{PODS}?watch=true", 400, "BadRequest"),
])
def test_an_upgrade_request_gets_the_status_of_its_get_and_is_never_upgraded(client: TestClient, path: str,
                                                                             code: int, reason: str) -> None:
    """kubectl exec asks for a WebSocket first and falls back to SPDY when refused: refused with a Status
    (nothing is streamed here), never an ASGI error's 500."""
    from starlette.testclient import WebSocketDenialResponse

    assert client.post(PODS, json=pod("web", "main", node="bare")).status_code == 201
    with pytest.raises(WebSocketDenialResponse) as denied:
        with client.websocket_connect(path):
            pass
    assert denied.value.status_code == code
    assert denied.value.json()["kind"] == "Status" and denied.value.json()["reason"] == reason
