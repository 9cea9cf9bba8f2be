"""The Job controller of ``dralloc serve`` (``pkg/controller/job/job_controller.go``'s syncJob): up to
``parallelism`` active pods and no more than the completions left (``<job>-`` + 5 characters; Indexed Jobs
``<job>-<index>-`` for their lowest pending indexes, with the completion-index annotation, label and
``JOB_COMPLETION_INDEX`` variable, and the hostname ``<job>-<index>``), until the Job finishes:

* it fails (an interim FailureTarget condition, then Failed) by a FailJob rule of its pod failure policy
  (reason PodFailurePolicy), more than ``backoffLimit`` counted failures (BackoffLimitExceeded), its active
  deadline (DeadlineExceeded), more failed indexes than ``maxFailedIndexes`` (MaxFailedIndexesExceeded) or
  every index succeeded or failed with some failed (FailedIndexes);
* it succeeds (SuccessCriteriaMet, then Complete) when its success policy is met (reason SuccessPolicy) or
  ``completions`` pods succeeded (a Job without completions: one, and none active; CompletionsReached).

Its active pods are deleted then, and the final condition (with the event: ``Completed``, or a warning with
the failure's reason) waits until no pod of it is terminating. A suspended Job deletes its active pods (the
Suspended condition; JobResumed resets its start time). Pods being deleted are replaced at once, or — with
``podReplacementPolicy: Failed`` — once they have failed. The counting of ended pods is ``job_tracking.py``,
failures and deadlines ``job_failures.py``, indexes, per-index backoff and success policies
``job_indexes.py``. The delays between re-creations of failed pods are left out.

With ``--fake-kubelet`` the containers of a running Job pod end at once, successfully (:func:`finish_pods`):
a Job completes as soon as its pods are bound."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from dralloc.controllers.workloads import JOB_COMPLETION_INDEX, job_pod_generate_name
from dralloc.server.clock import now
from dralloc.server.controllers import job_indexes as ix
from dralloc.server.controllers.job_failures import (
    DEADLINE_EXCEEDED,
    active_deadline,
    match_pod_failure_policy,
    past_backoff_limit_on_failure,
)
from dralloc.server.controllers.job_tracking import (
    FINALIZER,
    considered_failed,
    ended_pods,
    failure_counts,
    is_terminating,
    only_replaces_failed,
    remove_finalizers,
    tracked,
    with_finalizer,
)
from dralloc.server.controllers.snapshot import Snapshot
from dralloc.server.controllers.workload_pods import (
    Obj,
    PodControl,
    deletion_order,
    is_active,
    is_ready,
    meta,
    pod_from_template,
    spec_of,
    stamp,
    status_of,
    write_status,
)
from dralloc.server.controllers.writes import Writer

__all__ = ["FINALIZER", "finish_pods", "remove_finalizers", "sync_job", "tracked"]

COMPONENT = "job-controller"
COMPLETE = ("CompletionsReached", "Reached expected number of succeeded pods")
BACKOFF = ("BackoffLimitExceeded", "Job has reached the specified backoff limit")
MAX_FAILED_INDEXES = ("MaxFailedIndexesExceeded", "Job has exceeded the specified maximal number of failed indexes")
FAILED_INDEXES = ("FailedIndexes", "Job has failed indexes")
POD_FAILURE_POLICY = "PodFailurePolicy"  # the reason of a Job a FailJob rule failed
SUCCESS_POLICY = "SuccessPolicy"
SUCCESS, FAILURE_TARGET = "SuccessCriteriaMet", "FailureTarget"
INDEX_VARIABLE = "JOB_COMPLETION_INDEX"

Condition = tuple[str, str, str]  # (type, reason, message) of a True condition


def _int(value: Any, default: int) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _finished(job: Obj) -> bool:
    return any(isinstance(c, dict) and c.get("type") in ("Complete", "Failed") and c.get("status") == "True"
               for c in status_of(job).get("conditions") or [])


def _true(conditions: list[Any], type_: str) -> Obj | None:
    return next((c for c in conditions if isinstance(c, dict) and c.get("type") == type_
                 and c.get("status") == "True"), None)


def _condition(type_: str, status: str, reason: str, message: str, at: str) -> Obj:
    """newCondition: probed and changed now."""
    return {"type": type_, "status": status, "lastProbeTime": at, "lastTransitionTime": at, "reason": reason,
            "message": message}


def _ensure(conditions: list[Any], type_: str, status: str, reason: str, message: str, at: str) -> bool:
    """ensureJobConditionStatus: the condition replaced when its status, reason or message differ, added
    when missing (unless False); whether the list changed."""
    for i, c in enumerate(conditions):
        if isinstance(c, dict) and c.get("type") == type_:
            if (c.get("status"), c.get("reason"), c.get("message")) == (status, reason, message):
                return False
            conditions[i] = _condition(type_, status, reason, message, at)
            return True
    if status == "False":
        return False
    conditions.append(_condition(type_, status, reason, message, at))
    return True


def _fail_job_message(job: Obj, pods: list[Obj]) -> str | None:
    """getFailJobMessage: the FailJob message of the first failed pod a FailJob rule matches."""
    if not isinstance(spec_of(job).get("podFailurePolicy"), dict):
        return None
    for pod in pods:
        if considered_failed(job, pod) and (message := match_pod_failure_policy(job, pod)[0]) is not None:
            return message
    return None


@dataclass
class _Pods:
    """The Job's pods as one sync sees them (after its own deletions and creations)."""

    active: list[Obj]
    terminating: int
    ready: int

    def deleted(self, control: PodControl, job: Obj, gone: list[Obj], keep_finalizers: bool) -> bool:
        """deleteActivePods (finalizers kept: the tracking counts them) or deleteJobPods (let go of first)."""
        if not keep_finalizers:
            remove_finalizers(control.writer, [p for p in gone if tracked(p)])
        uids = {str(meta(p).get("uid")) for p in gone}
        for pod in gone:
            control.delete(job, pod, COMPONENT)
        self.active = [p for p in self.active if str(meta(p).get("uid")) not in uids]
        self.terminating += len(gone)
        self.ready -= sum(1 for p in gone if is_ready(p))
        return bool(gone)


def _indexed_pod(job: Obj, template: Obj, index: int, replaced: Obj | None) -> Obj:
    """An Indexed Job's pod: its index as annotation, label, environment variable and hostname; with per-index
    backoff, the failures of its index so far."""
    annotations = {JOB_COMPLETION_INDEX: str(index)}
    if _count(spec_of(job).get("backoffLimitPerIndex")) is not None:
        annotations.update(ix.replacement_counts(job, replaced))
    name = str(meta(job).get("name"))
    pod = pod_from_template(template, job, generate_name=job_pod_generate_name(name, index),
                            labels={JOB_COMPLETION_INDEX: str(index)}, annotations=annotations)
    spec = pod["spec"]
    for key in ("initContainers", "containers"):
        for container in spec.get(key) or []:
            env = container.setdefault("env", [])
            if not any(isinstance(v, dict) and v.get("name") == INDEX_VARIABLE for v in env):
                env.append({"name": INDEX_VARIABLE, "valueFrom": {"fieldRef": {
                    "fieldPath": f"metadata.labels['{JOB_COMPLETION_INDEX}']"}}})
    spec["hostname"] = f"{name}-{index}"
    return pod


def _manage(control: PodControl, job: Obj, state: _Pods, succeeded: int, taken: set[int],
            delayed: dict[int, Obj], index_of: Callable[[Obj], int | None]) -> bool:
    """manageJob: a suspended Job's active pods deleted; else the pods beyond what is wanted deleted (an
    Indexed Job's duplicates first), or the missing ones made (not while pods that only failing would
    replace are still terminating)."""
    spec = spec_of(job)
    if spec.get("suspend") is True:
        return state.deleted(control, job, state.active, keep_finalizers=False)
    parallelism = max(_int(spec.get("parallelism"), 1), 0)
    completions = _count(spec.get("completions"))
    active = len(state.active)
    if completions is None:
        want = active if succeeded > 0 else parallelism
    else:
        want = max(min(completions - succeeded, parallelism), 0)
    indexed = spec.get("completionMode") == "Indexed" and completions is not None
    remove: list[Obj] = []
    rest = state.active
    if indexed and completions is not None:
        remove, rest = ix.duplicate_index_pods(state.active, index_of)
    if len(remove) < active - want:
        remove += deletion_order(rest)[:active - want - len(remove)]
    if remove:
        return state.deleted(control, job, remove, keep_finalizers=False)
    missing = want - (state.terminating if only_replaces_failed(job) else 0) - active
    if missing <= 0:
        return False
    template = spec.get("template") or {}
    made = False
    if indexed and completions is not None:
        for index in ix.first_pending_indexes(missing, completions, taken):
            pod = _indexed_pod(job, template, index, delayed.get(index))
            made |= control.create(job, with_finalizer(pod), COMPONENT)
    else:
        for _ in range(missing):
            pod = pod_from_template(template, job, generate_name=f"{meta(job).get('name')}-")
            made |= control.create(job, with_finalizer(pod), COMPONENT)
    return made


def sync_job(control: PodControl, job: Obj, pods: list[Obj], clock: float) -> tuple[bool, float | None]:
    """One sync of a Job over its pods at the controllers' clock reading ``clock``: whether it wrote, and when
    to sync it again though nothing changes (its active deadline)."""
    if _finished(job):  # its pods are let go of (a finished Job counts nothing more)
        return remove_finalizers(control.writer, [p for p in pods if tracked(p)]), None
    spec, old = spec_of(job), status_of(job)
    at = stamp(clock)
    completions = _count(spec.get("completions"))
    indexed = spec.get("completionMode") == "Indexed" and completions is not None
    per_index = indexed and _count(spec.get("backoffLimitPerIndex")) is not None
    uncounted = old.get("uncountedTerminatedPods") or {}
    counted_before = (set(uncounted.get("succeeded") or []), set(uncounted.get("failed") or []))

    known: dict[int, int | None] = {}  # (each pod's index read once per sync, by the pod's identity)

    def raw_index(pod: Obj) -> int | None:
        if id(pod) not in known:
            known[id(pod)] = ix.completion_index(pod)
        return known[id(pod)]

    def index_of(pod: Obj) -> int | None:  # (a valid index: below completions)
        index = raw_index(pod)
        return index if index is not None and completions is not None and index < completions else None

    def fresh(pod: Obj) -> bool:  # (getValidPodsWithFilter: tracked, with a valid index when Indexed)
        return tracked(pod) and (not indexed or index_of(pod) is not None)

    active_pods: list[Obj] = []
    done: list[Obj] = []  # (a pod that succeeded or is considered failed is never active)
    for pod in pods:
        (active_pods if is_active(pod) else done).append(pod)
    state = _Pods(active_pods, sum(1 for p in done if is_terminating(p)), 0)
    state.ready = sum(1 for p in state.active if is_ready(p))
    new_failed = [p for p in done if fresh(p) and str(meta(p).get("uid")) not in counted_before[1]
                  and considered_failed(job, p)]
    succeeded = _int(old.get("succeeded"), 0) + len(counted_before[0]) + sum(
        1 for p in done if fresh(p) and str(meta(p).get("uid")) not in counted_before[0]
        and status_of(p).get("phase") == "Succeeded")
    failed = _int(old.get("failed"), 0) + len(counted_before[1]) + sum(1 for p in new_failed if failure_counts(job, p))
    conditions = list(old.get("conditions") or [])
    start = old.get("startTime") or (at if spec.get("suspend") is not True else None)
    wake: float | None = None
    finished: Condition | None = None
    if (met := _true(conditions, SUCCESS)) is not None:
        finished = (SUCCESS, str(met.get("reason", "")), str(met.get("message", "")))
    elif (target := _true(conditions, FAILURE_TARGET)) is not None:
        finished = ("Failed", str(target.get("reason", "")), str(target.get("message", "")))
    elif (message := _fail_job_message(job, done)) is not None:
        finished = (FAILURE_TARGET, POD_FAILURE_POLICY, message)
    deadline = active_deadline(job, start)
    if finished is None:
        if failed > _int(spec.get("backoffLimit"), 6) or past_backoff_limit_on_failure(job, pods):
            finished = (FAILURE_TARGET, *BACKOFF)
        elif deadline is not None and clock >= deadline:
            finished = (FAILURE_TARGET, *DEADLINE_EXCEEDED)
        elif deadline is not None:
            wake = deadline
    done_indexes: set[int] = set()
    counted_indexes: set[int] = set()
    failed_indexes: set[int] | None = None
    delayed: dict[int, Obj] = {}
    if indexed and completions is not None:
        counted_indexes = ix.parse_indexes(old.get("completedIndexes"), completions)
        done_indexes = counted_indexes | {i for p in done if status_of(p).get("phase") == "Succeeded"
                                          and tracked(p) and (i := index_of(p)) is not None}
        succeeded = len(done_indexes)
        if per_index:
            failed_indexes = ix.parse_indexes(old.get("failedIndexes"), completions) | {
                i for p in done if (i := index_of(p)) is not None and tracked(p)
                and ix.index_failed(job, p, considered_failed(job, p))}
            if finished is None:
                most = _count(spec.get("maxFailedIndexes"))
                if most is not None and len(failed_indexes) > most:
                    finished = (FAILURE_TARGET, *MAX_FAILED_INDEXES)
                elif failed_indexes and len(failed_indexes) + len(done_indexes) >= completions:
                    finished = (FAILURE_TARGET, *FAILED_INDEXES)
            busy = done_indexes | failed_indexes | {i for p in state.active if (i := raw_index(p)) is not None}
            delayed = ix.delayed_deletions([p for p in done if fresh(p) and considered_failed(job, p)], busy)
        if finished is None and (message := ix.match_success_policy(job, completions, done_indexes)) is not None:
            finished = (SUCCESS, SUCCESS_POLICY, message)
    changed = False
    if finished is not None:
        changed = state.deleted(control, job, state.active, keep_finalizers=True)
    else:
        managed = not meta(job).get("deletionTimestamp")
        if managed:
            terminating = [p for p in done if is_terminating(p)] if only_replaces_failed(job) else []
            taken = done_indexes | (failed_indexes or set()) | {
                i for p in state.active + terminating if (i := raw_index(p)) is not None}
            changed = _manage(control, job, state, succeeded, taken, delayed, index_of)
        active = len(state.active)
        if completions is None and succeeded > 0 and not active or \
                completions is not None and succeeded >= completions and not active:
            finished = (SUCCESS, *COMPLETE)
        elif managed and spec.get("suspend") is True:
            if _ensure(conditions, "Suspended", "True", "JobSuspended", "Job suspended", at):
                control.event(job, "Suspended", "Job suspended", COMPONENT)
        elif managed and _ensure(conditions, "Suspended", "False", "JobResumed", "Job resumed", at):
            control.event(job, "Resumed", "Job resumed", COMPONENT)
            start = at  # (the active deadline counts from the resumption)
    failing = finished is not None and finished[0] != SUCCESS

    def waits_for_replacement(pod: Obj) -> bool:
        index = index_of(pod)
        return index is not None and delayed.get(index) is pod

    # (only a pod that succeeded or is considered failed is let go of, unless the Job finishes or goes)
    letting_go = finished is not None or bool(meta(job).get("deletionTimestamp"))
    ended = ended_pods(job, pods if letting_go else done, finishing=finished is not None, failing=failing,
                       index_of=index_of if indexed else None, counted_indexes=counted_indexes,
                       delayed=waits_for_replacement)
    if finished is not None and finished[0] in (FAILURE_TARGET, SUCCESS):
        if _true(conditions, finished[0]) is None:  # the interim condition, before the pods are let go of
            conditions.append(_condition(finished[0], "True", finished[1], finished[2], at))
        finished = ("Failed" if finished[0] == FAILURE_TARGET else "Complete", finished[1], finished[2])

    def status(succeeded_count: int, failed_count: int, uncounted: tuple[set[str], set[str]], extra: Obj) -> Obj:
        """The Job's status, in the order of JobStatus's fields (counts of 0 left out, as omitempty)."""
        out: Obj = {}
        if conditions:
            out["conditions"] = conditions
        if start:
            out["startTime"] = start
        out.update(extra)
        counts = {"active": len(state.active), "succeeded": succeeded_count, "failed": failed_count}
        out.update({k: v for k, v in counts.items() if v})
        out["terminating"] = state.terminating
        if indexed and done_indexes:
            out["completedIndexes"] = ix.format_indexes(done_indexes)
        if failed_indexes is not None:
            out["failedIndexes"] = ix.format_indexes(failed_indexes)
        out["uncountedTerminatedPods"] = {k: sorted(v) for k, v in zip(("succeeded", "failed"), uncounted) if v}
        out["ready"] = state.ready
        return out

    # counted so far: the old counts (an Indexed Job's successes are its indexes)
    succeeded_count = len(done_indexes) if indexed else _int(old.get("succeeded"), 0)
    failed_count = _int(old.get("failed"), 0)
    interim = status(succeeded_count, failed_count, (ended.succeeded, ended.failed), {})
    if (ended.succeeded, ended.failed) != counted_before or ended.new_indexes \
            or interim.get("conditions") != old.get("conditions"):
        changed |= write_status(control.writer, "jobs", job, interim)  # named before the finalizers go
    changed |= remove_finalizers(control.writer, ended.pods)
    if not indexed:
        succeeded_count += len(ended.succeeded)
    failed_count += len(ended.failed)
    extra: Obj = {}
    enacted = finished is not None and state.terminating == 0  # (enactJobFinished waits for them)
    if enacted and finished is not None:
        _ensure(conditions, finished[0], "True", finished[1], finished[2], at)
        if finished[0] == "Complete":
            extra["completionTime"] = at
            control.event(job, "Completed", "Job completed", COMPONENT)
        else:
            control.event(job, finished[1], finished[2], COMPONENT, type_="Warning")
    changed |= write_status(control.writer, "jobs", job, status(succeeded_count, failed_count, (set(), set()), extra))
    return changed, wake if finished is None else None


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
    stamp_ = now()
    status["phase"] = "Succeeded"
    for c in status.get("conditions") or []:
        if isinstance(c, dict) and c.get("type") in ("Ready", "ContainersReady"):
            c.update({"status": "False", "reason": "PodCompleted", "lastTransitionTime": stamp_})
    for s in status.get("containerStatuses") or []:
        if isinstance(s, dict):
            started = ((s.get("state") or {}).get("running") or {}).get("startedAt", stamp_)
            s.update({"ready": False, "started": False, "state": {"terminated": {
                "exitCode": 0, "reason": "Completed", "startedAt": started, "finishedAt": stamp_}}})
    return pod
