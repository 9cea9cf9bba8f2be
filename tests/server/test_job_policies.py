"""A Job's active deadline, success policy, per-index backoff, suspension and pod replacement policy, through
the Job controller one pass at a time (the workload controllers' clock moved on, never slept through)."""

from __future__ import annotations

import time

from cluster import Cluster
from test_job_tracking import job, running
from test_workload_controllers import BATCH, MERGE, cluster, settle

DEADLINE = ("DeadlineExceeded", "Job was active longer than specified deadline")


def conditions(c: Cluster, name: str = "work") -> list[tuple[str, str, str, str]]:
    status = c.get("jobs", name)["status"]
    return [(x["type"], x["status"], x.get("reason", ""), x.get("message", "")) for x in status.get("conditions", [])]


def test_a_job_active_past_its_deadline_fails_and_its_pods_are_deleted() -> None:
    c = cluster(fake_kubelet=False)
    c.post(f"{BATCH}/jobs", job(completions=3, parallelism=2, activeDeadlineSeconds=30))
    settle(c)
    assert len(running(c)) == 2
    start = time.time()
    assert c.manager.workloads.next_due is not None and c.manager.workloads.next_due <= start + 31
    c.manager.workloads.clock = lambda: start - 1 + 20
    settle(c)
    assert conditions(c) == [] and len(running(c)) == 2  # within its deadline
    c.manager.workloads.clock = lambda: start + 31
    settle(c)
    assert conditions(c) == [("FailureTarget", "True", *DEADLINE), ("Failed", "True", *DEADLINE)]
    assert running(c) == []
    status = c.get("jobs", "work")["status"]
    assert "active" not in status and status["failed"] == 2  # (deleted before they ended: failed)
    [warning] = c.events("DeadlineExceeded")
    assert (warning["type"], warning["message"]) == ("Warning", DEADLINE[1])
    assert c.manager.workloads.next_due is None


def suspend(c: Cluster, value: bool, name: str = "work") -> None:
    c.http.patch(f"{BATCH}/jobs/{name}", json={"spec": {"suspend": value}}, headers=MERGE)
    settle(c)


def at(c: Cluster, seconds: float) -> None:
    c.manager.workloads.clock = lambda: seconds
    settle(c)


def test_a_suspended_job_does_not_run_out_of_time() -> None:
    c = cluster(fake_kubelet=False)
    c.post(f"{BATCH}/jobs", job(activeDeadlineSeconds=30))
    settle(c)
    start = time.time()
    suspend(c, True)
    assert running(c) == [] and c.manager.workloads.next_due is None
    at(c, start + 100)
    assert conditions(c) == [("Suspended", "True", "JobSuspended", "Job suspended")]
    assert "failed" not in c.get("jobs", "work")["status"]  # (suspending deletes its pods uncounted)
    assert [e["message"] for e in c.events("Suspended")] == ["Job suspended"]
    # resumed after its deadline: the deadline is looked at before the start time is reset, as upstream's
    # syncJob does, so the Job fails at once
    suspend(c, False)
    assert conditions(c)[-1] == ("Failed", "True", *DEADLINE)


def test_a_resumed_jobs_deadline_counts_from_its_resumption() -> None:
    c = cluster(fake_kubelet=False)
    c.post(f"{BATCH}/jobs", job(activeDeadlineSeconds=30))
    settle(c)
    start = time.time()
    at(c, start + 10)
    suspend(c, True)
    at(c, start + 20)
    suspend(c, False)
    assert c.get("jobs", "work")["status"]["startTime"] == time.strftime("%Y-%m-%dT%H:%M:%SZ",
                                                                         time.gmtime(int(start + 20)))
    assert conditions(c) == [("Suspended", "False", "JobResumed", "Job resumed")] and len(running(c)) == 1
    assert [e["message"] for e in c.events("Resumed")] == ["Job resumed"]
    at(c, start + 40)  # past the first start's deadline, not the resumption's
    assert conditions(c)[-1][:3] == ("Suspended", "False", "JobResumed") and len(running(c)) == 1
    at(c, start + 51)
    assert conditions(c)[-1] == ("Failed", "True", *DEADLINE)
