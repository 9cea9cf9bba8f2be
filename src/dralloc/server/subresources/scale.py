"""GET, PUT and PATCH {deployments,replicasets,statefulsets}/{name}/scale: the autoscaling/v1 Scale view of a
workload (``kubectl scale`` patches it), as kube-apiserver's ScaleREST serves it. A write changes only the
workload's ``spec.replicas`` (and so its generation); the Scale answered is the workload as written."""

from __future__ import annotations

import asyncio
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from dralloc.server.apply.json_patch import json_patch, merge_patch
from dralloc.server.context import ApiContext
from dralloc.server.http.bodies import parse, read_body
from dralloc.server.http.errors import ApiError, bad_request, conflict, invalid, method_not_allowed, not_found
from dralloc.server.http.responses import respond
from dralloc.server.http.routing import Target
from dralloc.server.registry.workload_columns import format_selector
from dralloc.server.types import Obj
from dralloc.store import Conflict, NotFound
from dralloc.validation import field as f
from dralloc.validation.quantities import NEGATIVE

PATCH_TYPES = ("application/merge-patch+json", "application/strategic-merge-patch+json",
               "application/json-patch+json")


def scale_of(obj: Obj) -> Obj:
    """The Scale of a stored workload: its name, uid, resourceVersion and creation time, the replicas it asks
    for and those it has, and its selector as a string."""
    meta = obj.get("metadata") or {}
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    kept = {k: meta[k] for k in ("name", "namespace", "uid", "resourceVersion", "creationTimestamp") if k in meta}
    return {"kind": "Scale", "apiVersion": "autoscaling/v1", "metadata": kept,
            "spec": {"replicas": spec.get("replicas", 1)},
            "status": {"replicas": status.get("replicas") or 0, "selector": _selector(spec.get("selector"))}}


def _selector(selector: Any) -> str:
    text = format_selector(selector)
    return "" if text == "<none>" else text


def _invalid(name: str, errors: list[f.FieldError]) -> ApiError:
    return ApiError(422, f'Scale.autoscaling "{name}" is invalid: {f.aggregate_message(errors)}', "Invalid",
                    details={"name": name, "group": "autoscaling", "kind": "Scale",
                             "causes": [{"reason": e.type, "message": e.body(), "field": e.field} for e in errors]})


def _replicas(scale: Any, name: str) -> tuple[int, str | None]:
    """The replicas a Scale asks for (ValidateScale's rule) and the resourceVersion it names."""
    if not isinstance(scale, dict) or not isinstance(scale.get("spec") or {}, dict):
        raise bad_request("the request body must be an autoscaling/v1 Scale")
    if scale.get("kind") not in (None, "Scale") or scale.get("apiVersion") not in (None, "autoscaling/v1"):
        raise bad_request(f'the body of a scale must be an autoscaling/v1 Scale, not '
                          f'{scale.get("apiVersion") or "?"}/{scale.get("kind") or "?"}')
    meta = scale.get("metadata") or {}
    if not isinstance(meta, dict):
        raise bad_request("Scale.metadata must be an object")
    if meta.get("name") not in (None, name):
        raise bad_request(f"the name of the object ({meta.get('name')}) does not match the name on the URL ({name})")
    replicas = (scale.get("spec") or {}).get("replicas", 0)
    if not isinstance(replicas, int) or isinstance(replicas, bool):
        raise bad_request(f"Scale in version \"v1\" cannot be handled as a Scale: json: cannot unmarshal "
                          f"{type(replicas).__name__} into Go struct field ScaleSpec.spec.replicas of type int32")
    if replicas < 0:
        raise _invalid(name, [f.invalid("spec.replicas", replicas, NEGATIVE)])
    rv = meta.get("resourceVersion")
    return replicas, str(rv) if rv else None


def _scaled(obj: Obj, replicas: int) -> Obj:
    spec = {**(obj.get("spec") or {}), "replicas": replicas}
    meta = dict(obj.get("metadata") or {})
    if spec != obj.get("spec"):
        meta["generation"] = int(meta.get("generation") or 1) + 1
    return {**obj, "metadata": meta, "spec": spec}


def _write(api: ApiContext, t: Target, replicas: int, expect: str | None) -> Obj:
    def build(old: Obj, rv: str) -> Obj:
        own = t.resource.strategy.scaled(old, replicas)  # (a custom resource: its CRD's replicas paths)
        if own is not None and own[1]:
            raise invalid(t.resource, t.name, own[1])
        new = own[0] if own is not None else _scaled(old, replicas)
        return {**new, "metadata": {**new["metadata"], "resourceVersion": rv}}

    return api.store.update(t.resource.name, t.namespace, t.name, build, expect)


def _view(t: Target, obj: Obj) -> Obj:
    """The Scale of ``obj``: where its kind's strategy says its replicas are (a custom resource), else a
    workload's."""
    own = t.resource.strategy.scale_of(obj)
    return own if own is not None else scale_of(obj)


async def scale(api: ApiContext, request: Request, t: Target) -> Response:
    method = request.method
    try:
        current = api.store.get(t.resource.name, t.namespace, t.name)
    except NotFound:
        raise not_found(t.resource, t.name) from None
    if method == "GET":
        return respond(request, _view(t, current))
    if method not in ("PUT", "PATCH"):
        raise method_not_allowed()
    raw, ctype = await read_body(request)
    if method == "PUT":
        body = parse(raw, ctype, "Scale", "v1")
    elif ctype not in PATCH_TYPES:
        raise ApiError(415, f"the body of the request was in an unknown format - accepted media types "
                            f"include: {', '.join(PATCH_TYPES)}")
    else:
        patch = parse(raw, ctype, "Scale", "v1")
        shown = _view(t, current)
        if ctype == "application/json-patch+json":
            body = json_patch(shown, patch)
        elif isinstance(patch, dict):
            body = merge_patch(shown, patch)  # (a Scale has no lists: strategic merge is merge)
        else:
            raise bad_request("a merge patch must be a JSON object")
    replicas, expect = _replicas(body, t.name)
    if "All" in request.query_params.getlist("dryRun"):
        own = t.resource.strategy.scaled(current, replicas)
        return respond(request, _view(t, own[0] if own is not None else _scaled(current, replicas)))
    try:
        written = await asyncio.to_thread(_write, api, t, replicas, expect)
    except NotFound:
        raise not_found(t.resource, t.name) from None
    except Conflict:
        raise conflict(t.resource, t.name) from None
    return respond(request, _view(t, written))
