"""POST serviceaccounts/{name}/token (authentication.k8s.io/v1 TokenRequest): ``kubectl create token``, as
kube-apiserver's service account token REST answers it (pkg/registry/core/serviceaccount/storage/token.go,
pkg/apis/authentication/validation).

In upstream's order: a name or namespace in the body must be the URL's (422); the account must exist (404) and
have the uid the body gives, if any (409); the audiences default to the API server's and the lifetime to an
hour, which must be at least ten minutes and at most 2^32 seconds (422); an object to bind the token to (a
Pod, Secret or Node of the core group) must exist (404), have the uid given, if any (409), and a pod must run
as the account (400); a pod-bound token also names the pod's node. The answer (201) is the request with its
metadata filled in and the signed token with its expiry; nothing is stored. A token bound to an object is
good only while that object is (server/auth/tokens.py checks on every use).
"""

from __future__ import annotations

import time

from starlette.requests import Request
from starlette.responses import Response

from dralloc.server.auth import tokens
from dralloc.server.auth.reviews import cannot_handle, review_body
from dralloc.server.context import ApiContext
from dralloc.server.http.errors import ApiError, bad_request, invalid
from dralloc.server.http.responses import respond
from dralloc.server.http.routing import Target
from dralloc.server.registry.kinds import CORE, Resource
from dralloc.server.types import Obj
from dralloc.server.views import ObjectView
from dralloc.store import NotFound
from dralloc.validation.field import invalid as invalid_field

GROUP = "authentication.k8s.io"
# the kind a TokenRequest's errors name (TokenRequest.authentication.k8s.io)
TOKEN_REQUEST = Resource("TokenRequest", "TokenRequest", True, group=GROUP, versions=("v1",))
DEFAULT_SECONDS = 60 * 60  # v1 defaulting of spec.expirationSeconds
MIN_SECONDS = 10 * 60
MAX_SECONDS = 1 << 32
TOO_SHORT = "may not specify a duration less than 10 minutes"
TOO_LONG = "may not specify a duration larger than 2^32 seconds"


async def create_token(api: ApiContext, request: Request, t: Target) -> Response:
    body = await review_body(request, TOKEN_REQUEST)
    meta, spec = _checked(body)
    name, namespace = t.name, t.namespace
    for field, value, want in (("name", meta.get("name"), name), ("namespace", meta.get("namespace"), namespace)):
        if value and value != want:
            raise invalid(TOKEN_REQUEST, name, [invalid_field(f"metadata.{field}", value,
                                                              f"must match the service account {field} if "
                                                              "specified")])
    account = _get(api, CORE["serviceaccounts"], namespace, name)
    account_uid = account["metadata"].get("uid") or ""
    if meta.get("uid") and meta["uid"] != account_uid:
        raise _conflict(GROUP, "TokenRequest", name, f"the UID in the token request ({meta['uid']}) does not match "
                                                     f"the UID of the service account ({account_uid})")
    audiences = spec.get("audiences") or list(tokens.API_AUDIENCES)
    expiration = spec.get("expirationSeconds")
    expiration = DEFAULT_SECONDS if expiration is None else expiration
    now = int(time.time())
    problems = []
    if expiration < MIN_SECONDS:
        problems.append(invalid_field("spec.expirationSeconds", expiration, TOO_SHORT))
    if expiration > MAX_SECONDS:
        problems.append(invalid_field("spec.expirationSeconds", expiration, TOO_LONG))
    if problems:
        raise invalid(TOKEN_REQUEST, "", problems)
    ref = spec.get("boundObjectRef")
    bound = _bound(api, namespace, name, ref) if ref is not None else {}
    lifetime, warn_after = expiration, 0
    if "pod" in bound and expiration == tokens.WARN_ONLY_SECONDS and set(audiences) <= set(tokens.API_AUDIENCES):
        lifetime, warn_after = tokens.EXTENDED_SECONDS, expiration  # kubelet's token: stale after, not invalid
    claims = tokens.claims(account, audiences, lifetime, now, warn_after=warn_after, **bound)
    out_meta = {"name": name, "namespace": namespace, "uid": meta.get("uid") or account_uid,
                "creationTimestamp": timestamp_of(now),
                **{k: v for k, v in meta.items() if k not in ("name", "namespace", "uid", "creationTimestamp")}}
    answer = {"kind": "TokenRequest", "apiVersion": f"{GROUP}/v1", "metadata": out_meta,
              "spec": {"audiences": audiences, "expirationSeconds": expiration, "boundObjectRef": ref},
              "status": {"token": api.service_account_key.sign(claims),
                         "expirationTimestamp": timestamp_of(now + expiration)}}
    return respond(request, answer, 201)


def timestamp_of(second: int) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(second))


def _checked(body: Obj) -> tuple[Obj, Obj]:
    """The body's metadata and spec, their fields of the types Go decodes them into (400 otherwise)."""
    meta, spec = body.get("metadata") or {}, body.get("spec") or {}
    for key in ("name", "namespace", "uid"):
        if meta.get(key) is not None and not isinstance(meta[key], str):
            raise cannot_handle(TOKEN_REQUEST, f"ObjectMeta.metadata.{key}", meta[key], "string")
    audiences = spec.get("audiences")
    if audiences is not None:
        if not isinstance(audiences, list):
            raise cannot_handle(TOKEN_REQUEST, "TokenRequestSpec.spec.audiences", audiences, "[]string")
        for a in audiences:
            if not isinstance(a, str):
                raise cannot_handle(TOKEN_REQUEST, "TokenRequestSpec.spec.audiences", a, "string")
    seconds = spec.get("expirationSeconds")
    if seconds is not None and (isinstance(seconds, bool) or not isinstance(seconds, int)):
        if isinstance(seconds, float):  # Go names the number
            raise bad_request(f'TokenRequest in version "v1" cannot be handled as a TokenRequest: json: cannot '
                              f'unmarshal number {seconds:g} into Go struct field '
                              f'TokenRequestSpec.spec.expirationSeconds of type int64')
        raise cannot_handle(TOKEN_REQUEST, "TokenRequestSpec.spec.expirationSeconds", seconds, "int64")
    ref = spec.get("boundObjectRef")
    if ref is not None:
        if not isinstance(ref, dict):
            raise cannot_handle(TOKEN_REQUEST, "TokenRequestSpec.spec.boundObjectRef", ref,
                                "v1.BoundObjectReference")
        for key in ("kind", "apiVersion", "name", "uid"):
            if ref.get(key) is not None and not isinstance(ref[key], str):
                raise cannot_handle(TOKEN_REQUEST, f"BoundObjectReference.spec.boundObjectRef.{key}", ref[key],
                                    "types.UID" if key == "uid" else "string")
    return meta, spec


def _group_version(api_version: str) -> tuple[str, str]:
    """apimachinery's ParseGroupVersion, as FromAPIVersionAndKind uses it (what it cannot parse: no group)."""
    if not api_version:
        return "", ""
    parts = api_version.split("/")
    if len(parts) == 1:
        return "", api_version
    if len(parts) == 2:
        return parts[0], parts[1]
    return "", ""


def _bound(api: ApiContext, namespace: str, account: str, ref: Obj) -> dict[str, Obj]:
    """The object the token is bound to (and a pod's node), as keyword arguments of tokens.claims."""
    kind, name, uid = ref.get("kind") or "", ref.get("name") or "", ref.get("uid") or ""
    group, version = _group_version(ref.get("apiVersion") or "")
    bound: dict[str, Obj] = {}
    if group == "" and kind == "Pod":
        pod = bound["pod"] = _get(api, CORE["pods"], namespace, name)
        if ObjectView(pod).spec.get("serviceAccountName") != account:
            raise bad_request(f'cannot bind token for serviceaccount "{account}" to pod running with different '
                              'serviceaccount name.')
        node_name = ObjectView(pod).spec.get("nodeName")
        if node_name:  # the pod's node, by name only when it is not there
            try:
                bound["node"] = api.store.get("nodes", "", node_name)
            except NotFound:
                bound["node"] = {"metadata": {"name": node_name}}
        found = pod
    elif group == "" and kind == "Node":
        found = bound["node"] = _get(api, CORE["nodes"], "", name)
    elif group == "" and kind == "Secret":
        found = bound["secret"] = _get(api, CORE["secrets"], namespace, name)
    else:
        raise bad_request(f"cannot bind token to object of type {group}/{version}, Kind={kind}")
    if uid and uid != ObjectView(found).uid:
        raise _conflict(group, kind, name, f"the UID in the bound object reference ({uid}) does not match the UID "
                                           "in record. The object might have been deleted and then recreated")
    return bound


def _get(api: ApiContext, r: Resource, namespace: str, name: str) -> Obj:
    """An object by name, with the registry's 400 for a name no URL can hold and its 404."""
    if not name:
        raise bad_request("Name parameter required.")
    wrong = [why for bad, why in ((".", "may not be '.'"), ("..", "may not be '..'")) if name == bad]
    wrong += [f"may not contain '{c}'" for c in "/%" if c in name]
    if wrong:
        raise bad_request(f'Name parameter invalid: "{name}": {";".join(wrong)}')
    try:
        return api.store.get(r.name, namespace if r.namespaced else "", name)
    except NotFound:
        raise ApiError(404, f'{r.group_resource} "{name}" not found',
                       details={"name": name, "group": r.group, "kind": r.name}) from None


def _conflict(group: str, resource: str, name: str, why: str) -> ApiError:
    qualified = f"{resource}.{group}" if group else resource
    return ApiError(409, f'Operation cannot be fulfilled on {qualified} "{name}": {why}', "Conflict",
                    details={"name": name, "group": group, "kind": resource})
