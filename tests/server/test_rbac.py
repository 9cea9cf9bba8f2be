"""rbac.authorization.k8s.io/v1 stored as kube-apiserver stores it: defaults, validation with upstream's messages
and field paths, the immutable roleRef, discovery, OpenAPI and the kubectl get columns (not enforced: the
server's own authorizer decides)."""

from __future__ import annotations

import warnings
from typing import Any

import pytest

warnings.filterwarnings("ignore", message="Using `httpx`")
from cluster import api_client  # noqa: E402
from starlette.testclient import TestClient  # noqa: E402

RBAC = "/apis/rbac.authorization.k8s.io/v1"
GROUP = "rbac.authorization.k8s.io"
TABLE = {"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"}


@pytest.fixture
def client() -> TestClient:
    return api_client()


def obj(kind: str, name: str, **fields: Any) -> dict[str, Any]:
    return {"apiVersion": f"{GROUP}/v1", "kind": kind, "metadata": {"name": name}, **fields}


def causes(r: Any) -> list[tuple[str, str]]:
    assert r.status_code == 422, r.text
    return [(c["field"], c["message"]) for c in r.json()["details"]["causes"]]


def test_a_binding_gets_its_role_refs_group_and_its_users_and_groups_theirs(client: TestClient) -> None:
    made = client.post(f"{RBAC}/clusterrolebindings", json=obj(
        "ClusterRoleBinding", "b", roleRef={"kind": "ClusterRole", "name": "r"},
        subjects=[{"kind": "ServiceAccount", "name": "sa", "namespace": "default"}, {"kind": "User", "name": "u"},
                  {"kind": "Group", "name": "g"}])).json()
    assert made["roleRef"] == {"apiGroup": GROUP, "kind": "ClusterRole", "name": "r"}
    assert [s.get("apiGroup") for s in made["subjects"]] == [None, GROUP, GROUP]


def test_policy_rules_need_verbs_and_resources_or_cluster_wide_non_resource_urls(client: TestClient) -> None:
    r = client.post(f"{RBAC}/namespaces/default/roles", json=obj("Role", "r", rules=[
        {"verbs": [], "nonResourceURLs": ["/metrics"]}, {"verbs": ["get"]}]))
    assert causes(r) == [
        ("rules[0].verbs", "Required value: verbs must contain at least one value"),
        ("rules[0].nonResourceURLs", 'Invalid value: ["/metrics"]: namespaced rules cannot apply to non-resource URLs'),
        ("rules[1].apiGroups", "Required value: resource rules must supply at least one api group"),
        ("rules[1].resources", "Required value: resource rules must supply at least one resource")]
    r = client.post(f"{RBAC}/clusterroles", json=obj("ClusterRole", "c", rules=[
        {"verbs": ["get"], "nonResourceURLs": ["/metrics"], "resources": ["pods"]}]))
    assert causes(r) == [("rules[0].nonResourceURLs", 'Invalid value: ["/metrics"]: rules cannot apply to both '
                                                      'regular resources and non-resource URLs')]
    ok = client.post(f"{RBAC}/clusterroles", json=obj("ClusterRole", "metrics", rules=[
        {"verbs": ["get"], "nonResourceURLs": ["/metrics"]}]))
    assert ok.status_code == 201
    r = client.post(f"{RBAC}/clusterroles", json=obj("ClusterRole", "agg", aggregationRule={}))
    assert causes(r) == [("aggregationRule.clusterRoleSelectors",
                          "Required value: at least one clusterRoleSelector required if aggregationRule is non-nil")]


def test_rbac_names_are_path_segments(client: TestClient) -> None:
    r = client.post(f"{RBAC}/clusterroles", json=obj("ClusterRole", "system:controller:x", rules=[]))
    assert r.status_code == 201  # (colons, as upstream's own roles have)
    r = client.post(f"{RBAC}/clusterroles", json=obj("ClusterRole", "a%b"))
    assert causes(r) == [("metadata.name", "Invalid value: \"a%b\": may not contain '%'")]


def test_a_binding_refers_to_a_role_of_the_rbac_group_and_names_its_subjects_by_kind(client: TestClient) -> None:
    r = client.post(f"{RBAC}/clusterrolebindings", json=obj(
        "ClusterRoleBinding", "b", roleRef={"apiGroup": "example.com", "kind": "Role", "name": ""},
        subjects=[{"kind": "ServiceAccount", "name": "sa"}, {"kind": "Robot", "name": "r"},
                  {"kind": "User", "name": "u", "apiGroup": "v1"}, {"kind": "ServiceAccount", "name": "Bad_Name",
                                                                     "namespace": "default", "apiGroup": "x"}]))
    assert causes(r) == [
        ("roleRef.apiGroup", f'Unsupported value: "example.com": supported values: "{GROUP}"'),
        ("roleRef.kind", 'Unsupported value: "Role": supported values: "ClusterRole"'),
        ("roleRef.name", "Required value"),
        ("subjects[0].namespace", "Required value"),
        ("subjects[1].kind", 'Unsupported value: "Robot": supported values: "ServiceAccount", "User", "Group"'),
        ("subjects[2].apiGroup", f'Unsupported value: "v1": supported values: "{GROUP}"'),
        ("subjects[3].name", 'Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain must consist of lower case '
                             "alphanumeric characters, '-' or '.', and must start and end with an alphanumeric "
                             "character (e.g. 'example.com', regex used for validation is "
                             "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"),
        ("subjects[3].apiGroup", 'Unsupported value: "x": supported values: ""')]
    namespaced = client.post(f"{RBAC}/namespaces/default/rolebindings", json=obj(
        "RoleBinding", "b", roleRef={"kind": "Role", "name": "r"}, subjects=[{"kind": "ServiceAccount", "name": "sa"}]))
    assert namespaced.status_code == 201  # a RoleBinding may name a Role, and its ServiceAccounts' namespace


def test_a_bindings_role_ref_cannot_change(client: TestClient) -> None:
    client.post(f"{RBAC}/clusterrolebindings", json=obj("ClusterRoleBinding", "b",
                                                        roleRef={"kind": "ClusterRole", "name": "r"}))
    r = client.patch(f"{RBAC}/clusterrolebindings/b", json={"roleRef": {"name": "other"}},
                     headers={"content-type": "application/merge-patch+json"})
    assert causes(r) == [("roleRef", 'Invalid value: {"apiGroup":"rbac.authorization.k8s.io","kind":"ClusterRole",'
                                     '"name":"other"}: cannot change roleRef')]
    r = client.patch(f"{RBAC}/clusterrolebindings/b", json={"subjects": [{"kind": "User", "name": "u"}]},
                     headers={"content-type": "application/merge-patch+json"})
    assert r.status_code == 200 and r.json()["subjects"][0]["apiGroup"] == GROUP  # defaulted on update too


def test_rbac_is_discovered_with_every_verb_and_described_in_openapi(client: TestClient) -> None:
    groups = [g["name"] for g in client.get("/apis").json()["groups"]]
    assert groups.index(GROUP) == groups.index("policy") + 1
    listed = {r["name"]: r for r in client.get(f"{RBAC}").json()["resources"]}
    assert sorted(listed) == ["clusterrolebindings", "clusterroles", "rolebindings", "roles"]
    assert listed["roles"]["verbs"] == ["create", "delete", "deletecollection", "get", "list", "patch", "update",
                                        "watch"]
    doc = client.get(f"/openapi/v3/apis/{GROUP}/v1").json()
    role = doc["components"]["schemas"]["io.k8s.api.rbac.v1.Role"]
    assert role["x-kubernetes-group-version-kind"] == [{"group": GROUP, "version": "v1", "kind": "Role"}]
    rule = doc["components"]["schemas"]["io.k8s.api.rbac.v1.PolicyRule"]
    assert "nonResourceURLs" in rule["properties"]
    apps = client.get("/openapi/v3/apis/apps/v1").json()
    assert "/apis/apps/v1/namespaces/{namespace}/deployments/{name}/status" in apps["paths"]
    deployment = apps["components"]["schemas"]["io.k8s.api.apps.v1.Deployment"]
    assert deployment["x-kubernetes-preserve-unknown-fields"] is True  # (modelled in part)


def test_kubectl_get_columns(client: TestClient) -> None:
    client.post(f"{RBAC}/clusterrolebindings", json=obj(
        "ClusterRoleBinding", "b", roleRef={"kind": "ClusterRole", "name": "r"},
        subjects=[{"kind": "ServiceAccount", "name": "sa", "namespace": "kube-system"}, {"kind": "User", "name": "u"}]))
    table = client.get(f"{RBAC}/clusterrolebindings", headers=TABLE).json()
    assert [c["name"] for c in table["columnDefinitions"]] == ["Name", "Role", "Age", "Users", "Groups",
                                                               "ServiceAccounts"]
    cells = table["rows"][0]["cells"]
    assert (cells[0], cells[1], cells[3:]) == ("b", "ClusterRole/r", ["u", "", "kube-system/sa"])
    client.post(f"{RBAC}/clusterroles", json=obj("ClusterRole", "r"))
    role_table = client.get(f"{RBAC}/clusterroles", headers=TABLE).json()
    assert [c["name"] for c in role_table["columnDefinitions"]] == ["Name", "Created At"]
    assert role_table["rows"][0]["cells"][1].endswith("Z")
