"""pods/eviction (kubectl drain), and the protobuf bodies of evictions, deletes, bindings and PriorityClasses that
kubectl's and kube-scheduler's typed clients send."""

from __future__ import annotations

import warnings
from typing import Any

import pytest

warnings.filterwarnings("ignore", message="Using `httpx`")
from cluster import api_client  # noqa: E402
from starlette.testclient import TestClient  # noqa: E402
from test_wire import PROTOBUF, field  # noqa: E402

from dralloc.server.auth.users import Authorizer, User  # noqa: E402
from dralloc.server.protobuf.decoder import decode  # noqa: E402

PODS = "/api/v1/namespaces/default/pods"
SUCCESS = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201}


def envelope(api_version: str, kind: str, raw: bytes) -> bytes:
    return b"k8s\x00" + field(1, field(1, api_version) + field(2, kind)) + field(2, raw) + field(3, "") + field(4, "")


def eviction(name: str = "web", **options: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": name}}
    if options:
        body["deleteOptions"] = options
    return body


@pytest.fixture
def client() -> TestClient:
    http = api_client()
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web"},
           "spec": {"nodeName": "node-1", "containers": [{"name": "app", "image": "nginx:1"}]}}
    assert http.post(PODS, json=pod).status_code == 201
    return http


def test_an_eviction_deletes_the_pod_gracefully_and_answers_a_success_status(client: TestClient) -> None:
    r = client.post(f"{PODS}/web/eviction", json=eviction(gracePeriodSeconds=7))
    assert r.status_code == 201 and r.json() == SUCCESS
    meta = client.get(f"{PODS}/web").json()["metadata"]
    assert meta["deletionTimestamp"] and meta["deletionGracePeriodSeconds"] == 7
    assert client.post(f"{PODS}/web/eviction", json=eviction(gracePeriodSeconds=0)).status_code == 201
    assert client.get(f"{PODS}/web").status_code == 404


def test_an_eviction_is_refused_as_kube_apiserver_refuses_it(client: TestClient) -> None:
    r = client.post(f"{PODS}/web/eviction", json=eviction("other"))
    assert r.status_code == 400 and r.json()["message"] == "name in URL does not match name in Eviction object"
    r = client.post(f"{PODS}/missing/eviction", json=eviction("missing"))
    assert r.status_code == 404 and r.json()["message"] == 'pods "missing" not found'
    stale = eviction(preconditions={"resourceVersion": "1"})
    r = client.post(f"{PODS}/web/eviction", json=stale)
    assert r.status_code == 409 and r.json()["message"].startswith(
        'Operation cannot be fulfilled on Pod "web": the ResourceVersion in the precondition (1) does not match the '
        "ResourceVersion in record (")
    assert client.post(f"{PODS}/web/eviction", json={**eviction(), "kind": "Pod"}).status_code == 400
    assert client.get(f"{PODS}/web/eviction").status_code == 405
    assert client.get(f"{PODS}/web/binding").status_code == 405
    r = client.post(f"{PODS}/web/eviction?dryRun=All", json=eviction(gracePeriodSeconds=0))
    assert r.status_code == 201 and client.get(f"{PODS}/web").status_code == 200  # a dry run deletes nothing
    r = client.post(f"{PODS}/web/eviction?dryRun=All", json=eviction(dryRun=["Other"]))
    assert r.status_code == 400 and "Non-matching dry-run options" in r.json()["message"]


def test_an_eviction_needs_create_on_pods_eviction() -> None:
    rules = {"system:anonymous": [{"verbs": ["create", "get"], "resources": ["pods"]}]}
    http = api_client(authorizer=Authorizer(rules), anonymous=True)
    r = http.post(f"{PODS}/web/eviction", json=eviction())
    assert r.status_code == 403 and r.json()["message"] == (
        'pods "web" is forbidden: User "system:anonymous" cannot create resource "pods/eviction" in API group "" '
        'in the namespace "default"')


def test_can_i_evict_needs_create_on_pods_and_on_pods_eviction() -> None:
    user = User("drainer", "1")
    pods_only = Authorizer({"drainer": [{"verbs": ["create"], "resources": ["pods"]}]})
    both = Authorizer({"drainer": [{"verbs": ["create"], "resources": ["pods", "pods/eviction"]}]})
    assert not pods_only.request_allowed(user, "create", "pods", "eviction")
    assert both.request_allowed(user, "create", "pods", "eviction")


def test_discovery_names_the_eviction_subresource_with_its_group_as_kubectl_drain_looks_for_it(
        client: TestClient) -> None:
    entry = next(r for r in client.get("/api/v1").json()["resources"] if r["name"] == "pods/eviction")
    assert entry == {"name": "pods/eviction", "singularName": "", "namespaced": True, "group": "policy",
                     "version": "v1", "kind": "Eviction", "verbs": ["create"]}


def test_protobuf_delete_options_keep_a_zero_grace_period_and_the_preconditions() -> None:
    raw = field(1, 0) + field(2, field(1, "u1") + field(2, "")) + field(4, "Background") + field(5, "All")
    assert decode(envelope("v1", "DeleteOptions", raw)) == {
        "apiVersion": "v1", "kind": "DeleteOptions", "gracePeriodSeconds": 0, "preconditions": {"uid": "u1"},
        "propagationPolicy": "Background", "dryRun": ["All"]}
    assert decode(envelope("v1", "DeleteOptions", b"")) == {"apiVersion": "v1", "kind": "DeleteOptions"}


def test_kubectl_create_priorityclass_protobuf_is_decoded_as_go_writes_it() -> None:
    raw = field(1, field(1, "high")) + field(2, (1 << 64) - 5) + field(3, 0) + field(4, "") + field(5, "Never")
    assert decode(envelope("scheduling.k8s.io/v1", "PriorityClass", raw)) == {
        "apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high"}, "value": -5,
        "preemptionPolicy": "Never"}
    raw = field(1, field(1, "d")) + field(2, 0) + field(3, 1) + field(4, "the default")
    assert decode(envelope("scheduling.k8s.io/v1", "PriorityClass", raw)) == {
        "apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "d"}, "value": 0,
        "globalDefault": True, "description": "the default"}


def test_kubectl_drains_protobuf_bodies_are_understood(client: TestClient) -> None:
    # kubectl drain --disable-eviction: DELETE with a protobuf DeleteOptions (as kubectl 1.32 sends it)
    body = b'k8s\x00\n\x13\n\x02v1\x12\rDeleteOptions\x12\x02\x08\x05\x1a\x00"\x00'
    r = client.request("DELETE", f"{PODS}/web", content=body, headers=PROTOBUF)
    assert r.status_code == 200 and r.json()["metadata"]["deletionGracePeriodSeconds"] == 5
    # its eviction: metadata, then the delete options
    raw = field(1, field(1, "web") + field(3, "default")) + field(2, field(1, 0))
    r = client.post(f"{PODS}/web/eviction", content=envelope("policy/v1", "Eviction", raw), headers=PROTOBUF)
    assert r.status_code == 201 and client.get(f"{PODS}/web").status_code == 404
    bad = client.request("DELETE", f"{PODS}/web", content=envelope("v1", "Pod", b""), headers=PROTOBUF)
    assert bad.status_code == 400


def test_kube_schedulers_protobuf_binding_binds_the_pod() -> None:
    http = api_client()
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web"},
           "spec": {"containers": [{"name": "app", "image": "nginx:1"}]}}
    assert http.post(PODS, json=pod).status_code == 201
    target = field(1, "Node") + field(2, "") + field(3, "node-7")
    raw = field(1, field(1, "web") + field(3, "default")) + field(2, target)
    r = http.post(f"{PODS}/web/binding", content=envelope("v1", "Binding", raw), headers=PROTOBUF)
    assert r.status_code == 201, r.text
    assert http.get(f"{PODS}/web").json()["spec"]["nodeName"] == "node-7"
    wrong = http.post(f"{PODS}/web/binding", content=envelope("v1", "Namespace", raw), headers=PROTOBUF)
    assert wrong.status_code == 400


@pytest.mark.parametrize("dry", [True, 1.5, "All", [5]])
def test_a_dry_run_option_that_is_not_a_list_of_strings_is_a_400(client: TestClient, dry: object) -> None:
    r = client.post(f"{PODS}/web/eviction", json=eviction(dryRun=dry))
    assert r.status_code == 400 and "DeleteOptions.dryRun of type []string" in r.json()["message"], r.text
    r = client.request("DELETE", f"{PODS}/web", json={"dryRun": dry})
    assert r.status_code == 400
