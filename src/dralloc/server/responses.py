"""JSON responses (compact, or indented with ``?pretty=true``), YAML to a client that asks for it first, with
kube-apiserver's Warning headers."""

from __future__ import annotations

import json
from typing import Any

import msgspec
import yaml
from starlette.requests import Request
from starlette.responses import Response

JSON = "application/json"
YAML = "application/yaml"


def respond(request: Request, body: Any, code: int = 200, headers: dict[str, str] | None = None,
            warnings: list[str] | None = None) -> Response:
    # kube-apiserver reads pretty with Go's strconv.ParseBool; anything it cannot parse is false
    if request.headers.get("accept", "").startswith(YAML):  # asked for YAML first (curl, scripts)
        data = yaml.safe_dump(body, sort_keys=True, allow_unicode=True).encode()  # keys sorted, as Go writes them
        response = Response(data, code, headers=headers, media_type=YAML)
    else:
        pretty = request.query_params.get("pretty") in ("1", "t", "T", "true", "TRUE", "True")
        data = json.dumps(body, indent=2, ensure_ascii=False).encode() if pretty else msgspec.json.encode(body)
        response = Response(data, code, headers=headers, media_type=JSON)
    for w in warnings or ():
        response.headers.append("Warning", "299 - " + json.dumps(w))
    return response


def wants_table(request: Request) -> bool:
    """kubectl get asks for server-side printing with Accept: ...;as=Table;g=meta.k8s.io."""
    accept = request.headers.get("accept", "")
    return "as=Table" in accept and "g=meta.k8s.io" in accept
