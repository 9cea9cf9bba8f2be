"""Jobs count their pods' ends with the job-tracking finalizer, fail after backoffLimit failures, and follow
their pod failure policy (FailJob, Ignore, Count), one controller pass at a time."""

from __future__ import annotations

from typing import Any

from cluster import Cluster
from test_workload_controllers import BATCH, cluster, pods, settle, workload

FINALIZER = "batch.kubernetes.io/job-tracking"


def job(name: str = "work", restart: str = "Never", **spec: Any) -> dict[str, Any]:
    body = workload("Job", name, **spec)
    del body["spec"]["template"]["metadata"]
    body["spec"]["template"]["spec"]["restartPolicy"] = restart
    return body


def end(c: Cluster, name: str, phase: str = "Failed", exit_code: int = 1, **status: Any) -> None:
    """What the kubelet writes when the pod's container ends (straight to the store)."""
    def mutate(pod: dict[str, Any]) -> dict[str, Any]:
        pod["status"] = {**pod.get("status", {}), "phase": phase, "containerStatuses": [
            {"name": "main", "ready": False, "restartCount": 0, "image": "nginx:1", "imageID": "",
             "state": {"terminated": {"exitCode": exit_code, "reason": "Error"}}}], **status}
        return pod
    c.manager.writer.update("pods", "default", name, mutate)


def running(c: Cluster, prefix: str = "work-") -> list[str]:
    return sorted(p["metadata"]["name"] for p in pods(c, prefix) if p["status"].get("phase") not in ("Succeeded", "Failed"))


def test_pods_carry_the_tracking_finalizer_until_their_end_is_counted() -> None:
    c = cluster(fake_kubelet=False)
    c.post(f"{BATCH}/jobs", job(completions=2, parallelism=2))
    settle(c)
    made = pods(c, "work-")
    assert len(made) == 2 and all(p["metadata"]["finalizers"] == [FINALIZER] for p in made)
    first = made[0]["metadata"]["name"]
    end(c, first, "Succeeded", 0)
    settle(c)
    assert "finalizers" not in c.get("pods", first)["metadata"]
    status = c.get("jobs", "work")["status"]
    assert status["succeeded"] == 1 and status["uncountedTerminatedPods"] == {}
    assert c.http.delete(f"/api/v1/namespaces/default/pods/{first}").status_code == 200
    settle(c)
    assert c.get("jobs", "work")["status"]["succeeded"] == 1  # counted, though the pod is gone
    assert len(running(c)) == 1  # and not made again


def test_failures_count_towards_the_backoff_limit() -> None:
    c = cluster(fake_kubelet=False)
    c.post(f"{BATCH}/jobs", job(backoffLimit=1))
    settle(c)
    end(c, running(c)[0])
    settle(c)
    assert c.get("jobs", "work")["status"]["failed"] == 1 and len(running(c)) == 1  # replaced
    end(c, running(c)[0])
    settle(c)
    status = c.get("jobs", "work")["status"]
    assert status["failed"] == 2 and "active" not in status
    assert [(x["type"], x["reason"], x["message"]) for x in status["conditions"]] == [
        ("FailureTarget", "BackoffLimitExceeded", "Job has reached the specified backoff limit"),
        ("Failed", "BackoffLimitExceeded", "Job has reached the specified backoff limit")]
    [warning] = c.events("BackoffLimitExceeded")
    assert warning["type"] == "Warning" and warning["message"] == "Job has reached the specified backoff limit"
    assert all("finalizers" not in p["metadata"] for p in pods(c, "work-"))


def test_a_pod_deleted_before_it_ended_counts_as_failed() -> None:
    c = cluster(fake_kubelet=False)
    c.post(f"{BATCH}/jobs", job())
    settle(c)
    [name] = running(c)
    assert c.http.delete(f"/api/v1/namespaces/default/pods/{name}").status_code == 200
    settle(c)
    assert c.get("jobs", "work")["status"]["failed"] == 1
    assert len(running(c)) == 1 and name not in running(c)


def test_restarts_of_an_on_failure_job_count_against_its_backoff_limit() -> None:
    c = cluster(fake_kubelet=False)
    c.post(f"{BATCH}/jobs", job(restart="OnFailure", backoffLimit=2))
    settle(c)

    def restarted(pod: dict[str, Any]) -> dict[str, Any]:
        pod["status"] = {**pod["status"], "phase": "Running", "containerStatuses": [
            {"name": "main", "restartCount": 2, "ready": False, "image": "nginx:1", "imageID": "", "state": {}}]}
        return pod
    c.manager.writer.update("pods", "default", running(c)[0], restarted)
    settle(c)
    assert [x["reason"] for x in c.get("jobs", "work")["status"]["conditions"]] == ["BackoffLimitExceeded"] * 2


def test_a_fail_job_rule_fails_the_job_with_its_message() -> None:
    c = cluster(fake_kubelet=False)
    policy = {"rules": [{"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}]},
                        {"action": "FailJob", "onExitCodes": {"containerName": "main", "operator": "In",
                                                              "values": [42]}},
                        {"action": "Count", "onExitCodes": {"operator": "NotIn", "values": [0]}}]}
    c.post(f"{BATCH}/jobs", job(podFailurePolicy=policy, backoffLimit=3))
    settle(c)
    end(c, running(c)[0], exit_code=7)  # Count
    settle(c)
    assert c.get("jobs", "work")["status"]["failed"] == 1
    disrupted = running(c)[0]
    end(c, disrupted, exit_code=7, conditions=[{"type": "DisruptionTarget", "status": "True"}])  # Ignore
    settle(c)
    assert c.get("jobs", "work")["status"]["failed"] == 1 and len(running(c)) == 1
    victim = running(c)[0]
    end(c, victim, exit_code=42)  # FailJob
    settle(c)
    message = f"Container main for pod default/{victim} failed with exit code 42 matching FailJob rule at index 1"
    status = c.get("jobs", "work")["status"]
    assert [(x["type"], x["reason"], x["message"]) for x in status["conditions"]] == [
        ("FailureTarget", "PodFailurePolicy", message), ("Failed", "PodFailurePolicy", message)]
    assert [e["message"] for e in c.events("PodFailurePolicy")] == [message]


def test_a_deleted_jobs_pods_are_let_go_of() -> None:
    c = cluster(fake_kubelet=False)
    c.post(f"{BATCH}/jobs", job(completions=2, parallelism=2))
    settle(c)
    assert len(running(c)) == 2
    assert c.http.delete(f"{BATCH}/jobs/work?propagationPolicy=Background").status_code == 200
    settle(c)
    c.manager.terminating.clock = lambda: 10.0 ** 10  # the grace periods are over
    settle(c)
    assert pods(c, "work-") == [] and [p for p in c.pods() if p["metadata"]["name"].startswith("work-")] == []
