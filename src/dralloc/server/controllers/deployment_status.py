"""A Deployment's status and conditions as kube-controller-manager's deployment controller writes them
(``pkg/controller/deployment/sync.go``, ``progress.go`` and ``util/deployment_util.go``):

* ``calculate_status``: the counts over its ReplicaSets and the Available condition.
* ``paused_conditions`` (checkPausedConditions): a paused Deployment's Progressing condition is Unknown with
  reason DeploymentPaused, and DeploymentResumed once resumed; a timed out one is left as it is.
* ``rollout_conditions`` (syncRolloutStatus): Progressing True while the rollout makes progress (its update
  time moves), NewReplicaSetAvailable when it is complete, False with ProgressDeadlineExceeded once nothing
  moved for ``progressDeadlineSeconds``; ``recheck_at`` is when to look again (requeueStuckDeployment).

A condition is set as SetDeploymentCondition sets it: one of the same status and reason is kept as it is
(times and message too), one that changes goes to the end of the list, keeping its transition time while its
status stays."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from typing import Any

from dralloc.controllers.workloads import rollout_fenceposts
from dralloc.server.clock import RFC3339
from dralloc.server.controllers.workload_pods import (
    Obj,
    PodSummary,
    meta,
    min_ready_seconds,
    replicas,
    spec_of,
    stamp,
    status_of,
    without_zeros,
)

MAX_INT32 = 2**31 - 1

AVAILABLE = ("True", "MinimumReplicasAvailable", "Deployment has minimum availability.")
UNAVAILABLE = ("False", "MinimumReplicasUnavailable", "Deployment does not have minimum availability.")
PAUSED = ("Unknown", "DeploymentPaused", "Deployment is paused")
RESUMED = ("Unknown", "DeploymentResumed", "Deployment is resumed")
NEW_RS_CREATED = "NewReplicaSetCreated"
FOUND_NEW_RS = "FoundNewReplicaSet"
NEW_RS_AVAILABLE = "NewReplicaSetAvailable"
RS_UPDATED = "ReplicaSetUpdated"
TIMED_OUT = "ProgressDeadlineExceeded"


def _parse(value: Any) -> float | None:
    try:
        return datetime.strptime(str(value), RFC3339).replace(tzinfo=UTC).timestamp()
    except ValueError:
        return None


def find(conditions: Iterable[Any], type_: str) -> Obj | None:
    return next((c for c in conditions if isinstance(c, dict) and c.get("type") == type_), None)


def new_condition(type_: str, status: str, reason: str, message: str, at: str) -> Obj:
    return {"type": type_, "status": status, "lastUpdateTime": at, "lastTransitionTime": at, "reason": reason,
            "message": message}


def set_condition(conditions: list[Any], new: Obj) -> list[Any]:
    """SetDeploymentCondition: the same status and reason keep the condition there is; a changed one goes last
    (keeping its transition time while its status stays)."""
    current = find(conditions, new["type"])
    if current is not None and (current.get("status"), current.get("reason")) == (new["status"], new["reason"]):
        return conditions
    if current is not None and current.get("status") == new["status"]:
        new = {**new, "lastTransitionTime": current.get("lastTransitionTime", new["lastTransitionTime"])}
    return [c for c in conditions if not (isinstance(c, dict) and c.get("type") == new["type"])] + [new]


def without(conditions: list[Any], type_: str) -> list[Any]:
    return [c for c in conditions if not (isinstance(c, dict) and c.get("type") == type_)]


def progress_deadline(deploy: Obj) -> int | None:
    """HasProgressDeadline: the seconds, unless unset or MaxInt32 (no deadline)."""
    value = spec_of(deploy).get("progressDeadlineSeconds")
    if not isinstance(value, int) or isinstance(value, bool) or value == MAX_INT32:
        return None
    return value


def paused_conditions(deploy: Obj, conditions: list[Any], at: str) -> list[Any]:
    """checkPausedConditions: the Progressing condition of a Deployment paused or resumed."""
    if progress_deadline(deploy) is None:
        return conditions
    current = find(conditions, "Progressing")
    if current is not None and current.get("reason") == TIMED_OUT:
        return conditions  # (lack of progress reported is not overwritten)
    paused_shown = current is not None and current.get("reason") == PAUSED[1]
    if spec_of(deploy).get("paused") is True and not paused_shown:
        return set_condition(conditions, new_condition("Progressing", *PAUSED, at))
    if spec_of(deploy).get("paused") is not True and paused_shown:
        return set_condition(conditions, new_condition("Progressing", *RESUMED, at))
    return conditions


def calculate_status(deploy: Obj, sets: list[Obj], new: Obj | None, pods_of: Callable[[Obj], PodSummary],
                     conditions: list[Any], at: str) -> Obj:
    """calculateStatus: the counts over every ReplicaSet's pods, and the Available condition (the others as
    they are in ``conditions``)."""
    summaries = [pods_of(r) for r in sets]
    want = replicas(deploy)
    strategy = spec_of(deploy).get("strategy")
    rolling = (strategy or {}).get("type", "RollingUpdate") == "RollingUpdate"
    # MaxUnavailable: none for Recreate (what it may stop during a rollout is another matter)
    max_unavailable = rollout_fenceposts(strategy, want)[1] if rolling and want else 0
    seconds = min_ready_seconds(deploy)
    available = sum(x.available(seconds) for x in summaries)
    total_spec = sum(replicas(r) for r in sets)
    available_condition = AVAILABLE if available >= want - max_unavailable else UNAVAILABLE
    conditions = set_condition(conditions, new_condition("Available", *available_condition, at))
    return without_zeros({
        "observedGeneration": meta(deploy).get("generation"), "replicas": sum(len(x.active) for x in summaries),
        "updatedReplicas": len(pods_of(new).active) if new is not None else 0,
        "readyReplicas": sum(x.ready for x in summaries), "availableReplicas": available,
        "unavailableReplicas": max(total_spec - available, 0), "conditions": conditions,
        "collisionCount": status_of(deploy).get("collisionCount")},
        "replicas", "updatedReplicas", "readyReplicas", "availableReplicas", "unavailableReplicas", "collisionCount")


def _count(status: Obj, key: str) -> int:
    value = status.get(key)
    return value if isinstance(value, int) else 0


def complete(deploy: Obj, status: Obj) -> bool:
    """DeploymentComplete: every replica updated and available, the newest spec observed."""
    want = replicas(deploy)
    return (_count(status, "updatedReplicas") == want and _count(status, "replicas") == want
            and _count(status, "availableReplicas") == want
            and _count(status, "observedGeneration") >= int(meta(deploy).get("generation") or 0))


def progressing(deploy: Obj, status: Obj) -> bool:
    """DeploymentProgressing: more pods updated, fewer old ones, more ready or available than the stored
    status says."""
    old = status_of(deploy)
    old_old = _count(old, "replicas") - _count(old, "updatedReplicas")
    new_old = _count(status, "replicas") - _count(status, "updatedReplicas")
    return (_count(status, "updatedReplicas") > _count(old, "updatedReplicas") or new_old < old_old
            or _count(status, "readyReplicas") > _count(old, "readyReplicas")
            or _count(status, "availableReplicas") > _count(old, "availableReplicas"))


def timed_out(deploy: Obj, status: Obj, now: float) -> bool:
    """DeploymentTimedOut: the Progressing condition was last updated more than the deadline ago."""
    deadline = progress_deadline(deploy)
    current = find(status.get("conditions") or [], "Progressing")
    if deadline is None or current is None or current.get("reason") == NEW_RS_AVAILABLE:
        return False
    if current.get("reason") == TIMED_OUT:
        return True
    since = _parse(current.get("lastUpdateTime"))
    return since is not None and since + deadline < now


def rollout_conditions(deploy: Obj, status: Obj, new: Obj | None, now: float) -> Obj:
    """syncRolloutStatus: ``status`` (from calculate_status) with its Progressing condition brought up to
    date."""
    conditions = list(status.get("conditions") or [])
    if progress_deadline(deploy) is None:
        return {**status, "conditions": without(conditions, "Progressing")}
    current = find(status_of(deploy).get("conditions") or [], "Progressing")
    finished = _count(status, "replicas") == _count(status, "updatedReplicas") and current is not None \
        and current.get("reason") == NEW_RS_AVAILABLE
    if finished:
        return status
    at = stamp(now)
    subject = f'ReplicaSet "{meta(new).get("name")}"' if new is not None else f'Deployment "{meta(deploy).get("name")}"'
    if complete(deploy, status):
        conditions = set_condition(conditions, new_condition(
            "Progressing", "True", NEW_RS_AVAILABLE, f"{subject} has successfully progressed.", at))
    elif progressing(deploy, status):
        condition = new_condition("Progressing", "True", RS_UPDATED, f"{subject} is progressing.", at)
        if current is not None and current.get("status") == "True":
            condition["lastTransitionTime"] = current.get("lastTransitionTime", at)
        # (removed first: a progressing rollout moves its update time even with the same reason)
        conditions = without(conditions, "Progressing") + [condition]
    elif timed_out(deploy, status, now):
        conditions = set_condition(conditions, new_condition(
            "Progressing", "False", TIMED_OUT, f"{subject} has timed out progressing.", at))
    return {**status, "conditions": conditions}


def recheck_at(deploy: Obj, status: Obj) -> float | None:
    """requeueStuckDeployment: when the Deployment may time out (None: it cannot)."""
    deadline = progress_deadline(deploy)
    current = find(status.get("conditions") or [], "Progressing")
    if deadline is None or current is None or complete(deploy, status) or current.get("reason") == TIMED_OUT:
        return None
    since = _parse(current.get("lastUpdateTime"))
    return None if since is None else since + deadline + 1
