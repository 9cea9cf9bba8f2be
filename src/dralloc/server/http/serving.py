"""Running the app over HTTP(S) as kube-apiserver's secure serving does: limits, timeouts, graceful shutdown.

- A client must send a request's headers within ``header_timeout`` seconds of starting it (a connection that
  says nothing is closed), like Go's ``ReadHeaderTimeout``; idle keep-alive connections are closed after
  ``idle_timeout``. Slow or idle clients cannot hold connections forever.
- Malformed requests and over-long request lines get a Kubernetes ``Status`` body, not plain text.
- On SIGTERM or Ctrl-C the server stops accepting connections, ends open watches (clients re-establish them
  elsewhere, as after a kube-apiserver restart), closes each connection as soon as nothing is in flight on
  it (not waiting for the client to close its side), lets in-flight requests finish and exits; requests
  still running after ``shutdown_timeout`` are cancelled.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import json
import socket
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import uvicorn
from uvicorn.protocols.http.httptools_impl import HEADER_VALUE_RE, STATUS_LINE, HttpToolsProtocol

from dralloc.server.http.errors import ApiError

MAX_HEADER_BYTES = 1 << 20  # Go's http.DefaultMaxHeaderBytes, which kube-apiserver keeps


@dataclass(frozen=True)
class Limits:
    header_timeout: float = 32.0  # kube-apiserver's ReadHeaderTimeout
    idle_timeout: float = 90.0  # kube-apiserver's idle timeout for keep-alive connections
    shutdown_timeout: float = 5.0
    max_connections: int = 4096


def _status_bytes(code: int, message: str, reason: str | None = None) -> bytes:
    body = json.dumps(ApiError(code, message, reason).status(), separators=(",", ":")).encode()
    phrase = {400: "Bad Request", 431: "Request Header Fields Too Large", 503: "Service Unavailable"}[code]
    return (f"HTTP/1.1 {code} {phrase}\r\ncontent-type: application/json\r\ncontent-length: {len(body)}\r\n"
            f"connection: close\r\n\r\n").encode() + body


class _CorkedTransport:
    """A connection's transport whose writes within one turn of the event loop leave as one send.

    uvicorn writes a response's status line and headers, then its body, with two sends; on loopback each
    send costs about as much as the server's work for a small write, and the client gets two segments.
    Writes are gathered and sent at the end of the loop's current turn (or before a close), so a response
    goes out whole; a streamed response (a watch) still sends each chunk in the turn it is written."""

    __slots__ = ("_transport", "_loop", "_pending")

    def __init__(self, transport: asyncio.Transport, loop: asyncio.AbstractEventLoop) -> None:
        self._transport = transport
        self._loop = loop
        self._pending: list[bytes] = []

    def write(self, data: bytes) -> None:
        if not self._pending:
            self._loop.call_soon(self.flush)
        self._pending.append(data)

    def flush(self) -> None:
        if self._pending:
            data = b"".join(self._pending) if len(self._pending) > 1 else self._pending[0]
            self._pending = []
            if not self._transport.is_closing():
                self._transport.write(data)

    def close(self) -> None:
        self.flush()
        self._transport.close()

    def is_closing(self) -> bool:
        return self._transport.is_closing()

    def get_write_buffer_size(self) -> int:
        return self._transport.get_write_buffer_size() + sum(map(len, self._pending))

    def __getattr__(self, name: str) -> Any:  # everything else is the transport's own
        return getattr(self._transport, name)


YOUNG_COLLECTION_THRESHOLD = 7000  # new containers between two collections of the youngest generation (see serve)
WATCH_BUFFER_LIMIT = 8 << 20  # bytes a watch client may leave unread before its watch is ended


class DirectWriter:
    """Writes a response on its connection without the ASGI ``send`` messages.

    Handed to the app in ``scope["extensions"]["dralloc.direct"]``:

    - :meth:`respond` sends a whole response (status line, headers, body) in one write, as uvicorn frames
      it: its default headers first (``date``), header names lowercased, ``connection: close`` when the
      connection is not kept alive, no body for HEAD. The two ``send`` messages of a small response and their
      checks cost about a tenth of a small create's time in the server.
    - :meth:`write` sends one chunk of a streamed (chunked) response once it has started, for the watch
      fan-out: through ``send`` each chunk of each watch costs a task wake-up and several calls; with a
      thousand watches open that is most of the server's time. It refuses (False) when the connection is
      closing or the client has left more than ``WATCH_BUFFER_LIMIT`` bytes unread, as kube-apiserver ends
      the watches of clients too slow to keep up."""

    __slots__ = ("_transport", "_cycle")

    def __init__(self, transport: _CorkedTransport, cycle: Any) -> None:
        self._transport = transport
        self._cycle = cycle

    def respond(self, status: int, headers: list[tuple[bytes, bytes]], body: bytes) -> bool:
        """Send the whole response; False (nothing sent) when it must go through ``send`` instead: the
        response has started, the client has gone, or a header value is one ``send`` refuses."""
        cycle = self._cycle
        if cycle.response_started or cycle.disconnected or cycle.access_log:  # (the access log: through send)
            return False
        keep_alive = cycle.keep_alive
        close_sent = False
        parts = [STATUS_LINE[status]]
        for name, value in (*cycle.default_headers, *headers):
            if HEADER_VALUE_RE.search(value):
                return False
            name = name.lower()
            if name == b"connection" and b"close" in [token.strip().lower() for token in value.split(b",")]:
                keep_alive = False
                close_sent = True
            parts += (name, b": ", value, b"\r\n")
        if not keep_alive and not close_sent:
            parts.append(b"connection: close\r\n")
        parts.append(b"\r\n")
        if cycle.scope["method"] != "HEAD":
            parts.append(body)
        cycle.response_started = True
        cycle.waiting_for_100_continue = False
        cycle.keep_alive = keep_alive
        cycle.response_complete = True
        self._transport.write(b"".join(parts))
        cycle.message_event.set()
        if not keep_alive:
            self._transport.close()
        cycle.on_response()
        return True

    def ready(self) -> bool:
        """The response has started, chunked, and is not finished: direct chunks may follow."""
        cycle = self._cycle
        return bool(cycle.response_started and cycle.chunked_encoding and not cycle.response_complete
                    and not cycle.disconnected and not self._transport.is_closing())

    def write(self, data: bytes) -> bool:
        transport = self._transport
        raw = transport._transport
        if raw.is_closing() or raw.get_write_buffer_size() > WATCH_BUFFER_LIMIT:
            return False
        if transport._pending:  # what the stream wrote goes first
            transport.flush()
        raw.write(b"%x\r\n%b\r\n" % (len(data), data))
        return True


class _Protocol(HttpToolsProtocol):
    """uvicorn's httptools protocol with a header deadline, a header size limit and Status error bodies.

    The header deadline and the idle timeout are times the server's sweep compares (:meth:`expired`, from
    :meth:`Server.on_tick` every second), not timers: uvicorn armed and cancelled a keep-alive timer per
    request, and a header deadline timer was a second one; the two cost about 3 % of a small create."""

    header_timeout: float = Limits.header_timeout
    idle_timeout: float = Limits.idle_timeout

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._header_bytes = 0
        self._waiting_since: float | None = None  # a request (or the connection) began; its headers are not in
        self._idle_since: float | None = None  # the last response is complete and nothing came since

    def expired(self, now: float) -> bool:
        """The client is past the header deadline, or the connection has been idle too long."""
        waiting, idle = self._waiting_since, self._idle_since
        return bool((waiting is not None and now - waiting > self.header_timeout)
                    or (idle is not None and now - idle > self.idle_timeout))

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self.transport = _CorkedTransport(transport, self.loop)  # type: ignore[assignment]
        self._waiting_since = self.loop.time()

    def data_received(self, data: bytes) -> None:
        self._idle_since = None
        if self._waiting_since is None and (self.cycle is None or self.cycle.response_complete):
            self._waiting_since = self.loop.time()  # between requests: a new one is starting
        super().data_received(data)

    def on_response_complete(self) -> None:
        """uvicorn's, with the time the connection became idle noted instead of a keep-alive timer armed."""
        self.server_state.total_requests += 1
        if self.transport.is_closing():
            return
        self.flow.resume_reading()
        if self.pipeline:  # a pipelined request waits: start it
            cycle, app = self.pipeline.pop()
            self._start_asgi_task(cycle, app)
        else:
            self._idle_since = self.loop.time()

    def on_message_begin(self) -> None:
        self._header_bytes = 0
        super().on_message_begin()

    def _too_long(self) -> None:
        if not self.transport.is_closing():
            self.transport.write(_status_bytes(431, "the request line and headers are longer than 1048576 bytes",
                                               "RequestHeaderFieldsTooLarge"))
            self.transport.close()
            raise _Abort

    # on_url and on_header are uvicorn's, with the size counted in the same call (the parser calls them for
    # every header of every request: one Python call each, not three).
    def on_url(self, url: bytes) -> None:
        self._header_bytes += len(url)
        if self._header_bytes > MAX_HEADER_BYTES:
            self._too_long()
        self.url += url

    def on_header(self, name: bytes, value: bytes) -> None:
        self._header_bytes += len(name) + len(value) + 4
        if self._header_bytes > MAX_HEADER_BYTES:
            self._too_long()
        name = name.lower()
        if name == b"expect" and value.lower() == b"100-continue":
            self.expect_100_continue = True
        self.headers.append((name, value))

    def on_headers_complete(self) -> None:
        self._waiting_since = None
        super().on_headers_complete()
        if self.cycle is not None and self.cycle.scope is self.scope:
            extensions: dict[str, Any] = self.scope.setdefault("extensions", {})
            extensions["dralloc.direct"] = DirectWriter(self.transport, self.cycle)  # type: ignore[arg-type]

    def send_400_response(self, msg: str) -> None:
        if not self.transport.is_closing():
            self.transport.write(_status_bytes(400, msg))
            self.transport.close()

    def close_when_done(self) -> None:
        """At shutdown: close the connection once no request is in flight on it (a watch the server just
        ended is done once its last chunk went out), without waiting for the client to close its side.

        Over TLS, closing sends close_notify and then waits for the client's (up to 30 s): a client that
        keeps its connection open after the watch it had there ended held the shutdown for uvicorn's whole
        grace period. Go's server sends close_notify and closes the socket; so does this, once all that was
        written has left (aborting drops only what is still buffered in the process, and nothing is)."""
        cycle = self.cycle
        if (cycle is not None and not cycle.response_complete) or self.pipeline:
            return  # an in-flight request finishes first (uvicorn bounds that by the shutdown timeout)
        transport = self.transport
        if not transport.is_closing():
            transport.close()
        if _unsent_bytes(transport) == 0:
            transport.abort()


def _unsent_bytes(transport: Any) -> int:
    """What a connection's transports still hold to send: the corked writes, the TLS layer's buffer, and the
    socket transport's under it (reached through asyncio's SSL protocol, when it has one)."""
    if isinstance(transport, _CorkedTransport):
        transport.flush()
        transport = transport._transport
    unsent = int(transport.get_write_buffer_size())
    below = getattr(getattr(transport, "_ssl_protocol", None), "_transport", None)
    if below is not None:
        unsent += int(below.get_write_buffer_size())
    return unsent


class _Abort(Exception):
    """Raised from a parser callback to stop parsing a connection that was just closed (httptools turns it
    into a parser error, which uvicorn answers with send_400_response: a no-op on a closing transport)."""


class Server(uvicorn.Server):
    """uvicorn's server that tells the app to end its watches before waiting for connections to finish."""

    def __init__(self, config: uvicorn.Config, on_shutdown: Any) -> None:
        super().__init__(config)
        self._on_shutdown = on_shutdown

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        # uvicorn re-raises the signal after a graceful shutdown (exit status -15, a KeyboardInterrupt for
        # Ctrl-C); kube-apiserver exits 0 once it has shut down cleanly, and so does this server.
        with super().capture_signals():
            try:
                yield
            finally:
                self._captured_signals.clear()

    async def on_tick(self, counter: int) -> bool:
        if counter % 10 == 0:  # every second
            self._close_expired()
        return await super().on_tick(counter)

    def _close_expired(self) -> None:
        """Close the connections past their header deadline or idle too long (see :class:`_Protocol`)."""
        now = asyncio.get_running_loop().time()
        for connection in list(self.server_state.connections):
            if isinstance(connection, _Protocol) and connection.expired(now) \
                    and not connection.transport.is_closing():
                connection.transport.close()

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        self._on_shutdown()  # ends the watches: their clients relist elsewhere
        closer = asyncio.get_running_loop().create_task(self._close_connections_when_done())
        try:
            await super().shutdown(sockets)
        finally:
            closer.cancel()

    async def _close_connections_when_done(self) -> None:
        """While uvicorn waits for the connections to go, close each one as soon as it is done (see
        :meth:`_Protocol.close_when_done`)."""
        while True:
            for connection in list(self.server_state.connections):
                if isinstance(connection, _Protocol):
                    connection.close_when_done()
            await asyncio.sleep(0.02)

    def open_connections(self) -> int:
        return len(self.server_state.connections)


def serve(app: Any, *, host: str, port: int, limits: Limits = Limits(), log_level: str = "warning",
          certfile: str | None = None, keyfile: str | None = None) -> None:
    """Serve ``app`` (from :func:`dralloc.server.create_app`) until SIGTERM/SIGINT."""
    protocol = type("Protocol", (_Protocol,), {"header_timeout": limits.header_timeout,
                                               "idle_timeout": limits.idle_timeout})
    # (no timeout_keep_alive: the protocol's idle_timeout, checked by the server's sweep, replaces uvicorn's timer)
    config = uvicorn.Config(app, host=host, port=port, log_level=log_level, access_log=False, http=protocol,
                            ssl_certfile=certfile, ssl_keyfile=keyfile,
                            timeout_graceful_shutdown=int(limits.shutdown_timeout),
                            proxy_headers=False, server_header=False)  # no proxy in front; no "server: uvicorn"
    api = app.state.api
    server = Server(config, api.begin_shutdown)
    api.open_connections = server.open_connections
    api.max_connections = limits.max_connections
    # What exists before serving (modules, schema tables, the store's caches) lives as long as the process:
    # out of the collector's way, a full collection walks only what the requests made since.
    gc.collect()
    gc.freeze()
    # The creates' objects that live on (the caches', the mirror's) are many: at the default threshold of 700
    # the young generation was collected every ten creates or so and, with the collections of the older
    # generations this sets off, the collector took some 16 % of the server's time under a burst of creates;
    # ten times the threshold cuts that to 7 % (bench_server.py, 30 000 creates of six kinds: 1.15 s -> 0.43 s
    # in the collector), for a few MB more of young garbage at most.
    gc.set_threshold(YOUNG_COLLECTION_THRESHOLD, *gc.get_threshold()[1:])
    server.run()
