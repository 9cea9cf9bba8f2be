"""autoscaling/v2 HorizontalPodAutoscaler rules of kube-apiserver (pkg/apis/autoscaling/validation), with upstream's
field paths and texts: replica bounds, the scale target reference, each metric's source and target, and the
scaling behavior's windows, select policies and policies. Not checked: the scale target's apiVersion (1.35's
rule) and the tolerance."""

from __future__ import annotations

from dralloc.api.autoscaling_v2 import (
    METRIC_SOURCE_TYPES,
    POLICY_TYPES,
    SELECT_POLICIES,
    CrossVersionObjectReference,
    HorizontalPodAutoscaler,
    HorizontalPodAutoscalerStatus,
    HPAScalingRules,
    MetricIdentifier,
    MetricSpec,
    MetricTarget,
)
from dralloc.validation import field as f
from dralloc.validation.formats import is_dns1123_label
from dralloc.validation.podgroups import kind_and_name_errors, path_segment_problems
from dralloc.validation.quantities import container_resource_name_errors

MAX_PERIOD_SECONDS = 1800
MAX_STABILIZATION_WINDOW_SECONDS = 3600
_SOURCE_FIELDS = {"Object": "object", "Pods": "pods", "Resource": "resource", "External": "external",
                  "ContainerResource": "containerResource"}
_POPULATE = "must populate information for the given metric source"


def reference_errors(ref: CrossVersionObjectReference, path: str) -> list[f.FieldError]:
    """ValidateCrossVersionObjectReference: a kind and a name, both path segments."""
    return kind_and_name_errors(ref.kind, ref.name, path)


def _target_errors(target: MetricTarget, path: str) -> list[f.FieldError]:
    """validateMetricTarget."""
    errs: list[f.FieldError] = []
    if not target.type:
        errs.append(f.required(f.child(path, "type"), "must specify a metric target type"))
    if target.type not in ("Utilization", "Value", "AverageValue"):
        errs.append(f.invalid(f.child(path, "type"), target.type, "must be either Utilization, Value, or AverageValue"))
    if target.value is not None and target.value.sign() != 1:
        errs.append(f.invalid(f.child(path, "value"), str(target.value), "must be positive"))
    if target.average_value is not None and target.average_value.sign() != 1:
        errs.append(f.invalid(f.child(path, "averageValue"), str(target.average_value), "must be positive"))
    if target.average_utilization is not None and target.average_utilization < 1:
        errs.append(f.invalid(f.child(path, "averageUtilization"), target.average_utilization,
                              "must be greater than 0"))
    return errs


def _identifier_errors(metric: MetricIdentifier, path: str) -> list[f.FieldError]:
    if not metric.name:
        return [f.required(f.child(path, "name"), "must specify a metric name")]
    return [f.invalid(f.child(path, "name"), metric.name, m) for m in path_segment_problems(metric.name)]


def _utilization_or_value(target: MetricTarget, path: str) -> list[f.FieldError]:
    """A resource target: a raw average value or a utilization, not both."""
    where = f.child(path, "target")
    if target.average_utilization is None and target.average_value is None:
        return [f.required(f.child(where, "averageUtilization"),
                           "must set either a target raw value or a target utilization")]
    if target.average_utilization is not None and target.average_value is not None:
        return [f.forbidden(f.child(where, "averageValue"),
                            "may not set both a target raw value and a target utilization")]
    return []


def _source_errors(spec: MetricSpec, present: str, path: str) -> list[f.FieldError]:
    """The rules of the one source a metric populates (the first of several)."""
    where = f.child(path, present)
    if present == "object" and spec.object is not None:
        src = spec.object
        errs = (reference_errors(src.described_object, f.child(where, "describedObject"))
                + _identifier_errors(src.metric, f.child(where, "metric")) + _target_errors(src.target,
                                                                                           f.child(where, "target")))
        if src.target.value is None and src.target.average_value is None:
            errs.append(f.required(f.child(f.child(where, "target"), "averageValue"),
                                   "must set either a target value or averageValue"))
        return errs
    if present == "external" and spec.external is not None:
        ext = spec.external
        errs = _identifier_errors(ext.metric, f.child(where, "metric")) + _target_errors(ext.target,
                                                                                         f.child(where, "target"))
        target_path = f.child(where, "target")
        if ext.target.value is None and ext.target.average_value is None:
            errs.append(f.required(f.child(target_path, "averageValue"),
                                   "must set either a target value for metric or a per-pod target"))
        if ext.target.value is not None and ext.target.average_value is not None:
            errs.append(f.forbidden(f.child(target_path, "value"),
                                    "may not set both a target value for metric and a per-pod target"))
        return errs
    if present == "pods" and spec.pods is not None:
        pods = spec.pods
        errs = _identifier_errors(pods.metric, f.child(where, "metric")) + _target_errors(pods.target,
                                                                                          f.child(where, "target"))
        if pods.target.average_value is None:
            errs.append(f.required(f.child(f.child(where, "target"), "averageValue"),
                                   "must specify a positive target averageValue"))
        return errs
    if present == "resource" and spec.resource is not None:
        res = spec.resource
        errs = [] if res.name else [f.required(f.child(where, "name"), "must specify a resource name")]
        return errs + _target_errors(res.target, f.child(where, "target")) + _utilization_or_value(res.target, where)
    if present == "containerResource" and spec.container_resource is not None:
        cres = spec.container_resource
        if not cres.name:
            errs = [f.required(f.child(where, "name"), "must specify a resource name")]
        else:
            errs = container_resource_name_errors(cres.name, f.child(where, "name"))
        if not cres.container:
            errs.append(f.required(f.child(where, "container"), "must specify a container"))
        else:
            errs += [f.invalid(f.child(where, "container"), cres.container, m) for m in is_dns1123_label(cres.container)]
        return errs + _target_errors(cres.target, f.child(where, "target")) + _utilization_or_value(cres.target,
                                                                                                     where)
    return []


def _metric_errors(spec: MetricSpec, path: str) -> list[f.FieldError]:
    """validateMetricSpec: a known type, and exactly the source it names."""
    errs: list[f.FieldError] = []
    if not spec.type:
        errs.append(f.required(f.child(path, "type"), "must specify a metric source type"))
    if spec.type not in METRIC_SOURCE_TYPES:
        errs.append(f.not_supported(f.child(path, "type"), spec.type, list(METRIC_SOURCE_TYPES)))
    present = [name for name, value in (("object", spec.object), ("external", spec.external), ("pods", spec.pods),
                                         ("resource", spec.resource), ("containerResource", spec.container_resource))
               if value is not None]
    if present:
        errs += _source_errors(spec, present[0], path)
    expected = _SOURCE_FIELDS.get(spec.type)
    if expected is None:
        errs.append(f.not_supported(f.child(path, "type"), spec.type, list(METRIC_SOURCE_TYPES)))
    elif expected not in present:
        errs.append(f.required(f.child(path, expected), _POPULATE))
    if len(present) != 1:
        # (upstream goes through a Go map here: the order of these errors is not fixed; sorted by name)
        errs += [f.forbidden(f.child(path, name), "must populate the given metric source only")
                 for name in sorted(set(present) - {expected or ""})]
    return errs


def _rules_errors(rules: HPAScalingRules | None, path: str) -> list[f.FieldError]:
    """validateScalingRules and validateScalingPolicy."""
    if rules is None:
        return []
    errs: list[f.FieldError] = []
    window = rules.stabilization_window_seconds
    if window is not None and window < 0:
        errs.append(f.invalid(f.child(path, "stabilizationWindowSeconds"), window, "must be greater than or equal to zero"))
    if window is not None and window > MAX_STABILIZATION_WINDOW_SECONDS:
        errs.append(f.invalid(f.child(path, "stabilizationWindowSeconds"), window,
                              f"must be less than or equal to {MAX_STABILIZATION_WINDOW_SECONDS}"))
    if rules.select_policy is not None and rules.select_policy not in SELECT_POLICIES:
        errs.append(f.not_supported(f.child(path, "selectPolicy"), rules.select_policy, list(SELECT_POLICIES)))
    policies_path = f.child(path, "policies")
    if not rules.policies:
        errs.append(f.required(policies_path, "must specify at least one Policy"))
    for i, policy in enumerate(rules.policies or ()):
        where = f.index(policies_path, i)
        if policy.type not in POLICY_TYPES:
            errs.append(f.not_supported(f.child(where, "type"), policy.type, list(POLICY_TYPES)))
        if policy.value <= 0:
            errs.append(f.invalid(f.child(where, "value"), policy.value, "must be greater than zero"))
        if policy.period_seconds <= 0:
            errs.append(f.invalid(f.child(where, "periodSeconds"), policy.period_seconds, "must be greater than zero"))
        if policy.period_seconds > MAX_PERIOD_SECONDS:
            errs.append(f.invalid(f.child(where, "periodSeconds"), policy.period_seconds,
                                  f"must be less than or equal to {MAX_PERIOD_SECONDS}"))
    return errs


def hpa_spec_errors(hpa: HorizontalPodAutoscaler, min_replicas_lower_bound: int = 1) -> list[f.FieldError]:
    """validateHorizontalPodAutoscalerSpec (``min_replicas_lower_bound``: 0 when the old object already scales to
    zero, as upstream ratchets HPAScaleToZero)."""
    spec = hpa.spec
    errs: list[f.FieldError] = []
    if spec.min_replicas is not None and spec.min_replicas < min_replicas_lower_bound:
        errs.append(f.invalid("spec.minReplicas", spec.min_replicas,
                              f"must be greater than or equal to {min_replicas_lower_bound}"))
    if spec.max_replicas < 1:
        errs.append(f.invalid("spec.maxReplicas", spec.max_replicas, "must be greater than 0"))
    if spec.min_replicas is not None and spec.max_replicas < spec.min_replicas:
        errs.append(f.invalid("spec.maxReplicas", spec.max_replicas, "must be greater than or equal to `minReplicas`"))
    errs += reference_errors(spec.scale_target_ref, "spec.scaleTargetRef")
    kinds = set()
    for i, metric in enumerate(spec.metrics or ()):
        errs += _metric_errors(metric, f.index("spec.metrics", i))
        kinds.add(metric.type)
    if spec.min_replicas == 0 and not kinds & {"Object", "External"}:
        errs.append(f.forbidden("spec.metrics", "must specify at least one Object or External metric to support "
                                                "scaling to zero replicas"))
    if spec.behavior is not None:
        errs += _rules_errors(spec.behavior.scale_up, "spec.behavior.scaleUp")
        errs += _rules_errors(spec.behavior.scale_down, "spec.behavior.scaleDown")
    return errs


def hpa_status_errors(status: HorizontalPodAutoscalerStatus | None) -> list[f.FieldError]:
    """ValidateHorizontalPodAutoscalerStatusUpdate: non-negative replica counts."""
    if status is None:
        return []
    errs: list[f.FieldError] = []
    for name, value in (("currentReplicas", status.current_replicas or 0), ("desiredReplicas", status.desired_replicas)):
        if value < 0:
            errs.append(f.invalid(f"status.{name}", value, "must be greater than or equal to 0"))
    return errs
