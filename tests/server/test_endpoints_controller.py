"""The endpoints controllers: a Service with a selector gets an EndpointSlice and an Endpoints object listing the
pods it selects, as kube-controller-manager writes them, kept up to date as pods come, become ready and go."""

from __future__ import annotations

import hashlib
import sys
from typing import Any

from cluster import NODE, NS, Cluster
from hypothesis import given
from hypothesis import strategies as st

from dralloc.server.controllers import endpoints as endpoints_module
from dralloc.server.controllers.endpoints import (
    EndpointsControllers,
    desired_endpoints,
    desired_slices,
    entries,
    resolve_port,
    slice_name,
)
from dralloc.server.controllers.snapshot import Snapshot
from dralloc.server.controllers.writes import Writer
from dralloc.store import Change, SQLiteStore

LABELS = {"app": "web"}


def web_pod(name: str, labels: dict[str, str] | None = None, **status: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "labels": labels or LABELS},
            "spec": {"containers": [{"name": "main", "image": "x:1",
                                     "ports": [{"name": "http", "containerPort": 8080}]}],
                     "terminationGracePeriodSeconds": 0}}


def service(**spec: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web", "labels": {"tier": "front"}},
            "spec": {"selector": LABELS, "ports": [{"name": "http", "port": 80, "targetPort": "http"}], **spec}}


def slices_of(c: Cluster, name: str = "web") -> list[dict[str, Any]]:
    return [s for s in c.store.list("endpointslices", "default")[0]
            if s["metadata"]["labels"].get("kubernetes.io/service-name") == name]


def test_a_services_slice_lists_its_ready_pods_as_the_endpointslice_controller_writes_it() -> None:
    c = Cluster(fake_kubelet=True)
    c.post("/api/v1/nodes", {**NODE, "metadata": {"name": "node-1",
                                                  "labels": {"topology.kubernetes.io/zone": "z1"}}})
    svc = c.post(f"{NS}/services", service())
    for name in ("web-b", "web-a"):
        c.post(f"{NS}/pods", web_pod(name))
    c.post(f"{NS}/pods", web_pod("other", {"app": "db"}))
    c.settle()
    [eps] = slices_of(c)
    meta = eps["metadata"]
    assert meta["name"].startswith("web-") and len(meta["name"]) == len("web-") + 5
    assert meta["labels"] == {"tier": "front", "kubernetes.io/service-name": "web",
                              "endpointslice.kubernetes.io/managed-by": "endpointslice-controller.k8s.io"}
    assert meta["ownerReferences"] == [{"apiVersion": "v1", "kind": "Service", "name": "web",
                                        "uid": svc["metadata"]["uid"], "controller": True,
                                        "blockOwnerDeletion": True}]
    assert eps["addressType"] == "IPv4" and eps["ports"] == [{"name": "http", "protocol": "TCP", "port": 8080}]
    pods = {p["metadata"]["name"]: p for p in c.pods()}
    assert eps["endpoints"] == [
        {"addresses": [pods[n]["status"]["podIP"]], "conditions": {"ready": True, "serving": True,
                                                                  "terminating": False},
         "targetRef": {"kind": "Pod", "namespace": "default", "name": n, "uid": pods[n]["metadata"]["uid"]},
         "nodeName": "node-1", "zone": "z1"} for n in ("web-a", "web-b")]
    ep = c.get("endpoints", "web")
    assert ep["metadata"]["labels"] == {"tier": "front"}
    assert [a["targetRef"]["name"] for a in ep["subsets"][0]["addresses"]] == ["web-a", "web-b"]
    assert ep["subsets"][0]["ports"] == [{"name": "http", "port": 8080, "protocol": "TCP"}]


def test_the_slice_follows_pods_going_and_the_service_going() -> None:
    c = Cluster(fake_kubelet=True)
    c.post("/api/v1/nodes", NODE)
    c.post(f"{NS}/services", service())
    c.post(f"{NS}/pods", web_pod("web-a"))
    c.settle()
    name = slices_of(c)[0]["metadata"]["name"]
    assert c.http.delete(f"{NS}/pods/web-a").status_code == 200
    c.settle()
    [eps] = slices_of(c)
    assert eps["metadata"]["name"] == name and eps["endpoints"] is None and eps["metadata"]["generation"] == 2
    assert "subsets" not in c.get("endpoints", "web")
    assert c.http.delete(f"{NS}/services/web").status_code == 200
    c.settle()
    assert all(e["metadata"]["name"] != "web" for e in c.store.list("endpoints", "default")[0])
    assert slices_of(c) == []  # (the garbage collector's: their owner is gone)


def test_a_pod_not_ready_is_listed_as_not_ready_and_a_service_without_selector_is_left_alone() -> None:
    svc = {"metadata": {"name": "web", "namespace": "default", "uid": "u"}, "spec": service()["spec"]}
    pod = {**web_pod("web-a"), "metadata": {"name": "web-a", "namespace": "default", "uid": "p", "labels": LABELS},
           "status": {"podIP": "10.88.0.2", "phase": "Pending"}}
    [eps] = desired_slices(svc, entries(svc, [pod], {}))
    assert eps["endpoints"][0]["conditions"] == {"ready": False, "serving": False, "terminating": False}
    assert desired_endpoints(svc, entries(svc, [pod], {}))["subsets"][0]["notReadyAddresses"][0]["ip"] == "10.88.0.2"
    published = {**svc, "spec": {**svc["spec"], "publishNotReadyAddresses": True}}
    [eps] = desired_slices(published, entries(published, [pod], {}))
    assert eps["endpoints"][0]["conditions"]["ready"] is True
    assert desired_endpoints(published, entries(published, [pod], {}))["subsets"][0]["addresses"][0]["ip"] == \
        "10.88.0.2"
    c = Cluster(fake_kubelet=True)
    c.post("/api/v1/nodes", NODE)
    c.post(f"{NS}/services", {**service(), "spec": {"ports": [{"port": 80}]}})
    c.post(f"{NS}/pods", web_pod("web-a"))
    c.settle()
    assert slices_of(c) == []


def test_a_named_target_port_is_resolved_on_each_pod() -> None:
    pod = web_pod("a")
    assert resolve_port(pod, {"port": 80, "targetPort": "http"}) == 8080
    assert resolve_port(pod, {"port": 80, "targetPort": "http", "protocol": "UDP"}) is None
    assert resolve_port(pod, {"port": 80, "targetPort": 9090}) == 9090


def test_a_client_writes_the_endpoints_of_a_service_without_selector_and_they_are_mirrored() -> None:
    c = Cluster()
    c.post(f"{NS}/services", {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "db"},
                              "spec": {"ports": [{"port": 5432}]}})
    endpoints = {"apiVersion": "v1", "kind": "Endpoints", "metadata": {"name": "db", "labels": {"team": "x"}},
                 "subsets": [{"addresses": [{"ip": "192.168.1.10"}], "notReadyAddresses": [{"ip": "192.168.1.11"}],
                              "ports": [{"port": 5432}]}]}
    r = c.http.post(f"{NS}/endpoints", json=endpoints)
    assert r.status_code == 201, r.text
    assert r.json()["subsets"][0]["ports"] == [{"port": 5432, "protocol": "TCP"}]  # (decoding's default)
    assert r.headers["warning"].startswith('299 - "v1 Endpoints is deprecated in v1.33+')
    c.settle()
    [mirrored] = slices_of(c, "db")
    assert mirrored["metadata"]["labels"] == {"team": "x", "kubernetes.io/service-name": "db",
                                              "endpointslice.kubernetes.io/managed-by":
                                                  "endpointslicemirroring-controller.k8s.io"}
    assert mirrored["metadata"]["ownerReferences"][0]["kind"] == "Endpoints"
    assert mirrored["endpoints"] == [{"addresses": ["192.168.1.10"], "conditions": {"ready": True}},
                                     {"addresses": ["192.168.1.11"], "conditions": {"ready": False}}]
    assert mirrored["ports"] == [{"name": "", "protocol": "TCP", "port": 5432}]
    assert c.get("endpoints", "db")["subsets"] == r.json()["subsets"]  # the controllers leave it as written
    r = c.http.post(f"{NS}/endpoints", json={**endpoints, "metadata": {"name": "bad"}, "subsets": [
        {"addresses": [{"ip": "1.2.3"}], "ports": [{"port": 0, "protocol": "HTTP"}]}]})
    assert r.status_code == 422 and r.json()["message"] == (
        'Endpoints "bad" is invalid: [subsets[0].addresses[0].ip: Invalid value: "1.2.3": must be a valid IP address, '
        '(e.g. 10.9.8.7 or 2001:db8::ffff), subsets[0].ports[0].port: Invalid value: 0: must be between 1 and '
        '65535, inclusive, subsets[0].ports[0].protocol: Unsupported value: "HTTP": supported values: "SCTP", "TCP", '
        '"UDP"]')


def _old_slice_name(uid: str, name: str, index: int) -> str:
    """The suffix as first written: the digest's hex pairs as numbers, each modulo the alphabet's size."""
    digest = hashlib.sha256(f"{uid}/{index}".encode()).hexdigest()
    alphabet = "bcdfghjklmnpqrstvwxz2456789"
    return f"{name[:57]}-" + "".join(alphabet[int(digest[i * 2:i * 2 + 2], 16) % len(alphabet)] for i in range(5))


@given(uid=st.text(max_size=40), name=st.text(min_size=1, max_size=70), index=st.integers(0, 1000))
def test_a_slice_is_named_as_before_from_its_services_uid_and_place(uid: str, name: str, index: int) -> None:
    svc = {"metadata": {"uid": uid, "name": name}}
    assert slice_name(svc, index) == _old_slice_name(uid, name, index)


def test_the_controllers_own_writes_are_no_news_but_a_clients_change_is_undone() -> None:
    c = Cluster(fake_kubelet=True)
    c.post("/api/v1/nodes", NODE)
    c.post(f"{NS}/services", service())
    c.post(f"{NS}/pods", web_pod("web-a"))
    c.settle()
    written = c.get("endpoints", "web")
    reads: list[tuple[str, str]] = []

    class CountingStore:  # the store as the endpoints controllers see it: their reads of single objects counted
        def __getattr__(self, name: str) -> Any:
            return getattr(c.store, name)

        def get(self, resource: str, namespace: str, name: str) -> dict[str, Any]:
            reads.append((resource, name))
            return c.store.get(resource, namespace, name)

    c.manager.endpoints.writer = Writer(CountingStore())  # type: ignore[arg-type]
    c.manager.run_once(force=True)
    assert [r for r in reads if r[0] in ("endpoints", "endpointslices")] == []  # (what it wrote is known)
    changed = {**written, "subsets": [{"addresses": [{"ip": "10.0.0.9"}], "ports": [{"port": 1}]}]}
    r = c.http.put(f"{NS}/endpoints/web", json=changed)
    assert r.status_code == 200, r.text
    c.settle()
    assert ("endpoints", "web") in reads
    assert c.get("endpoints", "web")["subsets"] == written["subsets"]


def test_a_pods_change_is_looked_at_by_the_services_its_labels_match_before_or_after(monkeypatch: Any) -> None:
    c = Cluster(fake_kubelet=True)
    c.post("/api/v1/nodes", NODE)
    c.post(f"{NS}/services", service())
    db = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "db"},
          "spec": {"selector": {"app": "db"}, "ports": [{"port": 5432}]}}
    c.post(f"{NS}/services", db)
    c.settle()
    looked_at: list[str] = []
    real_entries = endpoints_module.entries

    def recording_entries(svc: dict[str, Any], *args: Any) -> Any:
        looked_at.append(svc["metadata"]["name"])
        return real_entries(svc, *args)

    monkeypatch.setattr(endpoints_module, "entries", recording_entries)
    c.post(f"{NS}/pods", web_pod("web-a"))
    c.settle()
    assert set(looked_at) == {"web"}  # (db's selector matches none of its labels)
    assert [a["targetRef"]["name"] for a in c.get("endpoints", "web")["subsets"][0]["addresses"]] == ["web-a"]
    looked_at.clear()
    r = c.http.patch(f"{NS}/pods/web-a", json={"metadata": {"labels": {"app": "db"}}},
                     headers={"content-type": "application/merge-patch+json"})
    assert r.status_code == 200, r.text
    c.settle()
    assert set(looked_at) == {"web", "db"}  # (web's matched its labels before, db's after)
    assert "subsets" not in c.get("endpoints", "web")
    assert [a["targetRef"]["name"] for a in c.get("endpoints", "db")["subsets"][0]["addresses"]] == ["web-a"]
    looked_at.clear()
    r = c.http.patch(f"{NS}/services/web", json={"spec": {"selector": {"app": "db"}}},
                     headers={"content-type": "application/merge-patch+json"})
    assert r.status_code == 200, r.text
    c.settle()
    assert [a["targetRef"]["name"] for a in c.get("endpoints", "web")["subsets"][0]["addresses"]] == ["web-a"]
    looked_at.clear()
    assert c.http.delete(f"{NS}/pods/web-a").status_code == 200
    c.settle()
    assert set(looked_at) == {"web", "db"}  # (both select it now: its going concerns both)
    assert "subsets" not in c.get("endpoints", "web") and "subsets" not in c.get("endpoints", "db")


def test_the_slices_another_writer_makes_or_removes_are_seen_when_their_service_is_next_looked_at() -> None:
    c = Cluster(fake_kubelet=True)
    c.post("/api/v1/nodes", NODE)
    c.post(f"{NS}/services", service())
    c.post(f"{NS}/pods", web_pod("web-a"))
    c.settle()
    [ours] = slices_of(c)
    stray = {**ours, "metadata": {**ours["metadata"], "name": "web-stray", "uid": "stray"}}
    foreign = {**ours, "metadata": {**ours["metadata"], "name": "web-foreign", "uid": "foreign", "labels": {
        **ours["metadata"]["labels"], "endpointslice.kubernetes.io/managed-by": "someone-else"}}}
    for made in (stray, foreign):  # (another replica's controller, say: straight to the store)
        c.store.create("endpointslices", "default", made["metadata"]["name"],
                       lambda _old, rv, made=made: {**made, "metadata": {**made["metadata"], "resourceVersion": rv}})
    c.store.delete("endpointslices", "default", ours["metadata"]["name"])
    c.settle()
    r = c.http.patch(f"{NS}/services/web", json={"metadata": {"annotations": {"touched": "yes"}}},
                     headers={"content-type": "application/merge-patch+json"})
    assert r.status_code == 200, r.text
    c.settle()
    # the slice of this controller that should not be there went, another manager's stayed, its own is back
    assert sorted(s["metadata"]["name"] for s in slices_of(c)) == sorted([ours["metadata"]["name"], "web-foreign"])
    assert next(s for s in slices_of(c) if s["metadata"]["name"] == ours["metadata"]["name"])["endpoints"] == \
        ours["endpoints"]


def test_services_of_one_selector_share_entries_only_where_theirs_are_made_the_same_way() -> None:
    c = Cluster(fake_kubelet=True)
    c.post("/api/v1/nodes", NODE)
    c.post(f"{NS}/services", service())
    c.post(f"{NS}/services", {**service(), "metadata": {"name": "www"}})
    named = web_pod("web-a")
    named["spec"].update(hostname="a", subdomain="web")
    c.post(f"{NS}/pods", named)
    c.settle()
    web, www = c.get("endpoints", "web")["subsets"][0], c.get("endpoints", "www")["subsets"][0]
    assert web["addresses"][0]["hostname"] == "a" and "hostname" not in www["addresses"][0]  # (its subdomain's)
    r = c.http.patch(f"{NS}/services/www", json={"spec": {"ports": [{"name": "http", "port": 80, "targetPort": 9090}]}},
                     headers={"content-type": "application/merge-patch+json"})
    assert r.status_code == 200, r.text
    c.post(f"{NS}/pods", web_pod("web-b"))
    c.settle()
    assert c.get("endpoints", "www")["subsets"][0]["ports"][0]["port"] == 9090
    assert c.get("endpoints", "web")["subsets"][0]["ports"][0]["port"] == 8080
    assert [len(c.get("endpoints", n)["subsets"][0]["addresses"]) for n in ("web", "www")] == [2, 2]
    svc = {"metadata": {"name": "web"}, "spec": service()["spec"]}
    published = {**svc, "spec": {**svc["spec"], "publishNotReadyAddresses": True}}
    group = ("default", (("app", "web"),))
    assert endpoints_module._content_key(group, svc, set()) != endpoints_module._content_key(group, published, set())


def test_own_writes_whose_changes_the_feed_lost_are_let_go() -> None:
    controllers = EndpointsControllers(Writer(SQLiteStore(":memory:")))
    controllers.mine = set(range(1, endpoints_module._MINE_KEPT + 2))
    change = Change(endpoints_module._MINE_KEPT + 10, "ADDED", "endpoints", "default", "web", False, False)
    controllers.notes([change])
    assert controllers.mine == set()  # (each was older than a change seen: its own change will never come)
    assert ("default", "web") in controllers.dirty_services  # (not one of its own: news)


def test_a_pod_made_before_its_service_leaves_the_service_when_its_labels_change() -> None:
    c = Cluster(fake_kubelet=True)
    c.post("/api/v1/nodes", NODE)
    c.post(f"{NS}/pods", web_pod("web-a"))
    c.settle()  # (no Service selects pods yet: the pod's change concerns none)
    c.post(f"{NS}/services", service())
    c.settle()
    assert [a["targetRef"]["name"] for a in c.get("endpoints", "web")["subsets"][0]["addresses"]] == ["web-a"]
    r = c.http.patch(f"{NS}/pods/web-a", json={"metadata": {"labels": {"app": "db"}}},
                     headers={"content-type": "application/merge-patch+json"})
    assert r.status_code == 200, r.text
    c.settle()
    assert "subsets" not in c.get("endpoints", "web")


def test_a_services_pods_are_found_by_label_not_by_going_through_every_pod_of_the_namespace(monkeypatch: Any) -> None:
    c = Cluster(fake_kubelet=True)
    c.post("/api/v1/nodes", NODE)
    for i in range(20):
        c.post(f"{NS}/pods", web_pod(f"other-{i}", {"app": "db"}))
    c.post(f"{NS}/pods", web_pod("web-a"))
    c.post(f"{NS}/services", service())
    c.settle()  # (the namespace's pods listed once, when a Service first selects in it)
    listed: list[int] = []
    real_pods = Snapshot.pods

    def recording_pods(snap: Snapshot) -> list[dict[str, Any]]:
        if sys._getframe(1).f_code.co_filename == endpoints_module.__file__:  # (the other controllers' are theirs)
            listed.append(1)
        return real_pods.fget(snap)  # type: ignore[attr-defined]

    monkeypatch.setattr(Snapshot, "pods", property(recording_pods))
    c.post(f"{NS}/services", {**service(), "metadata": {"name": "www"}})
    c.post(f"{NS}/pods", web_pod("web-b"))
    c.settle()
    assert listed == []
    assert [a["targetRef"]["name"] for a in c.get("endpoints", "www")["subsets"][0]["addresses"]] == ["web-a", "web-b"]


def test_pods_that_changed_while_no_service_selected_in_their_namespace_are_found_when_one_does_again() -> None:
    c = Cluster(fake_kubelet=True)
    c.post("/api/v1/nodes", NODE)
    c.post(f"{NS}/pods", web_pod("web-a"))
    c.post(f"{NS}/services", service())
    c.settle()
    assert c.http.delete(f"{NS}/services/web").status_code == 200
    c.post(f"{NS}/pods", web_pod("web-b", {"app": "db"}))
    c.settle()  # (no Service selects in the namespace: its pods are no longer indexed)
    r = c.http.patch(f"{NS}/pods/web-a", json={"metadata": {"labels": {"app": "db"}}},
                     headers={"content-type": "application/merge-patch+json"})
    assert r.status_code == 200, r.text
    c.post(f"{NS}/services", {**service(selector={"app": "db"}), "metadata": {"name": "db"}})
    c.settle()
    assert [a["targetRef"]["name"] for a in c.get("endpoints", "db")["subsets"][0]["addresses"]] == ["web-a", "web-b"]
