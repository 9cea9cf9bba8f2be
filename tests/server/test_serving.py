"""`dralloc serve` as a process: graceful shutdown with watches open, header and idle timeouts, the connection
limit, and Status bodies for requests the HTTP layer refuses."""

from __future__ import annotations

import json
import signal
import socket
import ssl
import threading
import time
import urllib.error
from pathlib import Path

import pytest
from served import Server, create_class

pytestmark = pytest.mark.e2e


def _connect(server: Server) -> ssl.SSLSocket:
    assert server.context is not None
    raw = socket.create_connection(("127.0.0.1", server.port), timeout=10)
    return server.context.wrap_socket(raw, server_hostname="127.0.0.1")


def _read_all(sock: socket.socket) -> bytes:
    data = b""
    while True:
        try:
            chunk = sock.recv(65536)
        except (ConnectionError, ssl.SSLError):
            break
        if not chunk:
            break
        data += chunk
    return data


def test_sigterm_with_a_watch_open_ends_the_watch_and_exits_within_seconds(tmp_path: Path) -> None:
    server = Server(tmp_path)
    watch = server.open("/apis/resource.k8s.io/v1/deviceclasses?watch=true&allowWatchBookmarks=true", timeout=30)
    time.sleep(0.3)
    started = time.monotonic()
    server.proc.send_signal(signal.SIGTERM)
    assert watch.read() == b""  # the stream ends cleanly (chunked end), not by a reset
    assert server.proc.wait(10) == 0
    assert time.monotonic() - started < 5


def test_ctrl_c_with_a_watch_open_exits_too(tmp_path: Path) -> None:
    server = Server(tmp_path)
    watch = server.open("/apis/resource.k8s.io/v1/resourceslices?watch=true", timeout=30)
    started = time.monotonic()
    server.proc.send_signal(signal.SIGINT)
    watch.read()
    assert server.proc.wait(10) == 0 and time.monotonic() - started < 5


def _open_watch_and_keep_the_connection(server: Server, path: str) -> ssl.SSLSocket:
    """A watch on a connection its client keeps open after the watch ends, as a pooling HTTP/1.1 client
    (client-go's transport) keeps a connection for the next request."""
    sock = _connect(server)
    sock.sendall(f"GET {path} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
    assert sock.recv(65536).startswith(b"HTTP/1.1 200 OK")
    return sock


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_shutdown_with_an_idle_watch_open_ends_it_at_once_and_exits_within_a_second(tmp_path: Path,
                                                                                    sig: int) -> None:
    server = Server(tmp_path)
    sock = _open_watch_and_keep_the_connection(server, "/apis/resource.k8s.io/v1/deviceclasses?watch=true")
    time.sleep(0.3)
    started = time.monotonic()
    server.proc.send_signal(sig)
    assert _read_all(sock) == b"0\r\n\r\n"  # the watch ends cleanly (the chunked end), then the connection
    assert server.proc.wait(10) == 0
    elapsed = time.monotonic() - started
    sock.close()
    assert elapsed < 2  # (about 0.4 s; it was 5.2 s, uvicorn's grace period, waiting for the client to close)


def test_writes_acknowledged_before_a_sigterm_are_kept_and_the_server_exits_promptly(tmp_path: Path) -> None:
    db = tmp_path / "d.db"
    server = Server(tmp_path, db)
    sock = _open_watch_and_keep_the_connection(server, "/api/v1/namespaces/default/pods?watch=true")
    acknowledged: list[str] = []
    stop = threading.Event()

    def writer(w: int) -> None:
        i = 0
        while not stop.is_set():
            try:
                create_class(server, f"w{w}-{i}")
            except (OSError, urllib.error.HTTPError):
                return  # the server is shutting down
            acknowledged.append(f"w{w}-{i}")
            i += 1

    threads = [threading.Thread(target=writer, args=(w,)) for w in range(4)]
    for t in threads:
        t.start()
    time.sleep(1.0)
    started = time.monotonic()
    server.proc.send_signal(signal.SIGTERM)
    assert server.proc.wait(10) == 0
    elapsed = time.monotonic() - started
    stop.set()
    for t in threads:
        t.join(10)
    sock.close()
    assert len(acknowledged) > 4 and elapsed < 5  # (requests in flight finish first)
    restarted = Server(tmp_path, db)
    try:
        with restarted.open("/apis/resource.k8s.io/v1/deviceclasses") as r:
            stored = {i["metadata"]["name"] for i in json.load(r)["items"]}
    finally:
        restarted.stop()
    assert set(acknowledged) <= stored


def test_a_client_that_does_not_finish_its_headers_is_disconnected_while_health_checks_answer(
        tmp_path: Path) -> None:
    server = Server(tmp_path, extra=["--anonymous", "--header-timeout", "1"])
    try:
        slow = _connect(server)
        slow.sendall(b"GET /apis HTTP/1.1\r\nHost: x\r\n")  # never finished
        silent = _connect(server)  # never says anything
        assert server.open("/healthz").read() == b"ok"
        started = time.monotonic()
        assert _read_all(slow) == b"" and _read_all(silent) == b""
        assert time.monotonic() - started < 5
    finally:
        server.stop()


def test_an_idle_keep_alive_connection_is_closed_after_the_idle_timeout_a_busy_one_is_kept(tmp_path: Path) -> None:
    server = Server(tmp_path, extra=["--anonymous", "--idle-timeout", "1"])
    try:
        idle, busy = _connect(server), _connect(server)
        for sock in (idle, busy):
            sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
            assert b"200 OK" in sock.recv(4096)
        started = time.monotonic()
        while time.monotonic() - started < 2.5:  # requests more often than the idle timeout: never idle long
            time.sleep(0.4)
            busy.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
            assert b"200 OK" in busy.recv(4096)
        assert _read_all(idle) == b""  # closed by the server (it had been idle since its one request)
        assert time.monotonic() - started < 5
        busy.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        assert b"200 OK" in busy.recv(4096)
    finally:
        server.stop()


def test_over_the_connection_limit_requests_get_429_but_health_checks_answer(tmp_path: Path) -> None:
    server = Server(tmp_path, extra=["--anonymous", "--max-connections", "3"])
    try:
        idle = [_connect(server) for _ in range(4)]
        for sock in idle:
            sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")  # make sure each is accepted
            assert b"200 OK" in sock.recv(4096)
        with pytest.raises(urllib.error.HTTPError) as info:
            server.open("/apis/resource.k8s.io/v1/deviceclasses")
        status = json.load(info.value)
        assert (info.value.code, status["reason"]) == (429, "TooManyRequests")
        assert info.value.headers["Retry-After"] == "1"
        for path in ("/healthz", "/livez", "/readyz"):
            assert server.open(path).status == 200
        for sock in idle:
            sock.close()
        time.sleep(0.3)
        assert server.open("/apis/resource.k8s.io/v1/deviceclasses").status == 200
    finally:
        server.stop()


def test_malformed_and_over_long_requests_get_status_bodies(tmp_path: Path) -> None:
    server = Server(tmp_path)
    try:
        sock = _connect(server)
        sock.sendall(b"GET /" + b"a" * (1 << 20) + b" HTTP/1.1\r\nHost: x\r\n\r\n")
        head, _, body = _read_all(sock).partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 431")
        assert json.loads(body)["kind"] == "Status" and json.loads(body)["code"] == 431
        sock = _connect(server)
        sock.sendall(b"GET / HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n")
        head, _, body = _read_all(sock).partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 400") and json.loads(body)["reason"] == "BadRequest"
    finally:
        server.stop()


def test_every_watch_gets_every_event_once_in_order_whether_written_directly_or_through_a_selector(
        tmp_path: Path) -> None:
    # Plain watches are written to their connections by the hub (more of them than one stride of the
    # fan-out, so the loop turns in between); a watch with a selector takes the queued path. Both must show
    # the same events, in the store's order, each once.
    server = Server(tmp_path)
    try:
        with server.open("/apis/resource.k8s.io/v1/deviceclasses") as r:
            rv = json.load(r)["metadata"]["resourceVersion"]
        queries = [f"resourceVersion={rv}"] * 70 + [f"resourceVersion={rv}&labelSelector=app!%3Dnone"]
        streams = [server.open(f"/apis/resource.k8s.io/v1/deviceclasses?watch=true&{q}", timeout=30)
                   for q in queries]
        time.sleep(0.5)
        writers = [threading.Thread(target=lambda k=k: [create_class(server, f"c{k}-{i}.example.com")
                                                        for i in range(10)]) for k in range(4)]
        for w in writers:
            w.start()
        for w in writers:
            w.join()
        seen = []
        for stream in streams:
            events = [json.loads(stream.readline()) for _ in range(40)]
            seen.append([(e["type"], e["object"]["metadata"]["name"], int(e["object"]["metadata"]["resourceVersion"]))
                         for e in events])
            stream.close()
        assert all(s == seen[0] for s in seen)
        assert len({name for _, name, _ in seen[0]}) == 40
        assert [v for _, _, v in seen[0]] == sorted(v for _, _, v in seen[0])
    finally:
        server.stop()


def test_a_watch_whose_client_stops_reading_is_ended_while_the_others_go_on(tmp_path: Path) -> None:
    # As kube-apiserver ends the watches of clients too slow to keep up: once more than the server's limit
    # (8 MiB) waits unread for one connection, its watch ends; a watch that reads sees every event.
    server = Server(tmp_path, extra=["--anonymous", "--insecure-http"])
    try:
        stalled = socket.create_connection(("127.0.0.1", server.port))
        stalled.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        stalled.sendall(b"GET /apis/resource.k8s.io/v1/deviceclasses?watch=true HTTP/1.1\r\nHost: x\r\n\r\n")
        reading = server.open("/apis/resource.k8s.io/v1/deviceclasses?watch=true", timeout=30)
        names: list[str] = []

        def read() -> None:
            for line in reading:
                names.append(json.loads(line)["object"]["metadata"]["name"])
                if names[-1] == "after.example.com":
                    return

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        time.sleep(0.3)

        def watchers() -> int:
            with server.open("/metrics") as r:
                line = next(x for x in r.read().decode().splitlines() if x.startswith("dralloc_watchers "))
            return int(line.split()[1])

        assert watchers() == 2
        # ~320 KB per class: 32 selectors of ~10 KB
        selectors = [{"cel": {"expression": 'device.driver == "' + chr(97 + k % 26) * 9900 + '"'}} for k in range(32)]
        created = 0
        while watchers() == 2 and created < 120:
            body = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": f"c{created}"},
                    "spec": {"selectors": selectors}}
            server.open("/apis/resource.k8s.io/v1/deviceclasses", json.dumps(body).encode(), "POST",
                        {"content-type": "application/json"}).read()
            created += 1
        assert watchers() == 1 and 25 < created < 120
        create_class(server, "after.example.com")
        reader.join(20)
        assert names == [f"c{i}" for i in range(created)] + ["after.example.com"]
        stalled.close()
    finally:
        server.stop()
