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
``job_indexes.py``, making and deleting pods ``job_pods.py``. The delays between re-creations of failed pods
are left out.

With ``--fake-kubelet`` the containers of a running Job pod end at once, successfully (:func:`finish_pods`):
a Job completes as soon as its pods are bound."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from dralloc.server.clock import now
from dralloc.server.controllers import job_indexes as ix
from dralloc.server.controllers.job_failures import (
    DEADLINE_EXCEEDED,
    active_deadline,
    match_pod_failure_policy,
    past_backoff_limit_on_failure,
)
from dralloc.server.controllers.job_pods import COMPONENT, JobPods, count_of, manage
from dralloc.server.controllers.job_tracking import (
    FINALIZER,
    considered_failed,
    ended_pods,
    failure_counts,
    is_terminating,
    only_replaces_failed,
    remove_finalizers,
    tracked,
)
from dralloc.server.controllers.snapshot import Snapshot
from dralloc.server.controllers.workload_pods import (
    Obj,
    PodControl,
    is_active,
    is_ready,
    meta,
    spec_of,
    stamp,
    status_of,
    write_status,
)
from dralloc.server.controllers.writes import Writer

__all__ = ["FINALIZER", "finish_pods", "remove_finalizers", "sync_job", "tracked"]

COMPLETE = ("CompletionsReached", "Reached expected number of succeeded pods")
BACKOFF = ("BackoffLimitExceeded", "Job has reached the specified backoff limit")
MAX_FAILED_INDEXES = ("MaxFailedIndexesExceeded", "Job has exceeded the specified maximal number of failed indexes")
FAILED_INDEXES = ("FailedIndexes", "Job has failed indexes")
POD_FAILURE_POLICY = "PodFailurePolicy"  # the reason of a Job a FailJob rule failed
SUCCESS_POLICY = "SuccessPolicy"
SUCCESS, FAILURE_TARGET = "SuccessCriteriaMet", "FailureTarget"
Condition = tuple[str, str, str]  # (type, reason, message) of a True condition


def _int(value: Any, default: int) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else default


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
class _JobSync:
    """One sync of a Job (syncJobCtx): its pods as counted, the condition it finishes with, if any, and what
    the sync found and decided on the way."""

    control: PodControl
    job: Obj
    pods: list[Obj]
    clock: float
    at: str = field(init=False)  # the clock's reading as a timestamp
    completions: int | None = field(init=False)
    indexed: bool = field(init=False)
    uncounted: tuple[set[str], set[str]] = field(init=False)  # status.uncountedTerminatedPods' uids
    state: JobPods = field(init=False)
    done: list[Obj] = field(init=False)  # the pods not active: succeeded, failed or being deleted
    conditions: list[Any] = field(init=False)
    start: Any = field(init=False)  # status.startTime
    succeeded: int = 0  # what counts towards completions (an Indexed Job's succeeded indexes)
    failed: int = 0  # failures counted towards backoffLimit
    finished: Condition | None = None
    wake: float | None = None
    counted_indexes: set[int] = field(default_factory=set)  # completedIndexes as stored
    done_indexes: set[int] = field(default_factory=set)  # and those succeeded since
    failed_indexes: set[int] | None = None  # with per-index backoff
    delayed: dict[int, Obj] = field(default_factory=dict)  # per index: a failed pod waiting for its replacement
    _indexes: dict[int, int | None] = field(default_factory=dict)  # (each pod's index read once, by identity)

    def __post_init__(self) -> None:
        spec, old = spec_of(self.job), status_of(self.job)
        self.at = stamp(self.clock)
        self.completions = count_of(spec.get("completions"))
        self.indexed = spec.get("completionMode") == "Indexed" and self.completions is not None
        uncounted = old.get("uncountedTerminatedPods") or {}
        self.uncounted = (set(uncounted.get("succeeded") or []), set(uncounted.get("failed") or []))
        active: list[Obj] = []
        self.done = []  # (a pod that succeeded or is considered failed is never active)
        for pod in self.pods:
            (active if is_active(pod) else self.done).append(pod)
        self.state = JobPods(active, sum(1 for p in self.done if is_terminating(p)),
                             sum(1 for p in active if is_ready(p)))
        new_failed = [p for p in self.done if self.fresh(p) and str(meta(p).get("uid")) not in self.uncounted[1]
                      and considered_failed(self.job, p)]
        self.succeeded = _int(old.get("succeeded"), 0) + len(self.uncounted[0]) + sum(
            1 for p in self.done if self.fresh(p) and str(meta(p).get("uid")) not in self.uncounted[0]
            and status_of(p).get("phase") == "Succeeded")
        self.failed = _int(old.get("failed"), 0) + len(self.uncounted[1]) + sum(
            1 for p in new_failed if failure_counts(self.job, p))
        self.conditions = list(old.get("conditions") or [])
        self.start = old.get("startTime") or (self.at if spec.get("suspend") is not True else None)

    def raw_index(self, pod: Obj) -> int | None:
        if id(pod) not in self._indexes:
            self._indexes[id(pod)] = ix.completion_index(pod)
        return self._indexes[id(pod)]

    def index_of(self, pod: Obj) -> int | None:
        """The pod's index when it is valid (below completions)."""
        index = self.raw_index(pod)
        return index if index is not None and self.completions is not None and index < self.completions else None

    def fresh(self, pod: Obj) -> bool:
        """getValidPodsWithFilter: tracked, with a valid index when Indexed."""
        return tracked(pod) and (not self.indexed or self.index_of(pod) is not None)

    def judge(self) -> None:
        """The condition the Job finishes with, in syncJob's order: one it has already; a FailJob rule; the
        backoff limit; the active deadline (else when to look again); failed indexes; the success policy."""
        job, spec = self.job, spec_of(self.job)
        if (met := _true(self.conditions, SUCCESS)) is not None:
            self.finished = (SUCCESS, str(met.get("reason", "")), str(met.get("message", "")))
        elif (target := _true(self.conditions, FAILURE_TARGET)) is not None:
            self.finished = ("Failed", str(target.get("reason", "")), str(target.get("message", "")))
        elif (message := _fail_job_message(job, self.done)) is not None:
            self.finished = (FAILURE_TARGET, POD_FAILURE_POLICY, message)
        deadline = active_deadline(job, self.start)
        if self.finished is None:
            if self.failed > _int(spec.get("backoffLimit"), 6) or past_backoff_limit_on_failure(job, self.pods):
                self.finished = (FAILURE_TARGET, *BACKOFF)
            elif deadline is not None and self.clock >= deadline:
                self.finished = (FAILURE_TARGET, *DEADLINE_EXCEEDED)
            elif deadline is not None:
                self.wake = deadline
        if self.indexed and self.completions is not None:
            self._judge_indexes(self.completions)

    def _judge_indexes(self, completions: int) -> None:
        job, spec, old = self.job, spec_of(self.job), status_of(self.job)
        self.counted_indexes = ix.parse_indexes(old.get("completedIndexes"), completions)
        self.done_indexes = self.counted_indexes | {
            i for p in self.done if status_of(p).get("phase") == "Succeeded" and tracked(p)
            and (i := self.index_of(p)) is not None}
        self.succeeded = len(self.done_indexes)
        if count_of(spec.get("backoffLimitPerIndex")) is not None:
            self.failed_indexes = ix.parse_indexes(old.get("failedIndexes"), completions) | {
                i for p in self.done if (i := self.index_of(p)) is not None and tracked(p)
                and ix.index_failed(job, p, considered_failed(job, p))}
            if self.finished is None:
                most = count_of(spec.get("maxFailedIndexes"))
                if most is not None and len(self.failed_indexes) > most:
                    self.finished = (FAILURE_TARGET, *MAX_FAILED_INDEXES)
                elif self.failed_indexes and len(self.failed_indexes) + len(self.done_indexes) >= completions:
                    self.finished = (FAILURE_TARGET, *FAILED_INDEXES)
            busy = self.done_indexes | self.failed_indexes | {
                i for p in self.state.active if (i := self.raw_index(p)) is not None}
            self.delayed = ix.delayed_deletions(
                [p for p in self.done if self.fresh(p) and considered_failed(job, p)], busy)
        if self.finished is None and (message := ix.match_success_policy(job, completions, self.done_indexes)):
            self.finished = (SUCCESS, SUCCESS_POLICY, message)

    def act(self) -> bool:
        """A finishing Job's active pods deleted (their finalizers kept: they are counted); else manageJob,
        then whether it completed, and its Suspended condition."""
        job, state = self.job, self.state
        if self.finished is not None:
            return state.deleted(self.control, job, state.active, keep_finalizers=True)
        managed = not meta(job).get("deletionTimestamp")
        changed = False
        if managed:
            terminating = [p for p in self.done if is_terminating(p)] if only_replaces_failed(job) else []
            taken = self.done_indexes | (self.failed_indexes or set()) | {
                i for p in state.active + terminating if (i := self.raw_index(p)) is not None}
            changed = manage(self.control, job, state, self.succeeded, taken, self.delayed, self.index_of)
        if not state.active and (self.succeeded > 0 if self.completions is None else
                                 self.succeeded >= self.completions):
            self.finished = (SUCCESS, *COMPLETE)
        elif managed and spec_of(job).get("suspend") is True:
            if _ensure(self.conditions, "Suspended", "True", "JobSuspended", "Job suspended", self.at):
                self.control.event(job, "Suspended", "Job suspended", COMPONENT)
        elif managed and _ensure(self.conditions, "Suspended", "False", "JobResumed", "Job resumed", self.at):
            self.control.event(job, "Resumed", "Job resumed", COMPONENT)
            self.start = self.at  # (the active deadline counts from the resumption)
        return changed

    def status(self, succeeded: int, failed: int, uncounted: tuple[set[str], set[str]], extra: Obj) -> Obj:
        """The Job's status, in the order of JobStatus's fields (counts of 0 left out, as omitempty)."""
        out: Obj = {}
        if self.conditions:
            out["conditions"] = self.conditions
        if self.start:
            out["startTime"] = self.start
        out.update(extra)
        counts = {"active": len(self.state.active), "succeeded": succeeded, "failed": failed}
        out.update({k: v for k, v in counts.items() if v})
        out["terminating"] = self.state.terminating
        if self.indexed and self.done_indexes:
            out["completedIndexes"] = ix.format_indexes(self.done_indexes)
        if self.failed_indexes is not None:
            out["failedIndexes"] = ix.format_indexes(self.failed_indexes)
        out["uncountedTerminatedPods"] = {k: sorted(v) for k, v in zip(("succeeded", "failed"), uncounted) if v}
        out["ready"] = self.state.ready
        return out

    def record(self) -> bool:
        """trackJobStatusAndRemoveFinalizers: the ended pods named as uncounted (with the interim condition),
        let go of, then counted; the final condition once no pod terminates (enactJobFinished), with its
        event."""
        job, old, finished = self.job, status_of(self.job), self.finished

        def waits_for_replacement(pod: Obj) -> bool:
            index = self.index_of(pod)
            return index is not None and self.delayed.get(index) is pod

        # (only a pod that succeeded or is considered failed is let go of, unless the Job finishes or goes)
        letting_go = finished is not None or bool(meta(job).get("deletionTimestamp"))
        ended = ended_pods(job, self.pods if letting_go else self.done, finishing=finished is not None,
                           failing=finished is not None and finished[0] != SUCCESS,
                           index_of=self.index_of if self.indexed else None, counted_indexes=self.counted_indexes,
                           delayed=waits_for_replacement)
        if finished is not None and finished[0] in (FAILURE_TARGET, SUCCESS):
            if _true(self.conditions, finished[0]) is None:  # the interim condition, before the pods are let go
                self.conditions.append(_condition(finished[0], "True", finished[1], finished[2], self.at))
            finished = ("Failed" if finished[0] == FAILURE_TARGET else "Complete", finished[1], finished[2])
        # counted so far: the old counts (an Indexed Job's successes are its indexes)
        succeeded = len(self.done_indexes) if self.indexed else _int(old.get("succeeded"), 0)
        failed = _int(old.get("failed"), 0)
        interim = self.status(succeeded, failed, (ended.succeeded, ended.failed), {})
        changed = False
        if (ended.succeeded, ended.failed) != self.uncounted or ended.new_indexes \
                or interim.get("conditions") != old.get("conditions"):
            changed = write_status(self.control.writer, "jobs", job, interim)  # named before the finalizers go
        changed |= remove_finalizers(self.control.writer, ended.pods)
        if not self.indexed:
            succeeded += len(ended.succeeded)
        failed += len(ended.failed)
        extra: Obj = {}
        if finished is not None and self.state.terminating == 0:  # (enactJobFinished waits for them)
            _ensure(self.conditions, finished[0], "True", finished[1], finished[2], self.at)
            if finished[0] == "Complete":
                extra["completionTime"] = self.at
                self.control.event(job, "Completed", "Job completed", COMPONENT)
            else:
                self.control.event(job, finished[1], finished[2], COMPONENT, type_="Warning")
        final = self.status(succeeded, failed, (set(), set()), extra)
        return write_status(self.control.writer, "jobs", job, final) or changed


def sync_job(control: PodControl, job: Obj, pods: list[Obj], clock: float) -> tuple[bool, float | None]:
    """One sync of a Job over its pods at the controllers' clock reading ``clock``: whether it wrote, and when
    to sync it again though nothing changes (its active deadline)."""
    if _finished(job):  # its pods are let go of (a finished Job counts nothing more)
        return remove_finalizers(control.writer, [p for p in pods if tracked(p)]), None
    sync = _JobSync(control, job, pods, clock)
    sync.judge()
    changed = sync.act()
    changed |= sync.record()
    return changed, sync.wake if sync.finished is None else None


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
