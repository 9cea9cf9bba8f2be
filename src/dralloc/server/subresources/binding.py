"""POST pods/{name}/binding: what kube-scheduler calls to assign a pod to a node (the pod registry's ``bind``
does the write)."""

from __future__ import annotations

import asyncio
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from dralloc.server.context import ApiContext
from dralloc.server.http.bodies import parse, read_body
from dralloc.server.http.errors import ApiError, bad_request, not_found
from dralloc.server.http.responses import respond
from dralloc.server.http.routing import Target
from dralloc.server.protobuf import decoder as protobuf
from dralloc.server.registry.pods import bind
from dralloc.store import NotFound
from dralloc.validation import field as f


async def create_binding(api: ApiContext, request: Request, t: Target) -> Response:
    """POST pods/{name}/binding: set spec.nodeName (once) and the PodScheduled condition, as kube-scheduler's
    bind does through kube-apiserver."""
    raw, ctype = await read_body(request)
    if ctype == protobuf.CONTENT_TYPE:  # kube-scheduler binds with protobuf bodies
        try:
            binding: Any = protobuf.decode(raw)
        except protobuf.ProtobufError as exc:
            raise bad_request(f"couldn't decode the request body as protobuf: {exc}") from None
        if binding.get("kind") != "Binding":
            raise bad_request(f"the request body must be a Binding, not {binding.get('kind')}")
    else:
        binding = parse(raw, ctype, "Binding", "v1")
    if not isinstance(binding, dict):
        raise bad_request("the request body must be a JSON object")
    meta = binding.get("metadata") or {}
    target = binding.get("target") or {}
    if not isinstance(meta, dict) or not isinstance(target, dict):
        raise bad_request("Binding.metadata and Binding.target must be objects")
    # the handler's namespace check comes first, then the binding storage's own name check
    if meta.get("namespace") not in (None, "", t.namespace):
        raise bad_request("the namespace of the provided object does not match the namespace sent on the request")
    if meta.get("name") not in (None, t.name):
        raise bad_request("name in URL does not match name in Binding object")
    errors = []
    node = target.get("name")
    if not node or not isinstance(node, str):
        errors.append(f.required("target.name", ""))
    if target.get("kind") not in (None, "", "Node"):
        errors.append(f.not_supported("target.kind", target.get("kind"), ["Node", "<empty>"]))
    if errors:
        raise ApiError(422, f'Binding "{t.name}" is invalid: {f.aggregate_message(errors)}',
                       details={"name": t.name, "kind": "Binding",
                                "causes": [{"reason": e.type, "message": e.body(), "field": e.field} for e in errors]})
    extra = {key: value for key in ("labels", "annotations")
             if isinstance(value := meta.get(key), dict) and all(isinstance(v, str) for v in value.values())}
    try:
        await asyncio.to_thread(bind, api.store, t.namespace, t.name, str(node), None, extra.get("labels"),
                                extra.get("annotations"))
    except NotFound:
        raise not_found(t.resource, t.name) from None
    return respond(request, {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success",
                             "code": 201}, 201)
