"""The workload kinds dralloc expands into pods — Deployment, ReplicaSet, StatefulSet, DaemonSet (apps
validation) and Job (batch validation) — for what changes the pods a simulation gets: replica and
parallelism counts, the selector (required, well formed, and matching the template's labels), the pod
template (its labels and its pod spec, :mod:`dralloc.validation.pod`) and its restart policy."""

from __future__ import annotations

import dataclasses
import re

import msgspec

from dralloc.api import cron_schedule
from dralloc.api.apps_v1 import (
    DaemonSet,
    DaemonSetSpec,
    Deployment,
    DeploymentSpec,
    ReplicaSet,
    ReplicaSetSpec,
    StatefulSet,
    StatefulSetSpec,
)
from dralloc.api.batch_v1 import CronJob, Job
from dralloc.api.core_v1 import PodTemplateSpec
from dralloc.api.meta import LabelSelector
from dralloc.validation import field as f
from dralloc.validation.job_policies import job_policy_errors
from dralloc.validation.meta import IMMUTABLE, label_selector_errors, validate_annotations, validate_labels
from dralloc.validation.pod import pod_template_errors
from dralloc.validation.quantities import NEGATIVE
from dralloc.validation.rolling_updates import daemon_set_rolling_errors, stateful_set_rolling_errors

Workload = Deployment | ReplicaSet | StatefulSet | DaemonSet | Job
_EMPTY_SELECTOR = {"Deployment": "deployment", "ReplicaSet": "deployment",  # (ReplicaSet's text says deployment)
                   "StatefulSet": "statefulset"}
MISMATCH = "`selector` does not match template `labels`"


def nonnegative_errors(value: int | None, path: str) -> list[f.FieldError]:
    return [f.invalid(path, value, NEGATIVE)] if value is not None and value < 0 else []


def selector_matches(selector: LabelSelector, labels: dict[str, str]) -> bool:
    """Whether ``labels`` satisfy every matchLabels pair and every requirement."""
    if any(labels.get(k) != v for k, v in (selector.match_labels or {}).items()):
        return False
    for req in selector.match_expressions or ():
        present = req.key in labels
        if req.operator == "In" and not (present and labels[req.key] in (req.values or ())):
            return False
        if req.operator == "NotIn" and present and labels[req.key] in (req.values or ()):
            return False
        if (req.operator == "Exists") != present and req.operator in ("Exists", "DoesNotExist"):
            return False
    return True


def _is_empty(selector: LabelSelector) -> bool:
    return not selector.match_labels and not selector.match_expressions


def _template_labels(template: PodTemplateSpec) -> dict[str, str]:
    return dict(template.metadata.labels or {}) if template.metadata else {}


def _always_restarts(template: PodTemplateSpec, path: str) -> list[f.FieldError]:
    policy = template.spec.restart_policy if template.spec.restart_policy is not None else "Always"
    return [] if policy == "Always" else [f.not_supported(f.child(path, "spec.restartPolicy"), policy, ["Always"])]


def _mismatch(template: PodTemplateSpec, path: str) -> f.FieldError:
    return f.invalid(f.child(path, "metadata.labels"), _template_labels(template), MISMATCH)


def _malformed(selector: LabelSelector | None) -> list[f.FieldError]:
    """What is wrong in the selector's form (none: no selector)."""
    return label_selector_errors(selector, "spec.selector") if selector is not None else []


def _selector_errors(selector: LabelSelector | None, kind: str, malformed: list[f.FieldError]) -> list[f.FieldError]:
    """The selector is required, well formed (``malformed``: :func:`_malformed`'s errors) and not empty
    (Deployment, ReplicaSet, StatefulSet)."""
    if selector is None:
        return [f.required("spec.selector", "")]
    errs = list(malformed)
    if _is_empty(selector):
        errs.append(f.invalid("spec.selector", selector, f"empty selector is invalid for {_EMPTY_SELECTOR[kind]}"))
    return errs


def _selects_template(selector: LabelSelector | None, template: PodTemplateSpec) -> bool:
    """Whether the template's labels satisfy the selector as upstream converts it: no selector selects
    nothing, an empty one everything."""
    if selector is None:
        return False
    return _is_empty(selector) or selector_matches(selector, _template_labels(template))


def _replica_set_like_errors(kind: str, spec: DeploymentSpec | ReplicaSetSpec) -> list[f.FieldError]:
    """ValidateDeploymentSpec / ValidateReplicaSetSpec with ValidatePodTemplateSpecForReplicaSet."""
    template = spec.template or PodTemplateSpec()
    malformed = _malformed(spec.selector)
    errs = nonnegative_errors(spec.replicas, "spec.replicas") + _selector_errors(spec.selector, kind, malformed)
    if malformed:
        # upstream cannot make a selector of it, says so and checks no template
        return errs + [f.invalid("spec.selector", spec.selector, "invalid label selector")]
    if not _selects_template(spec.selector, template):
        errs.append(_mismatch(template, "spec.template"))
    return errs + pod_template_errors(template, "spec.template") + _always_restarts(template, "spec.template")


def _stateful_set_errors(spec: StatefulSetSpec) -> list[f.FieldError]:
    """ValidateStatefulSetSpec: upstream checks the template's labels and annotations, not its pod spec
    (the pods the controller creates are validated as pods)."""
    template = spec.template
    errs = stateful_set_rolling_errors(spec.update_strategy)
    errs += nonnegative_errors(spec.replicas, "spec.replicas")
    if spec.ordinals is not None:
        errs += nonnegative_errors(spec.ordinals.start, "spec.ordinals.start")
    malformed = _malformed(spec.selector)
    errs += _selector_errors(spec.selector, "StatefulSet", malformed)
    if malformed:
        errs.append(f.invalid("spec.selector", spec.selector, ""))
    else:
        if not _selects_template(spec.selector, template):
            errs.append(_mismatch(template, "spec.template"))
        meta = template.metadata
        errs += validate_labels(meta.labels if meta else None, "spec.template.labels")
        errs += validate_annotations(meta.annotations if meta else None, "spec.template.annotations")
    return errs + _always_restarts(template, "spec.template")


def _daemon_set_errors(spec: DaemonSetSpec) -> list[f.FieldError]:
    """ValidateDaemonSetSpec: no selector is not refused as such, but selects nothing."""
    template = spec.template
    selector = spec.selector
    errs = label_selector_errors(selector, "spec.selector") if selector is not None else []
    if not errs and not _selects_template(selector, template):
        errs.append(_mismatch(template, "spec.template"))
    if selector is not None and _is_empty(selector):
        errs.append(f.invalid("spec.selector", selector, "empty selector is invalid for daemonset"))
    errs += pod_template_errors(template, "spec.template") + _always_restarts(template, "spec.template")
    return errs + daemon_set_rolling_errors(spec.update_strategy)


def _job_spec_errors(job: Job) -> list[f.FieldError]:
    """ValidateJobSpec. A Job written without a selector gets one generated, with its label added to the
    template: only a selector written out is checked (and against the template's labels)."""
    spec = job.spec
    errs = nonnegative_errors(spec.parallelism, "spec.parallelism")
    errs += nonnegative_errors(spec.completions, "spec.completions")
    errs += nonnegative_errors(spec.active_deadline_seconds, "spec.activeDeadlineSeconds")
    errs += nonnegative_errors(spec.backoff_limit, "spec.backoffLimit")
    errs += job_policy_errors(spec)
    errs += pod_template_errors(spec.template, "spec.template")
    policy = spec.template.spec.restart_policy or ""
    where = "spec.template.spec.restartPolicy"
    if policy in ("Always", ""):  # (unset is defaulted to Always)
        errs.append(f.required(where, 'valid values: "OnFailure", "Never"'))
    elif policy not in ("OnFailure", "Never"):
        errs.append(f.not_supported(where, policy, ["OnFailure", "Never"]))
    elif spec.pod_failure_policy is not None and policy != "Never":
        errs.append(f.invalid(where, policy, 'only "Never" is supported when podFailurePolicy is specified'))
    if spec.selector is not None:
        selector_errs = label_selector_errors(spec.selector, "spec.selector")
        errs += selector_errs
        if not selector_errs and not _selects_template(spec.selector, spec.template):
            errs.append(_mismatch(spec.template, "spec.template"))
    return errs


def workload_spec_errors(obj: Workload) -> list[f.FieldError]:
    """The spec rules of one workload (its metadata is checked by the caller)."""
    if isinstance(obj, Job):
        return _job_spec_errors(obj)
    if isinstance(obj, StatefulSet):
        return _stateful_set_errors(obj.spec)
    if isinstance(obj, DaemonSet):
        return _daemon_set_errors(obj.spec)
    return _replica_set_like_errors(type(obj).__name__, obj.spec)


# ValidateStatefulSetUpdate: what of a StatefulSet's spec may change
STATEFUL_SET_SPEC_FORBIDDEN = ("updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', "
                               "'updateStrategy', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' "
                               "and 'minReadySeconds' are forbidden")
_STATEFUL_SET_MUTABLE = ("replicas", "ordinals", "template", "update_strategy", "revision_history_limit",
                         "persistent_volume_claim_retention_policy", "min_ready_seconds")


def _immutable(new: object, old: object, path: str) -> list[f.FieldError]:
    return [f.invalid(path, new, IMMUTABLE)] if new != old else []


def workload_update_errors(new: Workload | CronJob, old: Workload | CronJob) -> list[f.FieldError]:
    """The rules of replacing a workload's spec (its new spec is checked as on create, by the caller):
    apps/v1 Deployments, ReplicaSets and DaemonSets keep their selector (their strategies' ValidateUpdate); a
    StatefulSet changes only the fields ValidateStatefulSetUpdate lists; a Job keeps its selector, completion
    mode, (NonIndexed) completions, per-index backoff limit and success policy, and its pod template unless it
    is suspended (ValidateJobSpecUpdate)."""
    if isinstance(new, StatefulSet) and isinstance(old, StatefulSet):
        kept = {name: getattr(old.spec, name) for name in _STATEFUL_SET_MUTABLE}
        if msgspec.structs.replace(new.spec, **kept) != old.spec:
            return [f.forbidden("spec", STATEFUL_SET_SPEC_FORBIDDEN)]
        return []
    if isinstance(new, Job) and isinstance(old, Job):
        errs = []
        if new.spec.completion_mode != "Indexed":  # (Indexed Jobs may scale completions with parallelism)
            errs += _immutable(new.spec.completions, old.spec.completions, "spec.completions")
        errs += _immutable(new.spec.selector, old.spec.selector, "spec.selector")
        if not old.spec.suspend:  # (a suspended Job's template may change before it starts)
            errs += _immutable(new.spec.template, old.spec.template, "spec.template")
        errs += _immutable(new.spec.completion_mode, old.spec.completion_mode, "spec.completionMode")
        errs += _immutable(new.spec.backoff_limit_per_index, old.spec.backoff_limit_per_index,
                           "spec.backoffLimitPerIndex")
        return errs + _immutable(new.spec.success_policy, old.spec.success_policy, "spec.successPolicy")
    if isinstance(new, (Deployment, ReplicaSet, DaemonSet)) and type(new) is type(old):
        return _immutable(new.spec.selector, old.spec.selector, "spec.selector")
    return []


CONCURRENCY_POLICIES = ["Allow", "Forbid", "Replace"]
CRON_JOB_NAME_LIMIT = 52  # a Job's name is the CronJob's and an 11-character suffix, within a DNS-1035 label


def cron_job_errors(cron: CronJob, old: CronJob | None = None) -> list[f.FieldError]:
    """ValidateCronJob's own rules (its metadata is checked by the caller): on create, the name leaves room
    for the Jobs' suffix; a schedule robfig/cron's ParseStandard reads, without a TZ= prefix (unless the old
    schedule had one: then not with a time zone too); a start deadline not negative; a time zone Go loads
    (checked when it changes); a known concurrency policy; the Job template's spec as a Job's (its paths
    under ``spec.jobTemplate``); history limits not negative. ``old``: the CronJob an update replaces."""
    spec = cron.spec
    errs = []
    name = cron.metadata.name or ""
    if old is None and len(name) > CRON_JOB_NAME_LIMIT:
        errs.append(f.invalid("metadata.name", name, f"must be no more than {CRON_JOB_NAME_LIMIT} characters"))
    if not spec.schedule:
        errs.append(f.required("spec.schedule", ""))
    else:
        errs += _schedule_errors(spec.schedule, old is not None and "TZ" in old.spec.schedule, spec.time_zone)
    errs += nonnegative_errors(spec.starting_deadline_seconds, "spec.startingDeadlineSeconds")
    if old is None or old.spec.time_zone != spec.time_zone:
        errs += _time_zone_errors(spec.time_zone)
    if spec.concurrency_policy is not None and spec.concurrency_policy not in CONCURRENCY_POLICIES:
        errs.append(f.not_supported("spec.concurrencyPolicy", spec.concurrency_policy, CONCURRENCY_POLICIES))
    job = Job(spec=spec.job_template.spec)
    errs += [dataclasses.replace(e, field=f"spec.jobTemplate.{e.field}") for e in _job_spec_errors(job)]
    errs += nonnegative_errors(spec.successful_jobs_history_limit, "spec.successfulJobsHistoryLimit")
    return errs + nonnegative_errors(spec.failed_jobs_history_limit, "spec.failedJobsHistoryLimit")


def _schedule_errors(schedule: str, tz_allowed: bool, time_zone: str | None) -> list[f.FieldError]:
    errs = []
    try:
        cron_schedule.parse(schedule)
    except cron_schedule.ScheduleError as exc:
        errs.append(f.invalid("spec.schedule", schedule, str(exc)))
    if tz_allowed and "TZ" in schedule and time_zone is not None:
        errs.append(f.invalid("spec.schedule", schedule, "cannot use both timeZone field and TZ or CRON_TZ in schedule"))
    elif not tz_allowed and "TZ" in schedule:
        errs.append(f.invalid("spec.schedule", schedule, "cannot use TZ or CRON_TZ in schedule, use timeZone field instead"))
    return errs


# An IANA name's parts: ASCII letters, '.', '-', '_' (digits and '+' for the legacy names), 14 at most
_TIME_ZONE_PART = re.compile(r"[A-Za-z.\-_0-9+]{1,14}")


def _time_zone_errors(time_zone: str | None) -> list[f.FieldError]:
    if time_zone is None:
        return []
    if not time_zone:
        return [f.invalid("spec.timeZone", time_zone, "timeZone must be nil or non-empty string")]
    for part in time_zone.split("/"):
        if part in (".", "..") or part.startswith("-") or not _TIME_ZONE_PART.fullmatch(part):
            return [f.invalid("spec.timeZone", time_zone, f"unknown time zone {time_zone}")]
    errs = []
    if time_zone.lower() == "local":
        errs.append(f.invalid("spec.timeZone", time_zone,
                              "timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones"))
    try:
        cron_schedule.load_location(time_zone)
    except cron_schedule.ScheduleError as exc:
        errs.append(f.invalid("spec.timeZone", time_zone, str(exc)))
    return errs
