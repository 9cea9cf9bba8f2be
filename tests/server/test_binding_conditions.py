"""Devices with binding conditions (KEP-5007) in `dralloc serve`: the scheduler loop writes the claims, then
holds the pod back until the driver reports every binding condition True, as DynamicResources' PreBind does;
a failure condition or the timeout fails the binding cycle and the devices are tried again."""

from __future__ import annotations

import time
import warnings
from typing import Any

import pytest

warnings.filterwarnings("ignore", message="Using `httpx`")
from cluster import NS, Cluster, R, gpu_cluster, pod, slice_  # noqa: E402

from dralloc.scheduler.plugins.dynamic_resources.binding_conditions import BINDING_TIMEOUT_SECONDS  # noqa: E402


@pytest.fixture
def cluster() -> Cluster:
    c = gpu_cluster()
    fabric = slice_()
    fabric["spec"]["devices"][0].update(bindingConditions=["FabricAttached"], bindingFailureConditions=["FabricFailed"])
    c.post(f"{R}/resourceslices", fabric)
    return c


def report(cluster: Cluster, claim: dict[str, Any], condition: str, reason: str, message: str) -> None:
    """What the driver's controller writes: the device's condition in the claim's status."""
    result = claim["status"]["allocation"]["devices"]["results"][0]
    claim["status"]["devices"] = [{
        "driver": result["driver"], "pool": result["pool"], "device": result["device"],
        "conditions": [{"type": condition, "status": "True", "reason": reason, "message": message,
                        "lastTransitionTime": "2026-11-27T10:00:00Z"}]}]
    name = claim["metadata"]["name"]
    r = cluster.http.put(f"{R}/namespaces/default/resourceclaims/{name}/status", json=claim)
    assert r.status_code == 200, r.text


def test_the_pod_waits_for_the_devices_binding_conditions_then_is_bound(cluster: Cluster) -> None:
    created = cluster.post(f"{NS}/pods", pod("trainer"))
    cluster.settle()
    (claim,) = cluster.claims()
    allocation = claim["status"]["allocation"]
    (result,) = allocation["devices"]["results"]
    assert result["bindingConditions"] == ["FabricAttached"] and result["bindingFailureConditions"] == ["FabricFailed"]
    assert allocation["allocationTimestamp"].endswith("Z")
    assert claim["status"]["reservedFor"] == [{"resource": "pods", "name": "trainer", "uid": created["metadata"]["uid"]}]
    assert "nodeName" not in cluster.get("pods", "trainer")["spec"]
    (waiting,) = cluster.events("BindingConditionsPending")
    assert (waiting["type"], waiting["message"]) == ("Normal", "waiting for binding conditions for device on node node-1")
    assert not cluster.events("Scheduled") and not cluster.events("FailedScheduling")

    report(cluster, claim, "FabricAttached", "Attached", "attached to node-1")
    cluster.settle()
    assert cluster.get("pods", "trainer")["spec"]["nodeName"] == "node-1"
    assert [e["message"] for e in cluster.events("Scheduled")] == ["Successfully assigned default/trainer to node-1"]


def test_a_failure_condition_fails_the_binding_and_the_pod_is_tried_again(cluster: Cluster) -> None:
    cluster.post(f"{NS}/pods", pod("trainer"))
    cluster.settle()
    (claim,) = cluster.claims()
    report(cluster, claim, "FabricFailed", "SwitchDown", 'port 7 "down"')
    now = [time.time()]
    cluster.manager.scheduler.clock = lambda: now[0]
    cluster.settle()
    message = (f'running PreBind plugin "DynamicResources": claim {claim["metadata"]["name"]} binding failed: '
               f'reason=SwitchDown, message="port 7 \\"down\\""')
    assert [e["message"] for e in cluster.events("FailedScheduling")] == [message]
    pending = cluster.get("pods", "trainer")
    assert "nodeName" not in pending["spec"]
    condition = pending["status"]["conditions"][0]
    assert (condition["type"], condition["status"], condition["reason"], condition["message"]) == (
        "PodScheduled", "False", "SchedulerError", message)
    (released,) = cluster.claims()  # unreserved, so deallocated: its devices may be tried again
    assert "allocation" not in released.get("status", {}) and "reservedFor" not in released.get("status", {})
    now[0] += 1.5  # the backoff of a failed binding cycle is over
    cluster.settle()
    (again,) = cluster.claims()
    assert again["status"]["allocation"]["devices"]["results"][0]["device"] == "gpu-0"
    assert len(cluster.events("BindingConditionsPending")) == 1  # the same event, counted twice
    assert cluster.events("BindingConditionsPending")[0]["count"] == 2


def test_binding_conditions_still_unmet_after_ten_minutes_time_the_binding_out(cluster: Cluster) -> None:
    cluster.post(f"{NS}/pods", pod("trainer"))
    now = [time.time()]
    cluster.manager.scheduler.clock = lambda: now[0]
    cluster.settle()
    assert cluster.manager.scheduler.next_due == pytest.approx(now[0] + BINDING_TIMEOUT_SECONDS + 1)
    now[0] += BINDING_TIMEOUT_SECONDS + 2
    cluster.settle()
    (failed,) = cluster.events("FailedScheduling")
    assert failed["message"].startswith('running PreBind plugin "DynamicResources": ')
    assert failed["message"].endswith(" binding timeout")
    assert "nodeName" not in cluster.get("pods", "trainer")["spec"]


def test_a_pod_deleted_while_waiting_releases_its_claim(cluster: Cluster) -> None:
    cluster.post(f"{NS}/pods", pod("trainer"))
    cluster.settle()
    assert cluster.http.delete(f"{NS}/pods/trainer").status_code == 200
    cluster.settle()
    assert not cluster.manager.scheduler.binding
    assert cluster.claims() == []  # the generated claim goes with its pod
