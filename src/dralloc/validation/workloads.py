"""The workload kinds dralloc expands into pods — Deployment, ReplicaSet, StatefulSet, DaemonSet (apps
validation) and Job (batch validation) — for what changes the pods a simulation gets: replica and
parallelism counts, the selector (required, well formed, and matching the template's labels), the pod
template (its labels and its pod spec, :mod:`dralloc.validation.pod`) and its restart policy."""

from __future__ import annotations

from typing import Any

from dralloc.api.apps_v1 import DaemonSet, Deployment, ReplicaSet, StatefulSet
from dralloc.api.batch_v1 import Job
from dralloc.api.core_v1 import PodTemplateSpec
from dralloc.api.meta import LabelSelector, LabelSelectorRequirement
from dralloc.validation import field as f
from dralloc.validation.formats import is_label_value
from dralloc.validation.meta import validate_label_name, validate_labels
from dralloc.validation.pod import pod_template_errors
from dralloc.validation.quantities import NEGATIVE

Workload = Deployment | ReplicaSet | StatefulSet | DaemonSet | Job
_EMPTY_SELECTOR = {"Deployment": "deployment", "ReplicaSet": "deployment",  # (ReplicaSet's text says deployment)
                   "StatefulSet": "statefulset", "DaemonSet": "daemonset"}
MISMATCH = "`selector` does not match template `labels`"


def nonnegative_errors(value: int | None, path: str) -> list[f.FieldError]:
    return [f.invalid(path, value, NEGATIVE)] if value is not None and value < 0 else []


def _requirement_errors(req: LabelSelectorRequirement, path: str) -> list[f.FieldError]:
    errs: list[f.FieldError] = []
    values = req.values or []
    if req.operator in ("In", "NotIn"):
        if not values:
            errs.append(f.required(f.child(path, "values"), "must be specified when `operator` is 'In' or 'NotIn'"))
    elif req.operator in ("Exists", "DoesNotExist"):
        if values:
            errs.append(f.forbidden(f.child(path, "values"),
                                    "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"))
    else:
        errs.append(f.invalid(f.child(path, "operator"), req.operator, "not a valid selector operator"))
    errs += validate_label_name(req.key, f.child(path, "key"))
    for i, value in enumerate(values):
        errs += [f.invalid(f.index(f.child(path, "values"), i), value, m) for m in is_label_value(value)]
    return errs


def label_selector_errors(selector: LabelSelector, path: str) -> list[f.FieldError]:
    """ValidateLabelSelector (label values checked strictly, as for every workload's spec.selector)."""
    errs = validate_labels(selector.match_labels, f.child(path, "matchLabels"))
    for i, req in enumerate(selector.match_expressions or ()):
        errs += _requirement_errors(req, f.index(f.child(path, "matchExpressions"), i))
    return errs


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


def _restart_policy_errors(template: PodTemplateSpec, path: str, allowed: list[str]) -> list[f.FieldError]:
    policy = template.spec.restart_policy if template.spec.restart_policy is not None else "Always"
    return [] if policy in allowed else [f.not_supported(f.child(path, "spec.restartPolicy"), policy, allowed)]


def _apps_spec_errors(kind: str, spec: Any, template: PodTemplateSpec | None) -> list[f.FieldError]:
    errs = nonnegative_errors(getattr(spec, "replicas", None), "spec.replicas")
    selector: LabelSelector | None = spec.selector
    if selector is None:
        errs.append(f.required("spec.selector", ""))
    else:
        errs += label_selector_errors(selector, "spec.selector")
        if _is_empty(selector):
            errs.append(f.invalid("spec.selector", selector, f"empty selector is invalid for {_EMPTY_SELECTOR[kind]}"))
    if template is None:
        return errs + [f.required("spec.template", "")]
    if selector is not None and label_selector_errors(selector, "spec.selector"):
        # upstream cannot make a selector of it, says so and checks no template
        return errs + [f.invalid("spec.selector", selector, "invalid label selector")]
    # no selector selects nothing (so no labels match); an empty one selects everything
    if selector is None or (not _is_empty(selector) and not selector_matches(selector, _template_labels(template))):
        errs.append(f.invalid("spec.template.metadata.labels", _template_labels(template), MISMATCH))
    errs += pod_template_errors(template, "spec.template")
    return errs + _restart_policy_errors(template, "spec.template", ["Always"])


def _job_spec_errors(job: Job) -> list[f.FieldError]:
    spec = job.spec
    errs = nonnegative_errors(spec.parallelism, "spec.parallelism")
    errs += nonnegative_errors(spec.completions, "spec.completions")
    errs += nonnegative_errors(spec.backoff_limit, "spec.backoffLimit")
    # a Job without a selector gets one generated, with the same label added to its template: only a selector
    # written out is checked against the template
    if spec.selector is not None:
        selector_errs = label_selector_errors(spec.selector, "spec.selector")
        errs += selector_errs
        if not selector_errs and not selector_matches(spec.selector, _template_labels(spec.template)):
            errs.append(f.invalid("spec.template.metadata.labels", _template_labels(spec.template), MISMATCH))
    errs += pod_template_errors(spec.template, "spec.template")
    return errs + _restart_policy_errors(spec.template, "spec.template", ["OnFailure", "Never"])


def workload_spec_errors(obj: Workload) -> list[f.FieldError]:
    """The spec rules of one workload (its metadata is checked by the caller)."""
    if isinstance(obj, Job):
        return _job_spec_errors(obj)
    return _apps_spec_errors(type(obj).__name__, obj.spec, obj.spec.template)
