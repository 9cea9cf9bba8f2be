"""The TokenRequest API (``kubectl create token``) and service account token authentication, rule by rule as
kube-apiserver has them: pkg/registry/core/serviceaccount/storage/token.go, pkg/apis/authentication/validation,
pkg/serviceaccount/claims.go and jwt.go."""

from __future__ import annotations

import base64
import json
import re
import time
import warnings
from pathlib import Path
from typing import Any

import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa

warnings.filterwarnings("ignore", message="Using `httpx`")
from cluster import api_client  # noqa: E402
from starlette.testclient import TestClient  # noqa: E402

from dralloc.server.auth import tokens  # noqa: E402
from dralloc.server.auth.users import Authorizer, User  # noqa: E402

NS = "/api/v1/namespaces/default"
TOKEN = f"{NS}/serviceaccounts/default/token"
WHOAMI = "/apis/authentication.k8s.io/v1/selfsubjectreviews"
REVIEW = "/apis/authentication.k8s.io/v1/tokenreviews"
ISSUER = "https://kubernetes.default.svc.cluster.local"
ADMIN = {"authorization": "Bearer admin-token"}
PROTOBUF = {**ADMIN, "content-type": "application/vnd.kubernetes.protobuf"}
YEAR = 365 * 24 * 3600
# What kubectl 1.32 sends (protobuf) for `kubectl create token default`, `... --duration 20m --audience x
# --audience y` and `... --duration 20m --audience x --bound-object-kind Pod --bound-object-name p
# --bound-object-uid u-1`
KUBECTL_DEFAULT = bytes.fromhex(
    "6b3873000a280a1861757468656e7469636174696f6e2e6b38732e696f2f7631120c546f6b656e52657175657374121a0a100a0012"
    "001a0022002a0032003800420012001a040a0012001a002200")
KUBECTL_AUDIENCES = bytes.fromhex(
    "6b3873000a280a1861757468656e7469636174696f6e2e6b38732e696f2f7631120c546f6b656e5265717565737412230a100a0012"
    "001a0022002a0032003800420012090a01780a017920b0091a040a0012001a002200")
KUBECTL_BOUND = bytes.fromhex(
    "6b3873000a280a1861757468656e7469636174696f6e2e6b38732e696f2f7631120c546f6b656e5265717565737412330a100a0012"
    "001a0022002a0032003800420012190a01781a110a03506f64120276311a01702203752d3120b0091a040a0012001a002200")


@pytest.fixture
def client() -> TestClient:
    return api_client(tokens={"admin-token": User("admin", "", ("system:masters",))})


def request(client: TestClient, spec: dict[str, Any] | None = None, account: str = "default",
            **body: Any) -> Any:
    return client.post(f"{NS}/serviceaccounts/{account}/token", headers=ADMIN,
                       json={"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": spec or {},
                             **body})


def issue(client: TestClient, spec: dict[str, Any] | None = None, account: str = "default") -> str:
    r = request(client, spec, account)
    assert r.status_code == 201, r.text
    return r.json()["status"]["token"]


def parts(token: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """A JWT's header and claims, unverified."""
    def part(text: str) -> dict[str, Any]:
        return json.loads(base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)))
    head, payload, _ = token.split(".")
    return part(head), part(payload)


def create(client: TestClient, path: str, obj: dict[str, Any]) -> dict[str, Any]:
    r = client.post(path, json=obj, headers=ADMIN)
    assert r.status_code == 201, r.text
    return r.json()


def make_pod(client: TestClient, name: str = "p", **spec: Any) -> dict[str, Any]:
    return create(client, f"{NS}/pods", {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
                                         "spec": {"containers": [{"name": "c", "image": "x:1"}], **spec}})


def make_node(client: TestClient, name: str = "node-1") -> dict[str, Any]:
    return create(client, "/api/v1/nodes", {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}})


def delete(client: TestClient, path: str) -> None:
    assert client.delete(path, headers=ADMIN, params={"gracePeriodSeconds": "0"}).status_code == 200


def account_uid(client: TestClient, name: str = "default") -> str:
    return client.get(f"{NS}/serviceaccounts/{name}", headers=ADMIN).json()["metadata"]["uid"]


def whoami(client: TestClient, token: str) -> Any:
    r = client.post(WHOAMI, json={}, headers={"authorization": f"Bearer {token}"})
    return r.json()["status"]["userInfo"] if r.status_code == 201 else r.status_code


def review(client: TestClient, token: str, audiences: list[str] | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"token": token, **({"audiences": audiences} if audiences else {})}
    r = client.post(REVIEW, json={"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview", "spec": spec},
                    headers=ADMIN)
    assert r.status_code == 201, r.text
    return r.json()["status"]


def signed(client: TestClient, shift: float = 0, expiration: int = 3600, **changes: Any) -> str:
    """A token of the default account signed with the server's key, issued ``shift`` seconds from now, its
    claims changed as given."""
    account = client.get(f"{NS}/serviceaccounts/default", headers=ADMIN).json()
    claims = tokens.claims(account, [ISSUER], expiration, int(time.time() + shift))
    claims.update(changes)
    return client.app.api.service_account_key.sign(claims)


# --- the TokenRequest API -----------------------------------------------------------------------------------

def test_a_token_request_answers_201_with_the_request_filled_in_and_a_signed_token(client: TestClient) -> None:
    r = request(client)
    assert r.status_code == 201
    body = r.json()
    meta, spec, status = body["metadata"], body["spec"], body["status"]
    assert (body["kind"], body["apiVersion"]) == ("TokenRequest", "authentication.k8s.io/v1")
    assert (meta["name"], meta["namespace"], meta["uid"]) == ("default", "default", account_uid(client))
    # v1 defaults: the API server's audiences and an hour; boundObjectRef is written even when null
    assert spec == {"audiences": [ISSUER], "expirationSeconds": 3600, "boundObjectRef": None}
    created = time.mktime(time.strptime(meta["creationTimestamp"], "%Y-%m-%dT%H:%M:%SZ"))
    expires = time.mktime(time.strptime(status["expirationTimestamp"], "%Y-%m-%dT%H:%M:%SZ"))
    assert expires - created == 3600
    header, claims = parts(status["token"])
    assert header == {"alg": "ES256", "kid": client.app.api.service_account_key.kid}
    assert list(claims) == sorted(claims)  # go-jose writes the claims' keys sorted
    assert (claims["iss"], claims["sub"], claims["aud"]) == (ISSUER, "system:serviceaccount:default:default",
                                                             [ISSUER])
    assert claims["nbf"] == claims["iat"] and claims["exp"] - claims["iat"] == 3600
    assert re.fullmatch(r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}", claims["jti"])
    assert claims["kubernetes.io"] == {"namespace": "default",
                                       "serviceaccount": {"name": "default", "uid": account_uid(client)}}
    # the signature is ES256 with the server's key, checked here with PyJWT on its own
    public = client.app.api.service_account_key.key.public_key()
    assert jwt.decode(status["token"], public, algorithms=["ES256"], audience=ISSUER)["jti"] == claims["jti"]


def test_the_key_id_is_the_base64url_sha256_of_the_public_key(client: TestClient) -> None:
    key = client.app.api.service_account_key
    der = key.public.public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    import hashlib

    assert key.kid == base64.urlsafe_b64encode(hashlib.sha256(der).digest()).decode().rstrip("=")


def test_an_account_that_does_not_exist_is_a_404(client: TestClient) -> None:
    r = request(client, account="nobody")
    assert (r.status_code, r.json()["reason"], r.json()["message"]) == (404, "NotFound",
                                                                        'serviceaccounts "nobody" not found')
    r = client.post("/api/v1/namespaces/nowhere/serviceaccounts/default/token", json={}, headers=ADMIN)
    assert (r.status_code, r.json()["message"]) == (404, 'namespaces "nowhere" not found')


@pytest.mark.parametrize(("seconds", "message"), [
    (599, "may not specify a duration less than 10 minutes"),
    (0, "may not specify a duration less than 10 minutes"),
    (-1, "may not specify a duration less than 10 minutes"),
    (2**32 + 1, "may not specify a duration larger than 2^32 seconds"),
])
def test_a_lifetime_under_ten_minutes_or_over_2_to_the_32_seconds_is_invalid(client: TestClient, seconds: int,
                                                                              message: str) -> None:
    r = request(client, {"expirationSeconds": seconds})
    assert r.status_code == 422
    status = r.json()
    assert status["message"] == (f'TokenRequest.authentication.k8s.io "" is invalid: spec.expirationSeconds: '
                                 f'Invalid value: {seconds}: {message}')
    assert status["details"]["causes"] == [{"reason": "FieldValueInvalid", "field": "spec.expirationSeconds",
                                            "message": f"Invalid value: {seconds}: {message}"}]


def test_the_bounds_of_the_lifetime_are_allowed(client: TestClient) -> None:
    for seconds in (600, 2**32):
        _, claims = parts(issue(client, {"expirationSeconds": seconds}))
        assert claims["exp"] - claims["iat"] == seconds


def test_an_account_that_is_missing_is_reported_before_a_bad_lifetime(client: TestClient) -> None:
    assert request(client, {"expirationSeconds": 60}, account="nobody").status_code == 404


def test_a_name_or_namespace_in_the_body_must_be_the_urls(client: TestClient) -> None:
    r = request(client, metadata={"name": "other"})
    assert (r.status_code, r.json()["message"]) == (
        422, 'TokenRequest.authentication.k8s.io "default" is invalid: metadata.name: Invalid value: "other": must '
             'match the service account name if specified')
    r = request(client, metadata={"namespace": "kube-system"})
    assert (r.status_code, r.json()["message"]) == (
        422, 'TokenRequest.authentication.k8s.io "default" is invalid: metadata.namespace: Invalid value: '
             '"kube-system": must match the service account namespace if specified')
    assert request(client, metadata={"name": "default", "namespace": "default"}).status_code == 201


def test_a_uid_in_the_body_must_be_the_accounts(client: TestClient) -> None:
    uid = account_uid(client)
    r = request(client, metadata={"uid": "an-old-uid"})
    assert (r.status_code, r.json()["reason"], r.json()["message"]) == (
        409, "Conflict", 'Operation cannot be fulfilled on TokenRequest.authentication.k8s.io "default": the UID in '
                         f'the token request (an-old-uid) does not match the UID of the service account ({uid})')
    assert request(client, metadata={"uid": uid}).status_code == 201


def test_audiences_asked_for_are_the_tokens(client: TestClient) -> None:
    r = request(client, {"audiences": ["vault", "x"]})
    assert r.json()["spec"]["audiences"] == ["vault", "x"]
    assert parts(r.json()["status"]["token"])[1]["aud"] == ["vault", "x"]


def test_a_token_bound_to_a_pod_names_it_and_its_node(client: TestClient) -> None:
    node = make_node(client)
    pod = make_pod(client, nodeName="node-1")
    r = request(client, {"boundObjectRef": {"kind": "Pod", "apiVersion": "v1", "name": "p"}})
    assert r.status_code == 201
    assert r.json()["spec"]["boundObjectRef"] == {"kind": "Pod", "apiVersion": "v1", "name": "p"}
    private = parts(r.json()["status"]["token"])[1]["kubernetes.io"]
    assert private["pod"] == {"name": "p", "uid": pod["metadata"]["uid"]}
    assert private["node"] == {"name": "node-1", "uid": node["metadata"]["uid"]}
    assert list(private) == ["namespace", "node", "pod", "serviceaccount"]
    # a node that is not there is named without a uid
    make_pod(client, "q", nodeName="node-9")
    private = parts(issue(client, {"boundObjectRef": {"kind": "Pod", "apiVersion": "v1", "name": "q"}}))[1]
    assert private["kubernetes.io"]["node"] == {"name": "node-9"}


def test_a_token_bound_to_a_secret_or_a_node_names_it(client: TestClient) -> None:
    secret = create(client, f"{NS}/secrets", {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}})
    node = make_node(client)
    private = parts(issue(client, {"boundObjectRef": {"kind": "Secret", "apiVersion": "v1", "name": "s"}}))[1]
    assert private["kubernetes.io"]["secret"] == {"name": "s", "uid": secret["metadata"]["uid"]}
    private = parts(issue(client, {"boundObjectRef": {"kind": "Node", "apiVersion": "v1", "name": "node-1"}}))[1]
    assert private["kubernetes.io"]["node"] == {"name": "node-1", "uid": node["metadata"]["uid"]}
    assert "pod" not in private["kubernetes.io"]


def test_a_bound_object_must_exist_run_as_the_account_and_have_the_uid_given(client: TestClient) -> None:
    def refused(ref: dict[str, Any], account: str = "default") -> tuple[int, str]:
        r = request(client, {"boundObjectRef": ref}, account)
        return r.status_code, r.json()["message"]

    assert refused({"kind": "Pod", "apiVersion": "v1", "name": "p"}) == (404, 'pods "p" not found')
    assert refused({"kind": "Secret", "apiVersion": "v1", "name": "s"}) == (404, 'secrets "s" not found')
    assert refused({"kind": "Node", "apiVersion": "v1", "name": "n"}) == (404, 'nodes "n" not found')
    make_pod(client)
    assert refused({"kind": "Pod", "apiVersion": "v1", "name": "p", "uid": "u-1"}) == (
        409, 'Operation cannot be fulfilled on Pod "p": the UID in the bound object reference (u-1) does not match '
             'the UID in record. The object might have been deleted and then recreated')
    create(client, f"{NS}/serviceaccounts", {"apiVersion": "v1", "kind": "ServiceAccount",
                                             "metadata": {"name": "other"}})
    assert refused({"kind": "Pod", "apiVersion": "v1", "name": "p"}, "other") == (
        400, 'cannot bind token for serviceaccount "other" to pod running with different serviceaccount name.')
    # only the core group's Pod, Secret and Node (the version is not looked at, as upstream)
    assert refused({"kind": "ConfigMap", "apiVersion": "v1", "name": "c"}) == (
        400, "cannot bind token to object of type /v1, Kind=ConfigMap")
    assert refused({"kind": "Pod", "apiVersion": "apps/v1", "name": "p"}) == (
        400, "cannot bind token to object of type apps/v1, Kind=Pod")
    assert refused({"kind": "Pod", "name": ""}) == (400, "Name parameter required.")
    assert refused({"kind": "Pod", "name": "a/b"}) == (400, "Name parameter invalid: \"a/b\": may not contain '/'")
    assert request(client, {"boundObjectRef": {"kind": "Pod", "apiVersion": "v2", "name": "p"}}).status_code == 201


def test_kubelets_token_of_a_pod_is_extended_to_a_year_and_warns_after_its_hour(client: TestClient) -> None:
    make_pod(client)
    ref = {"kind": "Pod", "apiVersion": "v1", "name": "p"}
    r = request(client, {"expirationSeconds": 3607, "boundObjectRef": ref})
    claims = parts(r.json()["status"]["token"])[1]
    assert claims["exp"] - claims["iat"] == YEAR
    assert claims["kubernetes.io"]["warnafter"] - claims["iat"] == 3607
    created = time.mktime(time.strptime(r.json()["metadata"]["creationTimestamp"], "%Y-%m-%dT%H:%M:%SZ"))
    expires = time.mktime(time.strptime(r.json()["status"]["expirationTimestamp"], "%Y-%m-%dT%H:%M:%SZ"))
    assert expires - created == 3607  # the answer says the hour asked for
    # not for another audience, another lifetime, or a token bound to no pod
    for spec in ({"expirationSeconds": 3607, "boundObjectRef": ref, "audiences": ["x"]},
                 {"expirationSeconds": 3600, "boundObjectRef": ref}, {"expirationSeconds": 3607}):
        claims = parts(issue(client, spec))[1]
        assert claims["exp"] - claims["iat"] == spec["expirationSeconds"]
        assert "warnafter" not in claims["kubernetes.io"]


@pytest.mark.parametrize(("spec", "message"), [
    ({"expirationSeconds": "1h"}, "cannot unmarshal string into Go struct field TokenRequestSpec.spec."
                                  "expirationSeconds of type int64"),
    ({"expirationSeconds": 3600.5}, "cannot unmarshal number 3600.5 into Go struct field TokenRequestSpec.spec."
                                    "expirationSeconds of type int64"),
    ({"audiences": "x"}, "cannot unmarshal string into Go struct field TokenRequestSpec.spec.audiences of type "
                         "[]string"),
    ({"audiences": [1]}, "cannot unmarshal number into Go struct field TokenRequestSpec.spec.audiences of type "
                         "string"),
    ({"boundObjectRef": "p"}, "cannot unmarshal string into Go struct field TokenRequestSpec.spec.boundObjectRef "
                              "of type v1.BoundObjectReference"),
    ({"boundObjectRef": {"name": 1}}, "cannot unmarshal number into Go struct field BoundObjectReference.spec."
                                      "boundObjectRef.name of type string"),
])
def test_fields_of_the_wrong_type_are_a_400(client: TestClient, spec: dict[str, Any], message: str) -> None:
    r = request(client, spec)
    assert (r.status_code, r.json()["message"]) == (
        400, f'TokenRequest in version "v1" cannot be handled as a TokenRequest: json: {message}')


@pytest.mark.parametrize("body", [b"", b"[]", b"{", b'{"spec": []}', b'{"metadata": 1}', b'{"kind": "Pod"}',
                                  b'{"spec": {"expirationSeconds": 99999999999999999999999}}', b"k8s\x00\x0a\xff",
                                  b'{"spec": {"boundObjectRef": {"kind": "Pod", "name": "."}}}'])
def test_bad_bodies_are_4xx_never_a_500(client: TestClient, body: bytes) -> None:
    ctype = "application/vnd.kubernetes.protobuf" if body.startswith(b"k8s") else "application/json"
    r = client.post(TOKEN, content=body, headers={**ADMIN, "content-type": ctype})
    assert 400 <= r.status_code < 500 and r.json()["kind"] == "Status", r.text


def test_yaml_and_kubectls_protobuf_bodies_are_read(client: TestClient) -> None:
    r = client.post(TOKEN, content=b"spec:\n  audiences: [vault]\n  expirationSeconds: 900\n",
                    headers={**ADMIN, "content-type": "application/yaml"})
    assert r.status_code == 201 and r.json()["spec"]["audiences"] == ["vault"]
    r = client.post(TOKEN, content=KUBECTL_DEFAULT, headers=PROTOBUF)
    assert r.status_code == 201
    assert r.json()["spec"] == {"audiences": [ISSUER], "expirationSeconds": 3600, "boundObjectRef": None}
    r = client.post(TOKEN, content=KUBECTL_AUDIENCES, headers=PROTOBUF)
    assert r.status_code == 201
    assert r.json()["spec"] == {"audiences": ["x", "y"], "expirationSeconds": 1200, "boundObjectRef": None}
    make_pod(client)  # its uid is not the u-1 kubectl was given: every field of the reference was read
    r = client.post(TOKEN, content=KUBECTL_BOUND, headers=PROTOBUF)
    assert (r.status_code, r.json()["message"]) == (
        409, 'Operation cannot be fulfilled on Pod "p": the UID in the bound object reference (u-1) does not match '
             'the UID in record. The object might have been deleted and then recreated')


def test_only_post_is_served(client: TestClient) -> None:
    assert client.get(TOKEN, headers=ADMIN).status_code == 405
    assert client.put(TOKEN, json={}, headers=ADMIN).status_code == 405


def test_discovery_lists_the_token_subresource_as_kube_apiserver_does(client: TestClient) -> None:
    legacy = client.get("/api/v1", headers=ADMIN).json()["resources"]
    assert {"name": "serviceaccounts/token", "singularName": "", "namespaced": True,
            "group": "authentication.k8s.io", "version": "v1", "kind": "TokenRequest", "verbs": ["create"]} in legacy
    accept = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
    core = client.get("/api", headers={**ADMIN, "accept": accept}).json()["items"][0]["versions"][0]["resources"]
    account = next(r for r in core if r["resource"] == "serviceaccounts")
    assert account["subresources"] == [{"subresource": "token", "verbs": ["create"], "responseKind": {
        "group": "authentication.k8s.io", "version": "v1", "kind": "TokenRequest"}}]


def test_a_token_request_is_authorized_as_create_on_serviceaccounts_token_alone() -> None:
    users = {"t-bob": User("bob"), "t-carol": User("carol")}
    authz = Authorizer({"bob": [{"verbs": ["create"], "resources": ["serviceaccounts/token"]}],
                        "carol": [{"verbs": ["*"], "resources": ["serviceaccounts"]}]})
    c = api_client(tokens=users, authorizer=authz)
    assert c.post(TOKEN, json={}, headers={"authorization": "Bearer t-bob"}).status_code == 201
    r = c.post(TOKEN, json={}, headers={"authorization": "Bearer t-carol"})
    assert (r.status_code, r.json()["message"]) == (
        403, 'serviceaccounts "default" is forbidden: User "carol" cannot create resource "serviceaccounts/token" in '
             'API group "" in the namespace "default"')
    # kubectl auth can-i create serviceaccounts/token says the same
    can_i = {"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview", "spec": {
        "resourceAttributes": {"verb": "create", "resource": "serviceaccounts", "subresource": "token"}}}
    for token, allowed in (("t-bob", True), ("t-carol", False)):
        r = c.post("/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", json=can_i,
                   headers={"authorization": f"Bearer {token}"})
        assert r.json()["status"]["allowed"] is allowed


# --- authentication -----------------------------------------------------------------------------------------

def sa_info(client: TestClient, token: str) -> dict[str, Any]:
    jti = parts(token)[1]["jti"]
    return {"username": "system:serviceaccount:default:default", "uid": account_uid(client),
            "groups": ["system:serviceaccounts", "system:serviceaccounts:default", "system:authenticated"],
            "extra": {"authentication.kubernetes.io/credential-id": [f"JTI={jti}"]}}


@pytest.mark.parametrize("mode", ["admin token", "token file", "anonymous"])
def test_a_token_authenticates_as_its_service_account_in_every_mode(mode: str) -> None:
    options: dict[str, Any] = {
        "admin token": {"tokens": {"admin-token": User("admin", "", ("system:masters",))}},
        "token file": {"tokens": {"admin-token": User("alice", "1", ("admins",))}},
        "anonymous": {"tokens": None, "anonymous": True}}[mode]
    client = api_client(**options)
    token = issue(client)
    assert whoami(client, token) == sa_info(client, token)
    assert client.get(f"{NS}/pods", headers={"authorization": f"Bearer {token}"}).status_code == 200


def test_a_pod_bound_token_names_the_pod_and_node_in_the_users_extra(client: TestClient) -> None:
    node, pod = make_node(client), make_pod(client, nodeName="node-1")
    token = issue(client, {"boundObjectRef": {"kind": "Pod", "apiVersion": "v1", "name": "p"}})
    assert whoami(client, token)["extra"] == {
        "authentication.kubernetes.io/credential-id": [f"JTI={parts(token)[1]['jti']}"],
        "authentication.kubernetes.io/node-name": ["node-1"],
        "authentication.kubernetes.io/node-uid": [node["metadata"]["uid"]],
        "authentication.kubernetes.io/pod-name": ["p"], "authentication.kubernetes.io/pod-uid": [pod["metadata"]["uid"]]}


def test_an_expired_token_is_refused_after_a_minute_of_leeway(client: TestClient) -> None:
    assert whoami(client, signed(client, shift=-3630))["username"].startswith("system:serviceaccount:")
    expired = signed(client, shift=-3700)
    assert whoami(client, expired) == 401
    assert review(client, expired) == {"user": {}, "error": "[invalid bearer token, service account token has "
                                                            "expired]"}


def test_a_token_not_valid_yet_or_issued_in_the_future_is_refused(client: TestClient) -> None:
    later = signed(client, shift=300)
    assert whoami(client, later) == 401
    assert review(client, later)["error"] == "[invalid bearer token, service account token is not valid yet]"
    now = int(time.time())
    future = signed(client, nbf=now, iat=now + 300)
    assert review(client, future)["error"] == ("[invalid bearer token, service account token is issued in the "
                                               "future]")


def test_a_token_for_another_audience_is_refused_by_the_api_server_and_reviewed_for_it(client: TestClient) -> None:
    token = issue(client, {"audiences": ["vault"]})
    assert whoami(client, token) == 401
    assert review(client, token)["error"] == (
        '[invalid bearer token, token audiences ["vault"] is invalid for the target audiences '
        '["https://kubernetes.default.svc.cluster.local"]]')
    answer = review(client, token, ["vault", "other"])
    assert (answer["authenticated"], answer["audiences"], answer["user"]["username"]) == (
        True, ["vault"], "system:serviceaccount:default:default")
    # a token for several audiences, the API server's among them, is good for it
    assert whoami(client, issue(client, {"audiences": ["vault", ISSUER]}))["username"].endswith(":default")


def test_a_tampered_or_foreign_token_is_refused(client: TestClient) -> None:
    token = issue(client)
    head, payload, signature = token.split(".")
    flipped = signature[:-2] + ("A" if signature[-2] != "A" else "B") + signature[-1]
    claims = parts(token)[1] | {"sub": "system:serviceaccount:kube-system:admin"}
    forged = base64.urlsafe_b64encode(json.dumps(claims).encode()).decode().rstrip("=")
    other_key = tokens.ServiceAccountKey.generate()
    account = client.get(f"{NS}/serviceaccounts/default", headers=ADMIN).json()
    fresh = tokens.claims(account, [ISSUER], 3600, int(time.time()))
    hmac = jwt.encode(fresh, "a shared secret of 32 bytes ....", algorithm="HS256")
    unsigned = jwt.encode(fresh, None, algorithm="none")
    for bad, error in ((f"{head}.{payload}.{flipped}", tokens.CRYPTO_FAILURE),
                       (f"{head}.{forged}.{signature}", tokens.CRYPTO_FAILURE),
                       (other_key.sign(fresh), "invalid signature, no keys found"),
                       (jwt.encode(fresh, other_key.key, algorithm="ES256"), tokens.CRYPTO_FAILURE),
                       (hmac, tokens.CRYPTO_FAILURE), (unsigned, tokens.CRYPTO_FAILURE)):
        assert whoami(client, bad) == 401
        assert review(client, bad) == {"user": {}, "error": f"[invalid bearer token, {error}]"}
    # a token of another issuer is no service account token of this server
    other_issuer = signed(client, iss="https://issuer.example")
    assert whoami(client, other_issuer) == 401
    assert review(client, other_issuer) == {"user": {}, "error": "invalid bearer token"}


def test_a_failing_service_account_token_is_refused_even_where_anonymous_requests_are_taken() -> None:
    client = api_client(tokens=None, anonymous=True)
    token = issue(client)
    head, payload, signature = token.split(".")
    assert whoami(client, f"{head}.{payload}.{signature[::-1]}") == 401
    assert client.post(WHOAMI, json={}).json()["status"]["userInfo"]["username"] == "system:anonymous"


def test_a_token_of_a_deleted_or_recreated_account_is_refused(client: TestClient) -> None:
    account = {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "robot"}}
    first = create(client, f"{NS}/serviceaccounts", account)["metadata"]["uid"]
    token = issue(client, account="robot")
    assert whoami(client, token)["username"] == "system:serviceaccount:default:robot"
    delete(client, f"{NS}/serviceaccounts/robot")
    assert whoami(client, token) == 401
    assert review(client, token)["error"] == '[invalid bearer token, serviceaccounts "robot" not found]'
    second = create(client, f"{NS}/serviceaccounts", account)["metadata"]["uid"]
    assert whoami(client, token) == 401
    assert review(client, token)["error"] == (f"[invalid bearer token, service account UID ({second}) does not "
                                              f"match claim ({first})]")
    assert whoami(client, issue(client, account="robot"))["uid"] == second


@pytest.mark.slow
def test_a_token_bound_to_a_pod_ends_with_the_pod(client: TestClient) -> None:
    first = make_pod(client)["metadata"]["uid"]
    token = issue(client, {"boundObjectRef": {"kind": "Pod", "apiVersion": "v1", "name": "p"}})
    assert whoami(client, token)["extra"]["authentication.kubernetes.io/pod-uid"] == [first]
    delete(client, f"{NS}/pods/p")
    assert whoami(client, token) == 401
    assert review(client, token)["error"] == "[invalid bearer token, service account token has been invalidated]"
    second = make_pod(client)["metadata"]["uid"]
    assert review(client, token)["error"] == (f"[invalid bearer token, pod UID ({second}) does not match service "
                                              f"account pod ref claim ({first})]")


def test_a_token_bound_to_a_pod_deleted_over_a_minute_ago_is_refused(client: TestClient) -> None:
    make_pod(client)
    token = issue(client, {"boundObjectRef": {"kind": "Pod", "apiVersion": "v1", "name": "p"}})
    store = client.app.api.store

    def terminating_since(seconds: int) -> None:
        def build(old: dict[str, Any], rv: str) -> dict[str, Any]:
            when = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - seconds))
            return {**old, "metadata": {**old["metadata"], "deletionTimestamp": when, "resourceVersion": rv}}
        store.update("pods", "default", "p", build)

    terminating_since(30)
    assert whoami(client, token)["username"].endswith(":default")
    terminating_since(90)
    assert whoami(client, token) == 401


def test_a_token_bound_to_a_secret_or_node_ends_with_it(client: TestClient) -> None:
    secret = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}}
    create(client, f"{NS}/secrets", secret)
    make_node(client)
    by_secret = issue(client, {"boundObjectRef": {"kind": "Secret", "apiVersion": "v1", "name": "s"}})
    by_node = issue(client, {"boundObjectRef": {"kind": "Node", "apiVersion": "v1", "name": "node-1"}})
    assert whoami(client, by_node)["extra"]["authentication.kubernetes.io/node-name"] == ["node-1"]
    assert whoami(client, by_secret)["username"].endswith(":default")
    delete(client, f"{NS}/secrets/s")
    delete(client, "/api/v1/nodes/node-1")
    for token in (by_secret, by_node):
        assert whoami(client, token) == 401
        assert review(client, token)["error"] == ("[invalid bearer token, service account token has been "
                                                  "invalidated]")
    create(client, f"{NS}/secrets", secret)
    assert review(client, by_secret)["error"].startswith("[invalid bearer token, secret UID (")
    make_node(client)
    assert review(client, by_node)["error"].startswith("[invalid bearer token, node UID (")


def test_a_token_review_answers_for_a_service_account_token(client: TestClient) -> None:
    token = issue(client)
    assert review(client, token) == {"authenticated": True, "user": sa_info(client, token), "audiences": [ISSUER]}


def test_a_token_review_in_protobuf_is_read() -> None:
    from dralloc.server.protobuf.decoder import decode

    def ld(number: int, payload: bytes) -> bytes:
        return bytes([number << 3 | 2, len(payload)]) + payload

    raw = ld(1, b"") + ld(2, ld(1, b"a.b.c") + ld(2, b"vault") + ld(2, b"x"))
    body = b"k8s\x00" + ld(1, ld(1, b"authentication.k8s.io/v1") + ld(2, b"TokenReview")) + ld(2, raw)
    assert decode(body)["spec"] == {"token": "a.b.c", "audiences": ["vault", "x"]}


def test_a_service_account_is_limited_by_the_allow_list_through_its_groups() -> None:
    authz = Authorizer({"group:system:masters": [{"verbs": ["*"], "resources": ["*"]}],
                        "group:system:serviceaccounts:default": [{"verbs": ["get", "list"], "resources": ["pods"]}]})
    c = api_client(tokens={"admin-token": User("admin", "", ("system:masters",))}, authorizer=authz)
    token = {"authorization": f"Bearer {issue(c)}"}
    assert c.get(f"{NS}/pods", headers=token).status_code == 200
    r = c.post(f"{NS}/pods", json={}, headers=token)
    assert (r.status_code, r.json()["message"]) == (
        403, 'pods is forbidden: User "system:serviceaccount:default:default" cannot create resource "pods" in API '
             'group "" in the namespace "default"')
    named = c.delete(f"{NS}/pods/web", headers=token)  # a named object: apimachinery's NewForbidden names it
    assert (named.status_code, named.json()["message"], named.json()["details"]) == (
        403, 'pods "web" is forbidden: User "system:serviceaccount:default:default" cannot delete resource "pods" '
             'in API group "" in the namespace "default"', {"name": "web", "group": "", "kind": "pods"})


# --- the key ------------------------------------------------------------------------------------------------

def test_the_key_is_made_once_owner_only_and_reused(tmp_path: Path) -> None:
    path = tmp_path / "pki" / "sa.key"
    first = tokens.ServiceAccountKey.load_or_create(path)
    assert path.stat().st_mode & 0o777 == 0o600 and path.parent.stat().st_mode & 0o777 == 0o700
    again = tokens.ServiceAccountKey.load_or_create(path)
    assert again.kid == first.kid
    claims = {"iss": ISSUER, "sub": "x"}
    assert again.verified(first.sign(claims)) == claims
    assert list(tmp_path.joinpath("pki").iterdir()) == [path]  # no temporary file left


def test_a_key_that_is_not_ecdsa_p256_is_refused(tmp_path: Path) -> None:
    for key in (rsa.generate_private_key(65537, 2048), ec.generate_private_key(ec.SECP384R1())):
        path = tmp_path / "sa.key"
        path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
        with pytest.raises(ValueError):
            tokens.ServiceAccountKey.load_or_create(path)


# --- the issuer's discovery documents -----------------------------------------------------------------------

def test_the_issuer_documents_let_a_relying_party_verify_the_tokens(client: TestClient) -> None:
    config = client.get("/.well-known/openid-configuration", headers=ADMIN)
    assert (config.status_code, config.headers["content-type"], config.headers["cache-control"]) == (
        200, "application/json", "public, max-age=3600")
    assert config.json() == {"issuer": ISSUER, "jwks_uri": "https://127.0.0.1:6443/openid/v1/jwks",
                             "response_types_supported": ["id_token"], "subject_types_supported": ["public"],
                             "id_token_signing_alg_values_supported": ["ES256"]}
    keys = client.get("/openid/v1/jwks", headers=ADMIN)
    assert keys.headers["content-type"] == "application/jwk-set+json"
    (jwk,) = keys.json()["keys"]
    assert list(jwk) == ["use", "kty", "kid", "crv", "alg", "x", "y"]  # go-jose's order
    token = issue(client, {"audiences": ["vault"]})
    assert parts(token)[0]["kid"] == jwk["kid"]
    verified = jwt.decode(token, jwt.PyJWK(jwk).key, algorithms=["ES256"], audience="vault", issuer=ISSUER)
    assert verified["sub"] == "system:serviceaccount:default:default"
    assert client.get("/openid/v1/jwks").status_code == 401  # authenticated clients only, as kube-apiserver
    assert client.post("/openid/v1/jwks", headers=ADMIN).status_code == 405


def test_the_keys_url_is_built_from_the_servers_address() -> None:
    from dralloc.server.auth.issuer import jwks_uri

    assert jwks_uri("10.0.0.5", 6443) == "https://10.0.0.5:6443/openid/v1/jwks"
    assert jwks_uri("fd00::5", 443) == "https://[fd00::5]:443/openid/v1/jwks"
    assert jwks_uri("api.example.com", 6443) == "https://api.example.com:6443/openid/v1/jwks"
