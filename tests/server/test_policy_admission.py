"""ValidatingAdmissionPolicies enforced on writes as kube-apiserver's admission plugin enforces them: which
requests a policy and its bindings match (rules, operations, selectors, excluded rules, match conditions), the
params a binding names (a ConfigMap, a custom resource; not found: parameterNotFoundAction), variables,
messages, reasons and codes, the validation actions (Deny, Warn) and the failure policy."""

from __future__ import annotations

import json
import warnings
from typing import Any

import pytest

warnings.filterwarnings("ignore", message="Using `httpx`")
from cluster import api_client  # noqa: E402
from starlette.testclient import TestClient  # noqa: E402

API = "/apis/admissionregistration.k8s.io/v1"
DEPLOYMENTS = "/apis/apps/v1/namespaces/default/deployments"
RULES = [{"apiGroups": ["apps"], "apiVersions": ["v1"], "operations": ["CREATE", "UPDATE"],
          "resources": ["deployments"]}]


@pytest.fixture
def client() -> TestClient:
    return api_client()


def policy(name: str = "demo-policy.example.com", **spec: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"matchConstraints": {"resourceRules": RULES},
                            "validations": [{"expression": "object.spec.replicas <= 5"}]}
    return {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
            "metadata": {"name": name}, "spec": {**base, **spec}}


def binding(name: str = "demo-binding-test.example.com", **spec: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"policyName": "demo-policy.example.com", "validationActions": ["Deny"]}
    return {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicyBinding",
            "metadata": {"name": name}, "spec": {**base, **spec}}


def deployment(name: str = "nginx", replicas: int = 6, labels: dict[str, str] | None = None) -> dict[str, Any]:
    pod_labels = {"app": name}
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": name, "labels": labels or {}},
            "spec": {"replicas": replicas, "selector": {"matchLabels": pod_labels},
                     "template": {"metadata": {"labels": pod_labels},
                                  "spec": {"containers": [{"name": "nginx", "image": "nginx"}]}}}}


def install(client: TestClient, p: dict[str, Any], *bindings: dict[str, Any]) -> None:
    assert client.post(f"{API}/validatingadmissionpolicies", json=p).status_code == 201
    for b in bindings:
        made = client.post(f"{API}/validatingadmissionpolicybindings", json=b)
        assert made.status_code == 201, made.text


def warnings_of(r: Any) -> list[str]:
    return [json.loads(w.removeprefix("299 - ")) for w in r.headers.get_list("warning")]


def test_a_denied_create_gets_upstreams_422_with_policy_and_binding_named(client: TestClient) -> None:
    install(client, policy(), binding())
    r = client.post(DEPLOYMENTS, json=deployment())
    assert r.status_code == 422
    message = ("ValidatingAdmissionPolicy 'demo-policy.example.com' with binding 'demo-binding-test.example.com' "
               "denied request: failed expression: object.spec.replicas <= 5")
    assert r.json() == {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                        "message": f'deployments.apps "nginx" is forbidden: {message}', "reason": "Invalid",
                        "details": {"name": "nginx", "group": "apps", "kind": "deployments",
                                    "causes": [{"message": message}]}, "code": 422}
    assert client.post(DEPLOYMENTS, json=deployment(replicas=3)).status_code == 201


def test_an_update_is_checked_too_and_old_object_is_the_stored_one(client: TestClient) -> None:
    assert client.post(DEPLOYMENTS, json=deployment(replicas=3)).status_code == 201
    install(client, policy(validations=[
        {"expression": "oldObject == null || object.spec.replicas >= oldObject.spec.replicas",
         "message": "may not scale down", "reason": "Forbidden"}],
        matchConstraints={"resourceRules": RULES}), binding())
    current = client.get(f"{DEPLOYMENTS}/nginx").json()
    current["spec"]["replicas"] = 2
    r = client.put(f"{DEPLOYMENTS}/nginx", json=current)
    assert r.status_code == 403 and r.json()["reason"] == "Forbidden"
    assert r.json()["message"].endswith("denied request: may not scale down")
    patched = client.patch(f"{DEPLOYMENTS}/nginx", json={"spec": {"replicas": 4}},
                           headers={"Content-Type": "application/merge-patch+json"})
    assert patched.status_code == 200


def test_a_write_no_rule_matches_is_let_through(client: TestClient) -> None:
    only_updates = [{**RULES[0], "operations": ["UPDATE"]}]
    install(client, policy(matchConstraints={"resourceRules": only_updates}), binding())
    assert client.post(DEPLOYMENTS, json=deployment()).status_code == 201
    pods_only = policy("pods.example.com", matchConstraints={"resourceRules": [
        {"apiGroups": [""], "apiVersions": ["v1"], "operations": ["*"], "resources": ["pods"]}]})
    install(client, pods_only, binding("pods-binding.example.com", policyName="pods.example.com"))
    assert client.post(DEPLOYMENTS, json=deployment("other")).status_code == 201


def test_excluded_rules_selectors_and_a_binding_without_its_policy(client: TestClient) -> None:
    excluded = [{**RULES[0], "resourceNames": ["exempt"]}]
    install(client, policy(matchConstraints={"resourceRules": RULES, "excludeResourceRules": excluded,
                                             "objectSelector": {"matchExpressions": [
                                                 {"key": "tier", "operator": "NotIn", "values": ["free"]}]}}),
            binding(matchResources={"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "default"}}}),
            binding("orphan.example.com", policyName="missing.example.com"))
    assert client.post(DEPLOYMENTS, json=deployment("exempt")).status_code == 201
    assert client.post(DEPLOYMENTS, json=deployment("free", labels={"tier": "free"})).status_code == 201
    assert client.post(DEPLOYMENTS, json=deployment("paid", labels={"tier": "paid"})).status_code == 422
    client.post("/api/v1/namespaces", json={"metadata": {"name": "elsewhere"}})
    r = client.post("/apis/apps/v1/namespaces/elsewhere/deployments", json=deployment("paid"))
    assert r.status_code == 201  # the binding's namespace selector leaves it out


def test_match_conditions_skip_the_policy_when_one_is_false(client: TestClient) -> None:
    install(client, policy(matchConditions=[
        {"name": "not-exempt", "expression": "!has(object.metadata.labels) || !('exempt' in object.metadata.labels)"}]),
        binding())
    assert client.post(DEPLOYMENTS, json=deployment("a", labels={"exempt": "yes"})).status_code == 201
    assert client.post(DEPLOYMENTS, json=deployment("b")).status_code == 422


def test_warn_adds_upstreams_warning_and_lets_the_write_through(client: TestClient) -> None:
    install(client, policy(validations=[{"expression": "object.spec.replicas <= 5",
                                         "messageExpression": "'replicas ' + string(object.spec.replicas) + ' > 5'"}]),
            binding(validationActions=["Warn", "Audit"]))
    r = client.post(DEPLOYMENTS, json=deployment())
    assert r.status_code == 201
    assert warnings_of(r) == ["Validation failed for ValidatingAdmissionPolicy 'demo-policy.example.com' with "
                              "binding 'demo-binding-test.example.com': replicas 6 > 5"]
    body = r.json()
    body["spec"]["replicas"] = 7
    updated = client.put(f"{DEPLOYMENTS}/nginx", json=body)
    assert updated.status_code == 200 and warnings_of(updated)[0].endswith("replicas 7 > 5")


def test_params_from_a_config_map_and_variables(client: TestClient) -> None:
    install(client, policy(
        paramKind={"apiVersion": "v1", "kind": "ConfigMap"},
        variables=[{"name": "limit", "expression": "int(params.data.maxReplicas)"}],
        validations=[{"expression": "object.spec.replicas <= variables.limit",
                      "messageExpression": "'at most ' + string(variables.limit) + ' replicas'"}]),
        binding(paramRef={"name": "replica-limit", "parameterNotFoundAction": "Deny"}))
    r = client.post(DEPLOYMENTS, json=deployment(replicas=2))
    assert r.status_code == 422
    assert r.json()["message"].endswith("denied request: failed to configure binding: no params found for policy "
                                        "binding with `Deny` parameterNotFoundAction")
    client.post("/api/v1/namespaces/default/configmaps", json={
        "metadata": {"name": "replica-limit"}, "data": {"maxReplicas": "3"}})
    assert client.post(DEPLOYMENTS, json=deployment(replicas=2)).status_code == 201
    r = client.post(DEPLOYMENTS, json=deployment("big", replicas=4))
    assert r.status_code == 422 and r.json()["message"].endswith("denied request: at most 3 replicas")


def test_params_not_found_with_allow_let_the_write_through(client: TestClient) -> None:
    install(client, policy(paramKind={"apiVersion": "v1", "kind": "ConfigMap"},
                           validations=[{"expression": "object.spec.replicas <= int(params.data.max)"}]),
            binding(paramRef={"selector": {"matchLabels": {"limits": "replicas"}}, "parameterNotFoundAction": "Allow"}))
    assert client.post(DEPLOYMENTS, json=deployment(replicas=9)).status_code == 201
    for name, limit in (("low", "2"), ("high", "20")):
        client.post("/api/v1/namespaces/default/configmaps", json={
            "metadata": {"name": name, "labels": {"limits": "replicas"}}, "data": {"max": limit}})
    assert client.post(DEPLOYMENTS, json=deployment("three", replicas=3)).status_code == 422  # each param counts


def test_params_from_a_custom_resource(client: TestClient) -> None:
    crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
           "metadata": {"name": "limits.example.com"},
           "spec": {"group": "example.com", "scope": "Cluster",
                    "names": {"plural": "limits", "singular": "limit", "kind": "Limit", "listKind": "LimitList"},
                    "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": {
                        "type": "object", "properties": {"max": {"type": "integer"}}}}}]}}
    assert client.post("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", json=crd).status_code == 201
    client.post("/apis/example.com/v1/limits", json={"apiVersion": "example.com/v1", "kind": "Limit",
                                                      "metadata": {"name": "replicas"}, "max": 4})
    install(client, policy(paramKind={"apiVersion": "example.com/v1", "kind": "Limit"},
                           validations=[{"expression": "object.spec.replicas <= params.max"}]),
            binding(paramRef={"name": "replicas", "parameterNotFoundAction": "Deny"}))
    assert client.post(DEPLOYMENTS, json=deployment(replicas=4)).status_code == 201
    assert client.post(DEPLOYMENTS, json=deployment("five", replicas=5)).status_code == 422


def test_an_evaluation_error_follows_the_failure_policy(client: TestClient) -> None:
    failing = [{"expression": "object.spec.missing.field == 1"}]
    install(client, policy(validations=failing), binding())
    r = client.post(DEPLOYMENTS, json=deployment())
    assert r.status_code == 422
    assert r.json()["message"].endswith("denied request: expression 'object.spec.missing.field == 1' resulted in "
                                        "error: no such key: missing")
    install(client, policy("ignored.example.com", validations=failing, failurePolicy="Ignore"),
            binding("ignored-binding.example.com", policyName="ignored.example.com"))
    client.delete(f"{API}/validatingadmissionpolicybindings/demo-binding-test.example.com")
    assert client.post(DEPLOYMENTS, json=deployment("again")).status_code == 201


def test_request_and_namespace_object_are_given_to_expressions(client: TestClient) -> None:
    install(client, policy(validations=[
        {"expression": "request.operation != 'CREATE' || request.namespace != namespaceObject.metadata.name",
         "message": "no creates in a namespace of its own name"},
        {"expression": "request.kind.kind == 'Deployment' && request.resource.resource == 'deployments'"}]),
        binding())
    r = client.post(DEPLOYMENTS, json=deployment(replicas=1))
    assert r.status_code == 422 and r.json()["message"].endswith("no creates in a namespace of its own name")


def test_a_dry_run_is_checked_and_a_status_write_is_not_the_main_resource(client: TestClient) -> None:
    install(client, policy(), binding())
    r = client.post(f"{DEPLOYMENTS}?dryRun=All", json=deployment())
    assert r.status_code == 422


def test_a_delete_is_admitted_with_the_stored_object_as_old_object(client: TestClient) -> None:
    rules = [{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["DELETE"], "resources": ["configmaps"]}]
    install(client, policy(matchConstraints={"resourceRules": rules}, validations=[
        {"expression": "object == null && !('protected' in oldObject.metadata.labels)",
         "messageExpression": "oldObject.metadata.name + ' is protected'", "reason": "Forbidden"}]), binding())
    configmaps = "/api/v1/namespaces/default/configmaps"
    for name, labels in (("keep", {"protected": "yes"}), ("drop", {"x": "y"})):
        client.post(configmaps, json={"metadata": {"name": name, "labels": labels}})
    r = client.delete(f"{configmaps}/keep")
    assert r.status_code == 403
    assert r.json()["message"] == ('configmaps "keep" is forbidden: ValidatingAdmissionPolicy '
                                   "'demo-policy.example.com' with binding 'demo-binding-test.example.com' denied "
                                   "request: keep is protected")
    assert client.get(f"{configmaps}/keep").status_code == 200
    assert client.delete(f"{configmaps}/drop").status_code == 200


def test_request_user_info_is_the_requesters(client: TestClient) -> None:
    install(client, policy(validations=[{"expression": "false", "messageExpression":
                                         "request.userInfo.username + ' in ' + request.userInfo.groups.join(',')"}]),
            binding())
    r = client.post(DEPLOYMENTS, json=deployment())
    assert r.json()["message"].endswith("denied request: system:anonymous in system:unauthenticated")
