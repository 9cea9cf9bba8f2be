"""admissionregistration.k8s.io/v1 ValidatingAdmissionPolicies and their bindings stored as kube-apiserver stores
them: defaults, validation with upstream's paths and texts (CEL compiled: compile errors, result types, which
variables each kind of expression may use), generation and the type-checking controller's status, and the
kubectl get columns."""

from __future__ import annotations

import warnings
from typing import Any

import pytest

warnings.filterwarnings("ignore", message="Using `httpx`")
from cluster import api_client  # noqa: E402
from starlette.testclient import TestClient  # noqa: E402

API = "/apis/admissionregistration.k8s.io/v1"
TABLE = {"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"}
RULES = [{"apiGroups": ["apps"], "apiVersions": ["v1"], "operations": ["CREATE", "UPDATE"],
          "resources": ["deployments"]}]


@pytest.fixture
def client() -> TestClient:
    return api_client()


def policy(name: str = "replicas.example.com", **spec: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"matchConstraints": {"resourceRules": RULES},
                            "validations": [{"expression": "object.spec.replicas <= 5"}]}
    return {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
            "metadata": {"name": name}, "spec": {**base, **spec}}


def binding(name: str = "replicas-binding.example.com", **spec: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"policyName": "replicas.example.com", "validationActions": ["Deny"]}
    return {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicyBinding",
            "metadata": {"name": name}, "spec": {**base, **spec}}


def causes(r: Any) -> list[tuple[str, str]]:
    assert r.status_code == 422, r.text
    return [(c["field"], c["message"]) for c in r.json()["details"]["causes"]]


def test_a_policy_gets_upstreams_defaults_generation_and_type_checking_status(client: TestClient) -> None:
    made = client.post(f"{API}/validatingadmissionpolicies", json=policy())
    assert made.status_code == 201, made.text
    body = made.json()
    assert body["spec"]["failurePolicy"] == "Fail"
    match = body["spec"]["matchConstraints"]
    assert match["matchPolicy"] == "Equivalent" and match["namespaceSelector"] == {} and match["objectSelector"] == {}
    assert match["resourceRules"][0]["scope"] == "*"
    assert body["metadata"]["generation"] == 1
    assert body["status"] == {"observedGeneration": 1, "typeChecking": {}}
    body["spec"]["validations"].append({"expression": "object.spec.replicas >= 1"})
    updated = client.put(f"{API}/validatingadmissionpolicies/replicas.example.com", json=body).json()
    assert updated["metadata"]["generation"] == 2 and updated["status"]["observedGeneration"] == 2


def test_a_binding_gets_its_match_resources_defaults(client: TestClient) -> None:
    made = client.post(f"{API}/validatingadmissionpolicybindings", json=binding(
        matchResources={"namespaceSelector": {"matchLabels": {"env": "test"}}}))
    assert made.status_code == 201, made.text
    spec = made.json()["spec"]
    assert spec["matchResources"] == {"namespaceSelector": {"matchLabels": {"env": "test"}}, "objectSelector": {},
                                      "matchPolicy": "Equivalent"}
    assert made.json()["metadata"]["generation"] == 1


def test_policy_expressions_are_compiled_with_upstreams_texts(client: TestClient) -> None:
    r = client.post(f"{API}/validatingadmissionpolicies", json=policy(validations=[
        {"expression": "object.spec.replicas"},
        {"expression": "params.max > 1", "messageExpression": "42"},
        {"expression": "object.spec.replicas < ", "message": "two\nlines", "reason": "Teapot"},
        {"expression": " ", "messageExpression": "  "}]))
    found = causes(r)
    assert found[0] == ("spec.validations[0].expression", 'Invalid value: "object.spec.replicas": must evaluate to bool')
    assert found[1][0] == "spec.validations[1].expression"
    assert found[1][1].startswith('Invalid value: "params.max > 1": compilation failed: ERROR: <input>:1:1: '
                                  "undeclared reference to 'params'")
    assert found[2] == ("spec.validations[1].messageExpression", 'Invalid value: "42": must evaluate to string')
    assert found[3][0] == "spec.validations[2].expression" and "Syntax error" in found[3][1]
    assert found[4:] == [
        ("spec.validations[2].message", 'Invalid value: "two\\nlines": message must not contain line breaks'),
        ("spec.validations[2].reason",
         'Unsupported value: "Teapot": supported values: "Forbidden", "Invalid", "RequestEntityTooLarge"'),
        ("spec.validations[3].expression", "Required value: expression is not specified"),
        ("spec.validations[3].messageExpression", 'Invalid value: "  ": must be non-empty if specified')]


def test_params_and_variables_are_declared_only_when_the_policy_has_them(client: TestClient) -> None:
    with_params = policy(paramKind={"apiVersion": "v1", "kind": "ConfigMap"},
                         variables=[{"name": "replicas", "expression": "object.spec.replicas"}],
                         validations=[{"expression": "variables.replicas <= int(params.data.max)",
                                       "messageExpression": "'at most ' + params.data.max"}])
    assert client.post(f"{API}/validatingadmissionpolicies", json=with_params).status_code == 201
    r = client.post(f"{API}/validatingadmissionpolicies", json=policy(
        "other.example.com", validations=[{"expression": "variables.replicas <= 5"}]))
    assert "undeclared reference to 'variables'" in causes(r)[0][1]
    r = client.post(f"{API}/validatingadmissionpolicies", json=policy(
        "third.example.com", variables=[{"name": "in", "expression": "1"}, {"name": "", "expression": ""}]))
    assert causes(r) == [("spec.variables[0].name", 'Invalid value: "in": name is not a valid CEL identifier'),
                         ("spec.variables[1].name", "Required value: name is not specified"),
                         ("spec.variables[1].expression", "Required value: expression is not specified")]


def test_a_policy_needs_its_failure_policy_constraints_and_validations(client: TestClient) -> None:
    r = client.post(f"{API}/validatingadmissionpolicies", json=policy(
        failurePolicy="Sometimes", matchConstraints={"matchPolicy": "Loose"}, validations=[],
        paramKind={"apiVersion": "a/b/c", "kind": "Config_Map"}))
    assert causes(r) == [
        ("spec.failurePolicy", 'Unsupported value: "Sometimes": supported values: "Fail", "Ignore"'),
        ("spec.paramKind.apiVersion", 'Invalid value: "a/b/c": unexpected GroupVersion string: a/b/c'),
        ("spec.paramKind.kind", 'Invalid value: "Config_Map": may have mixed case, but should otherwise match: a '
         "DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic "
         "character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for "
         "validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"),
        ("spec.matchConstraints.matchPolicy", 'Unsupported value: "Loose": supported values: "Equivalent", "Exact"'),
        ("spec.matchConstraints.resourceRules", "Required value"),
        ("spec.validations", "Required value: validations or auditAnnotations must contain at least one item"),
        ("spec.auditAnnotations", "Required value: validations or auditAnnotations must contain at least one item")]


def test_audit_annotations_need_qualified_unique_keys_and_an_expression(client: TestClient) -> None:
    r = client.post(f"{API}/validatingadmissionpolicies", json=policy(auditAnnotations=[
        {"key": "high-replicas", "valueExpression": "'many'"}, {"key": "high-replicas", "valueExpression": " "}]))
    assert causes(r) == [("spec.auditAnnotations[1].valueExpression", "Required value: valueExpression is not specified"),
                         ("spec.auditAnnotations[1].key", 'Duplicate value: "high-replicas"')]


def test_a_binding_needs_a_policy_name_actions_and_a_sound_param_ref(client: TestClient) -> None:
    r = client.post(f"{API}/validatingadmissionpolicybindings", json=binding(
        policyName="", validationActions=["Deny", "Warn", "Deny", "Shout"],
        paramRef={"name": "a/b", "selector": {}, "parameterNotFoundAction": "Maybe"}))
    assert causes(r) == [
        ("spec.policyName", "Required value"),
        ("spec.paramRef.name", "Invalid value: \"a/b\": may not contain '/'"),
        ("spec.paramRef.name", "Forbidden: name and selector are mutually exclusive"),
        ("spec.paramRef.selector", "Forbidden: name and selector are mutually exclusive"),
        ("spec.paramRef.parameterNotFoundAction", 'Unsupported value: "Maybe": supported values: "Deny", "Allow"'),
        ("spec.validationActions[2]", 'Duplicate value: "Deny"'),
        ("spec.validationActions[3]", 'Unsupported value: "Shout": supported values: "Audit", "Deny", "Warn"'),
        ("spec.validationActions", 'Invalid value: ["Deny","Warn","Deny","Shout"]: must not contain both Deny and '
         "Warn (repeating the same validation failure information in the API response and headers serves no "
         "purpose)")]
    r = client.post(f"{API}/validatingadmissionpolicybindings", json=binding(validationActions=[], paramRef={}))
    assert causes(r) == [("spec.paramRef", "Required value: one of name or selector must be specified"),
                         ("spec.paramRef.parameterNotFoundAction", "Required value"),
                         ("spec.validationActions", "Required value: at least one validation action is required")]


def test_kubectl_get_prints_the_policy_and_binding_columns(client: TestClient) -> None:
    client.post(f"{API}/validatingadmissionpolicies", json=policy(paramKind={"apiVersion": "v1", "kind": "ConfigMap"}))
    client.post(f"{API}/validatingadmissionpolicybindings", json=binding(
        paramRef={"name": "limits", "parameterNotFoundAction": "Deny"}))
    client.post(f"{API}/validatingadmissionpolicybindings", json=binding(
        "selected.example.com", paramRef={"selector": {"matchLabels": {"a": "b"}}, "parameterNotFoundAction": "Allow"}))
    table = client.get(f"{API}/validatingadmissionpolicies", headers=TABLE).json()
    assert [c["name"] for c in table["columnDefinitions"]] == ["Name", "Validations", "ParamKind", "Age"]
    assert table["rows"][0]["cells"][:3] == ["replicas.example.com", 1, "v1/ConfigMap"]
    table = client.get(f"{API}/validatingadmissionpolicybindings", headers=TABLE).json()
    assert [c["name"] for c in table["columnDefinitions"]] == ["Name", "PolicyName", "ParamRef", "Age"]
    assert [row["cells"][:3] for row in table["rows"]] == [
        ["replicas-binding.example.com", "replicas.example.com", "*/limits"],
        ["selected.example.com", "replicas.example.com",
         "&LabelSelector{MatchLabels:map[string]string{a: b,},MatchExpressions:[]LabelSelectorRequirement{},}"]]


def test_the_status_subresource_takes_type_checking_warnings_with_their_fields(client: TestClient) -> None:
    made = client.post(f"{API}/validatingadmissionpolicies", json=policy()).json()
    made["status"] = {"typeChecking": {"expressionWarnings": [{"fieldRef": "", "warning": ""}]}}
    r = client.put(f"{API}/validatingadmissionpolicies/replicas.example.com/status", json=made)
    assert causes(r) == [("status.typeChecking.expressionWarnings[0].warning", "Required value"),
                         ("status.typeChecking.expressionWarnings[0].fieldRef", "Required value")]
