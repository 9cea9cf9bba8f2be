"""Which requests a policy's matchConstraints and a binding's matchResources match (k8s.io/apiserver/pkg/admission/
plugin/policy/matching and webhook/predicates): the namespace selector (cluster-scoped objects other than
namespaces always match it), the object selector (the new or the old object's labels), the resource rules
(operations, API groups and versions, resources and subresources with their wildcards, scope, resource names)
less the excluded ones; with matchPolicy ``Equivalent`` a rule naming another served version of the resource
matches too."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from dralloc.api.admissionregistration_v1 import MatchResources, NamedRuleWithOperations
from dralloc.api.meta import LabelSelector
from dralloc.validation.workloads import selector_matches

Obj = dict[str, Any]


@dataclass
class Attributes:
    """What admission knows of a request (admission.Attributes)."""

    operation: str  # CREATE, UPDATE or DELETE
    group: str
    version: str
    resource: str
    subresource: str
    kind: str
    namespace: str
    name: str
    object: Obj | None
    old_object: Obj | None
    dry_run: bool = False
    served_versions: tuple[str, ...] = ()  # the resource's versions, for matchPolicy Equivalent
    user: Obj = field(default_factory=dict)  # the requester's UserInfo


def _labels(obj: Obj | None) -> dict[str, str]:
    if not isinstance(obj, dict):
        return {}
    labels = (obj.get("metadata") or {}).get("labels")
    return labels if isinstance(labels, dict) else {}


def _empty(selector: LabelSelector | None) -> bool:
    return selector is None or (not selector.match_labels and not selector.match_expressions)


def namespace_matches(selector: LabelSelector | None, attrs: Attributes, namespace: Obj | None) -> bool:
    """``namespace``: the request's namespace object (None for a cluster-scoped request)."""
    if _empty(selector):
        return True
    assert selector is not None
    if attrs.resource == "namespaces" and not attrs.namespace:
        namespace = attrs.object or attrs.old_object  # a namespace is matched by its own labels
    elif not attrs.namespace:
        return True  # a cluster-scoped object is never exempted by a namespace selector
    return selector_matches(selector, _labels(namespace))


def object_matches(selector: LabelSelector | None, attrs: Attributes) -> bool:
    if _empty(selector):
        return True
    assert selector is not None
    return any(obj is not None and selector_matches(selector, _labels(obj))
               for obj in (attrs.object, attrs.old_object))


def _resource_matches(entries: list[str], resource: str, subresource: str) -> bool:
    for entry in entries:
        if entry == "*/*":
            return True
        if entry == "*" and not subresource:
            return True
        res, slash, sub = entry.partition("/")
        if not slash:
            if res == resource and not subresource:
                return True
            continue
        if res in ("*", resource) and sub in ("*", subresource) and subresource:
            return True
    return False


def _scope_matches(scope: str | None, attrs: Attributes) -> bool:
    if scope in (None, "*"):
        return True
    namespaced = bool(attrs.namespace)
    return namespaced if scope == "Namespaced" else not namespaced


def rule_matches(rule: NamedRuleWithOperations, attrs: Attributes, versions: tuple[str, ...]) -> bool:
    """One rule against the request, with the request's version or, for an equivalent match, any of
    ``versions``."""
    operations = rule.operations or []
    if "*" not in operations and attrs.operation not in operations:
        return False
    groups = rule.api_groups or []
    if "*" not in groups and attrs.group not in groups:
        return False
    rule_versions = rule.api_versions or []
    if "*" not in rule_versions and not any(v in rule_versions for v in versions):
        return False
    if not _resource_matches(rule.resources or [], attrs.resource, attrs.subresource):
        return False
    if not _scope_matches(rule.scope, attrs):
        return False
    names = rule.resource_names or []
    return not names or attrs.name in names


def resources_match(match: MatchResources | None, attrs: Attributes, namespace: Obj | None) -> bool:
    """MatchResources against the request: selectors, then no excluded rule and a rule that matches (any
request, when there are no rules)."""
    if match is None:
        return True
    if not namespace_matches(match.namespace_selector, attrs, namespace) or not object_matches(match.object_selector, attrs):
        return False
    versions: tuple[str, ...] = (attrs.version,)
    if match.match_policy != "Exact":
        versions = (attrs.version, *(v for v in attrs.served_versions if v != attrs.version))
    if any(rule_matches(rule, attrs, versions) for rule in match.exclude_resource_rules or ()):
        return False
    if not match.resource_rules:  # (a binding's matchResources may narrow by selectors alone)
        return True
    return any(rule_matches(rule, attrs, versions) for rule in match.resource_rules)
