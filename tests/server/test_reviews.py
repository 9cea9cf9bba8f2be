"""The self reviews kubectl auth whoami and kubectl auth can-i send: who the user is, what the allow list lets
them do, and kube-apiserver's validation and discovery of them."""

from __future__ import annotations

import warnings
from typing import Any

import pytest

warnings.filterwarnings("ignore", category=DeprecationWarning)
from cluster import api_client  # noqa: E402
from starlette.testclient import TestClient  # noqa: E402

from dralloc.server import create_app  # noqa: E402
from dralloc.server.auth.users import Authorizer, User  # noqa: E402
from dralloc.store import SQLiteStore  # noqa: E402

WHOAMI = "/apis/authentication.k8s.io/v1/selfsubjectreviews"
CAN_I = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews"
CAN_I_LIST = "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews"
ADMIN = {"authorization": "Bearer admin-token"}
VIEWER = {"authorization": "Bearer viewer-token"}
# What kubectl 1.32 sends (protobuf) for `kubectl auth can-i update resourceclaims/myclaim --subresource=status -n team`
KUBECTL_CAN_I = bytes.fromhex(
    "6b3873000a320a17617574686f72697a6174696f6e2e6b38732e696f2f7631121753656c665375626a65637441636365737352657669"
    "657712620a100a0012001a0022002a0032003800420012440a420a047465616d12067570646174651a0f7265736f757263652e6b3873"
    "2e696f22002a0e7265736f75726365636c61696d7332067374617475733a076d79636c61696d1a08080012001a0020001a002200")


@pytest.fixture
def client() -> TestClient:
    tokens = {"admin-token": User("alice", "1", ("admins",)), "viewer-token": User("bob", "2")}
    authz = Authorizer({"group:admins": [{"verbs": ["*"], "resources": ["*"]}],
                        "bob": [{"verbs": ["get", "list", "watch"], "resources": ["resourceslices"]},
                                {"verbs": ["update"], "resources": ["resourceclaims"]}]})
    return api_client(tokens=tokens, authorizer=authz)


def review(verb: str, resource: str, subresource: str = "") -> dict[str, Any]:
    attributes = {"verb": verb, "group": "resource.k8s.io", "resource": resource, "subresource": subresource}
    return {"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview",
            "spec": {"resourceAttributes": attributes}}


def test_whoami_names_the_token_user_with_its_groups_and_system_authenticated(client: TestClient) -> None:
    r = client.post(WHOAMI, json={"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"},
                    headers=ADMIN)
    assert r.status_code == 201
    body = r.json()
    assert (body["kind"], body["apiVersion"]) == ("SelfSubjectReview", "authentication.k8s.io/v1")
    assert body["status"]["userInfo"] == {"username": "alice", "uid": "1",
                                          "groups": ["admins", "system:authenticated"]}


def test_an_anonymous_user_is_system_anonymous_and_may_not_review_itself_under_an_allow_list() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        open_server = TestClient(create_app(SQLiteStore(":memory:"), anonymous=True))
        listed = TestClient(create_app(SQLiteStore(":memory:"), tokens={}, anonymous=True,
                                       authorizer=Authorizer({"someone": []})))
    info = open_server.post(WHOAMI, json={}).json()["status"]["userInfo"]
    assert info == {"username": "system:anonymous", "groups": ["system:unauthenticated"]}
    r = listed.post(WHOAMI, json={})
    assert r.status_code == 403 and r.json()["message"] == (
        'selfsubjectreviews.authentication.k8s.io is forbidden: User "system:anonymous" cannot create resource '
        '"selfsubjectreviews" in API group "authentication.k8s.io" at the cluster scope')


def test_can_i_answers_what_the_allow_list_lets_the_user_do(client: TestClient) -> None:
    def allowed(body: dict[str, Any], headers: dict[str, str] = VIEWER) -> bool:
        r = client.post(CAN_I, json=body, headers=headers)
        assert r.status_code == 201, r.text
        assert r.json()["spec"] == body["spec"]  # the review comes back with its status filled in
        return r.json()["status"]["allowed"]

    assert allowed(review("list", "resourceslices"))
    assert not allowed(review("delete", "resourceslices"))
    assert allowed(review("delete", "resourceslices"), ADMIN)
    # the status subresource is authorized as its resource, as the server enforces it
    assert allowed(review("update", "resourceclaims", "status"))
    # a binding needs create on pods and on pods/binding
    assert not allowed(review("create", "pods", "binding"))
    non_resource = {"spec": {"nonResourceAttributes": {"path": "/version", "verb": "get"}}}
    assert allowed(non_resource)


def test_can_i_reads_kubectls_protobuf_review(client: TestClient) -> None:
    r = client.post(CAN_I, content=KUBECTL_CAN_I, headers={**VIEWER,
                                                           "content-type": "application/vnd.kubernetes.protobuf"})
    assert r.status_code == 201
    assert r.json()["spec"]["resourceAttributes"] == {"namespace": "team", "verb": "update",
                                                      "group": "resource.k8s.io", "resource": "resourceclaims",
                                                      "subresource": "status", "name": "myclaim"}
    assert r.json()["status"] == {"allowed": True}


@pytest.mark.parametrize("spec", [{}, {"resourceAttributes": {"verb": "get"}, "nonResourceAttributes": {}}])
def test_can_i_needs_exactly_one_kind_of_attributes(client: TestClient, spec: dict[str, Any]) -> None:
    r = client.post(CAN_I, json={"spec": spec}, headers=VIEWER)
    assert r.status_code == 422
    status = r.json()
    assert status["message"].startswith('SelfSubjectAccessReview.authorization.k8s.io "" is invalid: spec: '
                                        'Invalid value: ')
    assert status["message"].endswith("exactly one of nonResourceAttributes or resourceAttributes must be "
                                      "specified")


def test_can_i_list_gives_the_users_rules_for_a_namespace(client: TestClient) -> None:
    body = {"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectRulesReview",
            "spec": {"namespace": "default"}}
    status = client.post(CAN_I_LIST, json=body, headers=VIEWER).json()["status"]
    assert {"verbs": ["get", "list", "watch"], "apiGroups": ["*"], "resources": ["resourceslices"]} \
        in status["resourceRules"]
    assert {"verbs": ["create"], "apiGroups": ["authentication.k8s.io"], "resources": ["selfsubjectreviews"]} \
        in status["resourceRules"]
    assert status["incomplete"] is False
    r = client.post(CAN_I_LIST, json={"spec": {}}, headers=VIEWER)
    assert (r.status_code, r.json()["message"]) == (400, "no namespace on request")


def test_reviews_are_create_only_and_discovered(client: TestClient) -> None:
    r = client.get(CAN_I, headers=VIEWER)
    assert r.status_code == 405 and r.json()["reason"] == "MethodNotAllowed"
    groups = [g["name"] for g in client.get("/apis", headers=VIEWER).json()["groups"]]
    assert groups == ["apps", "events.k8s.io", "authentication.k8s.io", "authorization.k8s.io", "autoscaling", "batch",
                      "networking.k8s.io", "policy", "rbac.authorization.k8s.io", "storage.k8s.io",
                      "admissionregistration.k8s.io", "apiextensions.k8s.io", "scheduling.k8s.io", "coordination.k8s.io",
                      "discovery.k8s.io", "resource.k8s.io"]
    resources = client.get("/apis/authorization.k8s.io/v1", headers=VIEWER).json()["resources"]
    assert [(x["name"], x["verbs"]) for x in resources] == [("selfsubjectaccessreviews", ["create"]),
                                                            ("selfsubjectrulesreviews", ["create"])]
    aggregated = client.get("/apis", headers={**VIEWER, "accept": "application/json;g=apidiscovery.k8s.io;v=v2;"
                                                                  "as=APIGroupDiscoveryList"}).json()
    assert [i["metadata"]["name"] for i in aggregated["items"]] == groups


def test_a_rule_for_system_authenticated_applies_to_every_token_user(client: TestClient) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        c = TestClient(create_app(SQLiteStore(":memory:"), tokens={"t": User("carol")},
                                  authorizer=Authorizer({"group:system:authenticated": [
                                      {"verbs": ["list"], "resources": ["deviceclasses"]}]})))
    assert c.get("/apis/resource.k8s.io/v1/deviceclasses", headers={"authorization": "Bearer t"}).status_code == 200


def test_a_token_review_says_whom_a_token_authenticates_to_a_user_allowed_to_ask(client: TestClient) -> None:
    tokens = "/apis/authentication.k8s.io/v1/tokenreviews"

    def token_review(token: Any, headers: dict[str, str] = ADMIN) -> Any:
        return client.post(tokens, json={"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview",
                                         "spec": {"token": token}}, headers=headers)

    # a static token is good for the API server's audience (kube-apiserver's audience-agnostic authenticators)
    assert token_review("viewer-token").json()["status"] == {
        "authenticated": True, "user": {"username": "bob", "uid": "2", "groups": ["system:authenticated"]},
        "audiences": ["https://kubernetes.default.svc.cluster.local"]}
    for_another = client.post(tokens, json={"spec": {"token": "viewer-token", "audiences": ["vault"]}},
                              headers=ADMIN)
    # as kube-apiserver: a token that does not authenticate leaves authenticated out (omitempty) and says why
    assert for_another.json()["status"] == {"user": {}, "error": "invalid bearer token"}
    assert token_review("nobodys-token").json()["status"] == {"user": {}, "error": "invalid bearer token"}
    missing = token_review("")
    assert (missing.status_code, missing.json()["message"]) == (400, "token is required for TokenReview in "
                                                                     "authentication")
    # unlike the self reviews, a token review needs the permission (bob's rules do not give it)
    assert token_review("admin-token", VIEWER).status_code == 403


def _whoami(client: TestClient, headers: dict[str, str]) -> Any:
    r = client.post(WHOAMI, json={}, headers=headers)
    return r.json()["status"]["userInfo"] if r.status_code == 201 else (r.status_code, r.json()["message"])


def test_impersonation_acts_as_the_user_asked_for_when_the_allow_list_lets_the_requester(client: TestClient) -> None:
    # kubectl --as / --as-group / --as-uid
    assert _whoami(client, {**ADMIN, "impersonate-user": "bob"}) == {"username": "bob",
                                                                    "groups": ["system:authenticated"]}
    assert _whoami(client, {**ADMIN, "impersonate-user": "system:serviceaccount:ns1:sa"}) == {
        "username": "system:serviceaccount:ns1:sa",
        "groups": ["system:serviceaccounts", "system:serviceaccounts:ns1", "system:authenticated"]}
    # the groups asked for are all of the impersonated user's groups (no system:authenticated is added)
    r = client.post(CAN_I, json=review("list", "resourceslices"), headers=[
        *ADMIN.items(), ("impersonate-user", "carol"), ("impersonate-group", "admins"),
        ("impersonate-group", "ops"), ("impersonate-uid", "7")])
    assert r.status_code == 201 and r.json()["status"] == {"allowed": True}  # carol is in group admins
    # the impersonated user's permissions, not the requester's
    r = client.post(CAN_I, json=review("delete", "resourceslices"), headers={**ADMIN, "impersonate-user": "bob"})
    assert r.json()["status"] == {"allowed": False}
    assert client.get("/apis/resource.k8s.io/v1/deviceclasses", headers={**ADMIN, "impersonate-user": "bob"}) \
        .status_code == 403


def test_impersonation_needs_the_impersonate_verb_and_a_user(client: TestClient) -> None:
    assert _whoami(client, {**VIEWER, "impersonate-user": "alice"}) == (
        403, 'users "alice" is forbidden: User "bob" cannot impersonate resource "users" in API group "" at the '
             'cluster scope')
    assert _whoami(client, {**VIEWER, "impersonate-user": "system:serviceaccount:ns1:sa"}) == (
        403, 'serviceaccounts "sa" is forbidden: User "bob" cannot impersonate resource "serviceaccounts" in API '
             'group "" in the namespace "ns1"')
    assert _whoami(client, {**ADMIN, "impersonate-group": "admins"}) == (
        400, "requested uid, groups or user-extra without impersonating a user")


def test_the_admin_may_do_anything_to_non_resource_urls_as_cluster_admin_may() -> None:
    # kubectl auth can-i --list of a cluster admin lists [*] [*] for non-resource URLs, and can-i post /logs is yes
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        admin = TestClient(create_app(SQLiteStore(":memory:"), anonymous=True))
    review = {"spec": {"nonResourceAttributes": {"path": "/logs", "verb": "post"}}}
    assert admin.post(CAN_I, json=review).json()["status"]["allowed"] is True
    status = admin.post(CAN_I_LIST, json={"spec": {"namespace": "default"}}).json()["status"]
    assert status["nonResourceRules"] == [{"verbs": ["*"], "nonResourceURLs": ["*"]}]
    assert status["resourceRules"][0] == {"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}
