"""The API server in-process: verbs, status codes, versions, validation, field validation, watch history."""

from __future__ import annotations

import copy
import json
import warnings
from pathlib import Path
from typing import Any

import pytest
import yaml

warnings.filterwarnings("ignore", category=DeprecationWarning)
from cluster import api_client  # noqa: E402
from openapi_walk import explain_path  # noqa: E402
from starlette.testclient import TestClient  # noqa: E402

from dralloc.server import create_app  # noqa: E402
from dralloc.server.auth.users import Authorizer, User  # noqa: E402
from dralloc.store import SQLiteStore  # noqa: E402

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
SLICES = "/apis/resource.k8s.io/v1/resourceslices"
CLAIMS = "/apis/resource.k8s.io/v1/namespaces/ml-team/resourceclaims"


def docs(name: str) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all((EXAMPLES / name).read_text()) if d]


@pytest.fixture
def client() -> TestClient:
    return api_client("ml-team", "gpu-monitoring")


@pytest.fixture
def slice_doc() -> dict[str, Any]:
    return copy.deepcopy(docs("21-nic-slices.yaml")[0])


def test_discovery_documents(client: TestClient) -> None:
    assert client.get("/api").json()["versions"] == ["v1"]
    groups = {g["name"]: g for g in client.get("/apis").json()["groups"]}
    assert groups["resource.k8s.io"]["preferredVersion"]["version"] == "v1"
    names = {r["name"] for r in client.get("/apis/resource.k8s.io/v1").json()["resources"]}
    assert {"resourceslices", "deviceclasses", "resourceclaims", "resourceclaims/status",
            "resourceclaimtemplates", "devicetaintrules"} <= names
    assert client.get("/version").json()["major"] == "1"
    assert client.get("/healthz").text == "ok"
    root = client.get("/openapi/v3").json()["paths"]
    url = root["apis/resource.k8s.io/v1"]["serverRelativeURL"]
    gv = client.get(url).json()
    post = gv["paths"]["/apis/resource.k8s.io/v1/resourceslices"]["post"]
    assert any(p["name"] == "fieldValidation" for p in post["parameters"])
    assert client.get("/openapi/v2").json()["swagger"] == "2.0"


def test_create_get_list_delete(client: TestClient, slice_doc: dict[str, Any]) -> None:
    r = client.post(SLICES, json=slice_doc)
    assert r.status_code == 201
    meta = r.json()["metadata"]
    assert meta["generation"] == 1 and meta["uid"] and meta["creationTimestamp"] and meta["resourceVersion"]
    name = slice_doc["metadata"]["name"]
    assert client.get(f"{SLICES}/{name}").json()["metadata"]["uid"] == meta["uid"]
    listed = client.get(SLICES).json()
    assert listed["kind"] == "ResourceSliceList" and [i["metadata"]["name"] for i in listed["items"]] == [name]
    assert client.delete(f"{SLICES}/{name}").status_code == 200
    gone = client.get(f"{SLICES}/{name}")
    assert gone.status_code == 404 and gone.json()["reason"] == "NotFound"
    assert gone.json()["message"] == f'resourceslices.resource.k8s.io "{name}" not found'


def test_already_exists(client: TestClient, slice_doc: dict[str, Any]) -> None:
    client.post(SLICES, json=slice_doc)
    r = client.post(SLICES, json=slice_doc)
    assert r.status_code == 409 and r.json()["reason"] == "AlreadyExists"


def test_invalid_object_is_422_with_causes(client: TestClient, slice_doc: dict[str, Any]) -> None:
    slice_doc["spec"]["devices"][0]["name"] = "NIC_0"
    r = client.post(SLICES, json=slice_doc)
    assert r.status_code == 422
    body = r.json()
    assert body["kind"] == "Status" and body["reason"] == "Invalid"
    assert body["message"].startswith(f'ResourceSlice.resource.k8s.io "{slice_doc["metadata"]["name"]}" is invalid: ')
    assert body["details"]["causes"][0]["field"] == "spec.devices[0].name"


@pytest.mark.parametrize("mode,code", [("Strict", 400), ("Warn", 201), ("Ignore", 201)])
def test_field_validation(client: TestClient, slice_doc: dict[str, Any], mode: str, code: int) -> None:
    slice_doc["spec"]["surprise"] = True
    r = client.post(f"{SLICES}?fieldValidation={mode}", json=slice_doc)
    assert r.status_code == code
    if mode == "Strict":
        assert r.json()["message"].endswith('strict decoding error: unknown field "spec.surprise"')
    elif mode == "Warn":
        assert r.headers.get("warning") == '299 - "unknown field \\"spec.surprise\\""'
        assert "surprise" not in r.json()["spec"]
    else:
        assert "warning" not in r.headers


def test_duplicate_fields_are_strict_errors(client: TestClient) -> None:
    raw = (b'{"apiVersion":"resource.k8s.io/v1","kind":"DeviceClass","metadata":{"name":"a","name":"b"}}')
    r = client.post("/apis/resource.k8s.io/v1/deviceclasses?fieldValidation=Strict", content=raw,
                    headers={"content-type": "application/json"})
    assert r.status_code == 400 and 'duplicate field "metadata.name"' in r.json()["message"]


def test_dry_run_stores_nothing(client: TestClient, slice_doc: dict[str, Any]) -> None:
    r = client.post(f"{SLICES}?dryRun=All", json=slice_doc)
    assert r.status_code == 201
    assert client.get(SLICES).json()["items"] == []
    assert client.post(f"{SLICES}?dryRun=Some", json=slice_doc).status_code == 400


def test_update_conflict_generation_and_immutability(client: TestClient, slice_doc: dict[str, Any]) -> None:
    created = client.post(SLICES, json=slice_doc).json()
    name = created["metadata"]["name"]
    labelled = copy.deepcopy(created)
    labelled["metadata"]["labels"] = {"team": "net"}
    r = client.put(f"{SLICES}/{name}", json=labelled)
    assert r.status_code == 200 and r.json()["metadata"]["generation"] == 1
    stale = client.put(f"{SLICES}/{name}", json=labelled)
    assert stale.status_code == 409 and stale.json()["reason"] == "Conflict"
    current = r.json()
    current["spec"]["pool"]["generation"] = 2
    bumped = client.put(f"{SLICES}/{name}", json=current)
    assert bumped.json()["metadata"]["generation"] == 2
    moved = bumped.json()
    moved["spec"]["driver"] = "other.example.com"
    r = client.put(f"{SLICES}/{name}", json=moved)
    assert r.status_code == 422
    assert 'spec.driver: Invalid value: "other.example.com": field is immutable' in r.json()["message"]


def test_noop_update_keeps_resource_version(client: TestClient, slice_doc: dict[str, Any]) -> None:
    created = client.post(SLICES, json=slice_doc).json()
    again = client.put(f"{SLICES}/{created['metadata']['name']}", json=created).json()
    assert again["metadata"]["resourceVersion"] == created["metadata"]["resourceVersion"]


def test_patches(client: TestClient, slice_doc: dict[str, Any]) -> None:
    name = client.post(SLICES, json=slice_doc).json()["metadata"]["name"]
    r = client.patch(f"{SLICES}/{name}", content=json.dumps({"metadata": {"labels": {"a": "b"}}}),
                     headers={"content-type": "application/merge-patch+json"})
    assert r.json()["metadata"]["labels"] == {"a": "b"}
    r = client.patch(f"{SLICES}/{name}", content=json.dumps([{"op": "replace", "path": "/metadata/labels/a",
                                                              "value": "c"}]),
                     headers={"content-type": "application/json-patch+json"})
    assert r.json()["metadata"]["labels"] == {"a": "c"}
    r = client.patch(f"{SLICES}/{name}", content="{}", headers={"content-type": "text/plain"})
    assert r.status_code == 415
    r = client.patch(f"{SLICES}/{name}", content=json.dumps([{"op": "test", "path": "/metadata/name", "value": "x"}]),
                     headers={"content-type": "application/json-patch+json"})
    assert r.status_code == 422


def test_server_side_apply_creates_then_updates(client: TestClient, slice_doc: dict[str, Any]) -> None:
    name = slice_doc["metadata"]["name"]
    body = yaml.safe_dump(slice_doc)
    r = client.patch(f"{SLICES}/{name}?fieldManager=test", content=body,
                     headers={"content-type": "application/apply-patch+yaml"})
    assert r.status_code == 201
    slice_doc["metadata"]["labels"] = {"x": "y"}
    r = client.patch(f"{SLICES}/{name}?fieldManager=test", content=yaml.safe_dump(slice_doc),
                     headers={"content-type": "application/apply-patch+yaml"})
    assert r.status_code == 200 and r.json()["metadata"]["labels"] == {"x": "y"}
    r = client.patch(f"{SLICES}/{name}", content=body, headers={"content-type": "application/apply-patch+yaml"})
    assert r.status_code == 422 and r.json()["message"] == ('PatchOptions.meta.k8s.io "" is invalid: fieldManager: '
                                                            'Required value: is required for apply patch')


def test_claim_status_subresource(client: TestClient) -> None:
    claim = docs("30-claims.yaml")[0]
    created = client.post(CLAIMS, json=claim).json()
    name = created["metadata"]["name"]
    request = created["spec"]["devices"]["requests"][0]["name"]
    status = {"allocation": {"devices": {"results": [{"request": request, "driver": "gpu.nvidia.com",
                                                      "pool": "gpu-node-1", "device": "gpu-0"}]}}}
    # Writing status through the main resource is ignored...
    r = client.put(f"{CLAIMS}/{name}", json={**created, "status": status})
    assert "status" not in r.json()
    # ...and through /status it is stored and validated.
    r = client.put(f"{CLAIMS}/{name}/status", json={**r.json(), "status": status})
    assert r.status_code == 200 and r.json()["status"] == status
    bad = {**r.json(), "status": {"allocation": {"devices": {"results": [{**status["allocation"]["devices"]["results"][0],
                                                                          "device": "gpu-1"}]}}}}
    r = client.put(f"{CLAIMS}/{name}/status", json=bad)
    assert r.status_code == 422 and "status.allocation" in r.json()["message"]


def test_claim_spec_is_immutable(client: TestClient) -> None:
    created = client.post(CLAIMS, json=docs("30-claims.yaml")[0]).json()
    created["spec"]["devices"]["requests"][0]["name"] = "renamed"
    r = client.put(f"{CLAIMS}/{created['metadata']['name']}", json=created)
    assert r.status_code == 422 and "field is immutable" in r.json()["message"]


def test_versions_are_converted(client: TestClient) -> None:
    slices = docs("20-gpu-slices.yaml")
    client.post(SLICES, json=slices[1])
    beta1 = client.get("/apis/resource.k8s.io/v1beta1/resourceslices").json()
    assert beta1["apiVersion"] == "resource.k8s.io/v1beta1"
    assert "basic" in beta1["items"][0]["spec"]["devices"][0]
    legacy = docs("v1beta1/resourceslice-and-claim.yaml")[0]
    legacy["metadata"]["name"] = "from-beta"
    r = client.post("/apis/resource.k8s.io/v1beta1/resourceslices", json=legacy)
    assert r.status_code == 201
    v1 = client.get(f"{SLICES}/from-beta").json()
    assert "basic" not in v1["spec"]["devices"][0] and v1["apiVersion"] == "resource.k8s.io/v1"


def test_kind_mismatch_and_bad_bodies(client: TestClient, slice_doc: dict[str, Any]) -> None:
    wrong = {**slice_doc, "kind": "DeviceClass"}
    assert client.post(SLICES, json=wrong).status_code == 400
    r = client.post(SLICES, content=b"{not json", headers={"content-type": "application/json"})
    assert r.status_code == 400 and r.json()["kind"] == "Status"
    r = client.post(SLICES, content=b"[]", headers={"content-type": "application/json"})
    assert r.status_code == 400
    r = client.post(SLICES, content=b"x" * (3 * 1024 * 1024 + 1), headers={"content-type": "application/json"})
    assert r.status_code == 413 and r.json()["reason"] == "RequestEntityTooLarge"
    r = client.post(SLICES, content=b"{}", headers={"content-type": "text/plain"})
    assert r.status_code == 415
    typed = copy.deepcopy(slice_doc)
    typed["spec"]["devices"] = "many"
    assert client.post(SLICES, json=typed).status_code == 400
    assert client.get("/apis/resource.k8s.io/v1/widgets").status_code == 404
    assert client.put(SLICES, json=slice_doc).status_code == 405


def test_selectors_and_paging(client: TestClient) -> None:
    for i in range(5):
        d = copy.deepcopy(docs("21-nic-slices.yaml")[0])
        d["metadata"]["name"] = f"s{i}"
        d["metadata"]["labels"] = {"idx": str(i), "even": str(i % 2 == 0).lower()}
        d["spec"]["nodeName"] = f"node-{i % 2}"
        client.post(SLICES, json=d)
    names = lambda r: [i["metadata"]["name"] for i in r.json()["items"]]  # noqa: E731
    assert names(client.get(SLICES, params={"labelSelector": "even=true"})) == ["s0", "s2", "s4"]
    assert names(client.get(SLICES, params={"labelSelector": "idx in (1,3),even!=true"})) == ["s1", "s3"]
    assert names(client.get(SLICES, params={"fieldSelector": "spec.nodeName=node-1"})) == ["s1", "s3"]
    assert names(client.get(SLICES, params={"fieldSelector": "metadata.name!=s0,spec.nodeName=node-0"})) == ["s2", "s4"]
    assert client.get(SLICES, params={"fieldSelector": "spec.foo=x"}).status_code == 400
    page = client.get(SLICES, params={"limit": 2}).json()
    assert [i["metadata"]["name"] for i in page["items"]] == ["s0", "s1"]
    token = page["metadata"]["continue"]
    rest = client.get(SLICES, params={"limit": 2, "continue": token}).json()
    assert [i["metadata"]["name"] for i in rest["items"]] == ["s2", "s3"]
    r = client.delete(SLICES, params={"labelSelector": "even=true"})
    assert [i["metadata"]["name"] for i in r.json()["items"]] == ["s0", "s2", "s4"]
    assert names(client.get(SLICES)) == ["s1", "s3"]


def test_delete_preconditions(client: TestClient, slice_doc: dict[str, Any]) -> None:
    name = client.post(SLICES, json=slice_doc).json()["metadata"]["name"]
    r = client.request("DELETE", f"{SLICES}/{name}", json={"preconditions": {"uid": "nope"}})
    assert r.status_code == 409 and "Precondition failed: UID in precondition: nope" in r.json()["message"]
    r = client.request("DELETE", f"{SLICES}/{name}", json={"preconditions": {"resourceVersion": "1"}})
    assert r.status_code == 409
    assert client.request("DELETE", f"{SLICES}/{name}", json={"dryRun": ["All"]}).status_code == 200
    assert client.get(f"{SLICES}/{name}").status_code == 200


def test_table_output(client: TestClient, slice_doc: dict[str, Any]) -> None:
    client.post(SLICES, json=slice_doc)
    r = client.get(SLICES, headers={"accept": "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"})
    table = r.json()
    assert table["kind"] == "Table"
    assert [c["name"] for c in table["columnDefinitions"]] == ["Name", "Node", "Driver", "Pool", "Age"]
    assert table["rows"][0]["cells"][:2] == [slice_doc["metadata"]["name"], slice_doc["spec"]["nodeName"]]


@pytest.mark.slow
def test_watch_replays_history_and_reports_gone(slice_doc: dict[str, Any]) -> None:
    store = SQLiteStore(":memory:", history=2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        client = TestClient(create_app(store))
    first = client.post(SLICES, json=slice_doc).json()["metadata"]["resourceVersion"]
    name = slice_doc["metadata"]["name"]
    client.patch(f"{SLICES}/{name}", content='{"metadata":{"labels":{"a":"b"}}}',
                 headers={"content-type": "application/merge-patch+json"})
    client.delete(f"{SLICES}/{name}")
    r = client.get(SLICES, params={"watch": "true", "resourceVersion": str(int(first) - 1), "timeoutSeconds": "1"})
    events = [json.loads(line) for line in r.text.splitlines()]
    assert [e["type"] for e in events] == ["ADDED", "MODIFIED", "DELETED"]
    for i in range(1000):  # compaction runs every 1000 versions and keeps `history` events
        client.post("/apis/resource.k8s.io/v1/deviceclasses", json={"apiVersion": "resource.k8s.io/v1",
                                                                   "kind": "DeviceClass",
                                                                   "metadata": {"name": f"c{i}"}})
    r = client.get(SLICES, params={"watch": "true", "resourceVersion": first, "timeoutSeconds": "1"})
    event = json.loads(r.text.splitlines()[0])
    assert event["type"] == "ERROR" and event["object"]["code"] == 410


def test_tokens_and_authorization(slice_doc: dict[str, Any]) -> None:
    tokens = {"admin-token": User("admin"), "viewer-token": User("viewer", groups=("viewers",))}
    authz = Authorizer({"admin": [{"verbs": ["*"], "resources": ["*"]}],
                        "group:viewers": [{"verbs": ["get", "list", "watch"], "resources": ["resourceslices"]}]})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        client = TestClient(create_app(SQLiteStore(":memory:"), tokens=tokens, authorizer=authz))
    r = client.get(SLICES)
    assert r.status_code == 401 and r.json()["reason"] == "Unauthorized"
    assert client.get(SLICES, headers={"authorization": "Bearer wrong"}).status_code == 401
    assert client.get("/healthz").status_code == 200
    admin = {"authorization": "Bearer admin-token"}
    viewer = {"authorization": "Bearer viewer-token"}
    assert client.post(SLICES, json=slice_doc, headers=admin).status_code == 201
    assert client.get(SLICES, headers=viewer).status_code == 200
    r = client.delete(f"{SLICES}/{slice_doc['metadata']['name']}", headers=viewer)
    assert r.status_code == 403 and 'User "viewer" cannot delete resource "resourceslices"' in r.json()["message"]


def test_metrics(client: TestClient) -> None:
    client.get(SLICES)
    text = client.get("/metrics").text
    assert 'apiserver_request_total{verb="GET",code="200"}' in text and "dralloc_resource_version" in text


def test_concurrent_writers_never_lose_an_update(tmp_path: Path) -> None:
    import threading

    db = str(tmp_path / "c.sqlite")
    first = SQLiteStore(db)
    first.create("counters", "", "c", lambda _old, rv: {"metadata": {"name": "c", "resourceVersion": rv}, "n": 0})
    stores = [first, SQLiteStore(db)]  # two connections, as two server replicas on one file would have

    def bump(old: dict[str, Any], rv: str) -> dict[str, Any]:
        return {**old, "metadata": {**old["metadata"], "resourceVersion": rv}, "n": old["n"] + 1}

    def worker(store: SQLiteStore) -> None:
        for _ in range(50):
            store.update("counters", "", "c", bump)

    threads = [threading.Thread(target=worker, args=(stores[i % 2],)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert first.get("counters", "", "c")["n"] == 200


def test_list_resource_version_semantics(client: TestClient, slice_doc: dict[str, Any]) -> None:
    rv = client.post(SLICES, json=slice_doc).json()["metadata"]["resourceVersion"]
    assert client.get(SLICES, params={"resourceVersion": rv}).status_code == 200
    assert client.get(SLICES, params={"resourceVersion": rv, "resourceVersionMatch": "Exact"}).status_code == 200
    old = client.get(SLICES, params={"resourceVersion": "1", "resourceVersionMatch": "Exact"})
    assert old.status_code == 410 and old.json()["reason"] == "Expired"
    future = client.get(SLICES, params={"resourceVersion": "999999"})
    assert future.status_code == 504 and future.json()["message"].startswith("Too large resource version")
    assert client.get(SLICES, params={"resourceVersionMatch": "Exact"}).status_code == 422


def test_server_side_apply_owns_fields(client: TestClient, slice_doc: dict[str, Any]) -> None:
    name = slice_doc["metadata"]["name"]
    url = f"{SLICES}/{name}"
    apply_ct = {"content-type": "application/apply-patch+yaml"}
    first = copy.deepcopy(slice_doc)
    first["metadata"]["labels"] = {"a": "1", "b": "2"}
    r = client.patch(f"{url}?fieldManager=alice", content=yaml.safe_dump(first), headers=apply_ct)
    assert r.status_code == 201
    managed = r.json()["metadata"]["managedFields"]
    assert managed[0]["manager"] == "alice" and managed[0]["operation"] == "Apply"
    assert managed[0]["fieldsV1"]["f:metadata"]["f:labels"] == {"f:a": {}, "f:b": {}}
    # Applying without a label alice owned removes it.
    second = copy.deepcopy(slice_doc)
    second["metadata"]["labels"] = {"a": "1"}
    r = client.patch(f"{url}?fieldManager=alice", content=yaml.safe_dump(second), headers=apply_ct)
    assert r.json()["metadata"]["labels"] == {"a": "1"}
    # Another manager changing alice's field conflicts, unless forced.
    bob = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": name,
                                                                                  "labels": {"a": "9"}}}
    r = client.patch(f"{url}?fieldManager=bob", content=yaml.safe_dump(bob), headers=apply_ct)
    assert r.status_code == 409 and 'conflict with "alice": .metadata.labels.a' in r.json()["message"]
    r = client.patch(f"{url}?fieldManager=bob&force=true", content=yaml.safe_dump(bob), headers=apply_ct)
    assert r.status_code == 200 and r.json()["metadata"]["labels"] == {"a": "9"}
    owners = {e["manager"]: e["fieldsV1"] for e in r.json()["metadata"]["managedFields"]}
    assert "f:labels" not in owners["alice"].get("f:metadata", {}) and owners["bob"]["f:metadata"]["f:labels"] == {"f:a": {}}
    # A non-apply update keeps managedFields it does not send.
    current = r.json()
    current["metadata"].pop("managedFields")
    current["metadata"]["annotations"] = {"note": "x"}
    assert client.put(url, json=current).json()["metadata"]["managedFields"]


AGGREGATED = ("application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,"
              "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json")


def test_aggregated_discovery_answers_what_kubectl_asks_for_in_one_document(client: TestClient) -> None:
    r = client.get("/apis", headers={"accept": AGGREGATED})
    assert r.headers["content-type"] == "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
    doc = r.json()
    assert (doc["kind"], doc["apiVersion"]) == ("APIGroupDiscoveryList", "apidiscovery.k8s.io/v2")
    group = doc["items"][-1]  # after authentication.k8s.io and authorization.k8s.io, as kube-apiserver orders them
    assert group["metadata"]["name"] == "resource.k8s.io"
    assert [v["version"] for v in group["versions"]] == ["v1", "v1beta2", "v1beta1"]  # preferred first
    claims = next(res for res in group["versions"][0]["resources"] if res["resource"] == "resourceclaims")
    assert claims["scope"] == "Namespaced" and claims["singularResource"] == "resourceclaim"
    assert claims["responseKind"] == {"group": "resource.k8s.io", "version": "v1", "kind": "ResourceClaim"}
    assert claims["subresources"][0]["subresource"] == "status"
    core = client.get("/api", headers={"accept": AGGREGATED}).json()
    assert [r["resource"] for r in core["items"][0]["versions"][0]["resources"]][:2] == ["namespaces", "nodes"]
    # without the aggregated Accept, the legacy documents
    assert client.get("/apis").json()["kind"] == "APIGroupList"
    beta = client.get("/apis", headers={"accept": "application/json;g=apidiscovery.k8s.io;v=v2beta1;"
                                                  "as=APIGroupDiscoveryList"})
    assert beta.json()["apiVersion"] == "apidiscovery.k8s.io/v2beta1"


def _class(labels: dict[str, str]) -> dict[str, Any]:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
            "metadata": {"name": "owned.example.com", "labels": labels}}


def test_managed_fields_list_fields_in_sorted_order_whatever_order_they_were_sent_in(client: TestClient) -> None:
    # structured-merge-diff serialises a field set sorted; the same ownership must read the same every time.
    body = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "s"},
            "spec": {"pool": {"resourceSliceCount": 1, "name": "p", "generation": 1}, "nodeName": "n",
                     "driver": "d.example.com", "devices": [{"name": "g"}]}}
    for params, method in (({"fieldManager": "m"}, "post"), ({"fieldManager": "ssa"}, "patch")):
        url = "/apis/resource.k8s.io/v1/resourceslices" + ("" if method == "post" else "/s")
        kw: dict[str, Any] = {"params": params}
        if method == "post":
            r = client.post(url, json=body, **kw)
        else:
            r = client.patch(url, content=json.dumps(body), headers={"content-type": "application/apply-patch+yaml"},
                             params={**params, "force": "true"})
        assert r.status_code in (200, 201), r.text
        entry = r.json()["metadata"]["managedFields"][-1]
        spec = entry["fieldsV1"]["f:spec"]
        assert list(spec) == ["f:devices", "f:driver", "f:nodeName", "f:pool"]
        assert list(spec["f:pool"]) == ["f:generation", "f:name", "f:resourceSliceCount"]


def test_creates_updates_and_patches_are_recorded_in_managed_fields(client: TestClient) -> None:
    url = "/apis/resource.k8s.io/v1/deviceclasses"
    created = client.post(url, params={"fieldManager": "kubectl-create"}, json=_class({"tier": "a", "team": "x"}))
    [entry] = created.json()["metadata"]["managedFields"]
    assert (entry["manager"], entry["operation"], entry["apiVersion"]) == ("kubectl-create", "Update",
                                                                           "resource.k8s.io/v1")
    # the create made the labels map: it owns the map itself too (".")
    assert entry["fieldsV1"]["f:metadata"]["f:labels"] == {".": {}, "f:team": {}, "f:tier": {}}
    patched = client.patch(f"{url}/owned.example.com", params={"fieldManager": "kubectl-edit"},
                           json={"metadata": {"labels": {"tier": "b"}}},
                           headers={"content-type": "application/merge-patch+json"}).json()
    owners = {e["manager"]: e["fieldsV1"]["f:metadata"]["f:labels"] for e in patched["metadata"]["managedFields"]}
    assert owners == {"kubectl-create": {".": {}, "f:team": {}}, "kubectl-edit": {"f:tier": {}}}
    # without fieldManager the manager is the client's User-Agent up to its first "/"
    put = client.put(f"{url}/owned.example.com", json={**patched, "metadata": {
        **patched["metadata"], "labels": {"tier": "b", "team": "x", "new": "1"}}},
        headers={"user-agent": "my-controller/v1.2 (linux)"}).json()
    assert [e["manager"] for e in put["metadata"]["managedFields"]] == ["kubectl-create", "kubectl-edit",
                                                                         "my-controller"]


def test_server_side_apply_conflicts_name_the_manager_of_an_update(client: TestClient) -> None:
    url = "/apis/resource.k8s.io/v1/deviceclasses"
    client.patch(f"{url}/owned.example.com", params={"fieldManager": "ssa"}, content=yaml.safe_dump(_class({"tier": "a"})),
                 headers={"content-type": "application/apply-patch+yaml"})
    client.patch(f"{url}/owned.example.com", params={"fieldManager": "kubectl-edit"},
                 json={"metadata": {"labels": {"tier": "b"}}}, headers={"content-type": "application/merge-patch+json"})
    r = client.patch(f"{url}/owned.example.com", params={"fieldManager": "ssa"},
                     content=yaml.safe_dump(_class({"tier": "a"})), headers={"content-type": "application/apply-patch+yaml"})
    assert r.status_code == 409 and r.json()["message"] == (
        'Apply failed with 1 conflict: conflict with "kubectl-edit" using resource.k8s.io/v1: .metadata.labels.tier')
    forced = client.patch(f"{url}/owned.example.com", params={"fieldManager": "ssa", "force": "true"},
                          content=yaml.safe_dump(_class({"tier": "a"})),
                          headers={"content-type": "application/apply-patch+yaml"}).json()
    assert forced["metadata"]["labels"] == {"tier": "a"}
    assert [e["manager"] for e in forced["metadata"]["managedFields"]] == ["ssa"]


def test_token_files_are_read_as_kube_apiserver_reads_them(tmp_path: Path) -> None:
    from dralloc.server.auth.users import User, load_tokens

    path = tmp_path / "tokens.csv"
    path.write_text('t1,alice,1,"admins,dev"\n\n,skipped,2\nt2,bob,3,"",extra\nt1,carol,4\n')
    assert load_tokens(path) == {"t1": User("carol", "4", ()), "t2": User("bob", "3", ("",))}
    path.write_text("# a comment is a record too\n")
    with pytest.raises(ValueError, match=r"must have at least 3 columns \(token, user name, user uid\), found 1"):
        load_tokens(path)


@pytest.mark.slow
@pytest.mark.parametrize(("value", "is_watch"), [("true", True), ("True", True), ("1", True), ("", True),
                                                 ("yes", True), ("false", False), ("False", False),
                                                 ("FALSE", False), ("0", False)])
def test_boolean_query_parameters_are_read_as_kube_apiserver_reads_them(client: TestClient, value: str,
                                                                        is_watch: bool) -> None:
    # Python clients that urlencode a bool (kubernetes_asyncio) send watch=True; only "0" and "false" in
    # any casing are false.
    r = client.get(SLICES, params={"watch": value, "timeoutSeconds": "1"})
    assert r.status_code == 200
    if is_watch:
        assert r.text == ""  # an empty watch stream, ended by its timeout
    else:
        assert r.json()["kind"] == "ResourceSliceList"


def test_pretty_is_read_as_a_go_bool(client: TestClient) -> None:
    assert client.get("/apis/resource.k8s.io/v1/deviceclasses/x", params={"pretty": "True"}).text.startswith("{\n")
    assert "\n" not in client.get("/apis/resource.k8s.io/v1/deviceclasses/x", params={"pretty": "yes"}).text


def _explain(schemas: dict[str, Any], kind: str, path: str, group: str = "io.k8s.api.resource.v1") -> dict[str, Any]:
    return explain_path(schemas, f"{group}.{kind}", path)


def test_openapi_v3_schemas_let_kubectl_explain_reach_optional_nested_fields(client: TestClient) -> None:
    root = client.get("/openapi/v3").json()["paths"]
    schemas = client.get(root["apis/resource.k8s.io/v1"]["serverRelativeURL"]).json()["components"]["schemas"]
    assert _explain(schemas, "ResourceClaim", "spec.devices.requests.exactly.count")["type"] == "integer"
    assert _explain(schemas, "ResourceClaim", "status.allocation.devices.results")["properties"]["device"] == \
        {"type": "string", "default": ""}
    assert '"type": "null"' not in json.dumps(schemas) and '"title"' not in json.dumps(schemas)


def test_the_core_kinds_dralloc_models_are_explained_and_accept_every_other_field(client: TestClient) -> None:
    root = client.get("/openapi/v3").json()["paths"]
    schemas = client.get(root["api/v1"]["serverRelativeURL"]).json()["components"]["schemas"]
    core = "io.k8s.api.core.v1"
    claim = _explain(schemas, "Pod", "spec.resourceClaims", core)
    assert set(claim["properties"]) == {"name", "resourceClaimName", "resourceClaimTemplateName"}
    assert set(_explain(schemas, "Pod", "spec.containers.resources.claims", core)["properties"]) == {"name",
                                                                                                    "request"}
    assert _explain(schemas, "Pod", "spec", core)["x-kubernetes-preserve-unknown-fields"] is True  # env, volumes...
    assert "taints" in _explain(schemas, "Node", "spec", core)["properties"]
    # kinds without a model stay open
    assert schemas[f"{core}.Endpoints"] == {"type": "object", "x-kubernetes-preserve-unknown-fields": True,
                                            "x-kubernetes-group-version-kind": [{"group": "", "version": "v1",
                                                                                 "kind": "Endpoints"}]}
    # /openapi/v2, which kubectl validates a List's items with on the client, keeps every core kind open
    definitions = client.get("/openapi/v2").json()["definitions"]
    assert "properties" not in definitions[f"{core}.Pod"] and f"{core}.PodSpec" not in definitions


def test_openapi_v2_protobuf_holds_each_kinds_definition_with_its_group_version_kind(client: TestClient) -> None:
    # kubectl validates the items of a List on the client with these definitions (gnostic's openapi.v2.Document)
    from dralloc.server.protobuf.decoder import fields

    r = client.get("/openapi/v2", headers={"accept": "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"})
    assert r.headers["content-type"] == "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"
    document = dict(fields(r.content))
    assert document[1] == b"2.0"
    named = [dict(fields(entry)) for number, entry in fields(document[9]) if number == 1]
    schemas = {entry[1].decode(): entry[2] for entry in named}
    device_class = fields(schemas["io.k8s.api.resource.v1.DeviceClass"])
    extensions = {dict(fields(v))[1]: dict(fields(dict(fields(v))[2]))[2] for n, v in device_class if n == 31}
    assert yaml.safe_load(extensions[b"x-kubernetes-group-version-kind"]) == [
        {"group": "resource.k8s.io", "kind": "DeviceClass", "version": "v1"}]
    properties = [dict(fields(p)) for _, p in fields(dict(device_class)[25])]  # Properties: NamedSchema entries
    spec = next(p[2] for p in properties if p[1] == b"spec")
    assert dict(fields(spec))[1] == b"#/definitions/io.k8s.api.resource.v1.DeviceClassSpec"  # $ref
    json_doc = client.get("/openapi/v2").json()["definitions"]
    assert json_doc["io.k8s.api.resource.v1.DeviceClass"]["properties"]["spec"] == {
        "$ref": "#/definitions/io.k8s.api.resource.v1.DeviceClassSpec"}


def test_a_strategic_merge_patch_adds_a_consumer_to_reserved_for_by_uid(client: TestClient) -> None:
    """ResourceClaimStatus.reservedFor is patchStrategy merge by uid (and ObjectMeta's finalizers a set): a
    strategic merge patch adds to them where a JSON merge patch replaces them."""
    claim = docs("30-claims.yaml")[0]
    created = client.post(CLAIMS, json={**claim, "metadata": {**claim["metadata"], "finalizers": ["a.example/x"]}})
    name = created.json()["metadata"]["name"]
    request = created.json()["spec"]["devices"]["requests"][0]["name"]
    allocation = {"devices": {"results": [{"request": request, "driver": "gpu.nvidia.com", "pool": "gpu-node-1",
                                           "device": "gpu-0"}]}}
    first = {"resource": "pods", "name": "a", "uid": "uid-a"}
    r = client.patch(f"{CLAIMS}/{name}/status", json={"status": {"allocation": allocation, "reservedFor": [first]}},
                     headers={"content-type": "application/merge-patch+json"})
    assert r.status_code == 200, r.text
    second = {"resource": "pods", "name": "b", "uid": "uid-b"}
    smp = {"content-type": "application/strategic-merge-patch+json"}
    r = client.patch(f"{CLAIMS}/{name}/status", json={"status": {"reservedFor": [second]}}, headers=smp)
    assert r.status_code == 200, r.text
    assert r.json()["status"]["reservedFor"] == [first, second]
    r = client.patch(f"{CLAIMS}/{name}/status", headers=smp,
                     json={"status": {"reservedFor": [{"uid": "uid-a", "$patch": "delete"}]}})
    assert r.json()["status"]["reservedFor"] == [second]
    r = client.patch(f"{CLAIMS}/{name}", json={"metadata": {"finalizers": ["b.example/y"]}}, headers=smp)
    assert r.json()["metadata"]["finalizers"] == ["a.example/x", "b.example/y"]


def test_version_has_every_field_of_kube_apiservers_version_info(client: TestClient) -> None:
    info = client.get("/version").json()
    assert list(info) == ["major", "minor", "emulationMajor", "emulationMinor", "minCompatibilityMajor",
                          "minCompatibilityMinor", "gitVersion", "gitCommit", "gitTreeState", "buildDate",
                          "goVersion", "compiler", "platform"]
    assert (info["emulationMajor"], info["emulationMinor"]) == ("1", "36")
    assert (info["minCompatibilityMajor"], info["minCompatibilityMinor"]) == ("1", "35")


@pytest.mark.parametrize("accept", ["application/json", "application/yaml", "*/*"])
def test_version_is_indented_json_whatever_the_client_asks(client: TestClient, accept: str) -> None:
    # (WriteRawJSON: json.MarshalIndent with two spaces, no newline at the end; kubectl version reads it)
    r = client.get("/version", headers={"accept": accept, "user-agent": "kubectl/v1.36.0 (linux/amd64)"})
    assert r.headers["content-type"] == "application/json"
    assert r.text.startswith('{\n  "major": "1",\n  "minor": "36",\n') and r.text.endswith('"\n}')


def test_kubectl_explain_shows_no_docstring_of_dralloc_models(client: TestClient) -> None:
    # a model's docstring is a note for dralloc's readers; kubectl explain priorityclass printed one
    root = client.get("/openapi/v3").json()["paths"]
    for path in ("apis/resource.k8s.io/v1", "api/v1", "apis/scheduling.k8s.io/v1"):
        schemas = client.get(root[path]["serverRelativeURL"]).json()["components"]["schemas"]
        described = sorted(name for name, schema in schemas.items() if "description" in schema)
        assert described == [], (path, described)


def test_openapi_v3_offers_strategic_merge_patch_only_where_the_schema_has_every_field(client: TestClient) -> None:
    # kubectl computes a strategic merge patch from an OpenAPI v3 schema when the patch operation accepts one,
    # and fails on a field the schema lacks: so v1 (full schemas) offers it, v1beta1 and core (open) do not
    root = client.get("/openapi/v3").json()["paths"]

    def patch_types(gv: str, path: str) -> set[str]:
        doc = client.get(root[gv]["serverRelativeURL"]).json()
        return set(doc["paths"][path]["patch"]["requestBody"]["content"])

    smp = "application/strategic-merge-patch+json"
    assert smp in patch_types("apis/resource.k8s.io/v1", "/apis/resource.k8s.io/v1/deviceclasses/{name}")
    assert smp in patch_types("apis/scheduling.k8s.io/v1", "/apis/scheduling.k8s.io/v1/priorityclasses/{name}")
    assert smp not in patch_types("apis/resource.k8s.io/v1beta1", "/apis/resource.k8s.io/v1beta1/deviceclasses/{name}")
    assert smp not in patch_types("api/v1", "/api/v1/namespaces/{namespace}/pods/{name}")
    schemas = client.get(root["apis/resource.k8s.io/v1"]["serverRelativeURL"]).json()["components"]["schemas"]
    owners = schemas["io.k8s.api.resource.v1.ObjectMeta"]["properties"]["ownerReferences"]
    assert (owners["x-kubernetes-patch-strategy"], owners["x-kubernetes-patch-merge-key"]) == ("merge", "uid")
    reserved = schemas["io.k8s.api.resource.v1.ResourceClaimStatus"]["properties"]["reservedFor"]
    assert (reserved["x-kubernetes-patch-strategy"], reserved["x-kubernetes-patch-merge-key"]) == ("merge", "uid")


def test_a_device_taint_without_time_added_gets_the_time_it_was_written(client: TestClient) -> None:
    taints = [{"key": "repair", "effect": "NoSchedule"},
              {"key": "old", "effect": "NoSchedule", "timeAdded": "2026-01-02T03:04:05Z"}]
    body = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "tainted"},
            "spec": {"driver": "gpu.example.com", "nodeName": "n1",
                     "pool": {"name": "n1", "generation": 1, "resourceSliceCount": 1},
                     "devices": [{"name": "gpu-0", "taints": taints}]}}
    created = client.post(SLICES, json=body)
    assert created.status_code == 201, created.text
    stamped, kept = created.json()["spec"]["devices"][0]["taints"]
    assert stamped["timeAdded"].endswith("Z") and len(stamped["timeAdded"]) == 20
    assert kept["timeAdded"] == "2026-01-02T03:04:05Z"
    rule = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceTaintRule", "metadata": {"name": "drain"},
            "spec": {"taint": {"key": "drain", "effect": "NoExecute"}}}
    made = client.post("/apis/resource.k8s.io/v1/devicetaintrules", json=rule)
    assert made.status_code == 201 and made.json()["spec"]["taint"]["timeAdded"].endswith("Z"), made.text
