"""The CronJob controller on the workload controllers' (fake) clock: a Job per schedule time named by its
minutes since the epoch, concurrency policies, suspend, the starting deadline, history limits, time zones and
its events, one controller pass at a time."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from cluster import Cluster
from test_workload_controllers import BATCH, MERGE, cluster, settle

MINUTE = 60


def cron_job(name: str = "tick", schedule: str = "*/5 * * * *", **spec: Any) -> dict[str, Any]:
    template = {"spec": {"template": {"spec": {"containers": [{"name": "main", "image": "busybox:1"}],
                                               "restartPolicy": "OnFailure", "terminationGracePeriodSeconds": 0}}}}
    return {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": name},
            "spec": {"schedule": schedule, "jobTemplate": template, **spec}}


def created_at(c: Cluster, name: str = "tick") -> float:
    stamp = c.get("cronjobs", name)["metadata"]["creationTimestamp"]
    return datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC).timestamp()


def next_boundary(t: float, minutes: int) -> float:
    """The first multiple of ``minutes`` after ``t`` (what */minutes fires at)."""
    return (int(t) // (minutes * MINUTE) + 1) * minutes * MINUTE


def at(c: Cluster, when: float) -> None:
    c.manager.workloads.clock = lambda: when
    settle(c)


def jobs(c: Cluster) -> list[dict[str, Any]]:
    return sorted(c.store.list("jobs")[0], key=lambda j: j["metadata"]["name"])


def messages(c: Cluster, reason: str) -> list[str]:
    """The CronJobs' events of this reason."""
    return [e["message"] for e in c.events(reason) if e["involvedObject"]["kind"] == "CronJob"]


def test_a_job_is_made_when_the_clock_passes_the_schedule_time() -> None:
    c = cluster()
    cron = c.post(f"{BATCH}/cronjobs", cron_job())
    settle(c)
    fire = next_boundary(created_at(c), 5)
    at(c, fire - 1)
    assert jobs(c) == []
    assert c.manager.workloads.next_due == fire + 0.1  # synced again at the schedule time
    at(c, fire + 2)
    [job] = jobs(c)
    name = f"tick-{int(fire) // 60}"
    assert job["metadata"]["name"] == name
    assert job["metadata"]["ownerReferences"] == [{"apiVersion": "batch/v1", "kind": "CronJob", "name": "tick",
                                                   "uid": cron["metadata"]["uid"], "controller": True,
                                                   "blockOwnerDeletion": True}]
    stamp = datetime.fromtimestamp(fire, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    assert job["metadata"]["annotations"] == {"batch.kubernetes.io/cronjob-scheduled-timestamp": stamp}
    assert job["spec"]["selector"]["matchLabels"] == {"batch.kubernetes.io/controller-uid": job["metadata"]["uid"]}
    assert messages(c, "SuccessfulCreate")[0] == f"Created job {name}"
    # the fake kubelet ran it to completion: it leaves the active list, the last success is noted
    status = c.get("cronjobs", "tick")["status"]
    assert status["lastScheduleTime"] == stamp and "active" not in status
    assert status["lastSuccessfulTime"] == c.get("jobs", name)["status"]["completionTime"]
    assert messages(c, "SawCompletedJob") == [f"Saw completed job: {name}, condition: Complete"]
    at(c, fire + 3)
    assert len(jobs(c)) == 1  # a schedule time gets one Job


def test_missed_times_make_one_job_for_the_most_recent_and_a_deadline_can_skip_it() -> None:
    c = cluster()
    c.post(f"{BATCH}/cronjobs", cron_job())
    c.post(f"{BATCH}/cronjobs", cron_job("strict", startingDeadlineSeconds=30))
    settle(c)
    fire = next_boundary(created_at(c), 5)
    at(c, fire + 11 * MINUTE)  # three times passed: 0, 5, 10 minutes after the first
    # one Job, for the latest; the strict one looks back 30 s only and finds no time to run
    assert [j["metadata"]["name"] for j in jobs(c)] == [f"tick-{int(fire) // 60 + 10}"]
    assert "lastScheduleTime" not in c.get("cronjobs", "strict")["status"]
    at(c, fire + 15 * MINUTE + 10)  # within its deadline
    assert f"strict-{int(fire) // 60 + 15}" in [j["metadata"]["name"] for j in jobs(c)]


def test_forbid_waits_for_the_active_job_and_replace_deletes_it() -> None:
    c = cluster(fake_kubelet=False)  # the Jobs' pods never finish
    c.post(f"{BATCH}/cronjobs", cron_job("forbid", concurrencyPolicy="Forbid"))
    c.post(f"{BATCH}/cronjobs", cron_job("replace", concurrencyPolicy="Replace"))
    c.post(f"{BATCH}/cronjobs", cron_job("allow"))
    settle(c)
    fire = next_boundary(created_at(c, "allow"), 5)
    at(c, fire + 1)
    at(c, fire + 5 * MINUTE + 1)
    names = [j["metadata"]["name"] for j in jobs(c)]
    first, second = int(fire) // 60, int(fire) // 60 + 5
    assert names == [f"allow-{first}", f"allow-{second}", f"forbid-{first}", f"replace-{second}"]
    assert messages(c, "JobAlreadyActive") == [
        "Not starting job because prior execution is running and concurrency policy is Forbid"]
    assert f"Deleted job replace-{first}" in messages(c, "SuccessfulDelete")
    active = [r["name"] for r in c.get("cronjobs", "allow")["status"]["active"]]
    assert active == [f"allow-{first}", f"allow-{second}"]


def test_a_suspended_cronjob_makes_nothing_and_history_limits_delete_the_oldest() -> None:
    c = cluster()
    c.post(f"{BATCH}/cronjobs", cron_job("paused", suspend=True))
    c.post(f"{BATCH}/cronjobs", cron_job("kept", schedule="* * * * *", successfulJobsHistoryLimit=2))
    settle(c)
    start = next_boundary(created_at(c, "kept"), 1)
    for minute in range(4):
        at(c, start + minute * MINUTE + 1)
    kept = [j["metadata"]["name"] for j in jobs(c)]
    assert kept == [f"kept-{int(start) // 60 + 2}", f"kept-{int(start) // 60 + 3}"]
    assert f"Deleted job kept-{int(start) // 60}" in messages(c, "SuccessfulDelete")
    r = c.http.patch(f"{BATCH}/cronjobs/paused", json={"spec": {"suspend": False}}, headers=MERGE)
    assert r.status_code == 200
    at(c, start + 4 * MINUTE + 1)
    assert any(j["metadata"]["name"].startswith("paused-") for j in jobs(c))


def test_a_time_zone_sets_when_it_fires_and_a_bad_one_is_reported() -> None:
    c = cluster()
    c.post(f"{BATCH}/cronjobs", cron_job("ny", schedule="0 9 * * *", timeZone="America/New_York"))
    c.post(f"{BATCH}/cronjobs", cron_job("nowhere", timeZone="Europe/Paris"))

    def unknown_here(old: dict[str, Any], rv: str) -> dict[str, Any]:
        # a zone kube-apiserver's time zone database knew and this controller's does not (kube-apiserver
        # refuses a zone it cannot load itself)
        return {**old, "metadata": {**old["metadata"], "resourceVersion": rv},
                "spec": {**old["spec"], "timeZone": "Mars/Olympus"}}

    c.store.update("cronjobs", "default", "nowhere", unknown_here)
    settle(c)
    assert messages(c, "UnknownTimeZone") == ['invalid timeZone: "Mars/Olympus": unknown time zone Mars/Olympus']
    due = c.manager.workloads.wake_at[c.get("cronjobs", "ny")["metadata"]["uid"]]
    fires = datetime.fromtimestamp(due - 0.1, UTC)
    assert (fires.minute, fires.second) == (0, 0) and fires.hour in (13, 14)  # 9:00 in New York
    at(c, due)
    [job] = [j for j in jobs(c) if j["metadata"]["name"].startswith("ny-")]
    stamp = job["metadata"]["annotations"]["batch.kubernetes.io/cronjob-scheduled-timestamp"]
    assert stamp.startswith(fires.strftime("%Y-%m-%dT0")) and stamp[10:19] == "T09:00:00" and stamp[19:] in (
        "-05:00", "-04:00")


def test_jobs_it_did_not_make_are_reported_and_missing_ones_leave_the_active_list() -> None:
    c = cluster(fake_kubelet=False)
    cron = c.post(f"{BATCH}/cronjobs", cron_job())
    manual = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {
        "name": "tick-manual", "annotations": {"cronjob.kubernetes.io/instantiate": "manual"},
        "ownerReferences": [{"apiVersion": "batch/v1", "kind": "CronJob", "name": "tick",
                             "uid": cron["metadata"]["uid"], "controller": True}]},
        "spec": cron_job()["spec"]["jobTemplate"]["spec"]}
    c.post(f"{BATCH}/jobs", manual)  # what `kubectl create job --from=cronjob/tick` makes
    settle(c)
    assert messages(c, "UnexpectedJob") == ["Saw a job that the controller did not create or forgot: tick-manual"]
    fire = next_boundary(created_at(c), 5)
    at(c, fire + 1)
    name = f"tick-{int(fire) // 60}"
    assert c.http.delete(f"{BATCH}/jobs/{name}").status_code == 200
    at(c, fire + 2)
    assert messages(c, "MissingJob") == [f"Active job went missing: {name}"]
    assert "active" not in c.get("cronjobs", "tick")["status"]
