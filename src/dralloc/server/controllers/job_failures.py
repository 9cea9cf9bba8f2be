"""How the Job controller judges a failed pod (``pkg/controller/job/pod_failure_policy.go`` and the backoff
rules of ``job_controller.go``):

* ``match_pod_failure_policy``: the first rule of ``spec.podFailurePolicy`` that matches the pod — by a
  terminated container's non-zero exit code (``onExitCodes``, ``In``/``NotIn``, app containers before init
  containers, optionally one container by name) or by a pod condition (``onPodConditions``) — decides:
  ``FailJob`` (the Job fails, with upstream's message), ``Ignore`` (not counted as a failure), ``Count`` (or no
  rule: counted towards ``backoffLimit``); ``FailIndex`` counts too, and fails the pod's index at once
  (``job_indexes.index_failed``).
* ``past_backoff_limit_on_failure``: with ``restartPolicy: OnFailure`` the container restarts of the active
  pods count against ``backoffLimit`` too.
* ``active_deadline``: when a started, unsuspended Job with ``activeDeadlineSeconds`` has been active that
  long (pastActiveDeadline); the Job fails then with reason DeadlineExceeded."""

from __future__ import annotations

from typing import Any

from dralloc.server.controllers.workload_pods import Obj, meta, seconds_at, spec_of, status_of

FAIL_JOB, IGNORE, COUNT, FAIL_INDEX = "FailJob", "Ignore", "Count", "FailIndex"
DEADLINE_EXCEEDED = ("DeadlineExceeded", "Job was active longer than specified deadline")


def _terminated_container(pod: Obj, requirement: Obj) -> Obj | None:
    """matchOnExitCodes: a terminated container (app containers first, then init) with a non-zero exit code
    the requirement's operator accepts."""
    wanted = requirement.get("containerName")
    values = set(requirement.get("values") or [])
    for key in ("containerStatuses", "initContainerStatuses"):
        for cs in status_of(pod).get(key) or []:
            terminated = ((cs or {}).get("state") or {}).get("terminated") if isinstance(cs, dict) else None
            if not isinstance(terminated, dict):
                continue
            if wanted is not None and wanted != cs.get("name"):
                continue
            code = terminated.get("exitCode")
            if not isinstance(code, int) or code == 0:
                continue
            operator = requirement.get("operator")
            if (operator == "In" and code in values) or (operator == "NotIn" and code not in values):
                return cs
    return None


def _matching_condition(pod: Obj, patterns: list[Any]) -> Obj | None:
    """matchOnPodConditions: a pod condition of a pattern's type and status."""
    for condition in status_of(pod).get("conditions") or []:
        if not isinstance(condition, dict):
            continue
        for pattern in patterns:
            if isinstance(pattern, dict) and (condition.get("type"), condition.get("status")) == (
                    pattern.get("type"), pattern.get("status", "True")):
                return condition
    return None


def match_pod_failure_policy(job: Obj, pod: Obj) -> tuple[str | None, bool, str | None]:
    """matchPodFailurePolicy: the FailJob message (or None), whether the failure counts, and the action of
    the rule that matched (None: none did)."""
    policy = spec_of(job).get("podFailurePolicy")
    if not isinstance(policy, dict):
        return None, True, None
    where = f"{meta(pod).get('namespace')}/{meta(pod).get('name')}"
    for index, rule in enumerate(policy.get("rules") or []):
        if not isinstance(rule, dict):
            continue
        action = rule.get("action")
        if isinstance(rule.get("onExitCodes"), dict):
            container = _terminated_container(pod, rule["onExitCodes"])
            if container is None:
                continue
            if action == FAIL_JOB:
                code = container["state"]["terminated"]["exitCode"]
                return (f"Container {container.get('name')} for pod {where} failed with exit code {code} "
                        f"matching {action} rule at index {index}"), True, action
        elif isinstance(rule.get("onPodConditions"), list):
            condition = _matching_condition(pod, rule["onPodConditions"])
            if condition is None:
                continue
            if action == FAIL_JOB:
                return (f"Pod {where} has condition {condition.get('type')} matching {action} rule at index "
                        f"{index}"), True, action
        else:
            continue
        if action == IGNORE:
            return None, False, action
        if action in (COUNT, FAIL_INDEX):
            return None, True, action
    return None, True, None


def past_backoff_limit_on_failure(job: Obj, active: list[Obj]) -> bool:
    """pastBackoffLimitOnFailure: restarts of the running and pending pods' containers reach the limit."""
    template_spec = (spec_of(job).get("template") or {}).get("spec") or {}
    if template_spec.get("restartPolicy") != "OnFailure":
        return False
    restarts = 0
    for pod in active:
        if status_of(pod).get("phase") not in ("Running", "Pending"):
            continue
        for key in ("initContainerStatuses", "containerStatuses"):
            restarts += sum(int(cs.get("restartCount") or 0) for cs in status_of(pod).get(key) or []
                            if isinstance(cs, dict))
    limit = spec_of(job).get("backoffLimit")
    limit = limit if isinstance(limit, int) else 6
    return restarts > 0 if limit == 0 else restarts >= limit


def active_deadline(job: Obj, start_time: Any) -> float | None:
    """The clock reading at which the Job has been active for ``activeDeadlineSeconds`` since ``start_time``
    (its status's startTime); None without a deadline or a start, or while it is suspended (the deadline
    counts the time a Job is continuously active: resuming starts it again)."""
    seconds = spec_of(job).get("activeDeadlineSeconds")
    started = seconds_at(start_time) if start_time else None
    if not isinstance(seconds, int) or isinstance(seconds, bool) or started is None \
            or spec_of(job).get("suspend") is True:
        return None
    return started + seconds
