"""autoscaling HorizontalPodAutoscalers: stored as v2 with decoding's defaults, served as v2 and v1, validated with
upstream's field paths and texts, printed as kubectl prints them; and the HPA controller as it behaves without a
metrics API: replicas kept within [minReplicas, maxReplicas], ScalingActive False with FailedGetResourceMetric."""

from __future__ import annotations

import warnings
from typing import Any

import pytest

warnings.filterwarnings("ignore", message="Using `httpx`")
from cluster import NODE, Cluster, api_client  # noqa: E402
from starlette.testclient import TestClient  # noqa: E402

from dralloc.api.autoscaling_conversion import to_v1, to_v2  # noqa: E402
from dralloc.server.registry.autoscaling import hpa_targets  # noqa: E402

V2 = "/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers"
V1 = "/apis/autoscaling/v1/namespaces/default/horizontalpodautoscalers"
TABLE = {"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"}
MERGE = {"content-type": "application/merge-patch+json"}
NO_METRICS = ("failed to get cpu utilization: unable to get metrics for resource cpu: unable to fetch metrics from "
              "resource metrics API: the server could not find the requested resource (get pods.metrics.k8s.io)")


@pytest.fixture
def client() -> TestClient:
    return api_client()


def hpa(name: str = "web", target: str = "web", version: str = "v2", **spec: Any) -> dict[str, Any]:
    return {"apiVersion": f"autoscaling/{version}", "kind": "HorizontalPodAutoscaler", "metadata": {"name": name},
            "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": target},
                     "maxReplicas": 5, **spec}}


def causes(r: Any) -> list[tuple[str, str]]:
    assert r.status_code == 422, r.text
    return [(c["field"], c["message"]) for c in r.json()["details"]["causes"]]


def test_decoding_defaults_min_replicas_a_cpu_metric_and_a_given_behaviors_rules(client: TestClient) -> None:
    made = client.post(V2, json=hpa(behavior={"scaleDown": {"stabilizationWindowSeconds": 60}})).json()
    assert made["metadata"]["generation"] == 1
    spec = made["spec"]
    assert spec["minReplicas"] == 1
    assert spec["metrics"] == [{"type": "Resource", "resource": {
        "name": "cpu", "target": {"type": "Utilization", "averageUtilization": 80}}}]
    assert spec["behavior"] == {
        "scaleUp": {"stabilizationWindowSeconds": 0, "selectPolicy": "Max", "policies": [
            {"type": "Pods", "value": 4, "periodSeconds": 15}, {"type": "Percent", "value": 100, "periodSeconds": 15}]},
        "scaleDown": {"stabilizationWindowSeconds": 60, "selectPolicy": "Max", "policies": [
            {"type": "Percent", "value": 100, "periodSeconds": 15}]}}
    plain = client.post(V2, json=hpa("plain")).json()
    assert "behavior" not in plain["spec"]  # (rules are defaulted only in a behavior that is given)


def test_v1_is_converted_to_v2_and_back(client: TestClient) -> None:
    made = client.post(V1, json=hpa("v1", version="v1", targetCPUUtilizationPercentage=50))
    assert made.status_code == 201, made.text
    assert made.json()["apiVersion"] == "autoscaling/v1"
    assert made.json()["spec"]["targetCPUUtilizationPercentage"] == 50
    stored = client.get(f"{V2}/v1").json()
    assert stored["spec"]["metrics"][0]["resource"]["target"] == {"type": "Utilization", "averageUtilization": 50}
    untargeted = client.post(V1, json=hpa("bare", version="v1")).json()
    assert untargeted["spec"]["targetCPUUtilizationPercentage"] == 80  # v2's default metric, shown in v1
    listed = client.get(V1).json()
    assert listed["apiVersion"] == "autoscaling/v1"
    assert [i["spec"]["targetCPUUtilizationPercentage"] for i in listed["items"]] == [80, 50]
    unknown = client.post(V1, json=hpa("x", version="v1", metrics=[]), params={"fieldValidation": "Strict"})
    assert unknown.status_code == 400 and 'unknown field "spec.metrics"' in unknown.json()["message"]


def test_conversion_carries_status_conditions_in_an_annotation() -> None:
    v2 = {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "metadata": {"name": "a"},
          "spec": {"maxReplicas": 3, "metrics": [{"type": "Resource", "resource": {
              "name": "cpu", "target": {"type": "Utilization", "averageUtilization": 70}}}]},
          "status": {"currentReplicas": 2, "desiredReplicas": 2, "currentMetrics": [
              {"type": "Resource", "resource": {"name": "cpu", "current": {"averageUtilization": 40}}}],
              "conditions": [{"type": "AbleToScale", "status": "True"}]}}
    v1 = to_v1(v2)
    assert v1["spec"] == {"maxReplicas": 3, "targetCPUUtilizationPercentage": 70}
    assert v1["status"] == {"currentReplicas": 2, "desiredReplicas": 2, "currentCPUUtilizationPercentage": 40}
    assert v1["metadata"]["annotations"] == {
        "autoscaling.alpha.kubernetes.io/conditions": '[{"type":"AbleToScale","status":"True"}]'}
    back = to_v2(v1)
    assert back["status"]["conditions"] == v2["status"]["conditions"] and "annotations" not in back["metadata"]


def test_validation(client: TestClient) -> None:
    r = client.post(V2, json={**hpa(), "spec": {
        "scaleTargetRef": {"kind": "", "name": "a/b"}, "minReplicas": 0, "maxReplicas": 0,
        "metrics": [{"type": "Pods", "resource": {"name": "cpu", "target": {"type": "Utilization",
                                                                            "averageUtilization": 0}}},
                    {"type": "Cpu"}],
        "behavior": {"scaleUp": {"selectPolicy": "Any", "stabilizationWindowSeconds": 4000, "policies": []},
                     "scaleDown": {"policies": [{"type": "Nodes", "value": 0, "periodSeconds": 1801}]}}}})
    assert causes(r) == [
        ("spec.minReplicas", "Invalid value: 0: must be greater than or equal to 1"),
        ("spec.maxReplicas", "Invalid value: 0: must be greater than 0"),
        ("spec.scaleTargetRef.kind", "Required value"),
        ("spec.scaleTargetRef.name", "Invalid value: \"a/b\": may not contain '/'"),
        ("spec.metrics[0].resource.target.averageUtilization", "Invalid value: 0: must be greater than 0"),
        ("spec.metrics[0].pods", "Required value: must populate information for the given metric source"),
        ("spec.metrics[1].type", 'Unsupported value: "Cpu": supported values: "ContainerResource", "External", '
                                 '"Object", "Pods", "Resource"'),
        ("spec.metrics[1].type", 'Unsupported value: "Cpu": supported values: "ContainerResource", "External", '
                                 '"Object", "Pods", "Resource"'),
        ("spec.metrics", "Forbidden: must specify at least one Object or External metric to support scaling to zero "
                         "replicas"),
        ("spec.behavior.scaleUp.stabilizationWindowSeconds", "Invalid value: 4000: must be less than or equal to 3600"),
        ("spec.behavior.scaleUp.selectPolicy", 'Unsupported value: "Any": supported values: "Disabled", "Max", "Min"'),
        ("spec.behavior.scaleUp.policies", "Required value: must specify at least one Policy"),
        ("spec.behavior.scaleDown.policies[0].type", 'Unsupported value: "Nodes": supported values: "Percent", "Pods"'),
        ("spec.behavior.scaleDown.policies[0].value", "Invalid value: 0: must be greater than zero"),
        ("spec.behavior.scaleDown.policies[0].periodSeconds", "Invalid value: 1801: must be less than or equal to 1800")]
    r = client.post(V2, json=hpa(minReplicas=6, metrics=[
        {"type": "Resource", "resource": {"name": "memory", "target": {"type": "AverageValue"}}},
        {"type": "External", "external": {"metric": {"name": "q"}, "target": {"type": "Value", "value": "1",
                                                                                "averageValue": "-1"}}}]))
    assert causes(r) == [
        ("spec.maxReplicas", "Invalid value: 5: must be greater than or equal to `minReplicas`"),
        ("spec.metrics[0].resource.target.averageUtilization",
         "Required value: must set either a target raw value or a target utilization"),
        ("spec.metrics[1].external.target.averageValue", 'Invalid value: "-1": must be positive'),
        ("spec.metrics[1].external.target.value",
         "Forbidden: may not set both a target value for metric and a per-pod target")]


def test_an_update_that_changes_the_spec_bumps_the_generation(client: TestClient) -> None:
    client.post(V2, json=hpa())
    relabelled = client.patch(f"{V2}/web", json={"metadata": {"labels": {"a": "b"}}}, headers=MERGE).json()
    assert relabelled["metadata"]["generation"] == 1
    changed = client.patch(f"{V2}/web", json={"spec": {"maxReplicas": 7}}, headers=MERGE).json()
    assert changed["metadata"]["generation"] == 2
    r = client.patch(f"{V2}/web/status", json={"status": {"currentReplicas": -1, "desiredReplicas": 1}},
                     headers=MERGE)
    assert causes(r) == [("status.currentReplicas", "Invalid value: -1: must be greater than or equal to 0")]


def test_kubectl_get_columns(client: TestClient) -> None:
    client.post(V2, json=hpa(minReplicas=2))
    table = client.get(V2, headers=TABLE).json()
    assert [c["name"] for c in table["columnDefinitions"]] == ["Name", "Reference", "Targets", "MinPods", "MaxPods",
                                                               "Replicas", "Age"]
    assert table["rows"][0]["cells"][:6] == ["web", "Deployment/web", "cpu: <unknown>/80%", "2", 5, 0]


def test_targets_column() -> None:
    def with_metrics(*metrics: dict[str, Any], status: list[dict[str, Any]] | None = None) -> dict[str, Any]:
        return {"spec": {"metrics": list(metrics)}, "status": {"currentMetrics": status or []}}

    cpu = {"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 50}}}
    memory = {"type": "Resource", "resource": {"name": "memory", "target": {"type": "AverageValue",
                                                                           "averageValue": "100Mi"}}}
    pods = {"type": "Pods", "pods": {"metric": {"name": "qps"}, "target": {"type": "AverageValue", "averageValue": "1k"}}}
    external = {"type": "External", "external": {"metric": {"name": "q"}, "target": {"type": "Value", "value": "10"}}}
    assert hpa_targets({"spec": {}}) == "<none>"
    assert hpa_targets(with_metrics(cpu, status=[{"type": "Resource", "resource": {
        "name": "cpu", "current": {"averageUtilization": 12}}}])) == "cpu: 12%/50%"
    assert hpa_targets(with_metrics(memory, pods)) == "memory: <unknown>/100Mi, <unknown>/1k"
    assert hpa_targets(with_metrics(cpu, memory, pods, external)) == \
        "cpu: <unknown>/50%, memory: <unknown>/100Mi + 2 more..."
    assert hpa_targets(with_metrics(external)) == "<unknown>/10"


# --- the controller ------------------------------------------------------------------------------------------


def deployment(replicas: int) -> dict[str, Any]:
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"}, "spec": {
        "replicas": replicas, "selector": {"matchLabels": {"app": "web"}},
        "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "c", "image": "x"}]}}}}


@pytest.fixture
def cluster() -> Cluster:
    c = Cluster()
    c.post("/api/v1/nodes", NODE)
    return c


def hpa_events(cluster: Cluster) -> list[tuple[str, str, str]]:
    items = cluster.http.get("/api/v1/namespaces/default/events").json()["items"]
    return sorted((e["type"], e["reason"], e["message"]) for e in items
                  if e["involvedObject"]["kind"] == "HorizontalPodAutoscaler")


def resync(cluster: Cluster) -> None:
    """The sync period over: every HPA synced again."""
    cluster.manager.autoscalers.next_due = 0
    cluster.settle()


def test_a_target_below_min_replicas_is_scaled_up_without_metrics(cluster: Cluster) -> None:
    cluster.post("/apis/apps/v1/namespaces/default/deployments", deployment(1))
    cluster.post(V2, hpa(minReplicas=3))
    cluster.settle()
    assert cluster.get("deployments", "web")["spec"]["replicas"] == 3
    status = cluster.get("horizontalpodautoscalers", "web")["status"]
    assert (status["currentReplicas"], status["desiredReplicas"], status["observedGeneration"]) == (1, 3, 1)
    assert "lastScaleTime" in status and "currentMetrics" not in status
    assert [(c["type"], c["status"], c["reason"], c["message"]) for c in status["conditions"]] == [
        ("AbleToScale", "True", "SucceededRescale", "the HPA controller was able to update the target scale to 3")]
    assert hpa_events(cluster) == [("Normal", "SuccessfulRescale",
                                    "New size: 3; reason: Current number of replicas below Spec.MinReplicas")]


def test_a_target_above_max_replicas_is_scaled_down(cluster: Cluster) -> None:
    cluster.post("/apis/apps/v1/namespaces/default/deployments", deployment(9))
    cluster.post(V2, hpa())
    cluster.settle()
    assert cluster.get("deployments", "web")["spec"]["replicas"] == 5
    assert hpa_events(cluster) == [("Normal", "SuccessfulRescale",
                                    "New size: 5; reason: Current number of replicas above Spec.MaxReplicas")]


def test_within_bounds_no_metric_can_be_read_and_nothing_is_scaled(cluster: Cluster) -> None:
    cluster.post("/apis/apps/v1/namespaces/default/deployments", deployment(2))
    cluster.post(V2, hpa())
    cluster.settle()
    assert cluster.get("deployments", "web")["spec"]["replicas"] == 2
    status = cluster.get("horizontalpodautoscalers", "web")["status"]
    assert status["currentReplicas"] == 2 and status["desiredReplicas"] == 0
    assert status["currentMetrics"] == [{"type": ""}]
    assert [(c["type"], c["status"], c["reason"]) for c in status["conditions"]] == [
        ("AbleToScale", "True", "SucceededGetScale"), ("ScalingActive", "False", "FailedGetResourceMetric")]
    assert status["conditions"][1]["message"] == f"the HPA was unable to compute the replica count: {NO_METRICS}"
    assert hpa_events(cluster) == [
        ("Warning", "FailedComputeMetricsReplicas", "invalid metrics (1 invalid out of 1), first error is: failed to "
                                                    f"get cpu resource metric value: {NO_METRICS}"),
        ("Warning", "FailedGetResourceMetric", NO_METRICS)]
    since = status["conditions"][1]["lastTransitionTime"]
    resync(cluster)  # again a sync period later: the same events counted, the condition's time kept
    again = cluster.get("horizontalpodautoscalers", "web")["status"]
    assert again["conditions"][1]["lastTransitionTime"] == since
    counts = {e["reason"]: e["count"] for e in cluster.http.get("/api/v1/namespaces/default/events").json()["items"]}
    assert counts["FailedGetResourceMetric"] == 2


def test_a_missing_target_and_a_target_at_zero(cluster: Cluster) -> None:
    cluster.post(V2, hpa())
    cluster.settle()
    condition = cluster.get("horizontalpodautoscalers", "web")["status"]["conditions"][0]
    assert (condition["reason"], condition["message"]) == (
        "FailedGetScale", 'the HPA controller was unable to get the target\'s current scale: deployments.apps "web" '
                          "not found")
    cluster.post("/apis/apps/v1/namespaces/default/deployments", deployment(0))
    resync(cluster)
    status = cluster.get("horizontalpodautoscalers", "web")["status"]
    assert [(c["type"], c["status"], c["reason"]) for c in status["conditions"]] == [
        ("AbleToScale", "True", "SucceededGetScale"), ("ScalingActive", "False", "ScalingDisabled")]
    assert cluster.get("deployments", "web")["spec"]["replicas"] == 0
    kind = hpa("other", minReplicas=1)
    kind["spec"]["scaleTargetRef"] = {"apiVersion": "apps/v1", "kind": "Widget", "name": "w"}
    cluster.post(V2, kind)
    cluster.settle()
    message = cluster.get("horizontalpodautoscalers", "other")["status"]["conditions"][0]["message"]
    assert message.endswith('no matches for kind "Widget" in group "apps"')
