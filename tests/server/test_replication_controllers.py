"""core/v1 ReplicationControllers written as kube-apiserver writes them (defaults from the template's labels, one
replica, validation with upstream's paths and texts, generation, /status, /scale) and kept by the replication
controller, which is the ReplicaSet controller's rule (pods made and deleted towards spec.replicas, adopted and
released by the selector, status replicas/readyReplicas/availableReplicas/fullyLabeledReplicas/observedGeneration)."""

from __future__ import annotations

from typing import Any

import pytest
from cluster import NODE, Cluster

RC = "/api/v1/namespaces/default/replicationcontrollers"
PODS = "/api/v1/namespaces/default/pods"
MERGE = {"content-type": "application/merge-patch+json"}


def rc(name: str = "web", **spec: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"template": {"metadata": {"labels": {"app": name}},
                                         "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}
    body.update(spec)
    return {"apiVersion": "v1", "kind": "ReplicationController", "metadata": {"name": name}, "spec": body}


@pytest.fixture
def cluster() -> Cluster:
    c = Cluster(fake_kubelet=True)
    c.post("/api/v1/nodes", NODE)
    return c


def causes(r: Any) -> list[tuple[str, str]]:
    assert r.status_code == 422, r.text
    return [(c["field"], c["message"]) for c in r.json()["details"]["causes"]]


def pods_of(cluster: Cluster, name: str) -> list[dict[str, Any]]:
    return [p for p in cluster.http.get(PODS).json()["items"]
            if any(o.get("name") == name and o.get("kind") == "ReplicationController"
                   for o in p["metadata"].get("ownerReferences") or [])]


def test_defaults_take_the_selector_and_labels_from_the_template(cluster: Cluster) -> None:
    made = cluster.post(RC, rc())
    assert made["spec"]["selector"] == {"app": "web"} and made["metadata"]["labels"] == {"app": "web"}
    assert made["spec"]["replicas"] == 1 and made["metadata"]["generation"] == 1
    assert made["spec"]["template"]["spec"]["restartPolicy"] == "Always"  # (the pod template's defaults)
    labelled = rc("own", selector={"app": "own"})
    labelled["metadata"]["labels"] = {"team": "a"}
    kept = cluster.post(RC, labelled)
    assert kept["metadata"]["labels"] == {"team": "a"} and kept["spec"]["selector"] == {"app": "own"}


def test_validation(cluster: Cluster) -> None:
    body = rc(replicas=-1, minReadySeconds=-2, selector={"app": "other"})
    body["spec"]["template"]["spec"].update(restartPolicy="OnFailure", activeDeadlineSeconds=10)
    assert causes(cluster.http.post(RC, json=body)) == [
        ("spec.minReadySeconds", "Invalid value: -2: must be greater than or equal to 0"),
        ("spec.replicas", "Invalid value: -1: must be greater than or equal to 0"),
        ("spec.template.metadata.labels", 'Invalid value: {"app":"web"}: `selector` does not match template '
                                          "`labels`"),
        ("spec.template.spec.restartPolicy", 'Unsupported value: "OnFailure": supported values: "Always"'),
        ("spec.template.spec.activeDeadlineSeconds",
         "Forbidden: activeDeadlineSeconds in ReplicationController is not Supported")]
    no_template = {"apiVersion": "v1", "kind": "ReplicationController", "metadata": {"name": "bare"},
                   "spec": {"replicas": 1}}
    assert causes(cluster.http.post(RC, json=no_template)) == [("spec.selector", "Required value"),
                                                                ("spec.template", "Required value")]


def test_the_controller_keeps_replicas_pods_and_reports_them(cluster: Cluster) -> None:
    cluster.post(RC, rc(replicas=3))
    cluster.settle()
    assert len(pods_of(cluster, "web")) == 3
    status = cluster.get("replicationcontrollers", "web")["status"]
    assert status == {"replicas": 3, "fullyLabeledReplicas": 3, "readyReplicas": 3, "availableReplicas": 3,
                      "observedGeneration": 1}
    events = cluster.http.get("/api/v1/namespaces/default/events").json()["items"]
    created = [e for e in events if e["involvedObject"]["kind"] == "ReplicationController"]
    assert {(e["reason"], e["source"]["component"]) for e in created} == {("SuccessfulCreate", "replication-controller")}
    scaled = cluster.http.patch(f"{RC}/web/scale", json={"spec": {"replicas": 1}}, headers=MERGE)
    assert scaled.status_code == 200 and scaled.json()["status"]["selector"] == "app=web"
    cluster.settle()
    assert len([p for p in pods_of(cluster, "web") if not p["metadata"].get("deletionTimestamp")]) == 1
    status = cluster.get("replicationcontrollers", "web")["status"]
    assert (status["replicas"], status["observedGeneration"]) == (1, 2)


def test_an_orphan_pod_is_adopted_and_a_relabelled_one_released(cluster: Cluster) -> None:
    orphan = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "stray", "labels": {"app": "web"}},
              "spec": {"containers": [{"name": "c", "image": "nginx"}]}}
    cluster.post(PODS, orphan)
    cluster.post(RC, rc(replicas=1))
    cluster.settle()
    mine = pods_of(cluster, "web")
    assert [p["metadata"]["name"] for p in mine] == ["stray"]  # adopted: no pod made
    cluster.http.patch(f"{PODS}/stray", json={"metadata": {"labels": {"app": "gone"}}}, headers=MERGE)
    cluster.settle()
    names = [p["metadata"]["name"] for p in pods_of(cluster, "web")]
    assert "stray" not in names and len(names) == 1


def test_status_is_written_through_status_and_validated(cluster: Cluster) -> None:
    cluster.post(RC, rc(replicas=0))
    r = cluster.http.patch(f"{RC}/web/status", headers=MERGE, json={"status": {
        "replicas": 1, "readyReplicas": 2, "availableReplicas": 2, "fullyLabeledReplicas": -1}})
    assert causes(r) == [
        ("status.fullyLabeledReplicas", "Invalid value: -1: must be greater than or equal to 0"),
        ("status.readyReplicas", "Invalid value: 2: cannot be greater than status.replicas"),
        ("status.availableReplicas", "Invalid value: 2: cannot be greater than status.replicas")]
    changed = cluster.http.patch(f"{RC}/web", headers=MERGE, json={"spec": {"selector": {"app": "web", "v": "2"},
                                                                            "template": {"metadata": {"labels": {
                                                                                "app": "web", "v": "2"}}}}})
    assert changed.status_code == 200, changed.text  # a ReplicationController's selector may change
    assert changed.json()["metadata"]["generation"] == 2


def test_kubectl_get_columns(cluster: Cluster) -> None:
    cluster.post(RC, rc(replicas=2))
    cluster.settle()
    table = cluster.http.get(RC, headers={"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"}).json()
    assert [c["name"] for c in table["columnDefinitions"]] == ["Name", "Desired", "Current", "Ready", "Age",
                                                               "Containers", "Images", "Selector"]
    cells = table["rows"][0]["cells"]
    assert cells[:4] == ["web", 2, 2, 2] and cells[5:] == ["c", "nginx", "app=web"]


def test_an_hpa_scales_a_replication_controller_into_its_bounds(cluster: Cluster) -> None:
    cluster.post(RC, rc(replicas=1))
    cluster.post("/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers", {
        "apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "metadata": {"name": "web"},
        "spec": {"scaleTargetRef": {"apiVersion": "v1", "kind": "ReplicationController", "name": "web"},
                 "minReplicas": 2, "maxReplicas": 3}})
    cluster.settle()
    assert cluster.get("replicationcontrollers", "web")["spec"]["replicas"] == 2
    assert len(pods_of(cluster, "web")) == 2


def test_a_quota_counts_replication_controllers_by_both_names(cluster: Cluster) -> None:
    cluster.post("/api/v1/namespaces/default/resourcequotas", {
        "apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "rcs"},
        "spec": {"hard": {"replicationcontrollers": "1", "count/replicationcontrollers": "1"}}})
    cluster.settle()
    assert cluster.http.post(RC, json=rc("a", replicas=0)).status_code == 201
    r = cluster.http.post(RC, json=rc("b", replicas=0))
    assert r.status_code == 403 and r.json()["message"].startswith(
        'replicationcontrollers "b" is forbidden: exceeded quota: rcs, requested: count/replicationcontrollers=1,'
        "replicationcontrollers=1")
