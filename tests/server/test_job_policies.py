"""A Job's active deadline, success policy, per-index backoff, suspension and pod replacement policy, through
the Job controller one pass at a time (the workload controllers' clock moved on, never slept through)."""

from __future__ import annotations

import time
from typing import Any

from cluster import Cluster
from hypothesis import given
from hypothesis import strategies as st
from test_job_tracking import end, job, running
from test_workload_controllers import BATCH, MERGE, cluster, pods, settle

from dralloc.server.controllers.job_indexes import format_indexes, parse_indexes
from dralloc.validation.job_policies import index_list_total

INDEX = "batch.kubernetes.io/job-completion-index"
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


def indexed(name: str = "work", completions: int = 3, parallelism: int = 3, **spec: Any) -> dict[str, Any]:
    return job(name, completionMode="Indexed", completions=completions, parallelism=parallelism, **spec)


def by_index(c: Cluster, name: str = "work") -> dict[int, str]:
    """The running pods of the Job by their completion index."""
    return {int(p["metadata"]["labels"][INDEX]): p["metadata"]["name"] for p in pods(c, f"{name}-")
            if p["status"].get("phase") not in ("Succeeded", "Failed")}


def test_an_indexed_jobs_pods_carry_their_index_as_hostname_and_variable() -> None:
    c = cluster(fake_kubelet=False)
    c.post(f"{BATCH}/jobs", indexed(completions=2, parallelism=2))
    settle(c)
    made = {int(p["metadata"]["annotations"][INDEX]): p for p in pods(c, "work-")}
    assert sorted(made) == [0, 1]
    for index, pod in made.items():
        assert pod["metadata"]["name"].startswith(f"work-{index}-") and pod["spec"]["hostname"] == f"work-{index}"
        assert pod["metadata"]["labels"][INDEX] == str(index)
        assert pod["spec"]["containers"][0]["env"][-1] == {"name": "JOB_COMPLETION_INDEX", "valueFrom": {
            "fieldRef": {"apiVersion": "v1", "fieldPath": f"metadata.labels['{INDEX}']"}}}


def test_a_success_policy_met_completes_the_job_and_its_remaining_pods_are_deleted() -> None:
    c = cluster(fake_kubelet=False)
    policy = {"rules": [{"succeededIndexes": "0,2-4", "succeededCount": 4},
                        {"succeededIndexes": "1-3", "succeededCount": 2}]}
    c.post(f"{BATCH}/jobs", indexed(completions=5, parallelism=5, successPolicy=policy))
    settle(c)
    running_now = by_index(c)
    end(c, running_now[0], "Succeeded", 0)
    end(c, running_now[2], "Succeeded", 0)
    settle(c)
    assert conditions(c) == [] and sorted(by_index(c)) == [1, 3, 4]  # rule 0 wants 4 of 0,2,3,4
    end(c, running_now[3], "Succeeded", 0)  # 2 and 3: rule 1 is met (rule 0 still is not)
    settle(c)
    met = ("SuccessPolicy", "Matched rules at index 1")
    assert conditions(c) == [("SuccessCriteriaMet", "True", *met), ("Complete", "True", *met)]
    status = c.get("jobs", "work")["status"]
    assert (status["succeeded"], status["completedIndexes"], status.get("failed", 0)) == (3, "0,2,3", 0)
    assert "completionTime" in status and "active" not in status and by_index(c) == {}
    assert [e["message"] for e in c.events("Completed")] == ["Job completed"]


def test_success_policies_are_checked_as_kube_apiserver_checks_them() -> None:
    c = cluster(fake_kubelet=False)
    cases = [
        (job(successPolicy={"rules": [{"succeededCount": 1}]}),
         'spec.successPolicy: Invalid value: {"rules":[{"succeededCount":1}]}: requires indexed completion mode'),
        (indexed(successPolicy={"rules": []}),
         "spec.successPolicy.rules: Required value: at least one rules must be specified when the successPolicy is "
         "specified"),
        (indexed(successPolicy={"rules": [{}]}),
         "spec.successPolicy.rules[0]: Required value: at least one of succeededCount or succeededIndexes must be "
         "specified"),
        (indexed(successPolicy={"rules": [{"succeededIndexes": "1-1"}]}),
         'spec.successPolicy.rules[0].succeededIndexes: Invalid value: "1-1": error parsing succeededIndexes: '
         "non-increasing order, previous: 1, current: 1"),
        (indexed(successPolicy={"rules": [{"succeededIndexes": "0,3"}]}),
         'spec.successPolicy.rules[0].succeededIndexes: Invalid value: "0,3": error parsing succeededIndexes: '
         'too large index: "3"'),
        (indexed(successPolicy={"rules": [{"succeededIndexes": "0-1-2"}]}),
         'spec.successPolicy.rules[0].succeededIndexes: Invalid value: "0-1-2": error parsing succeededIndexes: '
         "the fragment \"0-1-2\" violates the requirement that an index interval can have at most two parts "
         "separated by '-'"),
        (indexed(successPolicy={"rules": [{"succeededIndexes": "a"}]}),
         'spec.successPolicy.rules[0].succeededIndexes: Invalid value: "a": error parsing succeededIndexes: '
         'cannot convert string to integer for index: "a"'),
        (indexed(successPolicy={"rules": [{"succeededIndexes": "1,0"}]}),
         'spec.successPolicy.rules[0].succeededIndexes: Invalid value: "1,0": error parsing succeededIndexes: '
         "non-increasing order, previous: 1, current: 0"),
        (indexed(successPolicy={"rules": [{"succeededCount": 4}]}),
         "spec.successPolicy.rules[0].succeededCount: Invalid value: 4: must be less than or equal to 3 (the number "
         "of specified completions)"),
        (indexed(successPolicy={"rules": [{"succeededIndexes": "0,1", "succeededCount": 3}]}),
         "spec.successPolicy.rules[0].succeededCount: Invalid value: 3: must be less than or equal to 2 (the number "
         "of indexes in the specified succeededIndexes field)"),
        (indexed(successPolicy={"rules": [{"succeededCount": -1}]}),
         "spec.successPolicy.rules[0].succeededCount: Invalid value: -1: must be greater than or equal to 0"),
        (indexed(successPolicy={"rules": [{"succeededCount": 1}] * 21}),
         "spec.successPolicy.rules: Too many: 21: must have at most 20 items"),
        (job(activeDeadlineSeconds=-1),
         "spec.activeDeadlineSeconds: Invalid value: -1: must be greater than or equal to 0"),
    ]
    for body, message in cases:
        r = c.http.post(f"{BATCH}/jobs", json=body)
        assert r.status_code == 422 and message in r.json()["message"], (message, r.text)
    c.post(f"{BATCH}/jobs", indexed(successPolicy={"rules": [{"succeededCount": 1}]}))
    r = c.http.patch(f"{BATCH}/jobs/work", json={"spec": {"successPolicy": {"rules": [{"succeededCount": 2}]}}},
                     headers=MERGE)
    assert r.status_code == 422 and "spec.successPolicy: Invalid value: " in r.json()["message"] \
        and "field is immutable" in r.json()["message"]


@given(st.sets(st.integers(0, 60)), st.integers(1, 70))
def test_index_lists_read_back_as_written(indexes: set[int], completions: int) -> None:
    text = format_indexes(indexes)
    assert parse_indexes(text, completions) == {i for i in indexes if i < completions}
    if indexes and max(indexes) < completions:  # (kube-apiserver's reading of it agrees)
        assert index_list_total(text, completions) == len(indexes)


FAILURES = "batch.kubernetes.io/job-index-failure-count"


def test_an_index_fails_after_its_own_backoff_limit_and_the_job_fails_with_failed_indexes() -> None:
    c = cluster(fake_kubelet=False)
    c.post(f"{BATCH}/jobs", indexed(backoffLimitPerIndex=1))
    settle(c)
    first = by_index(c)
    assert c.get("pods", first[0])["metadata"]["annotations"][FAILURES] == "0"
    end(c, first[0])
    settle(c)
    second = by_index(c)
    assert sorted(second) == [0, 1, 2] and second[0] != first[0]  # index 0 tried again
    assert c.get("pods", second[0])["metadata"]["annotations"][FAILURES] == "1"
    status = c.get("jobs", "work")["status"]
    assert (status["failed"], status["failedIndexes"]) == (1, "")
    assert "finalizers" not in c.get("pods", first[0])["metadata"]  # (let go of once replaced)
    end(c, second[0])  # its second failure: index 0 has reached its limit
    settle(c)
    assert sorted(by_index(c)) == [1, 2]  # not tried again
    status = c.get("jobs", "work")["status"]
    assert (status["failed"], status["failedIndexes"]) == (2, "0") and conditions(c) == []
    end(c, second[1], "Succeeded", 0)
    end(c, second[2], "Succeeded", 0)
    settle(c)
    failed = ("FailedIndexes", "Job has failed indexes")
    assert conditions(c) == [("FailureTarget", "True", *failed), ("Failed", "True", *failed)]
    status = c.get("jobs", "work")["status"]
    assert (status["succeeded"], status["completedIndexes"], status["failedIndexes"]) == (2, "1,2", "0")


def test_a_fail_index_rule_fails_its_index_at_once_and_max_failed_indexes_fails_the_job() -> None:
    c = cluster(fake_kubelet=False)
    policy = {"rules": [{"action": "FailIndex", "onExitCodes": {"operator": "In", "values": [42]}}]}
    c.post(f"{BATCH}/jobs", indexed(completions=4, parallelism=4, backoffLimitPerIndex=3, maxFailedIndexes=1,
                                    podFailurePolicy=policy))
    settle(c)
    pods_now = by_index(c)
    end(c, pods_now[1], exit_code=42)
    settle(c)
    status = c.get("jobs", "work")["status"]
    assert (status["failedIndexes"], status["failed"]) == ("1", 1) and sorted(by_index(c)) == [0, 2, 3]
    end(c, pods_now[3], exit_code=42)  # a second failed index: more than maxFailedIndexes
    settle(c)
    most = ("MaxFailedIndexesExceeded", "Job has exceeded the specified maximal number of failed indexes")
    assert conditions(c) == [("FailureTarget", "True", *most), ("Failed", "True", *most)]
    status = c.get("jobs", "work")["status"]
    assert status["failedIndexes"] == "1,3" and by_index(c) == {} and status["failed"] == 4  # (0 and 2 deleted)


def test_per_index_backoff_is_checked_as_kube_apiserver_checks_it() -> None:
    c = cluster(fake_kubelet=False)
    fail_index = {"rules": [{"action": "FailIndex", "onExitCodes": {"operator": "In", "values": [42]}}]}
    cases = [
        (job(backoffLimitPerIndex=1), "spec.backoffLimitPerIndex: Invalid value: 1: requires indexed completion mode"),
        (indexed(maxFailedIndexes=1),
         "spec.backoffLimitPerIndex: Required value: when maxFailedIndexes is specified"),
        (indexed(backoffLimitPerIndex=1, maxFailedIndexes=4),
         "spec.maxFailedIndexes: Invalid value: 4: must be less than or equal to completions"),
        (indexed(backoffLimitPerIndex=-1),
         "spec.backoffLimitPerIndex: Invalid value: -1: must be greater than or equal to 0"),
        (indexed(podFailurePolicy=fail_index),
         'spec.podFailurePolicy.rules[0].action: Invalid value: "FailIndex": requires the backoffLimitPerIndex to '
         "be set"),
        (job(podReplacementPolicy="Sometimes"),
         'spec.podReplacementPolicy: Unsupported value: "Sometimes": supported values: "Failed", '
         '"TerminatingOrFailed"'),
    ]
    for body, message in cases:
        r = c.http.post(f"{BATCH}/jobs", json=body)
        assert r.status_code == 422 and message in r.json()["message"], (message, r.text)


def graceful_job(name: str, **spec: Any) -> dict[str, Any]:
    body = job(name, **spec)
    body["spec"]["template"]["spec"]["terminationGracePeriodSeconds"] = 30  # (terminating for a while)
    return body


def test_only_failed_pods_are_replaced_with_the_failed_replacement_policy() -> None:
    c = cluster(fake_kubelet=False)
    c.post(f"{BATCH}/jobs", graceful_job("eager"))
    c.post(f"{BATCH}/jobs", graceful_job("patient", podReplacementPolicy="Failed"))
    settle(c)
    first = {name: running(c, f"{name}-")[0] for name in ("eager", "patient")}
    for pod in first.values():
        assert c.http.delete(f"/api/v1/namespaces/default/pods/{pod}").status_code == 200
    settle(c)
    eager, patient = c.get("jobs", "eager")["status"], c.get("jobs", "patient")["status"]
    # TerminatingOrFailed: a pod being deleted is replaced at once, and counted failed
    assert (eager["active"], eager["terminating"], eager["failed"]) == (1, 1, 1)
    # Failed: it is not replaced (nor counted) while it terminates
    assert ("active" in patient, patient["terminating"], "failed" in patient) == (False, 1, False)
    assert running(c, "patient-") == []
    c.manager.terminating.clock = lambda: time.time() + 31  # its grace period is over: it failed
    settle(c)
    patient = c.get("jobs", "patient")["status"]
    assert (patient["active"], patient["terminating"], patient["failed"]) == (1, 0, 1)
    assert running(c, "patient-") != [] and first["patient"] not in running(c, "patient-")


def test_a_failed_jobs_final_condition_waits_for_its_terminating_pods() -> None:
    c = cluster(fake_kubelet=False)
    c.post(f"{BATCH}/jobs", graceful_job("work", parallelism=2, completions=2, activeDeadlineSeconds=10))
    settle(c)
    start = time.time()
    at(c, start + 11)
    status = c.get("jobs", "work")["status"]
    assert conditions(c) == [("FailureTarget", "True", *DEADLINE)] and status["terminating"] == 2
    assert [e["reason"] for e in c.events("DeadlineExceeded")] == []  # (recorded with the final condition)
    c.manager.terminating.clock = lambda: time.time() + 31
    settle(c)
    assert conditions(c) == [("FailureTarget", "True", *DEADLINE), ("Failed", "True", *DEADLINE)]
    assert c.get("jobs", "work")["status"]["terminating"] == 0 and len(c.events("DeadlineExceeded")) == 1


def _with_restart(body: dict[str, Any], policy: str) -> dict[str, Any]:
    body["spec"]["template"]["spec"]["restartPolicy"] = policy
    return body


def test_a_pod_failure_policy_is_checked_as_kube_apiserver_checks_it() -> None:
    c = cluster(fake_kubelet=False)

    def failing(*rules: dict[str, Any], restart: str = "Never") -> dict[str, Any]:
        return _with_restart(job(podFailurePolicy={"rules": list(rules)}), restart)

    on_exit = {"operator": "In", "values": [1]}
    cases = [
        (failing({"action": "FailJob", "onExitCodes": on_exit}, restart="OnFailure"),
         'spec.template.spec.restartPolicy: Invalid value: "OnFailure": only "Never" is supported when '
         "podFailurePolicy is specified"),
        (failing({"onExitCodes": on_exit}),
         'spec.podFailurePolicy.rules[0].action: Required value: valid values: ["Count" "FailIndex" "FailJob" '
         '"Ignore"]'),
        (failing({"action": "Restart", "onExitCodes": on_exit}),
         'spec.podFailurePolicy.rules[0].action: Unsupported value: "Restart": supported values: "Count", '
         '"FailIndex", "FailJob", "Ignore"'),
        (failing({"action": "FailJob"}),
         "spec.podFailurePolicy.rules[0]: Invalid value: specifying one of OnExitCodes and OnPodConditions is "
         "required"),
        (failing({"action": "FailJob", "onExitCodes": on_exit,
                  "onPodConditions": [{"type": "DisruptionTarget", "status": "True"}]}),
         "spec.podFailurePolicy.rules[0]: Invalid value: specifying both OnExitCodes and OnPodConditions is not "
         "supported"),
        (failing({"action": "FailJob", "onExitCodes": {"values": [1]}}),
         'spec.podFailurePolicy.rules[0].onExitCodes.operator: Required value: valid values: ["In" "NotIn"]'),
        (failing({"action": "FailJob", "onExitCodes": {"operator": "In", "values": [0, 3, 3, 2]}}),
         "spec.podFailurePolicy.rules[0].onExitCodes.values[0]: Invalid value: 0: must not be 0 for the In operator"),
        (failing({"action": "FailJob", "onExitCodes": {"operator": "In", "values": [0, 3, 3, 2]}}),
         "spec.podFailurePolicy.rules[0].onExitCodes.values[2]: Duplicate value: 3"),
        (failing({"action": "FailJob", "onExitCodes": {"operator": "NotIn", "values": [3, 2]}}),
         "spec.podFailurePolicy.rules[0].onExitCodes.values: Invalid value: [3,2]: must be ordered"),
        (failing({"action": "FailJob", "onExitCodes": {"operator": "NotIn", "values": []}}),
         "spec.podFailurePolicy.rules[0].onExitCodes.values: Invalid value: []: at least one value is required"),
        (failing({"action": "FailJob", "onExitCodes": {"containerName": "other", "operator": "In", "values": [1]}}),
         'spec.podFailurePolicy.rules[0].onExitCodes.containerName: Invalid value: "other": must be one of the '
         "container or initContainer names in the pod template"),
        (failing({"action": "Ignore", "onPodConditions": [{"type": "Disruption Target", "status": "Maybe"}]}),
         'spec.podFailurePolicy.rules[0].onPodConditions[0].status: Unsupported value: "Maybe": supported values: '
         '"False", "True", "Unknown"'),
        (failing({"action": "Ignore", "onPodConditions": [{"type": "Disruption Target", "status": "True"}]}),
         'spec.podFailurePolicy.rules[0].onPodConditions[0].type: Invalid value: "Disruption Target": name part '
         "must consist of alphanumeric characters"),
        (failing(*[{"action": "Count", "onExitCodes": on_exit}] * 21),
         "spec.podFailurePolicy.rules: Too many: 21: must have at most 20 items"),
    ]
    for body, message in cases:
        r = c.http.post(f"{BATCH}/jobs", json=body)
        assert r.status_code == 422 and message in r.json()["message"], (message, r.text)
    good = failing({"action": "FailJob", "onExitCodes": {"containerName": job()["spec"]["template"]["spec"][
        "containers"][0]["name"], "operator": "NotIn", "values": [0, 1, 2]}},
        {"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget", "status": "True"}]})
    assert c.http.post(f"{BATCH}/jobs", json=good).status_code == 201
    # (a pattern's status defaults to True before validation: SetDefaults_Job)
    unset = failing({"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}]})
    unset["metadata"]["name"] = "unset"
    r = c.http.post(f"{BATCH}/jobs", json=unset)
    assert r.status_code == 201, r.text
    assert r.json()["spec"]["podFailurePolicy"]["rules"][0]["onPodConditions"] == [
        {"type": "DisruptionTarget", "status": "True"}]
