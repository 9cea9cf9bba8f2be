"""An Indexed Job's completion indexes (``pkg/controller/job/indexed_job_utils.go`` and ``success_policy.go``):

* index sets in the status's compressed form (``completedIndexes``, ``failedIndexes``: ``1,3-5,7``), read
  back as upstream reads them (an index at or beyond ``completions`` ends the list);
* ``first_pending_indexes``: the lowest indexes neither succeeded, failed, active, nor (when only failed pods
  are replaced) terminating;
* ``duplicate_index_pods``: active pods to remove first — those without a valid index, beyond
  ``completions``, or repeating an index (all but the one to keep);
* per-index backoff (``backoffLimitPerIndex``): each pod carries the failures of its index so far
  (``batch.kubernetes.io/job-index-failure-count``); a failed pod whose index is not yet replaced keeps its
  finalizer until the replacement is made, which takes over its count plus one; an index fails once a
  counted failure reaches the limit, or at once by a ``FailIndex`` rule of the pod failure policy;
* ``match_success_policy``: the first rule of ``spec.successPolicy`` the succeeded indexes satisfy."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from dralloc.controllers.workloads import JOB_COMPLETION_INDEX
from dralloc.server.controllers.job_failures import FAIL_INDEX, match_pod_failure_policy
from dralloc.server.controllers.workload_pods import Obj, deletion_order, meta, spec_of, status_of

FAILURE_COUNT = "batch.kubernetes.io/job-index-failure-count"
IGNORED_FAILURE_COUNT = "batch.kubernetes.io/job-index-ignored-failure-count"
MAX_INT32 = 2**31 - 1


def completion_index(pod: Obj) -> int | None:
    """getCompletionIndex: the pod's completion-index annotation (None: missing, not a number, negative)."""
    text = (meta(pod).get("annotations") or {}).get(JOB_COMPLETION_INDEX)
    try:
        index = int(str(text))
    except ValueError:
        return None
    return index if index >= 0 else None


def format_indexes(indexes: Iterable[int]) -> str:
    """The compressed form: sorted, runs of three or more as ``first-last`` (``1,3-5,7``)."""
    runs: list[list[int]] = []
    for i in sorted(set(indexes)):
        if runs and runs[-1][1] == i - 1:
            runs[-1][1] = i
        else:
            runs.append([i, i])
    return ",".join(f"{a}" if a == b else f"{a},{b}" if b == a + 1 else f"{a}-{b}" for a, b in runs)


def parse_indexes(text: object, completions: int) -> set[int]:
    """parseIndexesFromString: the indexes below ``completions`` of a compressed list (a part that is not a
    number is skipped; a first index at or beyond ``completions`` ends it; a last one is cut to fit)."""
    found: set[int] = set()
    if not isinstance(text, str) or not text:
        return found
    for part in text.split(","):
        limits = part.split("-")
        try:
            first = int(limits[0])
            if first >= completions:
                break
            last = min(int(limits[1]), completions - 1) if len(limits) > 1 else first
        except ValueError:
            continue
        found.update(range(first, last + 1))
    return found


def first_pending_indexes(count: int, completions: int, taken: set[int]) -> list[int]:
    """firstPendingIndexes: the ``count`` lowest indexes below ``completions`` not in ``taken``."""
    pending: list[int] = []
    for index in range(completions):
        if len(pending) >= count:
            break
        if index not in taken:
            pending.append(index)
    return pending


def duplicate_index_pods(active: list[Obj], index_of: Callable[[Obj], int | None]) -> tuple[list[Obj], list[Obj]]:
    """appendDuplicatedIndexPodsForRemoval: the active pods to remove (no valid index — ``index_of`` says
    None, as beyond completions — or all but one of an index: the one kept is the last to delete), and the
    others."""
    remove: list[Obj] = []
    keep: list[Obj] = []
    by_index: dict[int, list[Obj]] = {}
    for pod in active:
        index = index_of(pod)
        if index is None:
            remove.append(pod)
        else:
            by_index.setdefault(index, []).append(pod)
    for index in sorted(by_index):
        group = by_index[index]
        ranked = deletion_order(group) if len(group) > 1 else group
        remove += ranked[:-1]
        keep.append(ranked[-1])
    return remove, keep


# --- per-index backoff ------------------------------------------------------------------------------


def _count_annotation(pod: Obj, key: str) -> int:
    """An index failure count annotation (0 when missing or not a count within int32)."""
    try:
        value = int(str((meta(pod).get("annotations") or {}).get(key)))
    except ValueError:
        return 0
    return value if 0 <= value <= MAX_INT32 else 0


def failure_count(pod: Obj) -> int:
    return _count_annotation(pod, FAILURE_COUNT)


def absolute_failure_count(pod: Obj) -> int:
    return failure_count(pod) + _count_annotation(pod, IGNORED_FAILURE_COUNT)


def index_failed(job: Obj, pod: Obj, considered_failed: bool) -> bool:
    """isIndexFailed: the pod's failure fails its index (a FailIndex rule, or a counted failure that reaches
    ``backoffLimitPerIndex``)."""
    if not considered_failed:
        return False
    counted = True
    if isinstance(spec_of(job).get("podFailurePolicy"), dict):
        _, counted, action = match_pod_failure_policy(job, pod)
        if action == FAIL_INDEX:
            return True
    limit = spec_of(job).get("backoffLimitPerIndex")
    return counted and isinstance(limit, int) and failure_count(pod) >= limit


def replacement_counts(job: Obj, replaced: Obj | None) -> dict[str, str]:
    """addIndexFailureCountAnnotation: the failure count annotations of the pod replacing ``replaced`` (its
    counts, plus its own failure: counted, or ignored by the pod failure policy)."""
    if replaced is None:
        return {FAILURE_COUNT: "0"}
    counted = True
    if isinstance(spec_of(job).get("podFailurePolicy"), dict):
        _, counted, _ = match_pod_failure_policy(job, replaced)
    failures = failure_count(replaced) + (1 if counted else 0)
    ignored = _count_annotation(replaced, IGNORED_FAILURE_COUNT) + (0 if counted else 1)
    out = {FAILURE_COUNT: str(failures)}
    if ignored:
        out[IGNORED_FAILURE_COUNT] = str(ignored)
    return out


def _finished_at(pod: Obj) -> str:
    """getFinishedTime's order: the last container end, else the deletion time (as text: RFC 3339 sorts)."""
    ends = [str(((cs.get("state") or {}).get("terminated") or {}).get("finishedAt") or "")
            for cs in status_of(pod).get("containerStatuses") or [] if isinstance(cs, dict)]
    return max([e for e in ends if e], default=str(meta(pod).get("deletionTimestamp") or ""))


def delayed_deletions(failed_pods: list[Obj], busy: set[int]) -> dict[int, Obj]:
    """getPodsWithDelayedDeletionPerIndex: per index not succeeded, failed or active (``busy``), the latest
    failed pod (most failures, then the last to end): it keeps its finalizer until its replacement is made
    with its counts."""
    latest: dict[int, Obj] = {}
    for pod in failed_pods:
        index = completion_index(pod)
        if index is None or index in busy:
            continue
        last = latest.get(index)
        if last is None or (absolute_failure_count(last) <= absolute_failure_count(pod)
                            and _finished_at(pod) >= _finished_at(last)):
            latest[index] = pod
    return latest


# --- success policy ---------------------------------------------------------------------------------


def match_success_policy(job: Obj, completions: int, succeeded: set[int]) -> str | None:
    """matchSuccessPolicy: ``Matched rules at index N`` for the first rule met — every index of its
    ``succeededIndexes`` succeeded, or ``succeededCount`` of them (of any index without ``succeededIndexes``)
    — else None."""
    policy = spec_of(job).get("successPolicy")
    if not isinstance(policy, dict) or not succeeded:
        return None
    for position, rule in enumerate(policy.get("rules") or []):
        if not isinstance(rule, dict):
            continue
        count = rule.get("succeededCount")
        count = count if isinstance(count, int) and not isinstance(count, bool) else None
        if rule.get("succeededIndexes") is not None:
            required = parse_indexes(rule["succeededIndexes"], completions)
            if not required:
                continue  # (a list upstream cannot read: the rule never matches)
            met = len(required & succeeded)
            if met == len(required) or (count is not None and met >= count):
                return f"Matched rules at index {position}"
        elif count is not None and len(succeeded) >= count:
            return f"Matched rules at index {position}"
    return None
