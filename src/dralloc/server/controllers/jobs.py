"""The Job controller of ``dralloc serve``: up to ``parallelism`` active pods and no more than the completions
left (``<job>-`` + 5 characters; Indexed Jobs ``<job>-<index>-`` for their lowest missing indexes, with the
completion-index annotation and label), until ``completions`` pods succeeded (a Job without completions: one,
and none active) — then the SuccessCriteriaMet and Complete conditions and the completion time — or more than
``backoffLimit`` failed — then FailureTarget and Failed, and its active pods deleted. A suspended Job deletes
its active pods. Its status counts active, ready, succeeded and failed pods, as ``kubectl wait
--for=condition=complete`` and the job columns read them.

Its pods carry the ``batch.kubernetes.io/job-tracking`` finalizer until their end is counted in the status
(``uncountedTerminatedPods`` first, then ``succeeded``/``failed``), so a pod deleted after it ended still
counts, and a pod deleted before it ended counts as failed (unless only failed pods are replaced). Failures
count towards ``backoffLimit`` (and, with ``restartPolicy: OnFailure``, container restarts) as the pod failure
policy says (``job_failures.py``: FailJob fails the Job with reason PodFailurePolicy, Ignore does not count).
Success policies, per-index backoff and active deadlines are left out.

With ``--fake-kubelet`` the containers of a running Job pod end at once, successfully (:func:`finish_pods`):
a Job completes as soon as its pods are bound."""

from __future__ import annotations

from typing import Any

from dralloc.controllers.workloads import JOB_COMPLETION_INDEX, JOB_TRACKING_FINALIZER, job_pod_generate_name
from dralloc.server.clock import now
from dralloc.server.controllers.job_failures import match_pod_failure_policy, past_backoff_limit_on_failure
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
    without_zeros,
    write_status,
)
from dralloc.server.controllers.writes import Writer

COMPLETE = ("CompletionsReached", "Reached expected number of succeeded pods")
BACKOFF = ("BackoffLimitExceeded", "Job has reached the specified backoff limit")
POD_FAILURE_POLICY = "PodFailurePolicy"  # the reason of a Job a FailJob rule failed
FINALIZER = JOB_TRACKING_FINALIZER


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


def _with_finalizer(pod: Obj) -> Obj:
    """A new pod carries the job-tracking finalizer: it stays until the Job counted its end."""
    finalizers = pod["metadata"].setdefault("finalizers", [])
    if FINALIZER not in finalizers:
        finalizers.append(FINALIZER)
    return pod


def tracked(pod: Obj) -> bool:
    """The pod carries the job-tracking finalizer: its end is not counted yet."""
    return FINALIZER in (meta(pod).get("finalizers") or [])


def remove_finalizers(writer: Writer, pods: list[Obj]) -> bool:
    """The job-tracking finalizer off these pods (a pod being deleted may go then)."""
    def without(current: Obj) -> Obj | None:
        finalizers = current["metadata"].get("finalizers") or []
        if FINALIZER not in finalizers:
            return None
        kept = [f for f in finalizers if f != FINALIZER]
        if kept:
            current["metadata"]["finalizers"] = kept
        else:
            current["metadata"].pop("finalizers")
        return current

    for pod in pods:
        writer.update("pods", str(meta(pod).get("namespace") or ""), str(meta(pod).get("name")), without,
                      uid=str(meta(pod).get("uid")))
    return bool(pods)


def parse_indexes(text: Any) -> set[int]:
    """``completedIndexes`` read back (``1,3-5,7``)."""
    found: set[int] = set()
    for part in str(text or "").split(","):
        first, _, last = part.partition("-")
        if first.isdigit() and (not last or last.isdigit()):
            found |= set(range(int(first), int(last or first) + 1))
    return found


def _track(control: PodControl, job: Obj, pods: list[Obj]) -> tuple[set[str], set[str], str | None, bool]:
    """trackJobStatusAndRemoveFinalizers: the pods that ended (succeeded; failed, or deleted before they
    could, unless only failed pods are replaced), named in ``uncountedTerminatedPods`` first, then let go
    of; a failure the pod failure policy ignores is not counted. The uncounted succeeded and failed uids,
    the first FailJob message, and whether it wrote."""
    old = status_of(job)
    uncounted = old.get("uncountedTerminatedPods") or {}
    succeeded, failed = set(uncounted.get("succeeded") or []), set(uncounted.get("failed") or [])
    only_failed = spec_of(job).get("podReplacementPolicy") == "Failed"
    fail_message: str | None = None
    ended: list[Obj] = []
    for pod in pods:
        if not tracked(pod):
            continue
        uid, phase = str(meta(pod).get("uid")), status_of(pod).get("phase")
        considered_failed = phase == "Failed" or (
            not only_failed and bool(meta(pod).get("deletionTimestamp")) and phase != "Succeeded")
        if phase == "Succeeded":
            if uid not in failed:
                succeeded.add(uid)
        elif considered_failed:
            message, counts, _ = match_pod_failure_policy(job, pod)
            fail_message = fail_message or message
            if counts:
                failed.add(uid)
        elif not meta(pod).get("deletionTimestamp"):
            continue  # still running: tracked until it ends
        ended.append(pod)
    before = (set(uncounted.get("succeeded") or []), set(uncounted.get("failed") or []))
    wrote = False
    if (succeeded, failed) != before:  # (named before the finalizers go: a crash in between counts them once)
        write_status(control.writer, "jobs", job, {**old, "uncountedTerminatedPods": without_zeros(
            {"succeeded": sorted(succeeded), "failed": sorted(failed)}, "succeeded", "failed")})
        wrote = True
    wrote |= remove_finalizers(control.writer, ended)
    return succeeded, failed, fail_message, wrote


def sync_job(control: PodControl, job: Obj, pods: list[Obj]) -> bool:
    if _finished(job):  # its pods are let go of (a finished Job counts nothing more)
        return remove_finalizers(control.writer, [p for p in pods if tracked(p)])
    spec, old = spec_of(job), status_of(job)
    indexed = spec.get("completionMode") == "Indexed"
    active = [p for p in pods if is_active(p)]
    new_succeeded, new_failed, fail_message, changed = _track(control, job, pods)
    succeeded = _int(old.get("succeeded"), 0) + len(new_succeeded)
    failed = _int(old.get("failed"), 0) + len(new_failed)
    succeeded_pods = [p for p in pods if status_of(p).get("phase") == "Succeeded"]
    completions = spec.get("completions") if isinstance(spec.get("completions"), int) else None
    done_indexes = parse_indexes(old.get("completedIndexes")) | {
        i for p in succeeded_pods if str(meta(p).get("uid")) in new_succeeded and (i := _index(p)) is not None}
    if indexed and completions is not None:
        succeeded = len({i for i in done_indexes if i < completions})
    conditions = list(old.get("conditions") or [])
    status: Obj = {}

    def gone(pod: Obj) -> bool:
        return control.delete(job, pod, COMPONENT)

    complete = succeeded >= completions if completions is not None else succeeded > 0 and not active
    failure = None
    if fail_message is not None:
        failure = (POD_FAILURE_POLICY, fail_message)
    elif failed > _int(spec.get("backoffLimit"), 6) or past_backoff_limit_on_failure(job, active):
        failure = BACKOFF
    if complete or failure is not None:
        for pod in active:
            changed |= gone(pod)
        first, last, why = ("SuccessCriteriaMet", "Complete", COMPLETE) if complete else \
            ("FailureTarget", "Failed", failure or BACKOFF)
        conditions = [c for c in conditions if isinstance(c, dict) and c.get("type") not in (first, last)]
        conditions += [condition(first, "True", *why, []), condition(last, "True", *why, [])]
        if complete:
            status["completionTime"] = now()
            control.event(job, "Completed", "Job completed", COMPONENT)
        else:
            control.event(job, why[0], why[1], COMPONENT, type_="Warning")
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
                changed |= control.create(job, _with_finalizer(pod), COMPONENT)
        else:
            for _ in range(missing):
                pod = pod_from_template(template, job, generate_name=f"{name}-")
                changed |= control.create(job, _with_finalizer(pod), COMPONENT)
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
    full["uncountedTerminatedPods"] = {}  # (counted now: their finalizers are gone)
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
