"""Whole responses written directly on the connection (serving.DirectWriter) are byte for byte what uvicorn's
ASGI ``send`` writes: the same status line, default headers, header names, ``connection: close``, no body for
HEAD, and the same connection handling (closed after HTTP/1.0 or ``Connection: close``, kept otherwise)."""

from __future__ import annotations

import asyncio
import re
from typing import Any

import pytest
import uvicorn
from uvicorn.server import ServerState

from dralloc.server import create_app
from dralloc.server.http.serving import DirectWriter, _Protocol
from dralloc.store import SQLiteStore

CLASS = b'{"apiVersion":"resource.k8s.io/v1","kind":"DeviceClass","metadata":{"name":"gpu"}}'
UNKNOWN_FIELD = b'{"apiVersion":"resource.k8s.io/v1","kind":"DeviceClass","metadata":{"name":"w"},"spec":{"x":1}}'


def _request(line: bytes, body: bytes = b"", headers: bytes = b"") -> bytes:
    head = line + b"\r\nhost: 127.0.0.1\r\n" + headers
    if body:
        head += b"content-type: application/json\r\ncontent-length: %d\r\n" % len(body)
    return head + b"\r\n" + body


EXCHANGES = [
    _request(b"POST /apis/resource.k8s.io/v1/deviceclasses HTTP/1.1", CLASS),
    _request(b"POST /apis/resource.k8s.io/v1/deviceclasses HTTP/1.1", CLASS),  # 409
    _request(b"POST /apis/resource.k8s.io/v1/deviceclasses?fieldValidation=Warn HTTP/1.1", UNKNOWN_FIELD),  # Warning
    _request(b"GET /apis/resource.k8s.io/v1/deviceclasses/gpu?pretty=true HTTP/1.1"),
    _request(b"HEAD /apis/resource.k8s.io/v1/deviceclasses/gpu HTTP/1.1"),
    _request(b"GET /apis/resource.k8s.io/v1/deviceclasses/missing HTTP/1.1"),
    _request(b"GET /healthz HTTP/1.1"),
    _request(b"GET /version HTTP/1.0"),
    _request(b"GET /apis/resource.k8s.io/v1/deviceclasses HTTP/1.1", headers=b"connection: close\r\n"),
    _request(b"DELETE /apis/resource.k8s.io/v1/deviceclasses/gpu HTTP/1.1"),
]


class _Transport(asyncio.Transport):
    def __init__(self) -> None:
        super().__init__()
        self.data = bytearray()
        self.closed = False

    def write(self, data: Any) -> None:
        self.data += data

    def close(self) -> None:
        self.closed = True

    def is_closing(self) -> bool:
        return self.closed

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return {"sockname": ("127.0.0.1", 6443), "peername": ("127.0.0.1", 50000)}.get(name, default)

    def get_write_buffer_size(self) -> int:
        return 0

    def pause_reading(self) -> None:
        pass

    def resume_reading(self) -> None:
        pass


async def _exchange_all() -> list[tuple[bytes, bool]]:
    """Each request on a new connection of the real protocol: what was written back, and whether the
    connection was closed."""
    app = create_app(SQLiteStore(":memory:"), anonymous=True)
    config = uvicorn.Config(app, http=_Protocol, lifespan="off", access_log=False, server_header=False)
    state = ServerState()
    state.default_headers = [(b"date", b"Mon, 23 Nov 2026 00:00:00 GMT")]
    answers = []
    for request in EXCHANGES:
        protocol = _Protocol(config, state, {}, asyncio.get_running_loop())
        transport = _Transport()
        protocol.connection_made(transport)
        protocol.data_received(request)
        for _ in range(200):
            await asyncio.sleep(0)
            if protocol.cycle is not None and protocol.cycle.response_complete:
                break
        await asyncio.sleep(0)  # the corked transport sends at the end of the turn
        closed = transport.closed
        protocol.connection_lost(None)
        answer = re.sub(rb'"(uid|creationTimestamp)": ?"[^"]*"', rb'"\1":"-"', bytes(transport.data))
        answers.append((answer, closed))
    return answers


def test_direct_responses_are_what_the_asgi_send_writes(monkeypatch: pytest.MonkeyPatch) -> None:
    direct = asyncio.run(_exchange_all())
    monkeypatch.setattr(DirectWriter, "respond", lambda self, status, headers, body: False)
    through_send = asyncio.run(_exchange_all())
    assert [a for a, _ in direct] == [a for a, _ in through_send]
    assert [closed for _, closed in direct] == [closed for _, closed in through_send]
    # and the cases are what they say
    assert direct[0][0].startswith(b"HTTP/1.1 201 Created\r\ndate: ")
    assert direct[1][0].startswith(b"HTTP/1.1 409 Conflict\r\n")
    assert b"\r\nwarning: 299 - " in direct[2][0]
    assert direct[4][0].endswith(b"\r\n\r\n")  # HEAD: headers only
    assert direct[7][1] and b"connection: close\r\n" in direct[7][0]  # HTTP/1.0
    assert direct[8][1] and not direct[0][1]
