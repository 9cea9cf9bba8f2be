"""Namespaces as kube-apiserver keeps them: system namespaces, the namespace strategy, NamespaceLifecycle admission,
deletion through the namespace controller, and the create rules of kube-apiserver's create handler and store."""

from __future__ import annotations

import time
import warnings
from typing import Any

import pytest

warnings.filterwarnings("ignore", message="Using `httpx`")
from cluster import CLASS, NODE, NS, TEMPLATE, Cluster, R, api_client, make_namespaces, pod, slice_  # noqa: E402
from starlette.testclient import TestClient  # noqa: E402

from dralloc.server import create_app  # noqa: E402
from dralloc.server.registry import namespaces  # noqa: E402
from dralloc.server.verbs import create_rules, writes  # noqa: E402
from dralloc.store import NotFound, SQLiteStore  # noqa: E402

NAMESPACES = "/api/v1/namespaces"
CLAIM = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "c"},
         "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu"}}]}}}
APPLY = {"content-type": "application/apply-patch+yaml"}


@pytest.fixture
def client() -> TestClient:
    return api_client()


def namespace(name: str, **meta: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, **meta}}


def claims(ns: str) -> str:
    return f"{R}/namespaces/{ns}/resourceclaims"


# --- the system namespaces and the strategy ---------------------------------------------------------


def test_the_system_namespaces_exist_from_the_first_start_active_and_finalized_by_kubernetes(
        client: TestClient) -> None:
    listed = {n["metadata"]["name"]: n for n in client.get(NAMESPACES).json()["items"]}
    assert set(listed) == {"default", "kube-system", "kube-public", "kube-node-lease"}
    for name, ns in listed.items():
        assert ns["status"] == {"phase": "Active"}
        assert ns["spec"] == {"finalizers": ["kubernetes"]}
        assert ns["metadata"]["labels"] == {"kubernetes.io/metadata.name": name}


def test_a_restart_on_the_same_database_does_not_make_the_system_namespaces_again(tmp_path: Any) -> None:
    store = SQLiteStore(str(tmp_path / "db.sqlite"))
    first = create_app(store).api.store.get("namespaces", "", "default")
    again = create_app(store).api.store.get("namespaces", "", "default")
    assert again["metadata"]["uid"] == first["metadata"]["uid"]


def test_a_deleted_kube_node_lease_is_made_again_by_the_system_namespaces_pass(client: TestClient) -> None:
    store = client.app.api.store  # type: ignore[attr-defined]
    store.delete("namespaces", "", "kube-node-lease")
    namespaces.ensure_system_namespaces(store)
    assert store.get("namespaces", "", "kube-node-lease")["status"] == {"phase": "Active"}


def test_the_server_keeps_the_system_namespaces_while_it_runs(client: TestClient,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(namespaces, "SYSTEM_NAMESPACES_EVERY", 0.01)
    store = client.app.api.store  # type: ignore[attr-defined]
    store.delete("namespaces", "", "kube-node-lease")
    with client:  # the server's startup runs the pass every SYSTEM_NAMESPACES_EVERY seconds
        for _ in range(200):
            if client.get(f"{NAMESPACES}/kube-node-lease").status_code == 200:
                break
            time.sleep(0.01)
    assert store.get("namespaces", "", "kube-node-lease")


@pytest.mark.parametrize("name", ["default", "kube-system", "kube-public"])
def test_the_immortal_namespaces_may_not_be_deleted(client: TestClient, name: str) -> None:
    r = client.delete(f"{NAMESPACES}/{name}")
    assert r.status_code == 403
    assert r.json()["message"] == f'namespaces "{name}" is forbidden: this namespace may not be deleted'
    assert r.json()["reason"] == "Forbidden"
    assert client.get(f"{NAMESPACES}/{name}").json()["status"]["phase"] == "Active"


def test_kube_node_lease_may_be_deleted_as_upstream_admission_only_protects_three(client: TestClient) -> None:
    r = client.delete(f"{NAMESPACES}/kube-node-lease")
    assert r.status_code == 200
    assert r.json()["status"]["phase"] == "Terminating"


def test_a_new_namespace_is_active_with_the_kubernetes_finalizer_and_its_name_label(client: TestClient) -> None:
    sent = namespace("team-a", labels={"kubernetes.io/metadata.name": "wrong", "team": "a"})
    sent["status"] = {"phase": "Terminating"}
    created = client.post(NAMESPACES, json=sent).json()
    assert created["status"] == {"phase": "Active"}
    assert created["spec"] == {"finalizers": ["kubernetes"]}
    assert created["metadata"]["labels"] == {"kubernetes.io/metadata.name": "team-a", "team": "a"}


def test_a_namespace_of_a_generated_name_is_labelled_with_that_name(client: TestClient) -> None:
    created = client.post(NAMESPACES, json={"apiVersion": "v1", "kind": "Namespace",
                                            "metadata": {"generateName": "run-"}}).json()
    name = created["metadata"]["name"]
    assert name.startswith("run-") and created["metadata"]["labels"] == {"kubernetes.io/metadata.name": name}


def test_an_update_keeps_the_name_label_the_finalizers_and_the_status(client: TestClient) -> None:
    client.post(NAMESPACES, json=namespace("team-a"))
    r = client.put(f"{NAMESPACES}/team-a", json={**namespace("team-a", labels={"x": "y"}),
                                                 "spec": {"finalizers": []}, "status": {"phase": "Terminating"}})
    assert r.status_code == 200, r.text
    ns = r.json()
    assert ns["metadata"]["labels"] == {"x": "y", "kubernetes.io/metadata.name": "team-a"}
    assert ns["spec"] == {"finalizers": ["kubernetes"]}
    assert ns["status"] == {"phase": "Active"}
    r = client.patch(f"{NAMESPACES}/team-a", json={"metadata": {"labels": {"kubernetes.io/metadata.name": None}}},
                     headers={"content-type": "application/merge-patch+json"})
    assert r.json()["metadata"]["labels"]["kubernetes.io/metadata.name"] == "team-a"


def test_finalize_changes_the_finalizers_and_nothing_else(client: TestClient) -> None:
    ns = client.post(NAMESPACES, json=namespace("team-a")).json()
    ns["spec"]["finalizers"] = []
    ns["status"] = {"phase": "Terminating"}
    r = client.put(f"{NAMESPACES}/team-a/finalize", json=ns)
    assert r.status_code == 200, r.text
    # (an emptied omitempty list is not stored: kube-apiserver's encoding leaves the spec empty)
    assert r.json()["spec"] == {} and r.json()["status"] == {"phase": "Active"}
    assert client.get(f"{NAMESPACES}/team-a/finalize").status_code == 405


def test_namespace_finalizers_must_be_standard_or_qualified(client: TestClient) -> None:
    r = client.post(NAMESPACES, json={**namespace("team-a"), "spec": {"finalizers": ["mine", "example.com/ok"]}})
    assert r.status_code == 422
    assert r.json()["details"]["causes"] == [{
        "reason": "FieldValueInvalid", "field": "spec.finalizers",
        "message": 'Invalid value: "mine": name is neither a standard finalizer name nor is it fully qualified'}]
    ns = client.post(NAMESPACES, json={**namespace("team-a"), "spec": {"finalizers": ["example.com/ok"]}}).json()
    assert ns["spec"]["finalizers"] == ["example.com/ok", "kubernetes"]
    ns["spec"]["finalizers"] = ["kubernetes", "bad finalizer"]
    r = client.put(f"{NAMESPACES}/team-a/finalize", json=ns)
    assert r.status_code == 422
    assert {c["field"] for c in r.json()["details"]["causes"]} == {"spec.finalizers[1]"}


def test_discovery_lists_the_status_and_finalize_subresources_of_namespaces(client: TestClient) -> None:
    names = {r["name"]: r["verbs"] for r in client.get("/api/v1").json()["resources"]}
    assert names["namespaces/finalize"] == ["update"]
    assert names["namespaces/status"] == ["get", "patch", "update"]


# --- NamespaceLifecycle -----------------------------------------------------------------------------


def test_a_create_in_a_namespace_that_does_not_exist_is_not_found(client: TestClient) -> None:
    r = client.post(claims("nowhere"), json=CLAIM)
    assert r.status_code == 404
    assert r.json()["message"] == 'namespaces "nowhere" not found'
    assert r.json()["details"] == {"name": "nowhere", "kind": "namespaces"}
    r = client.post("/api/v1/namespaces/nowhere/pods", json=pod("p"))
    assert r.json()["message"] == 'namespaces "nowhere" not found'


def test_a_server_side_apply_that_would_create_in_a_missing_namespace_is_not_found(client: TestClient) -> None:
    body = {**CLAIM, "metadata": {"name": "c"}}
    r = client.patch(f"{claims('nowhere')}/c", json=body, headers=APPLY, params={"fieldManager": "me"})
    assert r.status_code == 404 and r.json()["message"] == 'namespaces "nowhere" not found'


def test_the_namespace_is_checked_before_the_object_is_validated(client: TestClient) -> None:
    r = client.post(claims("nowhere"), json={**CLAIM, "spec": {"devices": {"requests": [{"name": "Bad_Name"}]}}})
    assert r.status_code == 404


def test_a_namespace_made_by_another_writer_is_found_in_the_store(client: TestClient) -> None:
    other = TestClient(client.app)  # the same server: the namespace goes straight into the store
    store = client.app.api.store  # type: ignore[attr-defined]
    writes_ns = namespace("late")
    writes_ns["metadata"].update(uid="u", creationTimestamp="2026-01-01T00:00:00Z")
    store.create("namespaces", "", "late", lambda _old, rv: {**writes_ns, "metadata": {**writes_ns["metadata"],
                                                                                         "resourceVersion": rv}})
    assert other.post(claims("late"), json=CLAIM).status_code == 201


def test_a_create_in_a_terminating_namespace_is_forbidden_with_upstreams_cause(client: TestClient) -> None:
    make_namespaces(client, "team-a")
    client.post(claims("team-a"), json=CLAIM)
    assert client.delete(f"{NAMESPACES}/team-a").status_code == 200
    r = client.post(claims("team-a"), json={**CLAIM, "metadata": {"name": "d"}})
    assert r.status_code == 403
    body = r.json()
    assert body["message"] == ('resourceclaims.resource.k8s.io "d" is forbidden: unable to create new content in '
                               'namespace team-a because it is being terminated')
    assert body["details"]["causes"] == [{"reason": "NamespaceTerminating", "field": "metadata.namespace",
                                          "message": "namespace team-a is being terminated"}]
    r = client.post(claims("team-a"), json={**CLAIM, "metadata": {"generateName": "gen-"}})
    assert r.json()["message"].startswith('resourceclaims.resource.k8s.io "gen-" is forbidden')
    # updates are not checked: what is in the namespace can still change while it goes
    r = client.patch(f"{claims('team-a')}/c", json={"metadata": {"labels": {"a": "b"}}},
                     headers={"content-type": "application/merge-patch+json"})
    assert r.status_code == 200


def test_a_pod_in_a_terminating_namespace_cannot_be_bound(client: TestClient) -> None:
    make_namespaces(client, "team-a")
    unclaimed = pod("web")
    unclaimed["spec"].pop("resourceClaims")
    unclaimed["spec"]["containers"][0].pop("resources")
    assert client.post("/api/v1/namespaces/team-a/pods", json=unclaimed).status_code == 201
    client.delete(f"{NAMESPACES}/team-a")
    binding = {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "web"},
               "target": {"kind": "Node", "name": "node-1"}}
    r = client.post("/api/v1/namespaces/team-a/pods/web/binding", json=binding)
    assert r.status_code == 403
    assert r.json()["message"] == ('pods "web" is forbidden: unable to create new content in namespace team-a '
                                   'because it is being terminated')


def test_a_second_delete_while_the_content_is_removed_is_a_conflict(client: TestClient) -> None:
    make_namespaces(client, "team-a")
    first = client.delete(f"{NAMESPACES}/team-a")
    assert first.status_code == 200 and first.json()["metadata"]["deletionTimestamp"]
    r = client.delete(f"{NAMESPACES}/team-a")
    assert r.status_code == 409
    assert r.json()["message"] == (
        'Operation cannot be fulfilled on namespaces "team-a": The system is ensuring all content is removed from '
        'this namespace.  Upon completion, this namespace will automatically be purged by the system.')


def test_finalizing_a_terminating_namespace_removes_it(client: TestClient) -> None:
    ns = make_namespaces(client, "team-a") and client.delete(f"{NAMESPACES}/team-a").json()
    assert client.put(f"{NAMESPACES}/team-a", json=ns).status_code == 200  # spec.finalizers stay: it stays
    ns["spec"]["finalizers"] = []
    assert client.put(f"{NAMESPACES}/team-a/finalize", json=ns).status_code == 200
    assert client.get(f"{NAMESPACES}/team-a").status_code == 404
    assert client.post(claims("team-a"), json=CLAIM).status_code == 404


def test_namespaces_have_no_deletecollection(client: TestClient) -> None:
    assert client.delete(NAMESPACES).status_code == 405


# --- the namespace controller -----------------------------------------------------------------------


def test_deleting_a_namespace_deletes_its_content_then_the_namespace() -> None:
    c = Cluster()
    c.post("/api/v1/nodes", NODE)
    c.post(f"{R}/deviceclasses", CLASS)
    c.post(f"{R}/resourceslices", slice_(devices=2))
    make_namespaces(c.http, "team-a")
    c.post(f"{R}/namespaces/team-a/resourceclaimtemplates", {**TEMPLATE, "metadata": {"name": "one-gpu"}})
    c.post("/api/v1/namespaces/team-a/pods", pod("trainer"))
    c.post(claims("team-a"), CLAIM)
    c.settle()
    assert c.get("pods", "trainer", "team-a")["spec"].get("nodeName") == "node-1"
    assert c.events("Scheduled")
    assert c.http.delete(f"{NAMESPACES}/team-a").status_code == 200
    c.settle()
    assert c.store.list("namespaces")[0] and "team-a" not in [n["metadata"]["name"]
                                                            for n in c.store.list("namespaces")[0]]
    for resource in ("pods", "resourceclaims", "resourceclaimtemplates", "events"):
        assert c.store.list(resource, "team-a")[0] == [], resource
    assert c.store.get("resourceslices", "", "node-1-gpu")  # cluster-scoped objects stay


def test_a_terminating_namespace_waits_for_its_terminating_pods_and_says_what_remains() -> None:
    c = Cluster()
    make_namespaces(c.http, "team-a")
    c.post("/api/v1/nodes", NODE)
    bound = pod("bound", terminationGracePeriodSeconds=300, nodeName="node-1")
    bound["spec"].pop("resourceClaims")
    bound["spec"]["containers"][0].pop("resources")
    c.post("/api/v1/namespaces/team-a/pods", bound)
    c.http.delete(f"{NAMESPACES}/team-a")
    c.settle()
    ns = c.store.get("namespaces", "", "team-a")
    assert c.get("pods", "bound", "team-a")["metadata"]["deletionTimestamp"]
    conditions = {cond["type"]: cond for cond in ns["status"]["conditions"]}
    assert conditions["NamespaceContentRemaining"]["status"] == "True"
    assert conditions["NamespaceContentRemaining"]["message"] == \
        "Some resources are remaining: pods. has 1 resource instances"
    assert conditions["NamespaceFinalizersRemaining"]["reason"] == "ContentHasNoFinalizers"
    assert ns["spec"]["finalizers"] == ["kubernetes"]
    c.manager.terminating.at_once = True  # the kubelet stops the pod
    c.manager.terminating.deadlines.clear()
    c.manager.terminating.clock = lambda: 10.0 ** 10
    c.settle()
    with pytest.raises(NotFound):
        c.store.get("namespaces", "", "team-a")


def test_objects_of_a_namespace_being_deleted_with_finalizers_hold_it_until_they_go() -> None:
    c = Cluster()
    make_namespaces(c.http, "team-a")
    c.post(claims("team-a"), {**CLAIM, "metadata": {"name": "kept", "finalizers": ["example.com/keep"]}})
    c.http.delete(f"{NAMESPACES}/team-a")
    c.settle()
    ns = c.store.get("namespaces", "", "team-a")
    conditions = {cond["type"]: cond for cond in ns["status"]["conditions"]}
    assert conditions["NamespaceFinalizersRemaining"]["message"] == \
        "Some content in the namespace has finalizers remaining: example.com/keep in 1 resource instances"
    kept = c.get("resourceclaims", "kept", "team-a")
    assert kept["metadata"]["deletionTimestamp"]
    c.http.patch(f"{claims('team-a')}/kept", json={"metadata": {"finalizers": None}},
                 headers={"content-type": "application/merge-patch+json"})
    c.settle()
    with pytest.raises(NotFound):
        c.store.get("namespaces", "", "team-a")


def test_the_default_namespace_of_the_test_cluster_is_there_for_pods() -> None:
    c = Cluster()
    assert c.post(f"{NS}/pods", pod("p"))["metadata"]["namespace"] == "default"


# --- create rules -----------------------------------------------------------------------------------


def test_a_create_with_a_resource_version_is_refused_with_etcds_message(client: TestClient) -> None:
    # kube-apiserver answers 500 (etcd's plain error); a client's mistake is a 400 here, with the same message
    r = client.post(claims("default"), json={**CLAIM, "metadata": {"name": "c", "resourceVersion": "12"}})
    assert r.status_code == 400
    assert r.json() == {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                        "message": "resourceVersion should not be set on objects to be created", "reason": "BadRequest",
                        "code": 400}
    r = client.post("/api/v1/namespaces/default/pods", json={**pod("p"), "metadata": {"name": "p",
                                                                                       "resourceVersion": "3"}})
    assert r.status_code == 400


@pytest.mark.parametrize("rv", ["0", "abc", "-1", ""])
def test_a_resource_version_that_is_zero_or_not_a_number_is_ignored_on_create(client: TestClient, rv: str) -> None:
    r = client.post(claims("default"), json={**CLAIM, "metadata": {"name": "c", "resourceVersion": rv}})
    assert r.status_code == 201, r.text
    assert r.json()["metadata"]["resourceVersion"] not in ("0", "abc", "-1", "")


def test_a_dry_run_create_with_a_resource_version_passes_as_upstreams_dry_run_storage(client: TestClient) -> None:
    r = client.post(claims("default"), params={"dryRun": "All"},
                    json={**CLAIM, "metadata": {"name": "c", "resourceVersion": "12"}})
    assert r.status_code == 201


def test_a_server_side_apply_creating_with_a_resource_version_is_refused(client: TestClient) -> None:
    body = {**CLAIM, "metadata": {"name": "c", "resourceVersion": "5"}}
    r = client.patch(f"{claims('default')}/c", json=body, headers=APPLY, params={"fieldManager": "me"})
    assert r.status_code == 400 and r.json()["message"] == create_rules.RESOURCE_VERSION_ON_CREATE


def test_creating_over_an_object_being_deleted_says_so(client: TestClient) -> None:
    client.post(claims("default"), json={**CLAIM, "metadata": {"name": "c", "finalizers": ["example.com/x"]}})
    client.delete(f"{claims('default')}/c")
    r = client.post(claims("default"), json=CLAIM)
    assert r.status_code == 409
    assert r.json()["message"] == 'object is being deleted: resourceclaims.resource.k8s.io "c" already exists'
    client.post(claims("default"), json={**CLAIM, "metadata": {"name": "d"}})
    assert client.post(claims("default"), json={**CLAIM, "metadata": {"name": "d"}}).json()["message"] == \
        'resourceclaims.resource.k8s.io "d" already exists'


def test_a_taken_generated_name_is_tried_again(client: TestClient, monkeypatch: pytest.MonkeyPatch) -> None:
    client.post(claims("default"), json={**CLAIM, "metadata": {"name": "gen-aaaaa"}})
    names = iter(["gen-aaaaa", "gen-aaaaa", "gen-bbbbb"])
    monkeypatch.setattr(writes, "generated_name", lambda prefix: next(names))
    r = client.post(claims("default"), json={**CLAIM, "metadata": {"generateName": "gen-"}})
    assert r.status_code == 201 and r.json()["metadata"]["name"] == "gen-bbbbb"


def test_a_generated_name_taken_eight_times_is_upstreams_generate_name_conflict(
        client: TestClient, monkeypatch: pytest.MonkeyPatch) -> None:
    client.post(claims("default"), json={**CLAIM, "metadata": {"name": "gen-aaaaa"}})
    tries: list[str] = []
    monkeypatch.setattr(writes, "generated_name", lambda prefix: tries.append(prefix) or "gen-aaaaa")
    r = client.post(claims("default"), json={**CLAIM, "metadata": {"generateName": "gen-"}})
    assert r.status_code == 409 and len(tries) == 8
    assert r.json()["message"] == ('resourceclaims.resource.k8s.io "gen-aaaaa" already exists, the server was not '
                                   'able to generate a unique name for the object')
    assert r.json()["reason"] == "AlreadyExists" and r.json()["details"]["retryAfterSeconds"] == 1


# --- server-side apply through /status --------------------------------------------------------------


def test_a_server_side_apply_to_the_status_of_a_missing_object_is_not_found(client: TestClient) -> None:
    body = {**CLAIM, "status": {"allocation": None}}
    r = client.patch(f"{claims('default')}/c/status", json=body, headers=APPLY, params={"fieldManager": "me"})
    assert r.status_code == 404
    assert r.json()["message"] == 'resourceclaims.resource.k8s.io "c" not found'
    assert client.get(f"{claims('default')}/c").status_code == 404


def test_repeated_owner_references_are_dropped_with_upstreams_warning(client: TestClient) -> None:
    ref = {"apiVersion": "v1", "kind": "Pod", "name": "p", "uid": "u-1"}
    other = {**ref, "name": "q"}  # same uid, another reference: kept
    body = {**CLAIM, "metadata": {"name": "c", "ownerReferences": [ref, other, ref]}}
    r = client.post(claims("default"), json=body)
    assert r.status_code == 201
    assert r.json()["metadata"]["ownerReferences"] == [ref, other]
    assert r.headers["warning"] == (
        '299 - ".metadata.ownerReferences contains duplicate entries; API server dedups owner references in '
        '1.20+, and may reject such requests as early as 1.24; please fix your requests; duplicate UID(s) '
        'observed: u-1"')
    r = client.patch(f"{claims('default')}/c", json={"metadata": {"ownerReferences": [ref, ref]}},
                     headers={"content-type": "application/merge-patch+json"})
    assert r.json()["metadata"]["ownerReferences"] == [ref]
    assert "duplicate entries after mutating admission happens;" in r.headers["warning"]


@pytest.mark.parametrize("status,message", [
    ({"phase": "Bogus"}, 'status.Phase: Invalid value: "Bogus": may only be \'Active\' if `deletionTimestamp` is empty'),
    ({"phase": "Terminating"}, 'status.Phase: Invalid value: "Terminating": may only be \'Active\' if '
                               '`deletionTimestamp` is empty'),
    ({}, 'status.Phase: Invalid value: "": may only be \'Active\' if `deletionTimestamp` is empty')])
def test_a_status_write_may_leave_a_live_namespace_only_active(client: TestClient, status: dict[str, Any],
                                                              message: str) -> None:
    client.post("/api/v1/namespaces", json={"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "phased"}})
    r = client.put("/api/v1/namespaces/phased/status", json={
        "apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "phased"}, "status": status})
    assert (r.status_code, r.json()["message"]) == (422, f'Namespace "phased" is invalid: {message}')
    assert client.get("/api/v1/namespaces/phased").json()["status"]["phase"] == "Active"
