"""core/v1 ReplicationController rules of kube-apiserver (pkg/apis/core/validation:
ValidateReplicationControllerSpec, ValidatePodTemplateSpecForRC, ValidateReplicationControllerStatus), with
upstream's field paths and texts. A ReplicationController's selector is a label map, required, matching its
template's labels; unlike a ReplicaSet's it may change."""

from __future__ import annotations

from typing import Any

from dralloc.api.core_v1 import PodTemplateSpec
from dralloc.validation import field as f
from dralloc.validation.pod import pod_template_errors
from dralloc.validation.quantities import NEGATIVE
from dralloc.validation.workloads import MISMATCH

GREATER_THAN_REPLICAS = "cannot be greater than status.replicas"


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _nonnegative(value: int, path: str) -> list[f.FieldError]:
    return [f.invalid(path, value, NEGATIVE)] if value < 0 else []


def rc_spec_errors(spec: dict[str, Any], template: PodTemplateSpec | None) -> list[f.FieldError]:
    """ValidateReplicationControllerSpec (``template``: the spec's template decoded, None when it has none)."""
    selector = spec.get("selector") if isinstance(spec.get("selector"), dict) else {}
    errs = _nonnegative(_int(spec.get("minReadySeconds")), "spec.minReadySeconds")
    if not selector:
        errs.append(f.required("spec.selector"))
    errs += _nonnegative(_int(spec.get("replicas")), "spec.replicas")
    if template is None:
        return errs + [f.required("spec.template")]
    labels = dict(template.metadata.labels or {}) if template.metadata else {}
    if selector and any(labels.get(k) != v for k, v in selector.items()):
        errs.append(f.invalid("spec.template.metadata.labels", labels, MISMATCH))
    errs += pod_template_errors(template, "spec.template")
    policy = template.spec.restart_policy if template.spec.restart_policy is not None else "Always"
    if policy != "Always":
        errs.append(f.not_supported("spec.template.spec.restartPolicy", policy, ["Always"]))
    raw_template = spec.get("template")
    raw_pod = raw_template.get("spec") if isinstance(raw_template, dict) else None
    if isinstance(raw_pod, dict) and raw_pod.get("activeDeadlineSeconds") is not None:
        errs.append(f.forbidden("spec.template.spec.activeDeadlineSeconds",
                                "activeDeadlineSeconds in ReplicationController is not Supported"))
    return errs


def rc_status_errors(status: dict[str, Any]) -> list[f.FieldError]:
    """ValidateReplicationControllerStatus: non-negative counts, none above ``replicas``, available ones not
    above the ready ones."""
    counts = {name: _int(status.get(name)) for name in ("replicas", "fullyLabeledReplicas", "readyReplicas",
                                                       "availableReplicas", "observedGeneration")}
    errs: list[f.FieldError] = []
    for name, value in counts.items():
        errs += _nonnegative(value, f"status.{name}")
    for name in ("fullyLabeledReplicas", "readyReplicas", "availableReplicas"):
        if counts[name] > counts["replicas"]:
            errs.append(f.invalid(f"status.{name}", counts[name], GREATER_THAN_REPLICAS))
    if counts["availableReplicas"] > counts["readyReplicas"]:
        errs.append(f.invalid("status.availableReplicas", counts["availableReplicas"],
                              "cannot be greater than readyReplicas"))
    return errs
