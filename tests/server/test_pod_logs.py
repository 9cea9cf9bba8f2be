"""pods/{name}/log, /exec, /attach and /portforward without a kubelet: the answers of a kube-apiserver whose
kubelets cannot be reached."""

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
    assert status_of(client.get(f"{PODS}/two/log", params={"container": "a", "sinceTime": "noon"})) == (
        400, "BadRequest", 'sinceTime: Invalid value: "noon": parsing time "noon" as "2006-01-02T15:04:05Z07:00": '
                           'cannot parse "noon" as "2006"')
    assert client.post(f"{PODS}/two/log", json={}).status_code == 405


@pytest.mark.parametrize("params,message", [
    ({"tailLines": "-1"}, "tailLines: Invalid value: -1: must be greater than or equal to 0"),
    ({"limitBytes": "0"}, "limitBytes: Invalid value: 0: must be greater than 0"),
    ({"sinceSeconds": "0"}, "sinceSeconds: Invalid value: 0: must be greater than 0"),
    ({"sinceSeconds": "5", "sinceTime": "2026-01-01T00:00:00Z"},
     "Forbidden: at most one of `sinceTime` or `sinceSeconds` may be specified")])
def test_log_options_kube_apiserver_refuses_are_a_422_before_the_pod_is_looked_up(
        client: TestClient, params: dict[str, str], message: str) -> None:
    assert client.post(PODS, json=pod("web", "main", node="addressed")).status_code == 201
    for name in ("web", "nope"):  # checked before the pod is read: the same answer for a missing pod
        assert status_of(client.get(f"{PODS}/{name}/log", params=params)) == (
            422, "Invalid", f'PodLogOptions "{name}" is invalid: {message}')


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
    (f"{PODS}/web/exec?command=ls&stdout=true", 500, ""),  # the node has no address to dial
    (f"{PODS}/web/proxy", 404, "NotFound"),
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
    assert denied.value.json()["kind"] == "Status" and denied.value.json().get("reason", "") == reason


@pytest.mark.parametrize("sub", ["exec", "attach", "portforward"])
@pytest.mark.parametrize("method", ["GET", "POST"])
def test_exec_attach_and_port_forward_stop_where_the_kubelet_is_dialed(client: TestClient, sub: str,
                                                                       method: str) -> None:
    assert client.post(PODS, json=pod("web", "main", node="addressed")).status_code == 201
    r = client.request(method, f"{PODS}/web/{sub}", params={"command": "ls", "stdout": "true"})
    assert status_of(r) == (500, "", "error dialing backend: dial tcp 10.1.2.3:10255: connect: connection refused")


def test_exec_is_refused_as_kube_apiserver_refuses_it_before_dialing(client: TestClient) -> None:
    for body in (pod("two", "a", "b", node="gone"), pod("pending", "main"), pod("bare", "main", node="bare")):
        assert client.post(PODS, json=body).status_code == 201
    exec_ = lambda name, **params: client.post(f"{PODS}/{name}/exec", params={"command": "ls", **params})  # noqa: E731
    assert status_of(exec_("two")) == (
        400, "BadRequest", "a container name must be specified for pod two, choose one of: [a b]")
    assert status_of(exec_("two", container="c")) == (400, "BadRequest", "container c is not valid for pod two")
    assert status_of(exec_("two", container="a")) == (404, "NotFound", 'nodes "gone" not found')
    assert status_of(exec_("pending")) == (400, "BadRequest", "pod pending does not have a host assigned")
    assert status_of(exec_("bare")) == (500, "", "no preferred addresses found; known addresses: []")
    assert status_of(exec_("nope")) == (404, "NotFound", 'pods "nope" not found')
    # a port-forward names no container
    assert status_of(client.post(f"{PODS}/two/portforward", params={"ports": "80"})) == (
        404, "NotFound", 'nodes "gone" not found')
    assert client.put(f"{PODS}/two/exec", json={}).status_code == 405


def test_exec_needs_the_verb_of_its_method_on_pods_exec() -> None:
    from dralloc.server.auth.users import Authorizer

    rules = {"system:anonymous": [{"verbs": ["get", "create"], "resources": ["pods"]},
                                  {"verbs": ["get"], "resources": ["pods/exec"]}]}
    http = api_client(authorizer=Authorizer(rules), anonymous=True)
    assert http.get(f"{PODS}/web/exec").status_code == 404  # allowed: a GET is "get" on pods/exec (no such pod)
    r = http.post(f"{PODS}/web/exec")
    assert r.status_code == 403 and r.json()["message"] == (
        'pods "web" is forbidden: User "system:anonymous" cannot create resource "pods/exec" in API group "" in '
        'the namespace "default"')


def test_discovery_lists_the_pod_subresources_in_kube_apiservers_order(client: TestClient) -> None:
    resources = client.get("/api/v1").json()["resources"]
    pods = [r for r in resources if r["name"].startswith("pods/")]
    assert [r["name"] for r in pods] == ["pods/attach", "pods/binding", "pods/eviction", "pods/exec", "pods/log",
                                         "pods/portforward", "pods/status"]
    assert pods[3] == {"name": "pods/exec", "singularName": "", "namespaced": True, "kind": "PodExecOptions",
                       "verbs": ["create", "get"]}
    aggregated = client.get("/api", headers={"accept": "application/json;g=apidiscovery.k8s.io;v=v2;"
                                                      "as=APIGroupDiscoveryList"}).json()
    served = next(r for r in aggregated["items"][0]["versions"][0]["resources"] if r["resource"] == "pods")
    assert [s["subresource"] for s in served["subresources"]] == [r["name"][5:] for r in pods]
    assert served["subresources"][2]["responseKind"] == {"group": "policy", "version": "v1", "kind": "Eviction"}
