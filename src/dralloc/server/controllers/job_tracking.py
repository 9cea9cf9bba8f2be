"""How the Job controller counts its pods' ends (``pkg/controller/job/job_controller.go``'s
trackJobStatusAndRemoveFinalizers): a pod carries the ``batch.kubernetes.io/job-tracking`` finalizer until
its end is counted. An ended pod is named in ``status.uncountedTerminatedPods`` first, then its finalizer
goes, then it moves into ``succeeded`` or ``failed`` — so a crash in between counts it once, and a pod
deleted after it ended still counts.

A pod is considered failed when it failed, or when it is being deleted before it succeeded (unless only
failed pods are replaced: ``podReplacementPolicy: Failed``, or a pod failure policy). Once the Job is
finished (or being deleted) every pod it tracks is let go of; while it runs, a pod still running keeps its
finalizer, and so does a failed pod whose index waits for its replacement (per-index backoff)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from dralloc.controllers.workloads import JOB_TRACKING_FINALIZER
from dralloc.server.controllers.job_failures import match_pod_failure_policy
from dralloc.server.controllers.workload_pods import Obj, meta, spec_of, status_of
from dralloc.server.controllers.writes import Writer
from dralloc.server.registry import pods as pod_registry

FINALIZER = JOB_TRACKING_FINALIZER


def tracked(pod: Obj) -> bool:
    """The pod carries the job-tracking finalizer: its end is not counted yet."""
    return FINALIZER in (meta(pod).get("finalizers") or [])


def with_finalizer(pod: Obj) -> Obj:
    """A new pod carries the job-tracking finalizer: it stays until the Job counted its end."""
    finalizers = pod["metadata"].setdefault("finalizers", [])
    if FINALIZER not in finalizers:
        finalizers.append(FINALIZER)
    return pod


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


def only_replaces_failed(job: Obj) -> bool:
    """onlyReplaceFailedPods: ``podReplacementPolicy: Failed``, or a pod failure policy."""
    spec = spec_of(job)
    return spec.get("podReplacementPolicy") == "Failed" or isinstance(spec.get("podFailurePolicy"), dict)


def considered_failed(job: Obj, pod: Obj) -> bool:
    """isPodFailed: failed, or (unless only failed pods are replaced) deleted before it succeeded — a pod
    that never reaches the Failed phase."""
    phase = status_of(pod).get("phase")
    if phase == "Failed":
        return True
    if only_replaces_failed(job):
        return False
    return bool(meta(pod).get("deletionTimestamp")) and phase != "Succeeded"


def is_terminating(pod: Obj) -> bool:
    """controller.IsPodTerminating: being deleted and not finished."""
    return bool(meta(pod).get("deletionTimestamp")) and status_of(pod).get("phase") not in pod_registry.TERMINAL_PHASES


def failure_counts(job: Obj, pod: Obj) -> bool:
    """The pod failure policy does not ignore the pod's failure (no policy: every failure counts)."""
    return match_pod_failure_policy(job, pod)[1] if isinstance(spec_of(job).get("podFailurePolicy"), dict) else True


@dataclass
class Ended:
    """What one sync found ended: the pods to let go of, the uids named as uncounted, the new indexes."""

    pods: list[Obj] = field(default_factory=list)
    succeeded: set[str] = field(default_factory=set)
    failed: set[str] = field(default_factory=set)
    new_indexes: set[int] = field(default_factory=set)


def ended_pods(job: Obj, pods: list[Obj], *, finishing: bool, failing: bool,
               index_of: Callable[[Obj], int | None] | None, counted_indexes: set[int],
               delayed: Callable[[Obj], bool]) -> Ended:
    """The tracked pods whose finalizer may go now (canRemoveFinalizer: the Job finishing or being deleted, the
    pod succeeded, or failed and not delayed) and how each counts: a success (an Indexed Job's new index, not
    in ``counted_indexes``), or a failure the pod failure policy counts — every pod not succeeded counts as
    failed when the Job is ``failing``. ``index_of``: an Indexed Job's valid index of a pod (None: none);
    ``delayed``: a failed pod waits for its index's replacement."""
    uncounted = status_of(job).get("uncountedTerminatedPods") or {}
    found = Ended(succeeded=set(uncounted.get("succeeded") or []), failed=set(uncounted.get("failed") or []))
    letting_go = finishing or bool(meta(job).get("deletionTimestamp"))
    for pod in pods:
        if not tracked(pod):
            continue
        uid, phase = str(meta(pod).get("uid")), status_of(pod).get("phase")
        failed_now = considered_failed(job, pod)
        if not (letting_go or phase == "Succeeded" or (failed_now and not delayed(pod))):
            continue
        found.pods.append(pod)
        index = index_of(pod) if index_of is not None else None
        if phase == "Succeeded" and uid not in found.failed:
            if index_of is None:
                found.succeeded.add(uid)
            elif index is not None and index not in counted_indexes:
                found.new_indexes.add(index)
        elif (failed_now or failing) and uid not in found.failed and (index_of is None or index is not None):
            if failure_counts(job, pod):
                found.failed.add(uid)
    return found
