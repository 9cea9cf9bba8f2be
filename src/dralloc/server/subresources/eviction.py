"""POST pods/{name}/eviction (policy/v1 Eviction): ``kubectl drain``'s way to delete a pod, as kube-apiserver's
eviction subresource answers it.

kube-apiserver evicts a pod by deleting it with the Eviction's delete options once its PodDisruptionBudgets
allow it. This server keeps no PodDisruptionBudgets, so every eviction is allowed, and what remains is
upstream's order of checks: the name in the body must be the URL's; the pod must exist; a pod that is
Pending (and not already terminating) is deleted on the condition that it is still the version just read
(a write in between gets a conflict, and the eviction is tried again, as upstream retries); the answer is a
``Status`` of Success with code 201. The pod is then deleted as a DELETE with those options would delete it
(its grace period, its ResourceClaims released by the resourceclaim controller once it is gone).
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from dralloc.server.context import ApiContext
from dralloc.server.http.bodies import YAML_TYPES, parse, read_body
from dralloc.server.http.errors import ApiError, bad_request, not_found
from dralloc.server.http.responses import JSON, respond
from dralloc.server.http.routing import Target
from dralloc.server.protobuf import decoder as protobuf
from dralloc.server.verbs.deletes import remove
from dralloc.server.verbs.objects import dry_run, dry_run_list
from dralloc.server.views import ObjectView
from dralloc.store import NotFound

EVICTION_VERSIONS = ("policy/v1", "policy/v1beta1")  # the versions kube-apiserver accepts for the body
CONFLICT_RETRIES = 20  # upstream's EvictionsRetry steps (without its half-second waits: the store is local)


async def eviction_body(request: Request) -> dict[str, Any]:
    """The Eviction a request sends (JSON, YAML or protobuf)."""
    raw, ctype = await read_body(request)
    if ctype == protobuf.CONTENT_TYPE:
        try:
            body = protobuf.decode(raw)
        except protobuf.ProtobufError as exc:
            raise bad_request(f"couldn't decode the request body as protobuf: {exc}") from None
    else:
        body = parse(raw, ctype if ctype in YAML_TYPES else JSON, "Eviction", "v1")
    if not isinstance(body, dict):
        raise bad_request("the request body must be a JSON object")
    api_version, kind = body.get("apiVersion"), body.get("kind")
    if kind not in (None, "Eviction") or api_version not in (None, *EVICTION_VERSIONS):
        raise bad_request(f'the body of an eviction must be a policy/v1 Eviction, not {api_version or "?"}/'
                          f'{kind or "?"}')
    if not isinstance(body.get("metadata") or {}, dict) or not isinstance(body.get("deleteOptions") or {}, dict):
        raise bad_request("Eviction.metadata and Eviction.deleteOptions must be objects")
    return body


def _options(eviction: dict[str, Any], request: Request) -> dict[str, Any]:
    """The Eviction's delete options with the request's dryRun (upstream's propagateDryRun)."""
    options = dict(eviction.get("deleteOptions") or {})
    query_dry = request.query_params.getlist("dryRun")
    body_dry = dry_run_list(options)
    if query_dry and body_dry and list(query_dry) != list(body_dry):
        # (kube-apiserver answers this one with a 500; it is the client's input, so here a 400)
        raise bad_request(f"Non-matching dry-run options in request and content: {query_dry} and {body_dry}")
    if query_dry and not body_dry:
        options["dryRun"] = list(query_dry)
    return options


async def create_eviction(api: ApiContext, request: Request, t: Target) -> Response:
    eviction = await eviction_body(request)
    if (eviction.get("metadata") or {}).get("name") != t.name:
        raise bad_request("name in URL does not match name in Eviction object")
    options = _options(eviction, request)
    dry = dry_run(request, options)
    pod_target = Target(t.resource, t.version, t.namespace, t.name, "")
    pinned = _has_resource_version(options)
    for attempt in range(CONFLICT_RETRIES):
        try:
            pod = api.store.get("pods", t.namespace, t.name)
        except NotFound:
            raise not_found(t.resource, t.name) from None
        attempt_options = options
        if _pending(pod) and not pinned:
            # Not racing a pod that turns ready meanwhile: the delete holds only for the version just read.
            pre = dict(options.get("preconditions") or {})
            pre["resourceVersion"] = ObjectView(pod).metadata.get("resourceVersion")
            attempt_options = {**options, "preconditions": pre}
        try:
            await remove(api, pod_target, attempt_options, {}, dry)
        except ApiError as exc:
            if exc.code == 409 and not pinned and attempt < CONFLICT_RETRIES - 1:
                continue
            raise
        break
    return respond(request, {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success",
                             "code": 201}, 201)


def _has_resource_version(options: dict[str, Any]) -> bool:
    pre = options.get("preconditions")
    return isinstance(pre, dict) and pre.get("resourceVersion") is not None


def _pending(pod: dict[str, Any]) -> bool:
    """A Pending pod not yet being deleted: the one case upstream deletes only at the version it read."""
    view = ObjectView(pod)
    return view.status.get("phase", "Pending") == "Pending" and not view.deletion_timestamp
