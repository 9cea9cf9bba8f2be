"""ResourceQuotas: their status kept by the resourcequota controller, and the ResourceQuota admission of creates
(pods' requests and limits, object counts, DRA devices per class) with upstream's 403 texts."""

from __future__ import annotations

from typing import Any

import pytest
from cluster import NODE, NS, Cluster, R, api_client

QUOTAS = f"{NS}/resourcequotas"


def quota(name: str = "compute", scopes: list[str] | None = None, **hard: str) -> dict[str, Any]:
    spec: dict[str, Any] = {"hard": hard}
    if scopes:
        spec["scopes"] = scopes
    return {"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": name}, "spec": spec}


def pod(name: str, **resources: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"containers": [{"name": "main", "image": "x:1", "resources": resources}]}}


@pytest.fixture
def cluster() -> Cluster:
    c = Cluster(fake_kubelet=True)
    c.post("/api/v1/nodes", NODE)
    return c


def test_the_controller_fills_in_hard_and_used(cluster: Cluster) -> None:
    created = cluster.post(QUOTAS, quota(**{"requests.cpu": "2", "pods": "5", "count/configmaps": "3"}))
    assert "status" not in created
    cluster.settle()
    cluster.post(f"{NS}/pods", pod("a", requests={"cpu": "500m"}, limits={"cpu": "1"}))
    cluster.settle()
    status = cluster.get("resourcequotas", "compute")["status"]
    assert status["hard"] == {"requests.cpu": "2", "pods": "5", "count/configmaps": "3"}
    assert status["used"] == {"count/configmaps": "1", "pods": "1", "requests.cpu": "500m"}  # (kube-root-ca.crt)
    table = cluster.http.get(QUOTAS, headers={"accept": "application/json;as=Table;v=v1;g=meta.k8s.io"}).json()
    assert table["rows"][0]["cells"][2] == "count/configmaps: 1/3, pods: 1/5, requests.cpu: 500m/2"
    cluster.http.delete(f"{NS}/pods/a")
    cluster.settle()
    assert cluster.get("resourcequotas", "compute")["status"]["used"]["pods"] == "0"


def test_a_pod_over_the_quota_is_forbidden_with_upstreams_text(cluster: Cluster) -> None:
    cluster.post(QUOTAS, quota(**{"requests.cpu": "1", "limits.memory": "1Gi"}))
    cluster.settle()
    ok = pod("a", requests={"cpu": "600m"}, limits={"memory": "512Mi"})
    assert cluster.http.post(f"{NS}/pods", json=ok).status_code == 201
    # counted at once, before the controller looks again
    r = cluster.http.post(f"{NS}/pods", json=pod("b", requests={"cpu": "600m"}, limits={"memory": "512Mi"}))
    assert r.status_code == 403 and r.json()["reason"] == "Forbidden"
    assert r.json()["message"] == ('pods "b" is forbidden: exceeded quota: compute, requested: requests.cpu=600m, '
                                   "used: requests.cpu=600m, limited: requests.cpu=1")
    r = cluster.http.post(f"{NS}/pods", json=pod("c"))
    assert r.json()["message"] == ('pods "c" is forbidden: failed quota: compute: must specify limits.memory for: '
                                   "main; requests.cpu for: main")


def test_a_quota_the_controller_has_not_seen_refuses_what_it_limits() -> None:
    client = api_client()
    assert client.post(QUOTAS, json=quota(pods="3")).status_code == 201
    r = client.post(f"{NS}/pods", json=pod("a"))
    assert r.status_code == 403
    assert r.json()["message"] == 'pods "a" is forbidden: status unknown for quota: compute, resources: pods'


def test_object_counts_and_dra_devices_per_class(cluster: Cluster) -> None:
    cluster.post(QUOTAS, quota(**{"count/secrets": "1", "gpu.deviceclass.resource.k8s.io/devices": "2"}))
    cluster.settle()
    secret = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s1"}}
    assert cluster.http.post(f"{NS}/secrets", json=secret).status_code == 201
    r = cluster.http.post(f"{NS}/secrets", json={**secret, "metadata": {"name": "s2"}})
    assert r.json()["message"] == ('secrets "s2" is forbidden: exceeded quota: compute, requested: count/secrets=1, '
                                   "used: count/secrets=1, limited: count/secrets=1")
    claim = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "three"},
             "spec": {"devices": {"requests": [{"name": "g", "exactly": {"deviceClassName": "gpu", "count": 3}}]}}}
    r = cluster.http.post(f"{R}/namespaces/default/resourceclaims", json=claim)
    assert r.status_code == 403 and r.json()["message"] == (
        'resourceclaims.resource.k8s.io "three" is forbidden: exceeded quota: compute, requested: '
        "gpu.deviceclass.resource.k8s.io/devices=3, used: gpu.deviceclass.resource.k8s.io/devices=0, limited: "
        "gpu.deviceclass.resource.k8s.io/devices=2")
    claim["spec"]["devices"]["requests"][0]["exactly"]["count"] = 2
    assert cluster.http.post(f"{R}/namespaces/default/resourceclaims", json=claim).status_code == 201


def test_a_best_effort_scope_counts_only_best_effort_pods(cluster: Cluster) -> None:
    cluster.post(QUOTAS, quota("besteffort", ["BestEffort"], pods="1"))
    cluster.settle()
    assert cluster.http.post(f"{NS}/pods", json=pod("sized", requests={"cpu": "1"})).status_code == 201
    assert cluster.http.post(f"{NS}/pods", json=pod("plain-1")).status_code == 201
    r = cluster.http.post(f"{NS}/pods", json=pod("plain-2"))
    assert r.status_code == 403 and "exceeded quota: besteffort, requested: pods=1" in r.json()["message"]


def test_a_quota_is_validated(cluster: Cluster) -> None:
    r = cluster.http.post(QUOTAS, json=quota("bad", ["Weekdays"], pods="-1"))
    assert r.status_code == 422
    assert r.json()["message"] == (
        'ResourceQuota "bad" is invalid: [spec.hard[pods]: Invalid value: "-1": must be greater than or equal to 0, '
        'spec.scopes[0]: Unsupported value: "Weekdays": supported values: "BestEffort", "CrossNamespacePodAffinity", '
        '"NotBestEffort", "NotTerminating", "PriorityClass", "Terminating", "VolumeAttributesClass"]')


def test_creates_admitted_together_take_no_more_than_the_quota_leaves(tmp_path: Any) -> None:
    """The charges of creates admitted together are written at once, in the creates' own group commit, each
    checked against the quota as stored: of ten ConfigMaps sent at once against a quota of three, three are
    made, with one write of the quota."""
    import asyncio
    import warnings

    import httpx

    from dralloc.server import create_app
    from dralloc.store import SQLiteStore

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        store = SQLiteStore(str(tmp_path / "db.sqlite"))
        app = create_app(store, anonymous=True)
    configmaps = "/api/v1/namespaces/default/configmaps"
    quotas = "/api/v1/namespaces/default/resourcequotas"

    async def run() -> list[int]:
        store.attach_loop(asyncio.get_running_loop())
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://api") as client:
            made = (await client.post(quotas, json=quota(**{"count/configmaps": "3"}))).json()
            made["status"] = {"hard": {"count/configmaps": "3"}, "used": {"count/configmaps": "0"}}
            assert (await client.put(f"{quotas}/compute/status", json=made)).status_code == 200
            before, commits = store.current_rv(), store.commits
            answers = await asyncio.gather(*(client.post(configmaps, json={
                "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"c{i}"}}) for i in range(10)))
            used = (await client.get(f"{quotas}/compute")).json()["status"]["used"]
        store.attach_loop(None)
        assert used == {"count/configmaps": "3"}
        quota_writes = [c for c in store.changes_since(before) if c.resource == "resourcequotas"]
        assert len(quota_writes) == 1  # (the charges of creates admitted together: one write)
        assert store.commits - commits == 1  # (... in the creates' own group commit)
        return sorted(a.status_code for a in answers)

    try:
        assert asyncio.run(run()) == [201] * 3 + [403] * 7
    finally:
        store.close()
