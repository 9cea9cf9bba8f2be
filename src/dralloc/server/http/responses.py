"""Responses in the negotiated media type (see :mod:`negotiation`): JSON, compact or indented as
kube-apiserver indents it (``pretty``, or a human's user agent), or YAML; with kube-apiserver's Warning
headers."""

from __future__ import annotations

import json
from typing import Any

import msgspec
import yaml
from starlette.requests import Request
from starlette.responses import Response

from dralloc.server.http.negotiation import DEFAULT, SCOPE_KEY, YAML, Output

JSON = "application/json"
_JSON_TYPE = (b"content-type", JSON.encode())


class JsonResponse(Response):
    """A JSON body in hand: Starlette's Response with the raw headers Starlette's would have (the given ones,
    then content-length and content-type), made at once: every answer is one of these."""

    media_type = JSON

    def __init__(self, data: bytes, status_code: int = 200, headers: dict[str, str] | None = None) -> None:
        self.status_code = status_code
        self.background = None
        self.body = data
        raw = [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in headers.items()] if headers else []
        if headers and any(k.lower() in ("content-length", "content-type") for k in headers):
            self.init_headers(headers)  # (a caller's own: as Starlette would treat them)
            return
        if not (status_code < 200 or status_code in (204, 304)):
            raw.append((b"content-length", str(len(data)).encode()))
        raw.append(_JSON_TYPE)
        self.raw_headers = raw


def respond(request: Request, body: Any, code: int = 200, headers: dict[str, str] | None = None,
            warnings: list[str] | None = None, encoded: bytes | None = None) -> Response:
    """``encoded``: ``body``'s compact JSON (msgspec's), when the caller has it already (a created object, as
    the store wrote it): sent as it is when the answer is compact JSON."""
    output = output_of(request)
    if output.yaml:
        data = yaml.safe_dump(body, sort_keys=True, allow_unicode=True).encode()  # keys sorted, as Go writes them
        response = Response(data, code, headers=headers, media_type=YAML)
    else:
        if pretty(request, output):
            data = json.dumps(body, indent=2, ensure_ascii=False).encode()
        else:
            data = encoded if encoded is not None else msgspec.json.encode(body)
        response = JsonResponse(data, code, headers)
    for w in warnings or ():
        response.headers.append("Warning", "299 - " + json.dumps(w))
    return response


def output_of(request: Request) -> Output:
    """The media type negotiated for a resource request; elsewhere YAML when asked for first (curl, scripts)."""
    output = request.scope.get(SCOPE_KEY)
    if output is not None:
        return output
    return Output(YAML) if request.headers.get("accept", "").startswith(YAML) else DEFAULT


_HUMAN_AGENTS = ("curl", "Wget", "Mozilla/5.0")


def pretty(request: Request, output: Output) -> bool:
    """Indented JSON: ``pretty=1`` in the Accept clause, else the ``pretty`` parameter read as Go's ParseBool
    reads it, else a browser or command-line user agent, as kube-apiserver decides."""
    if output.pretty:
        return True
    value = request.query_params.get("pretty")
    if value:
        return value in ("1", "t", "T", "true", "TRUE", "True")
    return request.headers.get("user-agent", "").startswith(_HUMAN_AGENTS)


def plain_json(request: Request) -> bool:
    """Compact JSON of the object itself (no transform, no YAML, not indented)."""
    output = output_of(request)
    return not output.yaml and output.convert is None and not pretty(request, output)


def wants_table(request: Request) -> bool:
    """kubectl get asks for server-side printing with Accept: ...;as=Table;g=meta.k8s.io."""
    return output_of(request).convert == "Table"
