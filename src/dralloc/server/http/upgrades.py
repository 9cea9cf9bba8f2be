"""WebSocket upgrade requests: answered with the HTTP response their GET gets, never upgraded.

kubectl exec/attach/port-forward (1.30+) first ask for a WebSocket upgrade and fall back to SPDY when the
upgrade is refused. dralloc streams nothing (no kubelet), so an upgrade request is answered as kube-apiserver
answers a request it does not upgrade: with the Status of the same GET (a 404 for a path it does not serve,
a 403 for a user who may not ...), through the ASGI ``websocket.http.response`` extension. A WebSocket watch
(an old way of watching) is refused with a 400: watches are served over plain HTTP streams. A server without
that extension gets the upgrade closed (403), never a 500.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from starlette.responses import Response

from dralloc.server.http.errors import ApiError
from dralloc.server.http.options import query_flag
from dralloc.server.http.requests import ApiRequest
from dralloc.server.http.responses import respond

Send = Callable[[dict[str, Any]], Awaitable[None]]
NO_WEBSOCKET_WATCH = "watches are served over HTTP streams, not WebSocket: send the request without an upgrade"


async def _no_body() -> dict[str, Any]:
    return {"type": "http.request", "body": b"", "more_body": False}


async def refuse(scope: dict[str, Any], send: Send, handle: Callable[[ApiRequest], Awaitable[Response]]) -> None:
    """Answer a ``websocket`` scope with the HTTP response ``handle`` gives its GET (not a stream)."""
    if "websocket.http.response" not in (scope.get("extensions") or {}):
        await send({"type": "websocket.close", "code": 1008})
        return
    request = ApiRequest({**scope, "type": "http", "method": "GET", "http_version": "1.1"}, _no_body)
    if query_flag(request.query_params, "watch"):
        response = respond(request, ApiError(400, NO_WEBSOCKET_WATCH).status(), 400)
    else:
        response = await handle(request)
    if not hasattr(response, "body"):  # a stream (a watch by another name): never sent over an upgrade
        response = respond(request, ApiError(400, NO_WEBSOCKET_WATCH).status(), 400)
    await send({"type": "websocket.http.response.start", "status": response.status_code,
                "headers": response.raw_headers})
    await send({"type": "websocket.http.response.body", "body": response.body})
