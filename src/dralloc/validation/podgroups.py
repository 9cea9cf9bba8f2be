"""kube-apiserver's rules for scheduling.k8s.io/v1alpha2 Workload and PodGroup (pkg/apis/scheduling/validation
and the types' declarative tags): pure functions over the objects, each error with its field path, ready for
an API server strategy (``validate_workload``, ``validate_pod_group`` on create; ``*_update`` on update).

``features``: the gated options the server validates with (``TopologyAwareWorkloadScheduling``,
``DRAWorkloadResourceClaims``, ``WorkloadAwarePreemption``); a gated field set while its gate is off is
forbidden, as the declarative ``ifDisabled=forbidden`` tags make it.
"""

from __future__ import annotations

from collections.abc import Collection

import msgspec

from dralloc.api.scheduling_v1alpha2 import (
    DISRUPTION_MODES,
    MAX_POD_GROUP_RESOURCE_CLAIMS,
    MAX_POD_GROUP_TEMPLATES,
    MAX_TOPOLOGY_CONSTRAINTS,
    PodGroup,
    PodGroupResourceClaim,
    PodGroupSchedulingConstraints,
    PodGroupSchedulingPolicy,
    PodGroupTemplate,
    TypedLocalObjectReference,
    Workload,
)
from dralloc.validation import field as f
from dralloc.validation.formats import is_dns1123_label, is_dns1123_subdomain, is_qualified_name
from dralloc.validation.meta import IMMUTABLE
from dralloc.validation.scheduling import HIGHEST_USER_DEFINABLE_PRIORITY

__all__ = ["ALL_FEATURES", "validate_pod_group", "validate_pod_group_update", "validate_workload",
           "validate_workload_update"]

TOPOLOGY = "TopologyAwareWorkloadScheduling"
CLAIMS = "DRAWorkloadResourceClaims"
PREEMPTION = "WorkloadAwarePreemption"
ALL_FEATURES = frozenset({TOPOLOGY, CLAIMS, PREEMPTION})
_NOT_POSITIVE = "must be greater than zero"
_DISABLED = "disabled by feature-gate"


def _union(path: str, members: dict[str, object]) -> list[f.FieldError]:
    """A declarative union: exactly one member set."""
    chosen = [name for name, value in members.items() if value is not None]
    names = ", ".join(f"`{n}`" for n in members)
    if not chosen:
        return [f.invalid(path, "", f"must specify one of: {names}")]
    if len(chosen) > 1:
        return [f.invalid(path, "{" + ", ".join(f"`{n}`" for n in chosen) + "}",
                          f"exactly one of {names} is required, but multiple fields are set")]
    return []


def _format(path: str, value: str, check: object) -> list[f.FieldError]:
    assert callable(check)
    return [f.invalid(path, value, detail) for detail in check(value)]


def _required_name(path: str, value: str, check: object) -> list[f.FieldError]:
    """Declarative ``required`` + a format: "" is missing (Required), anything else must match."""
    return [f.required(path)] if not value else _format(path, value, check)


def path_segment_problems(value: str) -> list[str]:
    """``content.IsPathSegmentName``."""
    if value in (".", ".."):
        return [f"may not be '{value}'"]
    return [f"may not contain '{c}'" for c in ("/", "%") if c in value]


def kind_and_name_errors(kind: str, name: str, path: str) -> list[f.FieldError]:
    """A reference's ``kind`` and ``name`` below ``path``: each required and a path segment (an HPA's scale
    target, an Ingress's resource backend)."""
    errs: list[f.FieldError] = []
    for field_name, value in (("kind", kind), ("name", name)):
        if not value:
            errs.append(f.required(f.child(path, field_name)))
        else:
            errs += [f.invalid(f.child(path, field_name), value, m) for m in path_segment_problems(value)]
    return errs


def scheduling_policy_errors(policy: PodGroupSchedulingPolicy, path: str) -> list[f.FieldError]:
    """One of basic and gang; a gang's minCount at least 1 (0 reads as missing)."""
    errs = _union(path, {"basic": policy.basic, "gang": policy.gang})
    if not errs and policy.gang is not None:
        count_path = f.child(f.child(path, "gang"), "minCount")
        if policy.gang.min_count == 0:
            errs.append(f.required(count_path))
        elif policy.gang.min_count < 0:
            errs.append(f.invalid(count_path, policy.gang.min_count, _NOT_POSITIVE))
    return errs


def scheduling_constraints_errors(constraints: PodGroupSchedulingConstraints | None, path: str,
                                  features: Collection[str]) -> list[f.FieldError]:
    """At most one topology constraint, its key a label key; forbidden without the topology gate."""
    if constraints is None:
        return []
    if TOPOLOGY not in features:
        return [f.forbidden(path, _DISABLED)]
    topology = constraints.topology or []
    tpath = f.child(path, "topology")
    if len(topology) > MAX_TOPOLOGY_CONSTRAINTS:
        return [f.too_many(tpath, len(topology), MAX_TOPOLOGY_CONSTRAINTS)]
    errs: list[f.FieldError] = []
    for i, constraint in enumerate(topology):
        errs += _required_name(f.child(f.index(tpath, i), "key"), constraint.key, is_qualified_name)
    return errs


def resource_claims_errors(claims: list[PodGroupResourceClaim] | None, path: str,
                           features: Collection[str]) -> list[f.FieldError]:
    """At most 4 claims with unique DNS-label names, each naming a claim or a template (not both)."""
    if not claims:
        return []
    if CLAIMS not in features:
        return [f.forbidden(path, _DISABLED)]
    if len(claims) > MAX_POD_GROUP_RESOURCE_CLAIMS:
        return [f.too_many(path, len(claims), MAX_POD_GROUP_RESOURCE_CLAIMS)]
    errs: list[f.FieldError] = []
    seen: set[str] = set()
    for i, claim in enumerate(claims):
        cpath = f.index(path, i)
        errs += _required_name(f.child(cpath, "name"), claim.name, is_dns1123_label)
        if claim.name in seen:
            errs.append(f.duplicate(cpath, claim.name))
        seen.add(claim.name)
        errs += _union(cpath, {"resourceClaimName": claim.resource_claim_name,
                               "resourceClaimTemplateName": claim.resource_claim_template_name})
        for name, value in (("resourceClaimName", claim.resource_claim_name),
                            ("resourceClaimTemplateName", claim.resource_claim_template_name)):
            if value:
                errs += _format(f.child(cpath, name), value, is_dns1123_subdomain)
    return errs


def preemption_fields_errors(disruption_mode: str | None, priority_class_name: str | None, priority: int | None,
                             path: str, features: Collection[str]) -> list[f.FieldError]:
    """disruptionMode Pod or PodGroup, a priority class name a DNS subdomain, a priority at most one
    billion; all three forbidden without WorkloadAwarePreemption."""
    errs: list[f.FieldError] = []
    fields = (("disruptionMode", disruption_mode), ("priorityClassName", priority_class_name),
              ("priority", priority))
    if PREEMPTION not in features:
        return [f.forbidden(f.child(path, name), _DISABLED) for name, value in fields if value not in (None, "")]
    if disruption_mode is not None and disruption_mode not in DISRUPTION_MODES:
        errs.append(f.not_supported(f.child(path, "disruptionMode"), disruption_mode, DISRUPTION_MODES))
    if priority_class_name:
        errs += _format(f.child(path, "priorityClassName"), priority_class_name, is_dns1123_subdomain)
    if priority is not None and priority > HIGHEST_USER_DEFINABLE_PRIORITY:
        errs.append(f.invalid(f.child(path, "priority"), priority,
                              f"must be less than or equal to {HIGHEST_USER_DEFINABLE_PRIORITY}"))
    return errs


def _controller_ref_errors(ref: TypedLocalObjectReference, path: str) -> list[f.FieldError]:
    errs: list[f.FieldError] = []
    if ref.api_group:
        errs += _format(f.child(path, "apiGroup"), ref.api_group, is_dns1123_subdomain)
    errs += _required_name(f.child(path, "kind"), ref.kind, path_segment_problems)
    errs += _required_name(f.child(path, "name"), ref.name, path_segment_problems)
    return errs


def _template_errors(template: PodGroupTemplate, path: str, seen: set[str],
                     features: Collection[str]) -> list[f.FieldError]:
    errs = _required_name(f.child(path, "name"), template.name, is_dns1123_label)
    if template.name in seen:
        errs.append(f.duplicate(path, template.name))
    seen.add(template.name)
    errs += scheduling_policy_errors(template.scheduling_policy, f.child(path, "schedulingPolicy"))
    errs += scheduling_constraints_errors(template.scheduling_constraints, f.child(path, "schedulingConstraints"),
                                          features)
    errs += resource_claims_errors(template.resource_claims, f.child(path, "resourceClaims"), features)
    errs += preemption_fields_errors(template.disruption_mode, template.priority_class_name, template.priority,
                                     path, features)
    return errs


def validate_workload(workload: Workload, features: Collection[str] = ALL_FEATURES) -> list[f.FieldError]:
    """The Workload's spec rules (its metadata is checked by the caller): 1–8 uniquely named templates."""
    spec = workload.spec
    errs: list[f.FieldError] = []
    if spec.controller_ref is not None:
        errs += _controller_ref_errors(spec.controller_ref, "spec.controllerRef")
    path = "spec.podGroupTemplates"
    templates = spec.pod_group_templates
    if not templates:
        return errs + [f.required(path, "must have at least one item")]
    if len(templates) > MAX_POD_GROUP_TEMPLATES:
        return errs + [f.too_many(path, len(templates), MAX_POD_GROUP_TEMPLATES)]
    seen: set[str] = set()
    for i, template in enumerate(templates):
        errs += _template_errors(template, f.index(path, i), seen, features)
    return errs


def validate_pod_group(group: PodGroup, features: Collection[str] = ALL_FEATURES) -> list[f.FieldError]:
    """The PodGroup's spec rules (its metadata is checked by the caller)."""
    spec = group.spec
    errs: list[f.FieldError] = []
    ref = spec.pod_group_template_ref
    if ref is not None:
        rpath = "spec.podGroupTemplateRef"
        errs += _union(rpath, {"workload": ref.workload})
        if ref.workload is not None:
            wpath = f.child(rpath, "workload")
            errs += _required_name(f.child(wpath, "workloadName"), ref.workload.workload_name, is_dns1123_subdomain)
            errs += _required_name(f.child(wpath, "podGroupTemplateName"), ref.workload.pod_group_template_name,
                                   is_dns1123_label)
    errs += scheduling_policy_errors(spec.scheduling_policy, "spec.schedulingPolicy")
    errs += scheduling_constraints_errors(spec.scheduling_constraints, "spec.schedulingConstraints", features)
    errs += resource_claims_errors(spec.resource_claims, "spec.resourceClaims", features)
    errs += preemption_fields_errors(spec.disruption_mode, spec.priority_class_name, spec.priority, "spec",
                                     features)
    return errs


def validate_workload_update(new: Workload, old: Workload) -> list[f.FieldError]:
    """A Workload's templates never change; a controllerRef once set stays."""
    errs: list[f.FieldError] = []
    if old.spec.controller_ref is not None and new.spec.controller_ref != old.spec.controller_ref:
        errs.append(f.invalid("spec.controllerRef", _dict(new.spec.controller_ref), IMMUTABLE))
    if new.spec.pod_group_templates != old.spec.pod_group_templates:
        errs.append(f.invalid("spec.podGroupTemplates", _dict(new.spec.pod_group_templates), IMMUTABLE))
    return errs


def validate_pod_group_update(new: PodGroup, old: PodGroup) -> list[f.FieldError]:
    """A PodGroup's spec never changes (template reference, policy, constraints, claims, priority)."""
    errs: list[f.FieldError] = []
    for name, attr in (("podGroupTemplateRef", "pod_group_template_ref"), ("schedulingPolicy", "scheduling_policy"),
                       ("schedulingConstraints", "scheduling_constraints"), ("resourceClaims", "resource_claims"),
                       ("disruptionMode", "disruption_mode"), ("priorityClassName", "priority_class_name"),
                       ("priority", "priority")):
        value = getattr(new.spec, attr)
        if value != getattr(old.spec, attr):
            errs.append(f.invalid(f"spec.{name}", _dict(value), IMMUTABLE))
    return errs


def _dict(value: object) -> object:
    """The value as its JSON form (how the error prints it)."""
    return msgspec.to_builtins(value)
