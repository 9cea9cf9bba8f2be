"""API server throughput: a real `dralloc serve` process on a SQLite file, driven over HTTP.

    .venv/bin/python benchmarks/bench_server.py [--objects 5000] [--clients 8] [--watchers 1000] [--tls] [--quota]
                                                [--kinds DeviceClass,ResourceClaim,...] [--writes-only]
                                                [--tmp-dir /dev/shm] [--callgrind [--by-thread]]

1. Durable writes, kind by kind: N objects of each kind created from C client connections; every acknowledged
   write is on disk (WAL, synchronous=FULL; concurrent writes share a commit). The kinds: DeviceClasses (small,
   cluster-scoped), ResourceClaims in the namespace ``default`` (a namespaced create: the namespace is checked
   on each), ResourceSlices (8 GPUs each), Pods (one container; admission adds the service account's token
   volume and the default tolerations) and ConfigMaps. Prints writes/s, the p50/p99 latency of a create and
   the server's CPU per create, for each kind, after the median fsync time of the directory the database is in.
2. Reads: gets/s, and the median time of a full list.
3. Watches: W watch streams stay open (another process reads them all with a selector) while creates go on one at a
   time; prints the create latency with the watches open and the delay from each acknowledged write to its
   event at every watcher (p50/p99).

``--callgrind`` counts instructions instead of time: the server runs under valgrind's callgrind, and each
kind's creates print the server's instructions per create (every thread), a figure the load of a shared
machine does not move (the kind's CPU time moves by half from one hour to the next). ``--by-thread`` adds
the event loop thread's share (HTTP, the handlers, the statements) and the other threads' (the COMMITs, the
controllers' passes).

``--writes-only`` stops after 1 (each kind's writes need ResourceSlices for 2 and 3). Every write waits for
its group's fsync, so with C writers a commit holds at most C writes, and on a disk whose fsync takes 4 ms
(a shared virtual disk often does) no server reaches 2000 writes/s with 8 writers; ``--tmp-dir /dev/shm``
puts the database on tmpfs, where the fsyncs cost nothing and the server's CPU sets the rate. The server
runs with ``--no-scheduler``: the Pods are only stored (scheduling through the API is ``bench_scheduling_server.py``).
Plain HTTP by default (``--insecure-http``), so the figures are the server's, not TLS's; ``--tls`` serves the
default HTTPS.
"""

from __future__ import annotations

import argparse
import http.client
import json
import multiprocessing
import multiprocessing.queues
import os
import re
import selectors
import shutil
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

SLICES = "/apis/resource.k8s.io/v1/resourceslices"
CLAIMS = "/apis/resource.k8s.io/v1/namespaces/default/resourceclaims"  # namespaced creates (NamespaceLifecycle)
HEADERS = {"content-type": "application/json"}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def slice_body(name: str, i: int) -> bytes:
    devices = [{"name": f"gpu-{g}", "attributes": {"model": {"string": "h100"}, "index": {"int": g},
                                                  "driverVersion": {"version": "560.35.3"}},
                "capacity": {"memory": {"value": "80Gi"}}} for g in range(8)]
    return json.dumps({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
                       "metadata": {"name": name},
                       "spec": {"driver": "gpu.example.com", "nodeName": f"node-{i}",
                                "pool": {"name": f"node-{i}", "generation": 1, "resourceSliceCount": 1},
                                "devices": devices}}).encode()


def class_body(name: str) -> bytes:
    return json.dumps({"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": name}}).encode()


def pod_body(name: str) -> bytes:
    return json.dumps({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "labels": {"app": "bench"}},
                       "spec": {"containers": [{"name": "main", "image": "registry.example/app:1.0",
                                                "resources": {"requests": {"cpu": "100m"}}}]}}).encode()


def config_map_body(name: str) -> bytes:
    return json.dumps({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name},
                       "data": {"config.yaml": "replicas: 3\nlevel: info\n", "mode": "fast"}}).encode()


def claim_body(name: str) -> bytes:
    return json.dumps({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": name},
                       "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {
                           "deviceClassName": "gpu.example.com"}}]}}}).encode()


# Each kind selects its own label: the Pods of the bench are nobody's (no Service, ReplicaSet or Job created
# earlier in the run selects them, which would make the controllers sync thousands of owners per Pod create).
def _template(app: str) -> dict[str, Any]:
    return {"metadata": {"labels": {"app": app}},
            "spec": {"containers": [{"name": "main", "image": "registry.example/app:1.0"}]}}


def service_body(name: str) -> bytes:
    return json.dumps({"apiVersion": "v1", "kind": "Service", "metadata": {"name": name},
                       "spec": {"selector": {"app": "bench-service"}, "ports": [{"port": 80}]}}).encode()


def deployment_body(name: str) -> bytes:  # (no replicas: the API's work, not the pods')
    return json.dumps({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
                       "spec": {"replicas": 0, "selector": {"matchLabels": {"app": "bench-deployment"}},
                                "template": _template("bench-deployment")}}).encode()


def job_body(name: str) -> bytes:  # (suspended: the API's work, not the pods')
    template = _template("bench-job")
    template["spec"]["restartPolicy"] = "Never"
    return json.dumps({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name},
                       "spec": {"suspend": True, "template": template}}).encode()


def widget_body(name: str) -> bytes:
    return json.dumps({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": name},
                       "spec": {"size": "large", "min": 1, "max": 8, "ports": [{"name": "http", "port": 80}]}}).encode()


# A custom resource's CRD: a schema that prunes, defaults and validates, with a CEL rule.
WIDGETS_CRD = json.dumps({
    "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition", "metadata": {"name": "widgets.example.com"},
    "spec": {"group": "example.com", "scope": "Namespaced", "names": {"plural": "widgets", "kind": "Widget"},
             "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": {
                 "type": "object", "properties": {"spec": {
                     "type": "object", "x-kubernetes-validations": [{"rule": "self.min <= self.max"}], "properties": {
                         "size": {"type": "string", "enum": ["small", "large"]},
                         "replicas": {"type": "integer", "default": 1},
                         "min": {"type": "integer", "minimum": 0}, "max": {"type": "integer", "maximum": 100},
                         "ports": {"type": "array", "x-kubernetes-list-type": "map",
                                   "x-kubernetes-list-map-keys": ["name"], "items": {"type": "object", "properties": {
                                       "name": {"type": "string"}, "port": {"type": "integer"}}}}}}}}}}]}}).encode()
# What a kind needs before its creates (made, then waited for, untimed)
SETUP: dict[str, list[tuple[str, bytes, str]]] = {
    "Widget": [("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", WIDGETS_CRD,
                "/apis/example.com/v1/namespaces/default/widgets")]}


# --quota: a ResourceQuota in the namespace that counts every kind's objects, far above what a run makes
QUOTA = json.dumps({"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "bench"}, "spec": {"hard": {
    "pods": "1000000", "requests.cpu": "100000", "count/configmaps": "1000000", "count/services": "1000000",
    "count/resourceclaims.resource.k8s.io": "1000000", "count/deployments.apps": "1000000",
    "count/jobs.batch": "1000000", "count/widgets.example.com": "1000000"}}}).encode()


def make_quota(target: Target) -> None:
    """Make the QUOTA and wait until the resourcequota controller has counted it (creates are refused before)."""
    path = "/api/v1/namespaces/default/resourcequotas"
    conn = target.connect()
    conn.request("POST", path, QUOTA, HEADERS)
    conn.getresponse().read()
    for _ in range(100):
        conn.request("GET", f"{path}/bench")
        if (json.loads(conn.getresponse().read()).get("status") or {}).get("used"):
            break
        time.sleep(0.1)
    conn.close()


def set_up(kind: str, target: Target) -> None:
    """Make what ``kind``'s creates need, and wait until it is served."""
    for path, body, ready in SETUP.get(kind, []):
        conn = target.connect()
        conn.request("POST", path, body, HEADERS)
        conn.getresponse().read()
        for _ in range(100):
            conn.request("GET", ready)
            answer = conn.getresponse()
            answer.read()
            if answer.status == 200:
                break
            time.sleep(0.1)
        conn.close()


# Each kind's create: its collection, its body from (name, index), and what the printed line says of it.
KINDS: dict[str, tuple[str, Callable[[str, int], bytes], str]] = {
    "DeviceClass": ("/apis/resource.k8s.io/v1/deviceclasses", lambda name, i: class_body(name),
                    "DeviceClasses (small, cluster-scoped)"),
    "ResourceClaim": (CLAIMS, lambda name, i: claim_body(name), "ResourceClaims in one namespace"),
    "ResourceSlice": (SLICES, slice_body, "ResourceSlices of 8 GPUs"),
    "Pod": ("/api/v1/namespaces/default/pods", lambda name, i: pod_body(name), "Pods in one namespace"),
    "ConfigMap": ("/api/v1/namespaces/default/configmaps", lambda name, i: config_map_body(name),
                  "ConfigMaps in one namespace"),
    "Service": ("/api/v1/namespaces/default/services", lambda name, i: service_body(name),
                "Services in one namespace (a cluster IP each)"),
    "Deployment": ("/apis/apps/v1/namespaces/default/deployments", lambda name, i: deployment_body(name),
                   "Deployments of 0 replicas"),
    "Job": ("/apis/batch/v1/namespaces/default/jobs", lambda name, i: job_body(name), "suspended Jobs"),
    "Widget": ("/apis/example.com/v1/namespaces/default/widgets", lambda name, i: widget_body(name),
               "custom resources (a CRD schema with defaults and a CEL rule)"),
}


class Target:
    def __init__(self, port: int, tls: bool, ca: Path | None) -> None:
        self.port = port
        self.context = ssl.create_default_context(cafile=str(ca)) if tls and ca else None

    def connect(self) -> http.client.HTTPConnection:
        if self.context is not None:
            return http.client.HTTPSConnection("127.0.0.1", self.port, context=self.context)
        return http.client.HTTPConnection("127.0.0.1", self.port)

    def raw_socket(self) -> socket.socket:
        sock = socket.create_connection(("127.0.0.1", self.port))
        if self.context is not None:
            sock = self.context.wrap_socket(sock, server_hostname="127.0.0.1")
        return sock


def start_server(data_dir: Path, tls: bool, *flags: str,
                 wrapper: tuple[str, ...] = ()) -> tuple[subprocess.Popen[bytes], Target]:
    """A `dralloc serve` process (anonymous; plain HTTP unless ``tls``; run by ``wrapper``, e.g. valgrind) once
    it answers /healthz."""
    port = free_port()
    proc = subprocess.Popen([*wrapper, sys.executable, "-m", "dralloc", "serve", "--data-dir", str(data_dir),
                             "--port", str(port), "--anonymous", *flags, *([] if tls else ["--insecure-http"])],
                            stdout=subprocess.DEVNULL if wrapper else None, stderr=subprocess.DEVNULL)
    for _ in range(9000 if wrapper else 100):  # (under valgrind the imports alone take a minute, on a busy
        # machine several)
        try:
            target = Target(port, tls, data_dir / "pki" / "ca.crt")  # (the CA exists once the server is up)
            conn = target.connect()
            conn.request("GET", "/healthz")
            conn.getresponse().read()
            return proc, target
        except OSError:
            time.sleep(0.1)
    proc.terminate()
    raise RuntimeError("dralloc serve did not start")


def cpu_seconds(proc: subprocess.Popen[bytes]) -> float:
    """CPU time (user + system, all threads) the process has used so far; NaN where /proc is not there. On a
    shared machine the wall-clock rates swing with the neighbours' load; the CPU a request costs the server
    moves far less, so both are printed."""
    try:
        fields = Path(f"/proc/{proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return float("nan")
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def percentile(values: list[float], p: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(len(values) * p))] if values else float("nan")


class LeanConnection:
    """A keep-alive HTTP/1.1 client connection that does as little as a load generator can (as wrk or hey
    would): requests are pre-encoded bytes, responses are read by Content-Length or chunked framing. The
    benchmark shares the server's cores, so a client that spends more CPU than the server per request
    (http.client parses every response header with the email package) would measure the client."""

    def __init__(self, target: Target) -> None:
        self.sock = target.raw_socket()
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buffer = b""

    @staticmethod
    def encode(method: str, path: str, body: bytes | None) -> bytes:
        head = f"{method} {path} HTTP/1.1\r\nHost: bench\r\n"
        if body is not None:
            head += f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n"
        return head.encode() + b"\r\n" + (body or b"")

    def _fill(self) -> None:
        data = self.sock.recv(1 << 16)
        if not data:
            raise ConnectionError("the server closed the connection")
        self.buffer += data

    def roundtrip(self, request: bytes) -> tuple[int, bytes]:
        """Send one encoded request; its status code and body."""
        self.sock.sendall(request)
        while (end := self.buffer.find(b"\r\n\r\n")) < 0:
            self._fill()
        head, self.buffer = self.buffer[:end].lower(), self.buffer[end + 4:]
        status = int(head[9:12])
        if (at := head.find(b"content-length:")) >= 0:
            eol = head.find(b"\r\n", at)
            length = int(head[at + 15:eol if eol >= 0 else len(head)])
            while len(self.buffer) < length:
                self._fill()
            body, self.buffer = self.buffer[:length], self.buffer[length:]
            return status, body
        chunks = []
        while True:  # chunked
            while (eol := self.buffer.find(b"\r\n")) < 0:
                self._fill()
            size = int(self.buffer[:eol], 16)
            while len(self.buffer) < eol + 2 + size + 2:
                self._fill()
            chunks.append(self.buffer[eol + 2:eol + 2 + size])
            self.buffer = self.buffer[eol + 2 + size + 2:]
            if size == 0:
                return status, b"".join(chunks)


def run_parallel(n_clients: int, target: Target, work: list[tuple[str, str, bytes | None]]) -> tuple[float, list[float]]:
    """Send ``work`` from ``n_clients`` connections; the wall time and every request's latency (s)."""
    encoded = [(f"{m} {p}", LeanConnection.encode(m, p, b)) for m, p, b in work]
    chunks = [encoded[i::n_clients] for i in range(n_clients)]
    latencies: list[float] = []
    errors: list[str] = []
    start = threading.Barrier(n_clients + 1)

    def client(items: list[tuple[str, bytes]]) -> None:
        conn = LeanConnection(target)
        mine = []
        start.wait()
        clock = time.perf_counter
        for what, request in items:
            t0 = clock()
            status, body = conn.roundtrip(request)
            mine.append(clock() - t0)
            if status >= 300:
                errors.append(f"{what}: {status} {body[:200]!r}")
                break
        latencies.extend(mine)

    threads = [threading.Thread(target=client, args=(c,)) for c in chunks]
    for t in threads:
        t.start()
    start.wait()
    t0 = time.perf_counter()
    for t in threads:
        t.join()
    if errors:
        raise RuntimeError(errors[0])
    return time.perf_counter() - t0, latencies


_NAME = re.compile(rb'"name":"(watched-\d+)"')


def watch_all(target: Target, n: int, rv: str, arrivals: list[dict[str, float]], ready: threading.Event,
              done: Any) -> None:
    """Open ``n`` watch streams and record when each watched object's event reaches each of them."""
    sel = selectors.DefaultSelector()
    for k in range(n):
        sock = target.raw_socket()
        sock.sendall(f"GET {SLICES}?watch=true&resourceVersion={rv}&timeoutSeconds=300 HTTP/1.1\r\n"
                     f"Host: x\r\n\r\n".encode())
        sock.setblocking(False)
        sel.register(sock, selectors.EVENT_READ, k)
    ready.set()
    while not done.is_set():
        for key, _ in sel.select(timeout=0.2):
            try:
                data = key.fileobj.recv(1 << 16)  # type: ignore[union-attr]
            except (BlockingIOError, ssl.SSLWantReadError):
                continue
            now = time.monotonic()  # (one clock for every process of the machine)
            for name in _NAME.findall(data):
                arrivals[key.data].setdefault(name.decode(), now)
    for key in list(sel.get_map().values()):
        key.fileobj.close()  # type: ignore[union-attr]


def watch_process(target: Target, n: int, rv: str, ready: Any, done: Any, results: Any) -> None:
    """:func:`watch_all` in a process of its own; the arrivals go back through ``results``."""
    arrivals: list[dict[str, float]] = [{} for _ in range(n)]
    started = threading.Event()
    reader = threading.Thread(target=watch_all, args=(target, n, rv, arrivals, started, done))
    reader.start()
    started.wait()
    ready.set()
    reader.join()
    results.put(arrivals)


def store_counters(target: Target) -> tuple[int, int]:
    """The server's writes and commits so far (its /metrics)."""
    conn = LeanConnection(target)
    _, body = conn.roundtrip(LeanConnection.encode("GET", "/metrics", None))
    conn.sock.close()
    found = dict(re.findall(rb"^dralloc_store_(writes|commits)_total (\d+)$", body, re.M))
    return int(found.get(b"writes", 0)), int(found.get(b"commits", 0))


def write_phase(kind: str, n: int, clients: int, target: Target,
                proc: subprocess.Popen[bytes]) -> tuple[float, list[float], float, float]:
    """Create ``n`` objects of ``kind``: the wall time, each create's latency, the server's CPU µs per create and
    the writes per commit (how many concurrent writes shared an fsync; the server's controllers write too)."""
    path, body, _ = KINDS[kind]
    set_up(kind, target)
    prefix = kind.lower()
    work: list[tuple[str, str, bytes | None]] = [("POST", path, body(f"{prefix}-{i}", i)) for i in range(n)]
    if kind == "ResourceSlice":  # (the names the read and watch phases look for)
        work = [("POST", path, slice_body(f"node-{i}-gpus", i)) for i in range(n)]
    writes, commits = store_counters(target)
    before = cpu_seconds(proc)
    wall, latencies = run_parallel(clients, target, work)
    cpu = (cpu_seconds(proc) - before) / n * 1e6
    writes_after, commits_after = store_counters(target)
    return wall, latencies, cpu, (writes_after - writes) / max(1, commits_after - commits)


def median_fsync_ms(directory: Path, rounds: int = 200) -> float:
    """The median time of one 4 KiB write and its fsync in ``directory`` (where the database is): what a
    group commit waits for at least, so what bounds the durable writes per second of C writers."""
    path = directory / "fsync-probe"
    times = []
    with open(path, "wb") as f:
        for _ in range(rounds):
            f.write(b"x" * 4096)
            t0 = time.perf_counter()
            f.flush()
            os.fsync(f.fileno())
            times.append(time.perf_counter() - t0)
    path.unlink()
    return percentile(times, 0.5) * 1000


WARM_CREATES = 16  # creates of each kind before its instructions are counted


def callgrind_phases(kinds: list[str], n: int, clients: int, tmp: Path, by_thread: bool = False,
                     keep: Path | None = None) -> None:
    """Instructions per create of each kind, counted by callgrind in a server it runs (every thread; a
    figure the machine's load does not move, unlike the CPU time). The counters are zeroed after a warm-up
    (and WARM_CREATES creates of the kind) and read after each kind's creates and a second of the
    controllers' work on them. ``by_thread``: also the event loop's thread's share (the requests, their
    statements and the group commits' turns) apart from the other threads' (the COMMITs, the controllers)."""
    out = tmp / "callgrind.out"
    wrapper = ("valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", "--dump-instr=no",
               *(["--separate-threads=yes"] if by_thread else []))
    proc, target = start_server(tmp / "data", False, "--max-connections", "100000", "--no-scheduler", wrapper=wrapper)
    try:
        run_parallel(clients, target, [("POST", KINDS["ConfigMap"][0], config_map_body(f"warm-{i}"))
                                       for i in range(100)])
        time.sleep(2.0)
        for kind in kinds:
            path, body, _ = KINDS[kind]
            set_up(kind, target)
            # A few creates first: what the server does once per kind (compiled schemas, caches filled) is not
            # a cost per create.
            run_parallel(clients, target, [("POST", path, body(f"warm-{kind.lower()}-{i}", 100_000 + i))
                                           for i in range(WARM_CREATES)])
            time.sleep(1.0)
            subprocess.run(["callgrind_control", "--zero", str(proc.pid)], capture_output=True, check=True)
            run_parallel(clients, target, [("POST", path, body(f"{kind.lower()}-{i}", i)) for i in range(n)])
            time.sleep(1.0)
            dumped = set(tmp.glob("callgrind.out*"))
            subprocess.run(["callgrind_control", "--dump", str(proc.pid)], capture_output=True, check=True)
            for _ in range(100):
                new = set(tmp.glob("callgrind.out*")) - dumped
                if new:
                    break
                time.sleep(0.1)
            time.sleep(0.5)  # (the dump is written)
            counts = {f.name: int(m.group(1)) for f in new
                      if (m := re.search(rb"^summary: (\d+)", f.read_bytes(), re.M))}
            total = sum(counts.values())
            if keep is not None:
                keep.mkdir(parents=True, exist_ok=True)
                for f in new:
                    shutil.copy(f, keep / f"{kind}.{f.name}")
            # (with --separate-threads each thread has its own file, the main thread's ending in -01)
            loop = sum(c for name, c in counts.items() if name.endswith("-01"))
            split = f"; loop thread {loop / n / 1e6:.3f} M, others {(total - loop) / n / 1e6:.3f} M" if by_thread else ""
            print(f"{kind + ':':15}{total / n / 1e6:6.3f} M instructions per create ({n} {KINDS[kind][2]}, "
                  f"{clients} clients, callgrind{split})", flush=True)
    finally:
        proc.terminate()
        proc.wait(120)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--objects", type=int, default=5000)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--watchers", type=int, default=1000)
    parser.add_argument("--watched-writes", type=int, default=200)
    parser.add_argument("--kinds", default=",".join(KINDS),
                        help=f"the kinds whose creates are timed, in this order (of {', '.join(KINDS)})")
    parser.add_argument("--writes-only", action="store_true", help="only the writes, no reads or watches")
    parser.add_argument("--tls", action="store_true", help="serve the default HTTPS instead of plain HTTP")
    parser.add_argument("--quota", action="store_true",
                        help="a ResourceQuota in the namespace counting every kind's objects: each create is "
                             "charged to it and counted by the resourcequota controller")
    parser.add_argument("--callgrind", action="store_true",
                        help="count the server's instructions per create under valgrind's callgrind instead "
                             "(writes only; --objects 400 is plenty, the server runs some 50 times slower)")
    parser.add_argument("--by-thread", action="store_true",
                        help="with --callgrind: also the event loop thread's instructions apart from the others'")
    parser.add_argument("--callgrind-out", type=Path, default=None,
                        help="with --callgrind: keep callgrind's dumps in this directory (KIND.callgrind.out...), "
                             "for callgrind_annotate")
    parser.add_argument("--tmp-dir", default=None,
                        help="where the server's data directory is made (default: the system's temporary "
                             "directory); one on tmpfs (/dev/shm) measures the server without the disk's fsyncs")
    args = parser.parse_args()
    kinds = [k for k in args.kinds.split(",") if k]
    unknown = [k for k in kinds if k not in KINDS]
    if unknown:
        parser.error(f"unknown kind {unknown[0]!r} (known: {', '.join(KINDS)})")
    if not args.writes_only and "ResourceSlice" not in kinds:
        kinds.append("ResourceSlice")  # the reads and watches read slices
    n = args.objects
    ms = 1000
    if args.callgrind:
        with tempfile.TemporaryDirectory(dir=args.tmp_dir) as tmp:
            callgrind_phases([k for k in args.kinds.split(",") if k], n, args.clients, Path(tmp), args.by_thread,
                             args.callgrind_out)
        return
    with tempfile.TemporaryDirectory(dir=args.tmp_dir) as tmp:
        print(f"median fsync of a 4 KiB write where the database is: {median_fsync_ms(Path(tmp)):.3f} ms",
              flush=True)
        proc, target = start_server(Path(tmp) / "data", args.tls, "--max-connections", "100000", "--no-scheduler")
        try:
            if args.quota:
                make_quota(target)
            for kind in kinds:
                wall, latencies, cpu, per_commit = write_phase(kind, n, args.clients, target, proc)
                print(f"{kind + ':':15}{n / wall:6.0f} writes/s  ({n} {KINDS[kind][2]}, {args.clients} clients, "
                      f"every write durable)  p50 {percentile(latencies, 0.5) * ms:.1f} ms, "
                      f"p99 {percentile(latencies, 0.99) * ms:.1f} ms; server CPU {cpu:.0f} µs per write; "
                      f"{per_commit:.1f} writes per commit", flush=True)
            if args.writes_only:
                return
            cpu_before = cpu_seconds(proc)
            get_s, _ = run_parallel(args.clients, target, [("GET", f"{SLICES}/node-{i}-gpus", None) for i in range(n)])
            get_cpu = (cpu_seconds(proc) - cpu_before) / n * 1e6
            conn = target.connect()
            lists = []
            for _ in range(5):
                t0 = time.perf_counter()
                conn.request("GET", SLICES)
                body = conn.getresponse().read()
                lists.append(time.perf_counter() - t0)
            listed = json.loads(body)
            items, rv = len(listed["items"]), listed["metadata"]["resourceVersion"]

            # The watches are read by another process: a reader thread here would hold this process's
            # interpreter lock for a thousand reads per event, and the creates' latencies would be the client's.
            context = multiprocessing.get_context("fork")
            ready, done = context.Event(), context.Event()
            results: multiprocessing.queues.Queue[list[dict[str, float]]] = context.Queue()
            reader = context.Process(target=watch_process, args=(target, args.watchers, rv, ready, done, results))
            reader.start()
            ready.wait()
            time.sleep(1.0)  # let every watch reach the server
            sent: dict[str, float] = {}
            watched_lat = []
            for i in range(args.watched_writes):
                name = f"watched-{i}"
                t0 = time.monotonic()
                conn.request("POST", SLICES, slice_body(name, n + i), HEADERS)
                conn.getresponse().read()
                sent[name] = time.monotonic()
                watched_lat.append(sent[name] - t0)
                time.sleep(0.01)
            time.sleep(2.0)  # the last events reach every watch
            done.set()
            arrivals = results.get(timeout=60)
            reader.join(10)
        finally:
            proc.terminate()
            proc.wait()
    delays = [max(0.0, arr[name] - at) * 1000 for arr in arrivals for name, at in sent.items() if name in arr]
    expected = len(sent) * args.watchers
    lists.sort()
    print(f"get:    {n / get_s:8.0f} requests/s; server CPU {get_cpu:.0f} µs per get")
    print(f"list:   {lists[len(lists) // 2] * ms:8.1f} ms median for {items} ResourceSlices")
    print(f"watch:  create p50 {percentile(watched_lat, 0.5) * ms:.1f} ms, p99 {percentile(watched_lat, 0.99) * ms:.1f} ms"
          f" with {args.watchers} watches open; event p50 {percentile(delays, 0.5):.1f} ms, "
          f"p99 {percentile(delays, 0.99):.1f} ms after the acknowledged write ({len(delays)}/{expected} seen)")


if __name__ == "__main__":
    main()
