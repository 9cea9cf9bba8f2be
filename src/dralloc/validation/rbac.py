"""rbac.authorization.k8s.io/v1 rules (pkg/apis/rbac/validation): names are path segments; a policy rule has
verbs and either resources (with API groups) or, in a ClusterRole only, non-resource URLs; a binding refers to
a Role or ClusterRole of the RBAC group (a ClusterRoleBinding to a ClusterRole only) and names each subject by
kind; its roleRef never changes."""

from __future__ import annotations

from typing import Any

import msgspec

from dralloc.api.rbac_v1 import GROUP, ClusterRole, ClusterRoleBinding, PolicyRule, Role, RoleBinding, Subject
from dralloc.validation import field as f
from dralloc.validation.formats import is_dns1123_subdomain
from dralloc.validation.meta import label_selector_errors, validate_object_meta
from dralloc.validation.podgroups import path_segment_problems

RbacKind = Role | ClusterRole | RoleBinding | ClusterRoleBinding
SUBJECT_KINDS = ["ServiceAccount", "User", "Group"]


def _name(name: str, prefix: bool) -> list[str]:
    """ValidateRBACName: a path segment name."""
    return path_segment_problems(name)


def policy_rule_errors(rule: PolicyRule, namespaced: bool, path: str) -> list[f.FieldError]:
    """ValidatePolicyRule."""
    errs = []
    if not rule.verbs:
        errs.append(f.required(f.child(path, "verbs"), "verbs must contain at least one value"))
    if rule.non_resource_urls:
        where = f.child(path, "nonResourceURLs")
        if namespaced:
            errs.append(f.invalid(where, rule.non_resource_urls, "namespaced rules cannot apply to non-resource URLs"))
        if rule.api_groups or rule.resources or rule.resource_names:
            errs.append(f.invalid(where, rule.non_resource_urls,
                                  "rules cannot apply to both regular resources and non-resource URLs"))
        return errs
    if not rule.api_groups:
        errs.append(f.required(f.child(path, "apiGroups"), "resource rules must supply at least one api group"))
    if not rule.resources:
        errs.append(f.required(f.child(path, "resources"), "resource rules must supply at least one resource"))
    return errs


def subject_errors(subject: Subject, namespaced: bool, path: str) -> list[f.FieldError]:
    """ValidateRoleBindingSubject."""
    errs = []
    if not subject.name:
        errs.append(f.required(f.child(path, "name"), ""))
    group = subject.api_group or ""
    if subject.kind == "ServiceAccount":
        if subject.name:
            errs += [f.invalid(f.child(path, "name"), subject.name, m) for m in is_dns1123_subdomain(subject.name)]
        if group:
            errs.append(f.not_supported(f.child(path, "apiGroup"), group, [""]))
        if not namespaced and not subject.namespace:
            errs.append(f.required(f.child(path, "namespace"), ""))
    elif subject.kind in ("User", "Group"):
        if group != GROUP:
            errs.append(f.not_supported(f.child(path, "apiGroup"), group, [GROUP]))
    else:
        errs.append(f.not_supported(f.child(path, "kind"), subject.kind, SUBJECT_KINDS))
    return errs


def _binding_errors(binding: RoleBinding | ClusterRoleBinding, namespaced: bool) -> list[f.FieldError]:
    errs = []
    ref = binding.role_ref
    if ref.api_group != GROUP:
        errs.append(f.not_supported("roleRef.apiGroup", ref.api_group, [GROUP]))
    kinds = ["Role", "ClusterRole"] if namespaced else ["ClusterRole"]
    if ref.kind not in kinds:
        errs.append(f.not_supported("roleRef.kind", ref.kind, kinds))
    if not ref.name:
        errs.append(f.required("roleRef.name", ""))
    else:
        errs += [f.invalid("roleRef.name", ref.name, m) for m in path_segment_problems(ref.name)]
    for i, subject in enumerate(binding.subjects or ()):
        errs += subject_errors(subject, namespaced, f.index("subjects", i))
    return errs


def rbac_errors(obj: RbacKind, require_namespace: bool = False) -> list[f.FieldError]:
    """ValidateRole, ValidateClusterRole, ValidateRoleBinding, ValidateClusterRoleBinding."""
    namespaced = isinstance(obj, (Role, RoleBinding))
    errs = validate_object_meta(obj.metadata, namespaced, _name, require_namespace=require_namespace)
    if isinstance(obj, (Role, ClusterRole)):
        for i, rule in enumerate(obj.rules or ()):
            errs += policy_rule_errors(rule, namespaced, f.index("rules", i))
        if isinstance(obj, ClusterRole) and obj.aggregation_rule is not None:
            selectors = obj.aggregation_rule.cluster_role_selectors or []
            if not selectors:
                errs.append(f.required("aggregationRule.clusterRoleSelectors",
                                       "at least one clusterRoleSelector required if aggregationRule is non-nil"))
            for i, selector in enumerate(selectors):
                errs += label_selector_errors(selector, f.index("aggregationRule.clusterRoleSelectors", i))
        return errs
    return errs + _binding_errors(obj, namespaced)


def rbac_update_errors(new: Any, old: Any) -> list[f.FieldError]:
    """ValidateRoleBindingUpdate / ValidateClusterRoleBindingUpdate: the roleRef stays."""
    if isinstance(new, (RoleBinding, ClusterRoleBinding)) and new.role_ref != old.role_ref:
        # (as a plain object: a struct with a ``kind`` field would be printed as a top-level object)
        return [f.invalid("roleRef", msgspec.to_builtins(new.role_ref), "cannot change roleRef")]
    return []
