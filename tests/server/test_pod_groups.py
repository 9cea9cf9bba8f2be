"""scheduling.k8s.io/v1alpha2 Workloads and PodGroups in `dralloc serve`: served with the GenericWorkload gate
only, validated with the server's gates (server/registry/pod_groups.py), and scheduled as gangs by the server's
scheduler, which writes the PodGroupScheduled condition (server/controllers/pod_groups.py)."""

from __future__ import annotations

from typing import Any

from cluster import api_client

V1A2 = "/apis/scheduling.k8s.io/v1alpha2"
PODGROUPS = f"{V1A2}/namespaces/default/podgroups"
WORKLOADS = f"{V1A2}/namespaces/default/workloads"
GATES = frozenset({"GenericWorkload"})


def workload(name: str = "train") -> dict[str, Any]:
    return {"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "Workload", "metadata": {"name": name},
            "spec": {"podGroupTemplates": [{"name": "workers", "schedulingPolicy": {"gang": {"minCount": 3}}}]}}


def pod_group(name: str = "train-0", min_count: int = 3, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup", "metadata": {"name": name},
            "spec": {"schedulingPolicy": {"gang": {"minCount": min_count}}, **spec}}


def causes(response: Any) -> list[tuple[str, str]]:
    return [(c["field"], c["message"]) for c in response.json()["details"]["causes"]]


# --- serving -------------------------------------------------------------------------------------------


def test_gate_off_the_api_is_not_served() -> None:
    http = api_client()
    group = http.get("/apis/scheduling.k8s.io").json()
    assert [v["version"] for v in group["versions"]] == ["v1"]
    assert http.get(V1A2).status_code == 404
    r = http.post(PODGROUPS, json=pod_group())
    assert r.status_code == 404 and r.json()["message"] == "the server could not find the requested resource"
    assert http.get(WORKLOADS).status_code == 404


def test_gate_on_discovery_lists_workloads_and_podgroups_with_status() -> None:
    http = api_client(feature_gates=GATES)
    group = http.get("/apis/scheduling.k8s.io").json()
    assert [v["version"] for v in group["versions"]] == ["v1", "v1alpha2"]
    assert group["preferredVersion"]["version"] == "v1"
    listed = http.get(V1A2).json()
    assert [(r["name"], r["namespaced"], r["kind"]) for r in listed["resources"]] == [
        ("workloads", True, "Workload"), ("podgroups", True, "PodGroup"), ("podgroups/status", True, "PodGroup")]
    accept = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
    items = http.get("/apis", headers={"Accept": accept}).json()["items"]
    scheduling = next(i for i in items if i["metadata"]["name"] == "scheduling.k8s.io")
    assert [(v["version"], [r["resource"] for r in v["resources"]]) for v in scheduling["versions"]] == [
        ("v1", ["priorityclasses"]), ("v1alpha2", ["workloads", "podgroups"])]


def test_create_get_list_delete_with_generation() -> None:
    http = api_client(feature_gates=GATES)
    created = http.post(WORKLOADS, json=workload())
    assert created.status_code == 201, created.text
    assert created.json()["metadata"]["generation"] == 1
    assert http.post(PODGROUPS, json=pod_group()).status_code == 201
    assert [o["metadata"]["name"] for o in http.get(PODGROUPS).json()["items"]] == ["train-0"]
    assert http.get(f"{WORKLOADS}/train").json()["spec"]["podGroupTemplates"][0]["name"] == "workers"
    assert http.delete(f"{PODGROUPS}/train-0").status_code == 200
    assert http.get(f"{PODGROUPS}/train-0").status_code == 404


def test_create_is_validated_with_the_servers_gates() -> None:
    topology = {"schedulingConstraints": {"topology": [{"key": "example.com/rack"}]}}
    off = api_client(feature_gates=GATES).post(PODGROUPS, json=pod_group(**topology))
    assert off.status_code == 422
    assert causes(off) == [("spec.schedulingConstraints", "Forbidden: disabled by feature-gate")]
    on = api_client(feature_gates=GATES | {"TopologyAwareWorkloadScheduling"})
    assert on.post(PODGROUPS, json=pod_group(**topology)).status_code == 201
    bad = on.post(PODGROUPS, json=pod_group("zero", min_count=0))
    assert causes(bad) == [("spec.schedulingPolicy.gang.minCount", "Required value")]
    nameless = on.post(WORKLOADS, json={**workload(), "spec": {"podGroupTemplates": []}})
    assert causes(nameless) == [("spec.podGroupTemplates", "Required value: must have at least one item")]


def test_spec_is_immutable_and_status_goes_through_status_only() -> None:
    http = api_client(feature_gates=GATES)
    stored = http.post(PODGROUPS, json=pod_group()).json()
    changed = {**stored, "spec": {"schedulingPolicy": {"gang": {"minCount": 4}}}}
    r = http.put(f"{PODGROUPS}/train-0", json=changed)
    assert r.status_code == 422
    assert [f for f, _ in causes(r)] == ["spec.schedulingPolicy"]
    assert "field is immutable" in causes(r)[0][1]
    condition = {"type": "PodGroupScheduled", "status": "True", "reason": "Scheduled", "message": "",
                 "lastTransitionTime": "2026-01-01T00:00:00Z"}
    with_status = {**stored, "status": {"conditions": [condition]}}
    assert "status" not in http.put(f"{PODGROUPS}/train-0", json=with_status).json()  # main endpoint: kept
    written = http.put(f"{PODGROUPS}/train-0/status", json=with_status)
    assert written.status_code == 200 and written.json()["status"]["conditions"][0]["reason"] == "Scheduled"
    bad = {**written.json(), "status": {"conditions": [{**condition, "status": "Maybe"}]}}
    r = http.put(f"{PODGROUPS}/train-0/status", json=bad)
    assert r.status_code == 422
    assert [f for f, _ in causes(r)] == ["status.conditions[0].status"]


def test_a_pod_cannot_join_a_group_without_a_name() -> None:
    http = api_client("ml", feature_gates=GATES)
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
           "spec": {"schedulingGroup": {"podGroupName": ""}, "containers": [{"name": "m", "image": "x"}]}}
    assert http.post("/api/v1/namespaces/ml/pods", json=pod).status_code == 422
