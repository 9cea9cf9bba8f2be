"""What a client sees of kube-scheduler's preemption in `dralloc serve`: the events, the PodScheduled condition
and status.nominatedNodeName of the preemptor, cycle by cycle (docs/scheduler-events.md)."""

from __future__ import annotations

import time
import warnings
from typing import Any

import pytest

warnings.filterwarnings("ignore", message="Using `httpx`")
from cluster import NODE, NS, Cluster  # noqa: E402

FIT_ERROR = "0/1 nodes are available: 1 Insufficient cpu."
NO_CLAIMS = "no new claims to deallocate"
WAITING = f"{FIT_ERROR} {NO_CLAIMS}, preemption: not eligible due to a terminating pod on the nominated node."
NO_VICTIMS = (f"{FIT_ERROR} {NO_CLAIMS}, preemption: 0/1 nodes are available: "
              "1 No preemption victims found for incoming pod.")


@pytest.fixture
def cluster() -> Cluster:
    c = Cluster()
    c.post("/api/v1/nodes", NODE)  # 8 cpus
    for value in (50, 1000, 5000):
        c.priority_class(value)
    return c


def plain_pod(name: str, cpu: str, priority: int = 0, grace: int = 30) -> dict[str, Any]:
    """A pod of ``priority``, through the class ``priority-<value>`` (the fixture makes those used here)."""
    spec: dict[str, Any] = {"terminationGracePeriodSeconds": grace,
                            "containers": [{"name": "main", "image": "x:1", "resources": {"requests": {"cpu": cpu}}}]}
    if priority:
        spec["priorityClassName"] = f"priority-{priority}"
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec}


def history(cluster: Cluster, name: str) -> list[tuple[str, str]]:
    """The pod's events in the order they were written: (reason, message)."""
    events = sorted((e for e in cluster.events() if e["involvedObject"]["name"] == name),
                    key=lambda e: int(e["metadata"]["resourceVersion"]))
    return [(e["reason"], e["message"]) for e in events]


def scheduled_condition(pod: dict[str, Any]) -> dict[str, Any]:
    (cond,) = [c for c in pod["status"]["conditions"] if c["type"] == "PodScheduled"]
    return cond


def after(cluster: Cluster, seconds: float) -> None:
    """Let ``seconds`` pass for the grace periods of terminating pods, then run the controllers."""
    cluster.manager.terminating.clock = lambda: time.time() + seconds
    cluster.settle()



def place(cluster: Cluster, *pods: dict[str, Any]) -> None:
    """Create the pods one at a time, each once the controllers are done with the one before."""
    for pod in pods:
        cluster.post(f"{NS}/pods", pod)
        cluster.settle()

def test_a_preemptor_gets_one_failed_scheduling_without_preemption_text_then_waits_for_its_victim(
        cluster: Cluster) -> None:
    place(cluster, plain_pod("low", "6"), plain_pod("high", "6", priority=1000))
    high = cluster.get("pods", "high")
    # DefaultPreemption succeeded, so the cycle's message has no PostFilter part.
    assert history(cluster, "high") == [("FailedScheduling", FIT_ERROR)]
    assert high["status"]["nominatedNodeName"] == "node-1"
    cond = scheduled_condition(high)
    assert (cond["status"], cond["reason"], cond["message"]) == ("False", "Unschedulable", FIT_ERROR)
    (preempted,) = cluster.events("Preempted")
    assert preempted["involvedObject"]["name"] == "low"
    assert preempted["message"] == f"Preempted by pod {high['metadata']['uid']} on node node-1"
    assert (preempted["related"]["name"], preempted["related"]["uid"]) == ("high", high["metadata"]["uid"])

    after(cluster, 5)  # the victim terminating is no reason to try the preemptor again
    assert history(cluster, "high") == [("FailedScheduling", FIT_ERROR)]

    after(cluster, 31)  # the victim is gone: its deletion requeues the preemptor, which fits its nominated node
    high = cluster.get("pods", "high")
    assert high["spec"]["nodeName"] == "node-1" and "nominatedNodeName" not in high["status"]
    assert history(cluster, "high") == [("FailedScheduling", FIT_ERROR),
                                        ("Scheduled", "Successfully assigned default/high to node-1")]
    assert len(cluster.events("Preempted")) == 1


def test_victims_that_go_at_once_still_leave_the_preempting_cycles_failed_scheduling_before_scheduled(
        cluster: Cluster) -> None:
    place(cluster, plain_pod("low", "6", grace=0), plain_pod("high", "6", priority=1000))
    assert [p["metadata"]["name"] for p in cluster.pods()] == ["high"]
    assert cluster.get("pods", "high")["spec"]["nodeName"] == "node-1"
    assert history(cluster, "high") == [("FailedScheduling", FIT_ERROR),
                                        ("Scheduled", "Successfully assigned default/high to node-1")]
    nominations = [c for c in cluster.store.changes_since(0, 10_000) if c.resource == "pods" and c.name == "high"]
    assert len(nominations) == 3  # created, failed with its nomination, bound


def test_a_preemptor_retried_while_a_victim_still_terminates_is_not_eligible_and_keeps_its_nomination(
        cluster: Cluster) -> None:
    cluster.post(f"{NS}/pods", plain_pod("low-a", "4", grace=10))
    place(cluster, plain_pod("low-b", "4", grace=30), plain_pod("high", "8", priority=1000))
    assert history(cluster, "high") == [("FailedScheduling", FIT_ERROR)]

    after(cluster, 11)  # low-a is gone (a pod deletion: the preemptor is tried again); low-b still terminates
    assert [p["metadata"]["name"] for p in cluster.pods()] == ["high", "low-b"]
    high = cluster.get("pods", "high")
    assert history(cluster, "high") == [("FailedScheduling", FIT_ERROR), ("FailedScheduling", WAITING)]
    assert scheduled_condition(high)["message"] == WAITING and high["status"]["nominatedNodeName"] == "node-1"
    assert len(cluster.events("Preempted")) == 2  # not eligible: nothing preempted again

    after(cluster, 31)
    assert cluster.get("pods", "high")["spec"]["nodeName"] == "node-1"
    assert [r for r, _ in history(cluster, "high")] == ["FailedScheduling", "FailedScheduling", "Scheduled"]


def test_a_pod_no_preemption_can_help_gets_the_preemption_fit_error(cluster: Cluster) -> None:
    place(cluster, plain_pod("important", "8", priority=5000), plain_pod("high", "8", priority=1000))
    high = cluster.get("pods", "high")
    assert history(cluster, "high") == [("FailedScheduling", NO_VICTIMS)]
    assert scheduled_condition(high)["message"] == NO_VICTIMS and "nominatedNodeName" not in high["status"]


def test_a_preemptor_whose_nominated_node_can_no_longer_help_loses_its_nomination(cluster: Cluster) -> None:
    place(cluster, plain_pod("low", "6"), plain_pod("high", "6", priority=1000))
    assert cluster.get("pods", "high")["status"]["nominatedNodeName"] == "node-1"
    r = cluster.http.patch("/api/v1/nodes/node-1", json={"spec": {"unschedulable": True}},
                           headers={"Content-Type": "application/merge-patch+json"})
    assert r.status_code == 200, r.text
    cluster.settle()  # a Node change: tried again; no node is worth preempting on, so the nomination goes
    high = cluster.get("pods", "high")
    cordoned = (f"0/1 nodes are available: 1 node(s) were unschedulable. {NO_CLAIMS}, preemption: "
                "0/1 nodes are available: 1 Preemption is not helpful for scheduling.")
    assert history(cluster, "high") == [("FailedScheduling", FIT_ERROR), ("FailedScheduling", cordoned)]
    assert "nominatedNodeName" not in high["status"]


def test_a_waiting_preemptor_keeps_the_room_of_its_nomination_from_lower_priority_pods(cluster: Cluster) -> None:
    place(cluster, plain_pod("low", "4"), plain_pod("high", "6", priority=1000))
    cluster.post(f"{NS}/pods", plain_pod("small", "3", priority=50))  # would fit beside low, not beside high
    cluster.settle()
    small = cluster.get("pods", "small")
    assert "nodeName" not in small["spec"]
    assert history(cluster, "small") == [("FailedScheduling", f"{FIT_ERROR} {NO_CLAIMS}, preemption: 0/1 nodes "
                                                              "are available: 1 Insufficient cpu.")]
    after(cluster, 31)
    assert cluster.get("pods", "high")["spec"]["nodeName"] == "node-1"


def test_a_preemptor_takes_the_nomination_of_a_waiting_lower_priority_pod(cluster: Cluster) -> None:
    place(cluster, plain_pod("low", "6"), plain_pod("middle", "6", priority=50))
    assert cluster.get("pods", "middle")["status"]["nominatedNodeName"] == "node-1"
    cluster.post(f"{NS}/pods", plain_pod("high", "6", priority=1000))
    cluster.settle()
    assert cluster.get("pods", "high")["status"]["nominatedNodeName"] == "node-1"
    assert "nominatedNodeName" not in cluster.get("pods", "middle")["status"]
    assert len(cluster.events("Preempted")) == 1  # low, terminating already, is not preempted again


def test_a_pod_that_may_not_preempt_is_told_so_and_keeps_its_nomination(cluster: Cluster) -> None:
    cluster.post(f"{NS}/pods", plain_pod("low", "8"))
    cluster.settle()
    never = plain_pod("polite", "8")
    never["spec"]["priorityClassName"] = cluster.priority_class(1000, "Never")
    cluster.post(f"{NS}/pods", never)
    cluster.settle()
    assert history(cluster, "polite") == [
        ("FailedScheduling", f"{FIT_ERROR} {NO_CLAIMS}, preemption: not eligible due to preemptionPolicy=Never.")]
    assert cluster.events("Preempted") == []


def test_an_unschedulable_pod_is_tried_again_at_the_first_flush_tick_after_five_minutes(cluster: Cluster) -> None:
    cluster.post(f"{NS}/pods", plain_pod("big", "16"))
    cluster.settle()
    (event,) = cluster.events("FailedScheduling")
    assert event["count"] == 1
    loop = cluster.manager.scheduler
    start = loop.started
    # The pool is flushed every 30 s from the scheduler's start, of pods waiting longer than 5 minutes:
    # the pod failed within the first seconds, so the tick at 330 s is the first to take it.
    assert loop.next_due == start + 330
    loop.clock = lambda: start + 320
    assert cluster.manager.run_once(force=False) is False
    assert cluster.events("FailedScheduling")[0]["count"] == 1
    loop.clock = lambda: start + 331
    cluster.settle()
    (event,) = cluster.events("FailedScheduling")  # the same message again: the recorder counts it
    assert event["count"] == 2
    assert loop.next_due == start + 660  # back in the pool, from this attempt on


def merge_patch(cluster: Cluster, path: str, body: dict[str, Any]) -> None:
    r = cluster.http.patch(path, json=body, headers={"Content-Type": "application/merge-patch+json"})
    assert r.status_code == 200, r.text


def test_a_waiting_pod_is_not_tried_again_for_a_change_to_its_status_or_annotations(cluster: Cluster) -> None:
    cluster.post(f"{NS}/pods", plain_pod("big", "16"))
    cluster.settle()
    merge_patch(cluster, f"{NS}/pods/big", {"metadata": {"annotations": {"note": "still waiting"}}})
    merge_patch(cluster, f"{NS}/pods/big/status", {"status": {"conditions": [
        {"type": "Custom", "status": "True"}]}})
    cluster.settle()
    (event,) = cluster.events("FailedScheduling")
    assert event["count"] == 1


def test_a_waiting_pod_given_the_toleration_it_lacked_is_tried_again_and_scheduled(cluster: Cluster) -> None:
    merge_patch(cluster, "/api/v1/nodes/node-1", {"spec": {"taints": [
        {"key": "dedicated", "value": "ml", "effect": "NoSchedule"}]}})
    cluster.post(f"{NS}/pods", plain_pod("trainer", "1"))
    cluster.settle()
    assert history(cluster, "trainer") == [("FailedScheduling", "0/1 nodes are available: 1 node(s) had "
                                            f"untolerated taint(s). {NO_CLAIMS}, preemption: 0/1 nodes are "
                                            "available: 1 Preemption is not helpful for scheduling.")]
    merge_patch(cluster, f"{NS}/pods/trainer", {"spec": {"tolerations": [
        {"key": "dedicated", "operator": "Equal", "value": "ml", "effect": "NoSchedule"}]}})
    cluster.settle()
    assert cluster.get("pods", "trainer")["spec"]["nodeName"] == "node-1"


def test_a_running_pods_status_report_does_not_retry_waiting_pods_but_its_finishing_does(cluster: Cluster) -> None:
    cluster.post(f"{NS}/pods", plain_pod("running", "6"))
    cluster.settle()
    cluster.post(f"{NS}/pods", plain_pod("waiting", "6", priority=0))  # same priority: no preemption
    cluster.settle()
    assert history(cluster, "waiting") == [("FailedScheduling", NO_VICTIMS)]
    merge_patch(cluster, f"{NS}/pods/running/status", {"status": {"phase": "Running", "conditions": [
        {"type": "Ready", "status": "True"}]}})
    merge_patch(cluster, f"{NS}/pods/running", {"metadata": {"labels": {"seen": "yes"}}})
    cluster.settle()
    assert cluster.events("FailedScheduling")[0]["count"] == 1  # nothing that could free room
    merge_patch(cluster, f"{NS}/pods/running/status", {"status": {"phase": "Succeeded"}})
    cluster.settle()
    assert cluster.get("pods", "waiting")["spec"]["nodeName"] == "node-1"


@pytest.mark.parametrize("field", [{"related": "high"}, {"series": {"count": "two"}}])
def test_an_event_whose_related_object_or_series_has_the_wrong_type_is_refused(cluster: Cluster,
                                                                              field: dict[str, Any]) -> None:
    event = {"apiVersion": "v1", "kind": "Event", "metadata": {"name": "low.1", "namespace": "default"},
             "involvedObject": {"kind": "Pod", "namespace": "default", "name": "low"},
             "reason": "Preempted", "message": "Preempted by pod 1 on node node-1", "type": "Normal", **field}
    r = cluster.http.post(f"{NS}/events", json=event)
    assert r.status_code == 400 and r.json()["kind"] == "Status", r.text
