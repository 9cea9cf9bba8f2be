"""The resource rules of a policy's matchConstraints and a binding's matchResources, against many requests
(hypothesis): resource and subresource wildcards, operations, groups, versions (Equivalent and Exact), scope and
resource names, excluded rules, and the selectors."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from dralloc.api.admissionregistration_v1 import MatchResources, NamedRuleWithOperations
from dralloc.api.meta import LabelSelector
from dralloc.server.admission.matching import Attributes, resources_match, rule_matches

NAMES = st.sampled_from(["pods", "deployments", "configmaps"])
SUBS = st.sampled_from(["", "status", "scale"])


def attrs(resource: str = "pods", sub: str = "", *, operation: str = "CREATE", group: str = "", version: str = "v1",
          namespace: str = "default", name: str = "x", labels: dict[str, str] | None = None,
          versions: tuple[str, ...] = ("v1",)) -> Attributes:
    obj: dict[str, Any] = {"metadata": {"name": name, "labels": labels or {}}}
    return Attributes(operation, group, version, resource, sub, "Kind", namespace, name, obj, None,
                      served_versions=versions)


def rule(resources: list[str], **fields: Any) -> NamedRuleWithOperations:
    return NamedRuleWithOperations(operations=fields.pop("operations", ["*"]), api_groups=fields.pop("groups", ["*"]),
                                   api_versions=fields.pop("versions", ["*"]), resources=resources, **fields)


@given(NAMES, SUBS, NAMES)
def test_resource_entries_and_their_wildcards(resource: str, sub: str, named: str) -> None:
    request = attrs(resource, sub)
    assert rule_matches(rule(["*/*"]), request, ("v1",))
    assert rule_matches(rule(["*"]), request, ("v1",)) == (sub == "")
    assert rule_matches(rule([named]), request, ("v1",)) == (named == resource and sub == "")
    assert rule_matches(rule([f"{named}/*"]), request, ("v1",)) == (named == resource and sub != "")
    assert rule_matches(rule([f"*/{sub or 'status'}"]), request, ("v1",)) == (sub != "")


@given(st.sampled_from(["CREATE", "UPDATE", "DELETE"]), st.lists(st.sampled_from(["CREATE", "UPDATE", "DELETE"])),
       st.sampled_from(["", "apps"]), st.sampled_from(["", "apps", "*"]))
def test_operations_and_groups(operation: str, operations: list[str], group: str, rule_group: str) -> None:
    request = attrs(operation=operation, group=group)
    expected = operation in operations and rule_group in ("*", group)
    assert rule_matches(rule(["*"], operations=operations, groups=[rule_group]), request, ("v1",)) == expected


@given(st.sampled_from(["v1", "v1beta1"]), st.sampled_from(["v1", "v1beta1", "v1beta2"]),
       st.sampled_from(["Exact", "Equivalent"]))
def test_equivalent_versions_match_another_served_version(version: str, rule_version: str, policy: str) -> None:
    request = attrs(version=version, versions=("v1", "v1beta1"))
    match = MatchResources(resource_rules=[rule(["pods"], versions=[rule_version])], match_policy=policy)
    expected = rule_version == version or (policy == "Equivalent" and rule_version in ("v1", "v1beta1"))
    assert resources_match(match, request, None) == expected


@given(st.sampled_from(["", "default"]), st.sampled_from(["*", "Cluster", "Namespaced"]),
       st.lists(st.sampled_from(["x", "y"]), max_size=2))
def test_scope_and_resource_names(namespace: str, scope: str, names: list[str]) -> None:
    request = attrs(namespace=namespace)
    expected = (scope == "*" or (scope == "Namespaced") == bool(namespace)) and (not names or "x" in names)
    assert rule_matches(rule(["pods"], scope=scope, resource_names=names), request, ("v1",)) == expected


def test_an_excluded_rule_wins_and_no_rules_match_everything() -> None:
    request = attrs()
    assert resources_match(MatchResources(), request, None)
    match = MatchResources(resource_rules=[rule(["*"])], exclude_resource_rules=[rule(["pods"], resource_names=["x"])])
    assert not resources_match(match, request, None)
    assert resources_match(match, attrs(name="y"), None)


def test_selectors_read_the_objects_and_the_namespaces_labels() -> None:
    selector = LabelSelector(match_labels={"env": "test"})
    tested = {"metadata": {"name": "default", "labels": {"env": "test"}}}
    assert resources_match(MatchResources(namespace_selector=selector), attrs(), tested)
    assert not resources_match(MatchResources(namespace_selector=selector), attrs(), {"metadata": {}})
    # a cluster-scoped object is never exempted by a namespace selector; a namespace is matched by its labels
    assert resources_match(MatchResources(namespace_selector=selector), attrs(namespace=""), None)
    assert not resources_match(MatchResources(namespace_selector=selector), attrs("namespaces", namespace=""), None)
    assert resources_match(MatchResources(object_selector=selector), attrs(labels={"env": "test"}), None)
    assert not resources_match(MatchResources(object_selector=selector), attrs(labels={"env": "prod"}), None)
