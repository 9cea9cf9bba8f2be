"""get and list: objects from the store, filtered by selectors, paged, converted to the version asked for,
as objects or as a Table for kubectl."""

from __future__ import annotations

import base64
import json
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from dralloc.server.context import ApiContext
from dralloc.server.http import partial
from dralloc.server.http.errors import ApiError, bad_request, not_found
from dralloc.server.http.options import int64_param, parse_resource_version
from dralloc.server.http.responses import JSON, output_of, plain_json, respond, wants_table
from dralloc.server.http.routing import Target
from dralloc.server.http.selectors import field_selector, label_selector
from dralloc.server.http.table import include_object, to_table
from dralloc.server.registry.kinds import FIELD_SELECTORS
from dralloc.store import NotFound


async def get(api: ApiContext, request: Request, t: Target) -> Response:
    try:
        obj = api.store.get(t.resource.name, t.namespace, t.name)
    except NotFound:
        raise not_found(t.resource, t.name) from None
    obj = t.present(obj)
    output = output_of(request)
    if output.convert == partial.OBJECT:
        return respond(request, partial.partial_object(obj, output.convert_version))
    if output.convert == partial.LIST:
        raise partial.not_a_list(t)
    if wants_table(request):
        return respond(request, to_table(t.resource, [obj], str(api.store.current_rv()),
                                         include_object(request.query_params.get("includeObject"))))
    return respond(request, obj)


def matchers(request: Request, t: Target) -> tuple[Any, Any]:
    q = request.query_params
    return (label_selector(q.get("labelSelector")),
            field_selector(q.get("fieldSelector"), FIELD_SELECTORS.get(t.resource.name, ()), t.resource.name,
                           t.version, t.resource.strategy.field_labels))


def list_fast(api: ApiContext, request: Request, t: Target) -> Response | None:
    """An unfiltered v1 list, answered from the stored JSON text without parsing each object."""
    q = request.query_params
    if (t.version != "v1" or not t.shows_stored or q.get("labelSelector") or q.get("fieldSelector") or q.get("limit")
            or q.get("continue") or not plain_json(request)
            or q.get("resourceVersion") not in (None, "", "0") or q.get("resourceVersionMatch")):
        return None
    ns = t.list_namespace
    rows, rv = api.store.list_raw(t.resource.name, ns)
    prefix = json.dumps({"apiVersion": t.api_version, "kind": t.resource.kind}, separators=(",", ":"))[:-1] + ","
    items = []
    for row in rows:
        if not row.startswith(prefix):
            return None  # not in the canonical stored form: take the general path
        items.append("{" + row[len(prefix):])
    head = json.dumps({"kind": t.resource.list_kind, "apiVersion": t.api_version,
                       "metadata": {"resourceVersion": str(rv)}}, separators=(",", ":"))[:-1]
    return Response(f'{head},"items":[{",".join(items)}]}}'.encode(), 200, media_type=JSON)


def too_large_resource_version(wanted: int, current: int) -> ApiError:
    """kube-apiserver's answer to a resourceVersion the store has not reached (the client retries)."""
    return ApiError(504, f"Too large resource version: {wanted}, current: {current}", "Timeout",
                    details={"causes": [{"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}],
                             "retryAfterSeconds": 1})


def check_list_version(api: ApiContext, rv: str, match: str) -> None:
    """Lists are served from the latest state, which satisfies every request but an old exact version."""
    if match not in ("", "NotOlderThan", "Exact"):
        raise bad_request(f'resourceVersionMatch: Unsupported value: "{match}": supported values: '
                          f'"Exact", "NotOlderThan"')
    if match and not rv:
        raise ApiError(422, "resourceVersionMatch is forbidden unless resourceVersion is provided")
    if not rv or rv == "0":
        return
    wanted = parse_resource_version(rv)
    current = api.store.current_rv()
    if wanted > current:
        raise too_large_resource_version(wanted, current)
    if match == "Exact" and wanted != current:
        raise ApiError(410, f"too old resource version: {wanted} ({current})", "Expired")


async def list_(api: ApiContext, request: Request, t: Target) -> Response:
    # decoded with the other ListOptions (a 400 when it is no integer), though a list does not wait
    int64_param(request.query_params, "timeoutSeconds")
    fast = list_fast(api, request, t)
    if fast is not None:
        return fast
    labels, fields = matchers(request, t)
    q = request.query_params
    limit = min(max(int64_param(q, "limit") or 0, 0), 1 << 31)  # as upstream, a negative limit means none
    after, list_rv = decode_continue(q.get("continue"))
    check_list_version(api, q.get("resourceVersion") or "", q.get("resourceVersionMatch") or "")
    ns = t.list_namespace
    items: list[dict[str, Any]] = []
    cursor = after
    rv = 0
    while True:  # page through the store until ``limit`` matching items (selectors filter after reading)
        batch, rv = api.store.list(t.resource.name, ns, after=cursor, limit=max(limit, 500) if limit else 0)
        for obj in batch:
            cursor = ((obj["metadata"].get("namespace") or ""), obj["metadata"]["name"])
            if labels(obj) and fields(obj):
                items.append(t.present(obj))
                if limit and len(items) == limit:
                    break
        if not limit or len(items) == limit or len(batch) < max(limit, 500):
            break
    meta: dict[str, Any] = {"resourceVersion": str(list_rv or rv)}
    if limit and len(items) == limit and cursor is not None:
        more, _ = api.store.list(t.resource.name, ns, after=cursor, limit=1)
        if more:
            meta["continue"] = encode_continue(cursor, list_rv or rv)
    output = output_of(request)
    if output.convert == partial.OBJECT:
        raise partial.a_list(t)
    if output.convert == partial.LIST:
        return respond(request, partial.partial_list(items, meta, output.convert_version))
    if wants_table(request):
        table = to_table(t.resource, items, meta["resourceVersion"],
                         include_object(q.get("includeObject")))
        if "continue" in meta:
            table["metadata"]["continue"] = meta["continue"]
        return respond(request, table)
    for item in items:  # lists carry kind/apiVersion once, on the list
        item.pop("kind", None)
        item.pop("apiVersion", None)
    return respond(request, {"kind": t.resource.list_kind, "apiVersion": t.api_version, "metadata": meta,
                             "items": items})


def encode_continue(key: tuple[str, str], rv: int) -> str:
    return base64.urlsafe_b64encode(json.dumps([key[0], key[1], rv]).encode()).decode()


def decode_continue(token: str | None) -> tuple[tuple[str, str] | None, int]:
    if not token:
        return None, 0
    try:
        ns, name, rv = json.loads(base64.urlsafe_b64decode(token.encode()))
        return (str(ns), str(name)), int(rv)
    except (ValueError, TypeError):
        raise bad_request("invalid continue token") from None
