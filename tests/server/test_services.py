"""The read-only core/v1 resources kubectl asks for: the ``default/kubernetes`` Service kube-apiserver keeps, and
the (always empty) ResourceQuotas and LimitRanges of a namespace."""

from __future__ import annotations

import warnings

import pytest

warnings.filterwarnings("ignore", message="Using `httpx`")
from cluster import api_client  # noqa: E402
from starlette.testclient import TestClient  # noqa: E402

from dralloc.server import create_app  # noqa: E402
from dralloc.server.registry.services import (  # noqa: E402
    endpoint_address,
    endpoint_slice_endpoints,
    endpoint_slice_ports,
    endpoints,
    external_ip,
    ports,
    selector,
)
from dralloc.store import SQLiteStore  # noqa: E402

SERVICES = "/api/v1/namespaces/default/services"
TABLE = {"accept": "application/json;as=Table;v=v1;g=meta.k8s.io"}


@pytest.fixture
def client() -> TestClient:
    return api_client()


def test_the_kubernetes_service_exists_from_the_start_and_targets_the_servers_port() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        client = TestClient(create_app(SQLiteStore(":memory:"), secure_port=7443))
    svc = client.get(f"{SERVICES}/kubernetes").json()
    assert svc["metadata"]["labels"] == {"component": "apiserver", "provider": "kubernetes"}
    assert svc["spec"]["ports"] == [{"name": "https", "protocol": "TCP", "port": 443, "targetPort": 7443}]
    assert svc["spec"]["type"] == "ClusterIP" and svc["spec"]["clusterIPs"] == ["10.96.0.1"]
    assert svc["spec"]["ipFamilies"] == ["IPv4"] and svc["spec"]["ipFamilyPolicy"] == "SingleStack"
    assert "selector" not in svc["spec"] and svc["status"] == {"loadBalancer": {}}
    # kube-apiserver's entry: what its create sent (defaults included), not the allocated IPs nor status
    [entry] = svc["metadata"]["managedFields"]
    assert entry["manager"] == "kube-apiserver" and entry["operation"] == "Update"
    spec = entry["fieldsV1"]["f:spec"]
    assert "f:clusterIPs" not in spec and "f:ipFamilies" not in spec and "f:status" not in entry["fieldsV1"]
    assert set(spec["f:ports"]) == {".", 'k:{"port":443,"protocol":"TCP"}'}


def test_a_second_start_keeps_the_stored_kubernetes_service(tmp_path) -> None:
    store = SQLiteStore(str(tmp_path / "db.sqlite"))
    first = create_app(store, secure_port=6443).api.store.get("services", "default", "kubernetes")
    again = create_app(store, secure_port=7443).api.store.get("services", "default", "kubernetes")
    assert again == first  # kube-apiserver no longer reconciles an existing one


def test_services_are_listed_across_namespaces_with_kube_apiservers_columns(client: TestClient) -> None:
    assert [s["metadata"]["name"] for s in client.get("/api/v1/services").json()["items"]] == ["kubernetes"]
    assert client.get("/api/v1/namespaces/kube-system/services").json()["items"] == []
    table = client.get(SERVICES, headers=TABLE).json()
    assert [(c["name"], c["priority"]) for c in table["columnDefinitions"]] == [
        ("Name", 0), ("Type", 0), ("Cluster-IP", 0), ("External-IP", 0), ("Port(s)", 0), ("Age", 0),
        ("Selector", 1)]
    assert table["rows"][0]["cells"][:5] == ["kubernetes", "ClusterIP", "10.96.0.1", "<none>", "443/TCP"]
    assert table["rows"][0]["cells"][6] == "<none>"


def test_the_printed_columns_follow_the_service_type() -> None:
    lb = {"spec": {"type": "LoadBalancer", "externalIPs": ["1.2.3.4"],
                   "ports": [{"port": 80, "nodePort": 30080, "protocol": "TCP"}, {"port": 53, "protocol": "UDP"}],
                   "selector": {"b": "2", "a": "1"}},
          "status": {"loadBalancer": {"ingress": [{"hostname": "lb.example.com"}]}}}
    assert external_ip(lb) == "lb.example.com,1.2.3.4"
    assert ports(lb) == "80:30080/TCP,53/UDP"
    assert selector(lb) == "a=1,b=2"
    assert external_ip({"spec": {"type": "LoadBalancer"}}) == "<pending>"
    assert external_ip({"spec": {"type": "ExternalName", "externalName": "db.example.com"}}) == "db.example.com"


@pytest.mark.parametrize("method,path", [
    ("POST", "/apis/discovery.k8s.io/v1/namespaces/default/endpointslices"),
    ("DELETE", "/apis/discovery.k8s.io/v1/namespaces/default/endpointslices/x"),
])
def test_a_write_to_a_read_only_resource_is_method_not_allowed_with_a_status(client: TestClient, method: str,
                                                                             path: str) -> None:
    r = client.request(method, path, json={"apiVersion": "v1", "kind": "Service", "metadata": {"name": "x"}},
                       headers={"content-type": "application/merge-patch+json" if method == "PATCH"
                                else "application/json"})
    assert r.status_code == 405, r.text
    assert r.json()["kind"] == "Status" and r.json()["reason"] == "MethodNotAllowed"
    assert client.get(f"{SERVICES}/kubernetes").status_code == 200


def test_discovery_lists_only_the_verbs_a_read_only_resource_serves(client: TestClient) -> None:
    listed = {r["name"]: r for r in client.get("/apis/discovery.k8s.io/v1").json()["resources"]}
    assert listed["endpointslices"]["verbs"] == ["get", "list", "watch"]


def test_services_are_writable_and_discovery_says_so(client: TestClient) -> None:
    listed = {r["name"]: r for r in client.get("/api/v1").json()["resources"]}
    assert listed["services"]["verbs"] == ["create", "delete", "deletecollection", "get", "list", "patch", "update",
                                           "watch"]
    assert listed["services"]["shortNames"] == ["svc"] and listed["services"]["categories"] == ["all"]
    assert "services/status" in listed


def test_a_namespace_has_no_resource_quotas_nor_limit_ranges(client: TestClient) -> None:
    for resource, kind in (("resourcequotas", "ResourceQuotaList"), ("limitranges", "LimitRangeList")):
        listed = client.get(f"/api/v1/namespaces/default/{resource}", params={"limit": 500}).json()
        assert listed["kind"] == kind and listed["items"] == []
        r = client.get(f"/api/v1/namespaces/default/{resource}/x")
        assert r.status_code == 404 and r.json()["reason"] == "NotFound"


def test_workloads_are_served_and_empty_at_first_as_kubectl_cluster_info_dump_lists_them(client: TestClient) -> None:
    for path, kind, version in (("/apis/apps/v1/namespaces/kube-system/daemonsets", "DaemonSetList", "apps/v1"),
                                ("/apis/apps/v1/namespaces/default/deployments", "DeploymentList", "apps/v1"),
                                ("/apis/apps/v1/namespaces/default/replicasets", "ReplicaSetList", "apps/v1"),
                                ("/apis/apps/v1/statefulsets", "StatefulSetList", "apps/v1"),
                                ("/api/v1/namespaces/default/replicationcontrollers", "ReplicationControllerList",
                                 "v1")):
        listed = client.get(path).json()
        assert (listed["kind"], listed["apiVersion"], listed["items"]) == (kind, version, [])
    assert client.get("/apis/apps/v1/namespaces/default/deployments/web").status_code == 404
    assert client.get("/apis/apps/v2/deployments").status_code == 404
    groups = [g["name"] for g in client.get("/apis").json()["groups"]]
    assert groups[0] == "apps" and groups[-1] == "resource.k8s.io"  # kube-apiserver's order
    apps = {r["name"]: r for r in client.get("/apis/apps/v1").json()["resources"]}
    assert sorted(apps) == ["controllerrevisions", "daemonsets", "daemonsets/status", "deployments",
                            "deployments/scale", "deployments/status", "replicasets", "replicasets/scale",
                            "replicasets/status", "statefulsets", "statefulsets/scale", "statefulsets/status"]
    assert all(r["verbs"] == ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"]
               for n, r in apps.items() if "/" not in n)
    assert all(r.get("categories") == (None if n == "controllerrevisions" else ["all"])
               for n, r in apps.items() if "/" not in n)  # (not in `kubectl get all`, as upstream)
    assert apps["deployments/scale"] == {"name": "deployments/scale", "singularName": "", "namespaced": True,
                                         "group": "autoscaling", "version": "v1", "kind": "Scale",
                                         "verbs": ["get", "patch", "update"]}
    aggregated = client.get("/apis", headers={"accept": "application/json;g=apidiscovery.k8s.io;v=v2;"
                                                        "as=APIGroupDiscoveryList"}).json()
    assert aggregated["items"][0]["metadata"]["name"] == "apps"


def test_the_kubernetes_endpoint_slice_points_at_the_server_and_follows_it_across_restarts(tmp_path) -> None:
    store = SQLiteStore(str(tmp_path / "db.sqlite"))
    first = create_app(store, secure_port=6443, endpoint_address="10.1.2.3").api.store
    eps = first.get("endpointslices", "default", "kubernetes")
    assert eps["metadata"]["labels"] == {"kubernetes.io/service-name": "kubernetes"}
    assert (eps["addressType"], eps["endpoints"], eps["ports"]) == (
        "IPv4", [{"addresses": ["10.1.2.3"], "conditions": {"ready": True}}],
        [{"name": "https", "port": 6443, "protocol": "TCP"}])
    again = create_app(store, secure_port=7443, endpoint_address="10.1.2.4").api.store
    moved = again.get("endpointslices", "default", "kubernetes")
    assert moved["endpoints"][0]["addresses"] == ["10.1.2.4"] and moved["ports"][0]["port"] == 7443
    assert moved["metadata"]["uid"] == eps["metadata"]["uid"]
    svc = again.get("services", "default", "kubernetes")
    assert svc["spec"]["ports"][0]["targetPort"] == 6443  # the Service itself is never rewritten


def test_endpoint_slices_are_served_read_only_in_discovery_k8s_io(client: TestClient) -> None:
    base = "/apis/discovery.k8s.io/v1"
    assert "discovery.k8s.io" in [g["name"] for g in client.get("/apis").json()["groups"]]
    [entry] = client.get(base).json()["resources"]
    assert (entry["name"], entry["kind"], entry["verbs"]) == ("endpointslices", "EndpointSlice",
                                                              ["get", "list", "watch"])
    listed = client.get(f"{base}/namespaces/default/endpointslices",
                        params={"labelSelector": "kubernetes.io/service-name=kubernetes"}).json()
    assert [i["metadata"]["name"] for i in listed["items"]] == ["kubernetes"]
    table = client.get(f"{base}/endpointslices", headers=TABLE).json()
    assert [c["name"] for c in table["columnDefinitions"]] == ["Name", "AddressType", "Ports", "Endpoints", "Age"]
    assert table["rows"][0]["cells"][:4] == ["kubernetes", "IPv4", "6443", "127.0.0.1"]
    assert client.delete(f"{base}/namespaces/default/endpointslices/kubernetes").status_code == 405


@pytest.mark.parametrize("advertised,listening,address", [
    ("192.0.2.7", "0.0.0.0", "192.0.2.7"), ("api.example.com", "10.0.0.9", "10.0.0.9"),
    (None, "0.0.0.0", "127.0.0.1"), (None, "::1", "127.0.0.1")])
def test_the_endpoint_address_is_the_advertised_ipv4_address_else_a_specific_listening_one(
        advertised: str | None, listening: str, address: str) -> None:
    assert endpoint_address(advertised, listening) == address


def test_endpoint_slice_columns_list_three_then_count_the_rest() -> None:
    eps = {"endpoints": [{"addresses": [f"10.0.0.{i}"]} for i in range(5)], "ports": [{"name": "x"}, {}]}
    assert endpoint_slice_endpoints(eps) == "10.0.0.0,10.0.0.1,10.0.0.2 + 2 more..."
    assert endpoint_slice_ports(eps) == "x,*" and endpoint_slice_ports({}) == "<unset>"


def test_the_kubernetes_endpoints_are_served_with_the_deprecation_warning_of_every_endpoints_request(
        client: TestClient) -> None:
    r = client.get("/api/v1/namespaces/default/endpoints/kubernetes")
    assert r.headers.get_list("warning") == [
        '299 - "v1 Endpoints is deprecated in v1.33+; use discovery.k8s.io/v1 EndpointSlice"']
    ep = r.json()
    assert ep["metadata"]["labels"] == {"endpointslice.kubernetes.io/skip-mirror": "true"}
    assert ep["subsets"] == [{"addresses": [{"ip": "127.0.0.1"}],
                              "ports": [{"name": "https", "port": 6443, "protocol": "TCP"}]}]
    table = client.get("/api/v1/endpoints", headers=TABLE)
    assert table.headers.get("warning") and [c["name"] for c in table.json()["columnDefinitions"]] == [
        "Name", "Endpoints", "Age"]
    assert table.json()["rows"][0]["cells"][:2] == ["kubernetes", "127.0.0.1:6443"]
    assert "warning" not in client.get(f"{SERVICES}/kubernetes").headers


def test_endpoints_columns_pair_every_address_with_every_port() -> None:
    ep = {"subsets": [{"addresses": [{"ip": "10.0.0.1"}, {"ip": "fd00::1"}],
                       "ports": [{"port": 80}, {"port": 443}]}]}
    assert endpoints(ep) == "10.0.0.1:80,[fd00::1]:80,10.0.0.1:443 + 1 more..."
    assert endpoints({"subsets": [{"addresses": [{"ip": "10.0.0.1"}]}]}) == "10.0.0.1"
    assert endpoints({}) == "<none>"


@pytest.mark.slow
def test_what_an_external_kube_scheduler_lists_besides_the_dra_kinds_is_served_read_only_and_empty(
        client: TestClient) -> None:
    # DefaultPreemption's disruption budgets and the volume plugins' kinds: without them a kube-scheduler run
    # with --no-scheduler never has its informers synced, so it never schedules
    for path, kind in (("/apis/policy/v1/poddisruptionbudgets", "PodDisruptionBudgetList"),
                       ("/apis/policy/v1/namespaces/default/poddisruptionbudgets", "PodDisruptionBudgetList"),
                       ("/apis/storage.k8s.io/v1/storageclasses", "StorageClassList"),
                       ("/apis/storage.k8s.io/v1/csinodes", "CSINodeList"),
                       ("/apis/storage.k8s.io/v1/csidrivers", "CSIDriverList"),
                       ("/apis/storage.k8s.io/v1/csistoragecapacities", "CSIStorageCapacityList"),
                       ("/apis/storage.k8s.io/v1/volumeattachments", "VolumeAttachmentList")):
        listed = client.get(path, params={"limit": 500, "resourceVersion": "0"}).json()
        assert (listed["kind"], listed["items"]) == (kind, []), path
        watched = client.get(path, params={"watch": "true", "timeoutSeconds": "1", "allowWatchBookmarks": "true"})
        assert watched.status_code == 200, path
    storage = {r["name"]: r for r in client.get("/apis/storage.k8s.io/v1").json()["resources"]}
    assert list(storage) == ["csidrivers", "csinodes", "csistoragecapacities", "storageclasses", "volumeattachments",
                             "volumeattachments/status"]
    assert storage["storageclasses"]["shortNames"] == ["sc"] and storage["csinodes"]["namespaced"] is False
    assert "create" in storage["csistoragecapacities"]["verbs"]  # (written: tests/server/test_volumes.py)
