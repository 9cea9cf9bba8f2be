"""admissionregistration.k8s.io/v1 ValidatingWebhookConfigurations and MutatingWebhookConfigurations stored as
kube-apiserver stores them: defaults, validation with upstream's paths and texts (and its ratcheting on update),
generation, the kubectl get columns, and the Warning that no webhook is called."""

from __future__ import annotations

import json
import warnings
from typing import Any

import pytest

warnings.filterwarnings("ignore", message="Using `httpx`")
from cluster import api_client  # noqa: E402
from starlette.testclient import TestClient  # noqa: E402

API = "/apis/admissionregistration.k8s.io/v1"
TABLE = {"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"}


@pytest.fixture
def client() -> TestClient:
    return api_client()


def hook(name: str = "check.example.com", **fields: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"name": name, "clientConfig": {"url": "https://hooks.example.com/check"},
                            "sideEffects": "None", "admissionReviewVersions": ["v1"],
                            "rules": [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"],
                                       "resources": ["pods"]}]}
    return {**base, **fields}


def config(kind: str, name: str, *hooks: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "admissionregistration.k8s.io/v1", "kind": kind, "metadata": {"name": name},
            "webhooks": list(hooks)}


def causes(r: Any) -> list[tuple[str, str]]:
    assert r.status_code == 422, r.text
    return [(c["field"], c["message"]) for c in r.json()["details"]["causes"]]


def test_a_validating_webhook_gets_upstreams_defaults(client: TestClient) -> None:
    service = {"clientConfig": {"service": {"namespace": "infra", "name": "hooks"}}}
    made = client.post(f"{API}/validatingwebhookconfigurations",
                       json=config("ValidatingWebhookConfiguration", "v", hook(**service)))
    assert made.status_code == 201, made.text
    webhook = made.json()["webhooks"][0]
    assert webhook["failurePolicy"] == "Fail" and webhook["matchPolicy"] == "Equivalent"
    assert webhook["namespaceSelector"] == {} and webhook["objectSelector"] == {}
    assert webhook["timeoutSeconds"] == 10 and "reinvocationPolicy" not in webhook
    assert webhook["rules"][0]["scope"] == "*"
    assert webhook["clientConfig"]["service"]["port"] == 443
    assert made.json()["metadata"]["generation"] == 1


def test_a_mutating_webhook_is_never_reinvoked_by_default(client: TestClient) -> None:
    made = client.post(f"{API}/mutatingwebhookconfigurations",
                       json=config("MutatingWebhookConfiguration", "m", hook(reinvocationPolicy=None)))
    assert made.status_code == 201, made.text
    assert made.json()["webhooks"][0]["reinvocationPolicy"] == "Never"


def test_every_write_of_a_webhook_configuration_warns_that_webhooks_are_not_called(client: TestClient) -> None:
    made = client.post(f"{API}/validatingwebhookconfigurations",
                       json=config("ValidatingWebhookConfiguration", "v", hook()))
    expected = ("299 - " + json.dumps("dralloc serve does not call admission webhooks: the webhooks of "
                                      "ValidatingWebhookConfiguration 'v' are stored but never called"))
    assert made.headers.get_list("warning") == [expected]
    body = made.json()
    body["webhooks"][0]["timeoutSeconds"] = 5
    updated = client.put(f"{API}/validatingwebhookconfigurations/v", json=body)
    assert updated.status_code == 200 and updated.headers.get_list("warning") == [expected]
    assert updated.json()["metadata"]["generation"] == 2
    same = client.put(f"{API}/validatingwebhookconfigurations/v", json=updated.json())
    assert same.json()["metadata"]["generation"] == 2  # only a change of the webhooks counts


def test_webhook_rules_are_validated_with_upstreams_paths_and_texts(client: TestClient) -> None:
    bad = hook("short", failurePolicy="Sometimes", matchPolicy="Loose", sideEffects="Some", timeoutSeconds=31,
               rules=[{"operations": ["*", "CREATE", "PATCH"], "apiGroups": ["*", "apps"], "apiVersions": [""],
                       "resources": ["*/*", "pods"], "scope": "Somewhere"}])
    r = client.post(f"{API}/validatingwebhookconfigurations", json=config("ValidatingWebhookConfiguration", "v", bad))
    assert causes(r) == [
        ("webhooks[0].name", 'Invalid value: "short": should be a domain with at least three segments separated by dots'),
        ("webhooks[0].rules[0].operations",
         'Invalid value: ["*","CREATE","PATCH"]: if \'*\' is present, must not specify other operations'),
        ("webhooks[0].rules[0].operations[2]",
         'Unsupported value: "PATCH": supported values: "*", "CONNECT", "CREATE", "DELETE", "UPDATE"'),
        ("webhooks[0].rules[0].apiGroups",
         'Invalid value: ["*","apps"]: if \'*\' is present, must not specify other API groups'),
        ("webhooks[0].rules[0].apiVersions[0]", "Required value"),
        ("webhooks[0].rules[0].resources",
         'Invalid value: ["*/*","pods"]: if \'*/*\' is present, must not specify other resources'),
        ("webhooks[0].rules[0].scope",
         'Unsupported value: "Somewhere": supported values: "*", "Cluster", "Namespaced"'),
        ("webhooks[0].failurePolicy", 'Unsupported value: "Sometimes": supported values: "Fail", "Ignore"'),
        ("webhooks[0].matchPolicy", 'Unsupported value: "Loose": supported values: "Equivalent", "Exact"'),
        ("webhooks[0].sideEffects", 'Unsupported value: "Some": supported values: "None", "NoneOnDryRun"'),
        ("webhooks[0].timeoutSeconds", "Invalid value: 31: the timeout value must be between 1 and 30 seconds")]


def test_side_effects_and_review_versions_are_required_and_names_unique(client: TestClient) -> None:
    first = hook(sideEffects=None, admissionReviewVersions=[])
    second = hook(admissionReviewVersions=["v2", "v2", "V3"])
    r = client.post(f"{API}/validatingwebhookconfigurations",
                    json=config("ValidatingWebhookConfiguration", "v", first, second))
    assert causes(r) == [
        ("webhooks[0].sideEffects", "Required value: must specify one of None, NoneOnDryRun"),
        ("webhooks[0].admissionReviewVersions", "Required value: must specify one of v1, v1beta1"),
        ("webhooks[1].admissionReviewVersions[1]", 'Invalid value: "v2": duplicate version'),
        ("webhooks[1].admissionReviewVersions[2]", 'Invalid value: "V3": a DNS-1035 label must consist of lower case '
         "alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character "
         "(e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"),
        ("webhooks[1].admissionReviewVersions", 'Invalid value: ["v2","v2","V3"]: must include at least one of v1, '
         "v1beta1"),
        ("webhooks[1].name", 'Duplicate value: "check.example.com"')]


def test_the_client_config_needs_one_https_url_or_a_service(client: TestClient) -> None:
    cases = {
        "neither": ({}, [("webhooks[0].clientConfig", "Required value: exactly one of url or service is required")]),
        "url": ({"url": "http://user@hooks.example.com/x?a=1#f"}, [
            ("webhooks[0].clientConfig.url",
             'Invalid value: "http": \'https\' is the only allowed URL scheme; desired format: https://host[/path]'),
            ("webhooks[0].clientConfig.url", 'Invalid value: "user": user information is not permitted in the URL'),
            ("webhooks[0].clientConfig.url", 'Invalid value: "f": fragments are not permitted in the URL'),
            ("webhooks[0].clientConfig.url", 'Invalid value: "a=1": query parameters are not permitted in the URL')]),
        # upstream passes the service's name and namespace the other way round to its check (kubernetes#141353)
        "service": ({"service": {"name": "hooks", "path": "no-slash//x", "port": 70000}}, [
            ("webhooks[0].clientConfig.service.name", "Required value"),
            ("webhooks[0].clientConfig.service.port",
             "Invalid value: 70000: port is not valid: must be between 1 and 65535, inclusive"),
            ("webhooks[0].clientConfig.service.path", 'Invalid value: "no-slash//x": must start with a \'/\''),
            ("webhooks[0].clientConfig.service.path", 'Invalid value: "no-slash//x": segment[1] may not be empty')]),
    }
    for name, (client_config, expected) in cases.items():
        r = client.post(f"{API}/validatingwebhookconfigurations",
                        json=config("ValidatingWebhookConfiguration", name, hook(clientConfig=client_config)))
        assert causes(r) == expected, name


def test_match_conditions_are_compiled_as_cel(client: TestClient) -> None:
    conditions = [{"name": "ok", "expression": "request.operation == 'CREATE'"},
                  {"name": "ok", "expression": "object.metadata.name"},
                  {"name": "bad name!", "expression": "params.x == 1"}]
    r = client.post(f"{API}/validatingwebhookconfigurations",
                    json=config("ValidatingWebhookConfiguration", "v", hook(matchConditions=conditions)))
    found = causes(r)
    assert found[0] == ("webhooks[0].matchConditions[1].expression",
                        'Invalid value: "object.metadata.name": must evaluate to bool')
    assert found[1] == ("webhooks[0].matchConditions[1].name", 'Duplicate value: "ok"')
    assert found[2][0] == "webhooks[0].matchConditions[2].expression"
    assert "compilation failed: ERROR: <input>:1:1: undeclared reference to 'params'" in found[2][1]
    assert found[3][0] == "webhooks[0].matchConditions[2].name"


def test_an_update_is_held_to_the_side_effects_rule_the_stored_configuration_met(client: TestClient) -> None:
    made = client.post(f"{API}/validatingwebhookconfigurations",
                       json=config("ValidatingWebhookConfiguration", "v", hook()))
    assert made.status_code == 201
    body = made.json()
    body["webhooks"][0]["sideEffects"] = "Some"
    assert causes(client.put(f"{API}/validatingwebhookconfigurations/v", json=body)) == [
        ("webhooks[0].sideEffects", 'Unsupported value: "Some": supported values: "None", "NoneOnDryRun"')]


def test_kubectl_get_prints_name_webhooks_and_age(client: TestClient) -> None:
    client.post(f"{API}/mutatingwebhookconfigurations",
                json=config("MutatingWebhookConfiguration", "m", hook(), hook("other.example.com")))
    table = client.get(f"{API}/mutatingwebhookconfigurations", headers=TABLE).json()
    assert [c["name"] for c in table["columnDefinitions"]] == ["Name", "Webhooks", "Age"]
    assert table["columnDefinitions"][1]["type"] == "integer"
    assert table["rows"][0]["cells"][:2] == ["m", 2]


def test_discovery_lists_the_group_and_its_four_resources(client: TestClient) -> None:
    group = client.get(API).json()
    names = sorted(r["name"] for r in group["resources"])
    assert names == ["mutatingwebhookconfigurations", "validatingadmissionpolicies",
                     "validatingadmissionpolicies/status", "validatingadmissionpolicybindings",
                     "validatingwebhookconfigurations"]
    assert all(not r["namespaced"] for r in group["resources"])


@pytest.mark.parametrize("kind,resource", [("ValidatingWebhookConfiguration", "validatingwebhookconfigurations"),
                                           ("MutatingWebhookConfiguration", "mutatingwebhookconfigurations")])
def test_webhooks_merge_by_name_as_their_patch_strategy_says(client: TestClient, kind: str, resource: str) -> None:
    # (+patchMergeKey=name, +listType=map: a strategic merge patch of one webhook keeps the others, and
    # server-side apply owns each webhook by its name)
    assert client.post(f"{API}/{resource}", json=config(kind, "merged", hook("a.example.com"))).status_code == 201
    smp = {"content-type": "application/strategic-merge-patch+json"}
    r = client.patch(f"{API}/{resource}/merged?fieldManager=patcher", headers=smp,
                     json={"webhooks": [hook("b.example.com", timeoutSeconds=5)]})
    assert r.status_code == 200, r.text
    assert [(w["name"], w["timeoutSeconds"]) for w in r.json()["webhooks"]] == [("a.example.com", 10),
                                                                               ("b.example.com", 5)]
    entry = next(e for e in r.json()["metadata"]["managedFields"] if e["manager"] == "patcher")
    assert set(entry["fieldsV1"]["f:webhooks"]) == {'k:{"name":"b.example.com"}'}
