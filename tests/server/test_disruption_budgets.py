"""PodDisruptionBudgets: written and validated as kube-apiserver writes them, their status kept by the disruption
controller, honoured by the eviction subresource (kubectl drain) and by the serve scheduler's preemption."""

from __future__ import annotations

from typing import Any

import pytest
from cluster import NODE, NS, Cluster

PDBS = "/apis/policy/v1/namespaces/default/poddisruptionbudgets"
TABLE = {"accept": "application/json;as=Table;v=v1;g=meta.k8s.io"}
MERGE = {"content-type": "application/merge-patch+json"}
VIOLATES = "Cannot evict pod as it would violate the pod's disruption budget."


def budget(name: str = "web", **spec: Any) -> dict[str, Any]:
    spec.setdefault("selector", {"matchLabels": {"app": "web"}})
    return {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": name}, "spec": spec}


def web_pod(name: str, labels: dict[str, str] | None = None, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "labels": labels or {"app": "web"}},
            "spec": {"containers": [{"name": "main", "image": "x:1"}], "terminationGracePeriodSeconds": 0, **spec}}


def evict(c: Cluster, name: str, **options: Any) -> Any:
    body: dict[str, Any] = {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": name}}
    if options:
        body["deleteOptions"] = options
    return c.http.post(f"{NS}/pods/{name}/eviction", json=body)


@pytest.fixture
def cluster() -> Cluster:
    c = Cluster(fake_kubelet=True)
    c.post("/api/v1/nodes", NODE)
    return c


def test_a_budget_is_created_with_an_empty_status_and_validated(cluster: Cluster) -> None:
    created = cluster.post(PDBS, budget(minAvailable=2))
    assert created["metadata"]["generation"] == 1
    assert created["status"] == {"disruptionsAllowed": 0, "currentHealthy": 0, "desiredHealthy": 0, "expectedPods": 0}
    r = cluster.http.post(PDBS, json=budget("both", minAvailable=1, maxUnavailable=1))
    assert r.status_code == 422 and r.json()["message"].endswith("minAvailable and maxUnavailable cannot be both set")
    r = cluster.http.post(PDBS, json=budget("pct", maxUnavailable="120%"))
    assert r.status_code == 422 and r.json()["message"] == (
        'PodDisruptionBudget.policy "pct" is invalid: spec.maxUnavailable: Invalid value: "120%": must not be '
        "greater than 100%")
    r = cluster.http.patch(f"{PDBS}/web", json={"spec": {"minAvailable": "50%"}}, headers=MERGE)
    assert r.status_code == 200 and r.json()["metadata"]["generation"] == 2
    row = cluster.http.get(PDBS, headers=TABLE).json()
    assert [c["name"] for c in row["columnDefinitions"]] == ["Name", "Min Available", "Max Unavailable",
                                                             "Allowed Disruptions", "Age"]
    assert row["rows"][0]["cells"][:4] == ["web", "50%", "N/A", 0]


def test_the_disruption_controller_counts_the_ready_pods_against_min_available(cluster: Cluster) -> None:
    cluster.post(PDBS, budget(minAvailable=2))
    for name in ("web-1", "web-2", "web-3"):
        cluster.post(f"{NS}/pods", web_pod(name))
    cluster.post(f"{NS}/pods", web_pod("db", {"app": "db"}))
    cluster.settle()
    status = cluster.get("poddisruptionbudgets", "web")["status"]
    assert {k: status[k] for k in ("observedGeneration", "disruptionsAllowed", "currentHealthy", "desiredHealthy",
                                   "expectedPods")} == {"observedGeneration": 1, "disruptionsAllowed": 1,
                                                        "currentHealthy": 3, "desiredHealthy": 2, "expectedPods": 3}
    (cond,) = status["conditions"]
    assert (cond["type"], cond["status"], cond["reason"], cond["message"], cond["observedGeneration"]) == (
        "DisruptionAllowed", "True", "SufficientPods", "", 1)
    cluster.http.delete(f"{NS}/pods/web-3")
    cluster.settle()
    status = cluster.get("poddisruptionbudgets", "web")["status"]
    assert (status["disruptionsAllowed"], status["currentHealthy"]) == (0, 2)
    assert (status["conditions"][0]["status"], status["conditions"][0]["reason"]) == ("False", "InsufficientPods")


def test_max_unavailable_counts_the_controllers_scale_and_an_unknown_controller_fails_the_sync(
        cluster: Cluster) -> None:
    cluster.post("/apis/apps/v1/namespaces/default/deployments", {
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
        "spec": {"replicas": 4, "selector": {"matchLabels": {"app": "web"}},
                 "template": {"metadata": {"labels": {"app": "web"}},
                              "spec": {"containers": [{"name": "main", "image": "x:1"}]}}}})
    cluster.post(PDBS, budget(maxUnavailable="25%"))
    cluster.settle()
    status = cluster.get("poddisruptionbudgets", "web")["status"]
    assert (status["expectedPods"], status["desiredHealthy"], status["currentHealthy"],
            status["disruptionsAllowed"]) == (4, 3, 4, 1)
    owner = cluster.post(f"{NS}/configmaps", {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm"}})
    cluster.post(f"{NS}/pods", web_pod("stray") | {"metadata": {
        "name": "stray", "labels": {"app": "web"}, "ownerReferences": [
            {"apiVersion": "v1", "kind": "ConfigMap", "name": "cm", "uid": owner["metadata"]["uid"],
             "controller": True}]}})
    cluster.settle()
    status = cluster.get("poddisruptionbudgets", "web")["status"]
    assert status["disruptionsAllowed"] == 0
    (cond,) = status["conditions"]
    assert (cond["status"], cond["reason"], cond["message"]) == ("False", "SyncFailed",
                                                                 'found no controllers for pod "stray"')


def test_an_eviction_takes_a_disruption_and_one_more_is_refused_with_upstreams_429(cluster: Cluster) -> None:
    cluster.post(PDBS, budget(minAvailable=1))
    for name in ("web-1", "web-2"):
        cluster.post(f"{NS}/pods", web_pod(name, terminationGracePeriodSeconds=30))
    cluster.settle()
    assert evict(cluster, "web-1").status_code == 201
    pdb = cluster.get("poddisruptionbudgets", "web")
    assert pdb["status"]["disruptionsAllowed"] == 0 and list(pdb["status"]["disruptedPods"]) == ["web-1"]
    assert pdb["status"]["conditions"][0]["reason"] == "InsufficientPods"
    evicted = cluster.get("pods", "web-1")
    assert evicted["metadata"]["deletionTimestamp"]
    (target,) = [c for c in evicted["status"]["conditions"] if c["type"] == "DisruptionTarget"]
    assert (target["status"], target["reason"], target["message"]) == ("True", "EvictionByEvictionAPI",
                                                                       "Eviction API: evicting")
    r = evict(cluster, "web-2")
    assert r.status_code == 429 and r.json()["reason"] == "TooManyRequests" and r.json()["message"] == VIOLATES
    assert r.json()["details"]["causes"] == [{"reason": "DisruptionBudget", "message":
                                              "The disruption budget web needs 1 healthy pods and has 2 currently"}]
    assert cluster.get("pods", "web-2")["metadata"].get("deletionTimestamp") is None
    # (the status the controller wrote last, until it looks again: upstream's text says the same)
    cluster.settle()  # web-1 is being deleted: the controller drops its record and no longer counts it
    status = cluster.get("poddisruptionbudgets", "web")["status"]
    assert "disruptedPods" not in status and (status["currentHealthy"], status["disruptionsAllowed"]) == (1, 0)


def test_a_budget_not_yet_seen_at_its_generation_and_two_budgets_refuse_the_eviction(cluster: Cluster) -> None:
    cluster.post(f"{NS}/pods", web_pod("web-1"))
    cluster.post(PDBS, budget(maxUnavailable=1))
    cluster.settle()
    cluster.http.patch(f"{PDBS}/web", json={"spec": {"maxUnavailable": 2}}, headers=MERGE)  # not synced yet
    r = evict(cluster, "web-1")
    assert r.status_code == 429 and r.headers["retry-after"] == "10"
    assert r.json()["details"]["causes"][0]["message"] == "The disruption budget web is still being processed by " \
                                                          "the server."
    cluster.post(PDBS, budget("also", minAvailable=0))
    cluster.settle()
    r = evict(cluster, "web-1")
    assert r.status_code == 500 and r.json()["message"] == (
        "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.")


def test_an_unready_pod_is_evicted_when_the_budget_always_allows_it(cluster: Cluster) -> None:
    cluster.post(PDBS, budget(minAvailable=5, unhealthyPodEvictionPolicy="AlwaysAllow"))
    cluster.post(f"{NS}/pods", web_pod("web-1", terminationGracePeriodSeconds=30))
    cluster.settle()
    pod = cluster.get("pods", "web-1")
    pod["status"]["conditions"] = [c | {"status": "False"} if c["type"] == "Ready" else c
                                   for c in pod["status"]["conditions"]]
    assert cluster.http.put(f"{NS}/pods/web-1/status", json=pod).status_code == 200
    assert evict(cluster, "web-1").status_code == 201
    assert "disruptedPods" not in cluster.get("poddisruptionbudgets", "web")["status"]  # no disruption used


def test_preemption_spares_the_pods_a_budget_protects() -> None:
    c = Cluster()
    for node in ("node-1", "node-2"):
        c.post("/api/v1/nodes", {**NODE, "metadata": {"name": node}})
    c.post(PDBS, budget("guarded", minAvailable=1, selector={"matchLabels": {"app": "guarded"}}))
    cpu = {"resources": {"requests": {"cpu": "6"}}}
    # without the budget node-1's victim would be the better one: it has the lower priority
    for name, node, priority in (("guarded", "node-1", 0), ("free", "node-2", 10)):
        p = web_pod(name, {"app": name}, nodeName=node, priorityClassName=c.priority_class(priority))
        p["spec"]["containers"][0].update(cpu)
        c.post(f"{NS}/pods", p)
    c.settle()
    urgent = web_pod("urgent", {"app": "urgent"}, priorityClassName=c.priority_class(1000))
    urgent["spec"]["containers"][0].update(cpu)
    c.post(f"{NS}/pods", urgent)
    c.settle()
    names = sorted(p["metadata"]["name"] for p in c.pods())
    assert names == ["guarded", "urgent"]
    assert c.get("pods", "urgent")["spec"]["nodeName"] == "node-2"


def test_a_namespace_deleted_takes_its_budgets_with_it(cluster: Cluster) -> None:
    cluster.post("/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team"}})
    cluster.post("/apis/policy/v1/namespaces/team/poddisruptionbudgets", budget(minAvailable=1))
    assert cluster.http.delete("/api/v1/namespaces/team").status_code == 200
    cluster.settle()
    assert cluster.store.list("poddisruptionbudgets", "team")[0] == []
    assert cluster.http.get("/api/v1/namespaces/team").status_code == 404
