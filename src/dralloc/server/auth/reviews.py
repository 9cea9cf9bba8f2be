"""The reviews kubectl auth whoami, kubectl auth can-i and kr8s create: SelfSubjectReview (who the request's
user is), SelfSubjectAccessReview (may they do this?), SelfSubjectRulesReview (what may they do?) and
TokenReview (whom does this token authenticate?), answered from the token file, the service account tokens
and the allow list as kube-apiserver answers them from its authenticators and authorizers. They are computed per request and never
stored."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from dralloc.api.gojson import go_json_type
from dralloc.server.auth import tokens
from dralloc.server.auth.users import AUTHENTICATED, User
from dralloc.server.context import ApiContext
from dralloc.server.http.bodies import YAML_TYPES, parse, read_body
from dralloc.server.http.errors import ApiError, bad_request, invalid, method_not_allowed
from dralloc.server.http.responses import JSON, respond
from dralloc.server.protobuf import decoder as protobuf
from dralloc.server.registry.kinds import REVIEWS, Resource
from dralloc.validation.field import invalid as invalid_field

EXACTLY_ONE = "exactly one of nonResourceAttributes or resourceAttributes must be specified"
# What every authenticated user may do under kube-apiserver's default policy (the system:basic-user role).
BASIC_USER_RULES = [
    {"verbs": ["create"], "apiGroups": ["authorization.k8s.io"],
     "resources": ["selfsubjectaccessreviews", "selfsubjectrulesreviews"]},
    {"verbs": ["create"], "apiGroups": ["authentication.k8s.io"], "resources": ["selfsubjectreviews"]},
]
# The server answers every non-resource path (discovery, /version, /openapi, /metrics) to whoever it let in.
NON_RESOURCE_RULES = [{"verbs": ["get"], "nonResourceURLs": ["*"]}]
# A user without an allow list is the cluster admin: as kube-apiserver's cluster-admin role (system:masters),
# every verb on every resource and non-resource URL, besides what every authenticated user may do.
ADMIN_RESOURCE_RULES = [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}]
ADMIN_NON_RESOURCE_RULES = [{"verbs": ["*"], "nonResourceURLs": ["*"]}]


def review_resource(parts: list[str]) -> Resource | None:
    """The review a URL names (``/apis/<group>/v1/<reviews>``), if any."""
    if len(parts) == 4 and parts[0] == "apis" and parts[2] == "v1":
        r = REVIEWS.get(parts[3])
        if r is not None and r.group == parts[1]:
            return r
    return None


async def create(api: ApiContext, request: Request, r: Resource, user: User) -> Response:
    if request.method != "POST":
        raise method_not_allowed()
    # As kube-apiserver's default policy: every authenticated user may review itself; a TokenReview needs
    # the permission.
    is_self = r.kind != "TokenReview"
    if not (is_self and AUTHENTICATED in user.groups) and not api.authorizer.allowed(user, "create", r.name):
        raise ApiError(403, f'{r.group_resource} is forbidden: User "{user.name}" cannot create resource '
                            f'"{r.name}" in API group "{r.group}" at the cluster scope',
                       details={"group": r.group, "kind": r.name})
    body = await review_body(request, r)
    if r.kind == "SelfSubjectReview":
        answer = self_subject_review(user)
    elif r.kind == "TokenReview":
        answer = token_review(api, body)
    elif r.kind == "SelfSubjectAccessReview":
        answer = {**body, "status": access_status(api, user, r, body.get("spec"))}
    else:
        answer = {**body, "status": rules_status(api, user, body.get("spec"))}
    return respond(request, {**answer, "kind": r.kind, "apiVersion": f"{r.group}/v1"}, 201)


async def review_body(request: Request, r: Resource) -> dict[str, Any]:
    """The body of a review or a TokenRequest (JSON, YAML or protobuf) as a JSON object of ``r``'s kind and
    group/v1 (both may be left out); 400 or 415 otherwise."""
    raw, ctype = await read_body(request)
    if ctype == protobuf.CONTENT_TYPE:
        try:
            body: Any = protobuf.decode(raw)
        except protobuf.ProtobufError as exc:
            raise bad_request(f"couldn't decode the request body as protobuf: {exc}") from None
    elif ctype == JSON or ctype in YAML_TYPES:
        body = parse(raw, ctype, r.kind, "v1")
    else:
        raise ApiError(415, "the body of the request was in an unknown format - accepted media types include: "
                            f"application/json, application/yaml, {protobuf.CONTENT_TYPE}")
    if not isinstance(body, dict):
        raise bad_request("the request body must be a JSON object")
    api_version = f"{r.group}/v1"
    if body.get("kind", r.kind) != r.kind or body.get("apiVersion", api_version) != api_version:
        raise bad_request(f'the kind and API version in the data ({body.get("apiVersion")}, {body.get("kind")}) do '
                          f'not match the expected ones ({api_version}, {r.kind})')
    for key in ("metadata", "spec"):
        if body.get(key) is not None and not isinstance(body[key], dict):
            raise cannot_handle(r, f"{r.kind}.{key}", body[key], "object")
    return body


def cannot_handle(r: Resource, field: str, value: Any, want: str) -> ApiError:
    """The 400 of a field of the wrong JSON type, in Go's words (``field``: the Go struct and JSON path)."""
    return bad_request(f'{r.kind} in version "v1" cannot be handled as a {r.kind}: json: cannot unmarshal '
                       f'{go_json_type(value)} into Go struct field {field} of type {want}')


def self_subject_review(user: User) -> dict[str, Any]:
    created = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    return {"metadata": {"creationTimestamp": created}, "status": {"userInfo": user.info()}}


def token_review(api: ApiContext, body: dict[str, Any]) -> dict[str, Any]:
    """Whether the review's token authenticates for the audiences asked for (the API server's when none are),
    and as whom; as kube-apiserver, a token that does not authenticate leaves ``authenticated`` out and says
    why in ``error``. A static token is good for the API server's audiences only."""
    spec = body.get("spec") or {}
    token = spec.get("token")
    if not token:
        raise bad_request("token is required for TokenReview in authentication")
    if not isinstance(token, str):
        raise bad_request('TokenReview in version "v1" cannot be handled as a TokenReview: json: cannot '
                          f'unmarshal {go_json_type(token)} into Go struct field TokenReviewSpec.spec.token of type '
                          'string')
    audiences = spec.get("audiences") or []
    if not isinstance(audiences, list) or not all(isinstance(a, str) for a in audiences):
        wrong = audiences if not isinstance(audiences, list) else next(a for a in audiences if not isinstance(a, str))
        raise bad_request('TokenReview in version "v1" cannot be handled as a TokenReview: json: cannot '
                          f'unmarshal {go_json_type(wrong)} into Go struct field TokenReviewSpec.spec.audiences of '
                          f'type {"[]string" if wrong is audiences else "string"}')
    wanted = audiences or list(tokens.API_AUDIENCES)
    if tokens.is_ours(token):
        try:
            user, usable = tokens.authenticate(api.service_account_key, api.store, token, wanted)
        except tokens.TokenRefused as exc:
            return {**body, "status": {"user": {}, "error": f"[{tokens.INVALID_TOKEN}, {exc}]"}}
    else:
        found = api.token_user(token)
        usable = [a for a in wanted if a in tokens.API_AUDIENCES]
        if found is None or not usable:
            return {**body, "status": {"user": {}, "error": tokens.INVALID_TOKEN}}
        user = found
    return {**body, "status": {"authenticated": True, "user": user.info(), "audiences": usable}}


def access_status(api: ApiContext, user: User, r: Resource, spec: Any) -> dict[str, Any]:
    spec = spec or {}
    resource, non_resource = spec.get("resourceAttributes"), spec.get("nonResourceAttributes")
    if (resource is None) == (non_resource is None):
        raise invalid(r, "", [invalid_field("spec", non_resource, EXACTLY_ONE)])
    for key, value in (("resourceAttributes", resource), ("nonResourceAttributes", non_resource)):
        if value is not None and not isinstance(value, dict):
            raise cannot_handle(r, f"SelfSubjectAccessReviewSpec.spec.{key}", value,
                                f"v1.{key[0].upper()}{key[1:]}")
    if non_resource is not None:
        if api.authorizer.rules_for(user) is None:
            return {"allowed": True}
        return {"allowed": str(non_resource.get("verb") or "").lower() == "get"}
    name, sub, verb = (str(resource.get(k) or "") for k in ("resource", "subresource", "verb"))
    return {"allowed": api.authorizer.request_allowed(user, verb, name, sub)}


def rules_status(api: ApiContext, user: User, spec: Any) -> dict[str, Any]:
    if not (spec or {}).get("namespace"):
        raise bad_request("no namespace on request")
    rules = api.authorizer.rules_for(user)
    basic = BASIC_USER_RULES if AUTHENTICATED in user.groups else []
    if rules is None:
        return {"resourceRules": ADMIN_RESOURCE_RULES + basic, "nonResourceRules": ADMIN_NON_RESOURCE_RULES,
                "incomplete": False}
    resource_rules = basic + [
        {"verbs": list(rule.get("verbs") or []), "apiGroups": ["*"], "resources": list(rule.get("resources") or [])}
        for rule in rules]
    return {"resourceRules": resource_rules, "nonResourceRules": NON_RESOURCE_RULES,
            "incomplete": False}
