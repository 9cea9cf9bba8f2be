"""The server's JSON answers carry exactly the headers Starlette's own Response would give them."""

from __future__ import annotations

import pytest
from starlette.responses import Response

from dralloc.server.http.responses import JSON, JsonResponse


@pytest.mark.parametrize("status", [200, 201, 204, 304, 404, 101])
@pytest.mark.parametrize("headers", [None, {}, {"Retry-After": "1", "Connection": "close"},
                                     {"Content-Type": "application/yaml"}, {"content-length": "3"}])
def test_a_json_answers_headers_are_starlettes(status: int, headers: dict[str, str] | None) -> None:
    body = b'{"kind":"Status"}'
    ours, theirs = JsonResponse(body, status, headers), Response(body, status, headers=headers, media_type=JSON)
    assert ours.raw_headers == theirs.raw_headers and ours.body == theirs.body
    assert ours.status_code == status and ours.background is None
    ours.headers.append("Warning", '299 - "w"')  # (warnings are added to it afterwards)
    assert ours.raw_headers[-1] == (b"warning", b'299 - "w"')
