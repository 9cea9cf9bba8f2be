"""A pod's spec as kube-apiserver validates it on create (core validation ValidatePodSpec and the pod template
rules), for the fields dralloc models — those that change what a simulation computes: containers and their
requests and limits, resource claims, overhead, restart policy, node selector, node name, affinity,
tolerations, topology spread constraints, scheduling gates, priority class and preemption policy. Errors
come in upstream's order.

Left out: what dralloc does not model (volumes, probes, security contexts, DNS, ...), pod-level resources
(``spec.resources``), and the pod (anti-)affinity terms' matchLabelKeys and mismatchLabelKeys.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

from dralloc.api.core_v1 import (
    Affinity,
    Container,
    PodAffinity,
    PodAffinityTerm,
    PodResourceClaim,
    PodSpec,
    PodTemplateSpec,
    TopologySpreadConstraint,
)
from dralloc.api.defaults import PREEMPT_LOWER_PRIORITY
from dralloc.validation import field as f
from dralloc.validation.formats import is_dns1123_label, is_qualified_name
from dralloc.validation.meta import (
    label_selector_errors,
    name_is_dns_label,
    name_is_dns_subdomain,
    validate_annotations,
    validate_label_name,
    validate_labels,
    validate_node_selector,
    validate_node_selector_term,
)
from dralloc.validation.quantities import requirements_errors
from dralloc.validation.taints import toleration_errors

RESTART_POLICIES = ["Always", "OnFailure", "Never"]
PREEMPTION_POLICIES = [PREEMPT_LOWER_PRIORITY, "Never"]
_WEIGHT_RANGE = "must be in the range 1-100"


@lru_cache(maxsize=4096)  # (container and claim names repeat across a dump's pods)
def _dns_label_problems(value: str) -> tuple[str, ...]:
    return tuple(is_dns1123_label(value))


def _label_errors(value: str, path: str) -> list[f.FieldError]:
    return [f.invalid(path, value, m) for m in _dns_label_problems(value)]


def _subdomain_errors(value: str, path: str) -> list[f.FieldError]:
    return [f.invalid(path, value, m) for m in name_is_dns_subdomain(value, False)]


def resource_claim_errors(claims: Sequence[PodResourceClaim], path: str, pod_name: str | None) -> list[f.FieldError]:
    """spec.resourceClaims: unique DNS-label names, exactly one source, a valid claim (template) name; a
    claim made from a template is named ``<pod>-<entry>``, which must make a valid name too."""
    errs: list[f.FieldError] = []
    names: set[str] = set()
    for i, claim in enumerate(claims):
        where = f.index(path, i)
        name_path = f.child(where, "name")
        if not claim.name:
            errs.append(f.required(name_path, ""))
        elif claim.name in names:
            errs.append(f.duplicate(name_path, claim.name))
        else:
            name_errs = _label_errors(claim.name, name_path)
            if name_errs:
                errs += name_errs
            elif pod_name is not None and claim.resource_claim_template_name is not None:
                final = f"{pod_name}-{claim.name}"
                errs += [f.invalid(name_path, final, "final ResourceClaim name: " + m)
                         for m in name_is_dns_subdomain(final, False)]
            names.add(claim.name)
        sources = [(k, v) for k, v in (("resourceClaimName", claim.resource_claim_name),
                                       ("resourceClaimTemplateName", claim.resource_claim_template_name))
                   if v is not None]
        if len(sources) != 1:
            errs.append(f.invalid(where, claim, "must specify one of: `resourceClaimName`, "
                                                "`resourceClaimTemplateName`"))
        elif sources[0][1]:
            errs += _subdomain_errors(sources[0][1], f.child(where, sources[0][0]))
    return errs


def _claim_reference_errors(container: Container, path: str, pod_claims: set[str]) -> list[f.FieldError]:
    """validateResourceClaimNames: each entry names a pod claim, once (a whole claim, or each request once)."""
    errs: list[f.FieldError] = []
    resources = container.resources
    seen: set[str] = set()
    for i, ref in enumerate((resources.claims if resources else None) or ()):
        where = f.index(path, i)
        if not ref.name:
            errs.append(f.required(where, ""))
            continue
        if ref.name in seen:
            errs.append(f.duplicate(where, ref.name))
        else:
            key = ref.name
            if ref.request:
                errs += _label_errors(ref.request, f.child(where, "request"))
                key += "/" + ref.request
            if key in seen:
                errs.append(f.duplicate(where, key))
            elif not ref.request:
                errs += [f.duplicate(where, ref.name) for k in seen if k.partition("/")[0] == ref.name and "/" in k]
            seen.add(key)
        if ref.name not in pod_claims:
            listed = ": " + ", ".join(sorted(pod_claims)) if pod_claims else " which is empty"
            errs.append(f.FieldError(f.NOT_FOUND, where, ref.name,
                                     "must be one of the names in pod.spec.resourceClaims" + listed))
    return errs


def _container_errors(container: Container, path: str, pod_claims: set[str], require_image: bool
                      ) -> list[f.FieldError]:
    """validateContainerCommon for the modelled fields: a DNS-label name, an image, valid resources."""
    name = container.name
    if not name:
        errs = [f.required(f.child(path, "name"), "")]
    else:  # (the name's path made only for a problem found)
        errs = _label_errors(name, f.child(path, "name")) if _dns_label_problems(name) else []
    if require_image and not container.image:
        errs.append(f.required(f.child(path, "image"), ""))
    resources = container.resources
    if resources is not None:  # (the paths made only for a container that has resources, or claims in them)
        where = f.child(path, "resources")
        errs += requirements_errors(resources.limits, resources.requests, where)
        if resources.claims:
            errs += _claim_reference_errors(container, f.child(where, "claims"), pod_claims)
    return errs


def containers_errors(spec: PodSpec, path: str, pod_claims: set[str], require_image: bool) -> list[f.FieldError]:
    """Regular containers (at least one, unique names, no restartPolicy), then init containers (names unique
    among all containers)."""
    errs: list[f.FieldError] = []
    where = f.child(path, "containers")
    names: set[str] = set()
    if not spec.containers:
        errs.append(f.required(where, ""))
    for i, container in enumerate(spec.containers):
        at = f.index(where, i)
        errs += _container_errors(container, at, pod_claims, require_image)
        if container.name in names:
            errs.append(f.duplicate(f.child(at, "name"), container.name))
        names.add(container.name)
        if container.restart_policy is not None:
            errs.append(f.forbidden(f.child(at, "restartPolicy"), "may not be set for non-init containers"))
    init_path = f.child(path, "initContainers") if spec.init_containers else ""
    for i, container in enumerate(spec.init_containers or ()):
        at = f.index(init_path, i)
        errs += _container_errors(container, at, pod_claims, require_image)
        if container.name in names:
            errs.append(f.duplicate(f.child(at, "name"), container.name))
        names.add(container.name)
    return errs


def _pod_affinity_term_errors(term: PodAffinityTerm, path: str) -> list[f.FieldError]:
    """validatePodAffinityTerm: its selectors, its namespaces' names (reported at ``namespace``, upstream)
    and a topology key."""
    errs: list[f.FieldError] = []
    if term.label_selector is not None:
        errs += label_selector_errors(term.label_selector, f.child(path, "labelSelector"))
    if term.namespace_selector is not None:
        errs += label_selector_errors(term.namespace_selector, f.child(path, "namespaceSelector"))
    for name in term.namespaces or ():
        errs += [f.invalid(f.child(path, "namespace"), name, m) for m in name_is_dns_label(name, False)]
    if not term.topology_key:
        errs.append(f.required(f.child(path, "topologyKey"), "can not be empty"))
    return errs + validate_label_name(term.topology_key, f.child(path, "topologyKey"))


SPREAD_ACTIONS = ["DoNotSchedule", "ScheduleAnyway"]
INCLUSION_POLICIES = ["Honor", "Ignore"]
_NOT_POSITIVE = "must be greater than zero"


def _spread_label_key_errors(constraint: TopologySpreadConstraint, path: str) -> list[f.FieldError]:
    keys = constraint.match_label_keys or []
    if not keys:
        return []
    selector = constraint.label_selector
    errs: list[f.FieldError] = []
    if selector is not None:
        taken = set(selector.match_labels or {}) | {e.key for e in selector.match_expressions or ()}
    else:
        taken = set()
        errs.append(f.forbidden(path, "must not be specified when labelSelector is not set"))
    for i, key in enumerate(keys):
        errs += validate_label_name(key, f.index(path, i))
        if key in taken:
            errs.append(f.invalid(f.index(path, i), key, "exists in both matchLabelKeys and labelSelector"))
    return errs


def topology_spread_errors(constraints: Sequence[TopologySpreadConstraint], path: str) -> list[f.FieldError]:
    """validateTopologySpreadConstraints: a positive maxSkew, a topology key, a known whenUnsatisfiable, no
    two constraints with the same key and action, minDomains only positive and with DoNotSchedule, known node
    inclusion policies, matchLabelKeys beside a selector, and a well-formed label selector."""
    errs: list[f.FieldError] = []
    for i, constraint in enumerate(constraints):
        at = f.index(path, i)
        if constraint.max_skew <= 0:
            errs.append(f.invalid(f.child(at, "maxSkew"), constraint.max_skew, _NOT_POSITIVE))
        key, action = constraint.topology_key, constraint.when_unsatisfiable
        if not key:
            errs.append(f.required(f.child(at, "topologyKey"), "can not be empty"))
        if action not in SPREAD_ACTIONS:
            errs.append(f.not_supported(f.child(at, "whenUnsatisfiable"), action, SPREAD_ACTIONS))
        if any(c.topology_key == key and c.when_unsatisfiable == action for c in constraints[i + 1:]):
            errs.append(f.duplicate(f.child(at, "{topologyKey, whenUnsatisfiable}"), f"{{{key}, {action}}}"))
        min_domains = constraint.min_domains
        if min_domains is not None:
            where = f.child(at, "minDomains")
            if min_domains <= 0:
                errs.append(f.invalid(where, min_domains, _NOT_POSITIVE))
            if action != "DoNotSchedule":
                errs.append(f.invalid(where, min_domains, f"can only use minDomains if whenUnsatisfiable=DoNotSchedule, "
                                                          f"not {action}"))
        for policy_field, policy in (("nodeAffinityPolicy", constraint.node_affinity_policy),
                                     ("nodeTaintsPolicy", constraint.node_taints_policy)):
            if policy is not None and policy not in INCLUSION_POLICIES:
                errs.append(f.not_supported(f.child(at, policy_field), policy, INCLUSION_POLICIES))
        errs += _spread_label_key_errors(constraint, f.child(at, "matchLabelKeys"))
        if constraint.label_selector is not None:
            errs += label_selector_errors(constraint.label_selector, f.child(at, "labelSelector"))
    return errs


def _pod_affinity_errors(affinity: PodAffinity | None, path: str) -> list[f.FieldError]:
    if affinity is None:
        return []
    errs: list[f.FieldError] = []
    required_path = f.child(path, "requiredDuringSchedulingIgnoredDuringExecution")
    for i, term in enumerate(affinity.required_during_scheduling_ignored_during_execution or ()):
        errs += _pod_affinity_term_errors(term, f.index(required_path, i))
    preferred_path = f.child(path, "preferredDuringSchedulingIgnoredDuringExecution")
    for i, weighted in enumerate(affinity.preferred_during_scheduling_ignored_during_execution or ()):
        where = f.index(preferred_path, i)
        if not 0 < weighted.weight <= 100:
            errs.append(f.invalid(f.child(where, "weight"), weighted.weight, _WEIGHT_RANGE))
        errs += _pod_affinity_term_errors(weighted.pod_affinity_term, f.child(where, "podAffinityTerm"))
    return errs


def affinity_errors(affinity: Affinity, path: str) -> list[f.FieldError]:
    """Required node affinity as a node selector; preferred terms weigh 1 to 100 and may hold label values
    that are not valid (they can still match); pod (anti-)affinity terms need a topology key."""
    errs: list[f.FieldError] = []
    node = affinity.node_affinity
    if node is not None:
        node_path = f.child(path, "nodeAffinity")
        required = node.required_during_scheduling_ignored_during_execution
        if required is not None:
            errs += validate_node_selector(required, f.child(node_path, "requiredDuringSchedulingIgnoredDuringExecution"))
        preferred_path = f.child(node_path, "preferredDuringSchedulingIgnoredDuringExecution")
        for i, term in enumerate(node.preferred_during_scheduling_ignored_during_execution or ()):
            where = f.index(preferred_path, i)
            if not 0 < term.weight <= 100:
                errs.append(f.invalid(f.child(where, "weight"), term.weight, _WEIGHT_RANGE))
            errs += validate_node_selector_term(term.preference, f.child(where, "preference"), check_values=False)
    errs += _pod_affinity_errors(affinity.pod_affinity, f.child(path, "podAffinity"))
    errs += _pod_affinity_errors(affinity.pod_anti_affinity, f.child(path, "podAntiAffinity"))
    return errs


def pod_spec_errors(spec: PodSpec, path: str = "spec", pod_name: str | None = None, *,
                    require_image: bool = False) -> list[f.FieldError]:
    """ValidatePodSpec's rules for the modelled fields, in upstream's order. ``pod_name``: the pod's name when
    the spec is a pod's (not a template's), for the names of claims made from templates. A container's image
    is required with ``require_image`` (the API server); a simulation's inputs may leave it out, since no
    scheduling decision reads it."""
    claims = spec.resource_claims or []
    # (the optional parts looked at, and their paths made, only when the spec has them)
    errs = resource_claim_errors(claims, f.child(path, "resourceClaims"), pod_name) if claims else []
    errs += containers_errors(spec, path, {c.name for c in claims if c.name}, require_image)
    restart = spec.restart_policy if spec.restart_policy is not None else "Always"  # (the API default)
    if restart not in RESTART_POLICIES:
        errs.append(f.required(f.child(path, "restartPolicy"), "") if not restart
                    else f.not_supported(f.child(path, "restartPolicy"), restart, RESTART_POLICIES))
    if spec.node_selector:
        errs += validate_labels(spec.node_selector, f.child(path, "nodeSelector"))
    if spec.affinity is not None:
        errs += affinity_errors(spec.affinity, f.child(path, "affinity"))
    gates_path = f.child(path, "schedulingGates") if spec.scheduling_gates else ""
    gates: set[str] = set()
    for i, gate in enumerate(spec.scheduling_gates or ()):
        errs += [f.invalid(f.index(gates_path, i), gate.name, m) for m in is_qualified_name(gate.name)]
        if gate.name in gates:
            errs.append(f.duplicate(f.index(gates_path, i), gate.name))
        gates.add(gate.name)
    if spec.topology_spread_constraints:
        errs += topology_spread_errors(spec.topology_spread_constraints, f.child(path, "topologySpreadConstraints"))
    if spec.node_name:
        errs += _subdomain_errors(spec.node_name, f.child(path, "nodeName"))
    if spec.tolerations:
        errs += toleration_errors(spec.tolerations, f.child(path, "tolerations"))
    if spec.priority_class_name:
        errs += _subdomain_errors(spec.priority_class_name, f.child(path, "priorityClassName"))
    if spec.preemption_policy is not None and spec.preemption_policy not in PREEMPTION_POLICIES:
        where = f.child(path, "preemptionPolicy")
        errs.append(f.required(where, "") if not spec.preemption_policy
                    else f.not_supported(where, spec.preemption_policy, PREEMPTION_POLICIES))
    if spec.overhead is not None:
        errs += requirements_errors(spec.overhead, None, f.child(path, "overhead"))
    if spec.scheduling_group is not None:  # its one member, the PodGroup's name (a DNS subdomain)
        group_path = f.child(path, "schedulingGroup")
        name = spec.scheduling_group.pod_group_name
        if not name:
            errs.append(f.invalid(group_path, "", "must specify one of: `podGroupName`"))
        else:
            errs += _subdomain_errors(name, f.child(group_path, "podGroupName"))
    return errs


def pod_template_errors(template: PodTemplateSpec, path: str) -> list[f.FieldError]:
    """ValidatePodTemplateSpec: the template's labels and annotations (at ``<path>.labels``, not under
    metadata, upstream) and its pod spec."""
    meta = template.metadata
    errs = validate_labels(meta.labels if meta else None, f.child(path, "labels"))
    errs += validate_annotations(meta.annotations if meta else None, f.child(path, "annotations"))
    return errs + pod_spec_errors(template.spec, f.child(path, "spec"))
