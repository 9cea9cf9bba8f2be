"""A pod's rules as kube-apiserver validates the stored (JSON) pod: the light validation of its spec
(:func:`dralloc.validation.pod.pod_spec_errors` over the modelled fields, images required, the active deadline),
its pod-specific annotations, and which updates of a pod are allowed."""

from __future__ import annotations

from typing import Any

import msgspec

from dralloc.api.core_v1 import PodSpec
from dralloc.api.quantity import quantity_dec_hook
from dralloc.validation import field as f
from dralloc.validation.meta import name_is_dns_subdomain, validate_object_meta
from dralloc.validation.pod import pod_spec_errors
from dralloc.validation.pod_annotations import (
    annotation_change_errors,
    keeps_invalid_deletion_cost,
    pod_annotation_errors,
)

MAX_INT32 = 2**31 - 1
# The fields of a pod's spec an update may change (kube-apiserver's ValidatePodUpdate lists them in its error).
_MUTABLE_SPEC_MESSAGE = (
    "pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,"
    "`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),"
    "`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)")


def pod_spec_json_errors(spec: Any, pod_name: str | None = None) -> list[f.FieldError]:
    """ValidatePodSpec's rules for what dralloc models (:func:`dralloc.validation.pod.pod_spec_errors`, images
    required), and the active deadline, which only the stored JSON holds."""
    if not isinstance(spec, dict):
        return [f.required("spec", "")]
    try:
        typed_spec = msgspec.convert(spec, PodSpec, dec_hook=quantity_dec_hook, str_keys=True)
    except (msgspec.ValidationError, ValueError, TypeError) as exc:
        return [f.invalid("spec", f.OMIT, str(exc))]
    errors = pod_spec_errors(typed_spec, "spec", pod_name, require_image=True)
    deadline = spec.get("activeDeadlineSeconds")
    if deadline is not None and not (isinstance(deadline, int) and 1 <= deadline <= MAX_INT32):
        errors.append(f.invalid("spec.activeDeadlineSeconds", deadline, f"must be between 1 and {MAX_INT32}, inclusive"))
    return errors


def _deadline_update_errors(new: Any, old: Any) -> tuple[list[f.FieldError], bool]:
    """ValidatePodUpdate's rule for spec.activeDeadlineSeconds: it may be set, or lowered, but not raised nor
    unset. The errors, and whether upstream stops there (a bad new value)."""
    where = "spec.activeDeadlineSeconds"
    if new is None:
        return ([f.invalid(where, None, "must not update from a positive integer to nil value")]
                if old is not None else []), False
    if not isinstance(new, int) or not 0 <= new <= MAX_INT32:
        return [f.invalid(where, new, f"must be between 0 and {MAX_INT32}, inclusive")], True
    if isinstance(old, int) and old < new:
        return [f.invalid(where, new, "must be less than or equal to previous value")], True
    return [], False


def pod_create_errors(pod: dict[str, Any], typed_meta: Any) -> list[f.FieldError]:
    errors = validate_object_meta(typed_meta, True, name_is_dns_subdomain, require_namespace=True)
    spec = pod.get("spec")
    annotations = (pod.get("metadata") or {}).get("annotations")
    if annotations:  # (none, the common case: nothing for the pod-specific rules to look at)
        errors += pod_annotation_errors(annotations, spec)
    return errors + pod_spec_json_errors(spec, typed_meta.name)


def _without_mutable(spec: Any) -> Any:
    if not isinstance(spec, dict):
        return spec
    out = {k: v for k, v in spec.items() if k not in ("activeDeadlineSeconds", "tolerations",
                                                      "terminationGracePeriodSeconds", "schedulingGates")}
    for kind in ("containers", "initContainers"):
        if isinstance(out.get(kind), list):
            out[kind] = [{k: v for k, v in c.items() if k != "image"} if isinstance(c, dict) else c
                         for c in out[kind]]
    return out


def pod_update_errors(new: dict[str, Any], old: dict[str, Any]) -> list[f.FieldError]:
    """The pod-specific annotation rules (an invalid deletion cost may be kept), then what may change: an
    update may change only images, the active deadline, tolerations (additions) and scheduling gates
    (removals); spec.nodeName is set through /binding."""
    new_annotations = (new.get("metadata") or {}).get("annotations")
    old_annotations = (old.get("metadata") or {}).get("annotations")
    annotations = (pod_annotation_errors(new_annotations, new.get("spec"), keeps_invalid_deletion_cost(old_annotations))
                   + annotation_change_errors(new_annotations, old_annotations))
    return annotations + _spec_update_errors(new, old)


def _spec_update_errors(new: dict[str, Any], old: dict[str, Any]) -> list[f.FieldError]:
    new_spec, old_spec = new.get("spec") or {}, old.get("spec") or {}
    deadline, stop = _deadline_update_errors(new_spec.get("activeDeadlineSeconds"),
                                             old_spec.get("activeDeadlineSeconds"))
    if stop:
        return pod_spec_json_errors(new_spec) + deadline
    if _without_mutable(new_spec) != _without_mutable(old_spec):
        return deadline + [f.forbidden("spec", _MUTABLE_SPEC_MESSAGE)]
    old_tolerations = old_spec.get("tolerations") or []
    new_tolerations = new_spec.get("tolerations") or []
    if any(t not in new_tolerations for t in old_tolerations):
        return deadline + [f.forbidden("spec.tolerations", "existing toleration can not be modified except its "
                                                           "tolerationSeconds")]
    new_gates = new_spec.get("schedulingGates") or []
    if any(g not in (old_spec.get("schedulingGates") or []) for g in new_gates):
        return deadline + [f.forbidden("spec.schedulingGates",
                                       "only deletion is allowed, but found new scheduling gate")]
    return pod_spec_json_errors(new_spec) + deadline
