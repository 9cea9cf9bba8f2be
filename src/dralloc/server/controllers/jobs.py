"""The Job controller of ``dralloc serve``: up to ``parallelism`` active pods and no more than the completions
left (``<job>-`` + 5 characters; Indexed Jobs ``<job>-<index>-`` for their lowest missing indexes, with the
completion-index annotation and label), until ``completions`` pods succeeded (a Job without completions: one,
and none active) — then the SuccessCriteriaMet and Complete conditions and the completion time — or more than
``backoffLimit`` failed — then FailureTarget and Failed, and its active pods deleted. A suspended Job deletes
its active pods. Its status counts active, ready, succeeded and failed pods, as ``kubectl wait
--for=condition=complete`` and the job columns read them.

The job-tracking finalizer is not put on pods (they are counted as long as they exist); pod failure and success
policies, per-index backoff and active deadlines are left out.

With ``--fake-kubelet`` the containers of a running Job pod end at once, successfully (:func:`finish_pods`):
a Job completes as soon as its pods are bound."""

from __future__ import annotations

from typing import Any

from dralloc.controllers.workloads import JOB_COMPLETION_INDEX, job_pod_generate_name
from dralloc.server.clock import now
from dralloc.server.controllers.snapshot import Snapshot
from dralloc.server.controllers.workload_pods import (
    Obj,
    PodControl,
    condition,
    is_active,
    is_ready,
    meta,
    pod_from_template,
    spec_of,
    status_of,
    write_status,
)
from dralloc.server.controllers.writes import Writer

COMPLETE = ("CompletionsReached", "Reached expected number of succeeded pods")
BACKOFF = ("BackoffLimitExceeded", "Job has reached the specified backoff limit")


def _int(value: Any, default: int) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def compressed_indexes(indexes: set[int]) -> str:
    """The ``completedIndexes`` form: sorted, runs of three or more as ``first-last`` (``1,3-5,7``)."""
    runs: list[list[int]] = []
    for i in sorted(indexes):
        if runs and runs[-1][1] == i - 1:
            runs[-1][1] = i
        else:
            runs.append([i, i])
    return ",".join(f"{a}" if a == b else f"{a},{b}" if b == a + 1 else f"{a}-{b}" for a, b in runs)


def _index(pod: Obj) -> int | None:
    try:
        return int((meta(pod).get("annotations") or {}).get(JOB_COMPLETION_INDEX, ""))
    except ValueError:
        return None


def _finished(job: Obj) -> bool:
    return any(isinstance(c, dict) and c.get("type") in ("Complete", "Failed") and c.get("status") == "True"
               for c in status_of(job).get("conditions") or [])


COMPONENT = "job-controller"


def sync_job(control: PodControl, job: Obj, pods: list[Obj]) -> bool:
    if _finished(job):
        return False
    spec, old = spec_of(job), status_of(job)
    indexed = spec.get("completionMode") == "Indexed"
    active = [p for p in pods if is_active(p)]
    succeeded_pods = [p for p in pods if status_of(p).get("phase") == "Succeeded"]
    succeeded = max(len(succeeded_pods), _int(old.get("succeeded"), 0))
    failed = max(sum(1 for p in pods if status_of(p).get("phase") == "Failed"), _int(old.get("failed"), 0))
    completions = spec.get("completions") if isinstance(spec.get("completions"), int) else None
    done_indexes = {i for p in succeeded_pods if (i := _index(p)) is not None}
    if indexed and completions is not None:
        succeeded = len({i for i in done_indexes if i < completions})
    conditions = list(old.get("conditions") or [])
    status: Obj = {}
    changed = False

    def gone(pod: Obj) -> bool:
        return control.delete(job, pod, COMPONENT)

    complete = succeeded >= completions if completions is not None else succeeded > 0 and not active
    if complete or failed > _int(spec.get("backoffLimit"), 6):
        for pod in active:
            changed |= gone(pod)
        first, last, why = ("SuccessCriteriaMet", "Complete", COMPLETE) if complete else \
            ("FailureTarget", "Failed", BACKOFF)
        conditions = [c for c in conditions if isinstance(c, dict) and c.get("type") not in (first, last)]
        conditions += [condition(first, "True", *why, []), condition(last, "True", *why, [])]
        if complete:
            status["completionTime"] = now()
            control.event(job, "Completed", "Job completed", COMPONENT)
        else:
            control.event(job, BACKOFF[0], BACKOFF[1], COMPONENT, type_="Warning")
        active = []
    elif spec.get("suspend") is True:
        for pod in active:
            changed |= gone(pod)
        active = []
        if not any(c.get("type") == "Suspended" for c in conditions if isinstance(c, dict)):
            conditions.append(condition("Suspended", "True", "JobSuspended", "Job suspended", []))
    else:
        conditions = [c for c in conditions if not (isinstance(c, dict) and c.get("type") == "Suspended")]
        parallelism = max(_int(spec.get("parallelism"), 1), 0)
        want = parallelism if completions is None else min(parallelism, max(completions - succeeded, 0))
        missing = max(want - len(active), 0)
        template = spec.get("template") or {}
        name = str(meta(job).get("name"))
        if indexed and completions is not None:
            taken = done_indexes | {i for p in active if (i := _index(p)) is not None}
            for index in [i for i in range(completions) if i not in taken][:missing]:
                pod = pod_from_template(template, job, generate_name=job_pod_generate_name(name, index),
                                        labels={JOB_COMPLETION_INDEX: str(index)},
                                        annotations={JOB_COMPLETION_INDEX: str(index)})
                changed |= control.create(job, pod, COMPONENT)
        else:
            for _ in range(missing):
                changed |= control.create(job, pod_from_template(template, job, generate_name=f"{name}-"), COMPONENT)
    start = old.get("startTime") or (now() if active or changed else None)
    full: Obj = {}
    if conditions:
        full["conditions"] = conditions
    if start:
        full["startTime"] = start
    if status.get("completionTime"):
        full["completionTime"] = status["completionTime"]
    # (active and failed are omitted when 0; succeeded too; ready and terminating are always there)
    counts = {"active": len(active), "succeeded": succeeded, "failed": failed}
    full.update({k: v for k, v in counts.items() if v})
    full["terminating"] = sum(1 for p in pods if meta(p).get("deletionTimestamp"))
    if indexed and done_indexes:
        full["completedIndexes"] = compressed_indexes(done_indexes)
    full["uncountedTerminatedPods"] = {}
    full["ready"] = sum(1 for p in active if is_ready(p))
    return write_status(control.writer, "jobs", job, full) or changed


def finish_pods(writer: Writer, snap: Snapshot, jobs: set[str]) -> bool:
    """``--fake-kubelet``: the running pods of the Jobs ``jobs`` (uids) end, successfully, at once."""
    finished = False
    for pod in snap.pods:
        owner = next((r for r in meta(pod).get("ownerReferences") or []
                      if isinstance(r, dict) and r.get("controller") is True and r.get("kind") == "Job"), None)
        if owner is None or str(owner.get("uid")) not in jobs or status_of(pod).get("phase") != "Running" \
                or meta(pod).get("deletionTimestamp"):
            continue
        writer.update("pods", meta(pod).get("namespace") or "default", meta(pod).get("name") or "", _succeeded,
                      uid=meta(pod).get("uid"))
        finished = True
    return finished


def _succeeded(pod: Obj) -> Obj | None:
    status = pod.setdefault("status", {})
    if status.get("phase") != "Running":
        return None
    stamp = now()
    status["phase"] = "Succeeded"
    for c in status.get("conditions") or []:
        if isinstance(c, dict) and c.get("type") in ("Ready", "ContainersReady"):
            c.update({"status": "False", "reason": "PodCompleted", "lastTransitionTime": stamp})
    for s in status.get("containerStatuses") or []:
        if isinstance(s, dict):
            started = ((s.get("state") or {}).get("running") or {}).get("startedAt", stamp)
            s.update({"ready": False, "started": False, "state": {"terminated": {
                "exitCode": 0, "reason": "Completed", "startedAt": started, "finishedAt": stamp}}})
    return pod
