"""API server throughput: a real `dralloc serve` process on a SQLite file, driven over HTTP.

    .venv/bin/python benchmarks/bench_server.py [--objects 5000] [--clients 8] [--watchers 50]

Creates N ResourceSlices (8 GPUs each) from several client connections (every write a durable transaction:
WAL, synchronous=FULL), reads them back, lists them all, then measures watch delivery: W watchers stream
while writes continue, and the delay from each acknowledged write to its event at every watcher is recorded
(median and p99).
"""

from __future__ import annotations

import argparse
import http.client
import json
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

SLICES = "/apis/resource.k8s.io/v1/resourceslices"
HEADERS = {"content-type": "application/json"}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def slice_body(i: int) -> bytes:
    devices = [{"name": f"gpu-{g}", "attributes": {"model": {"string": "h100"}, "index": {"int": g},
                                                  "driverVersion": {"version": "560.35.3"}},
                "capacity": {"memory": {"value": "80Gi"}}} for g in range(8)]
    return json.dumps({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
                       "metadata": {"name": f"node-{i}-gpus"},
                       "spec": {"driver": "gpu.example.com", "nodeName": f"node-{i}",
                                "pool": {"name": f"node-{i}", "generation": 1, "resourceSliceCount": 1},
                                "devices": devices}}).encode()


def run_parallel(n_clients: int, port: int, work: list[tuple[str, str, bytes | None]]) -> float:
    chunks = [work[i::n_clients] for i in range(n_clients)]

    def client(items: list[tuple[str, str, bytes | None]]) -> None:
        conn = http.client.HTTPConnection("127.0.0.1", port)
        for method, path, body in items:
            conn.request(method, path, body, HEADERS if body else {})
            resp = conn.getresponse()
            resp.read()
            if resp.status >= 300:
                raise RuntimeError(f"{method} {path}: {resp.status}")

    threads = [threading.Thread(target=client, args=(c,)) for c in chunks]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return time.perf_counter() - t0


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--objects", type=int, default=5000)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--watchers", type=int, default=50)
    parser.add_argument("--watched-writes", type=int, default=200)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        port = free_port()
        proc = subprocess.Popen([sys.executable, "-m", "dralloc", "serve", "--db", str(Path(tmp) / "b.db"),
                                 "--port", str(port), "--anonymous"],
                                stderr=subprocess.DEVNULL)
        try:
            for _ in range(100):
                try:
                    c = http.client.HTTPConnection("127.0.0.1", port)
                    c.request("GET", "/healthz")
                    c.getresponse().read()
                    break
                except OSError:
                    time.sleep(0.1)
            n = args.objects
            create_s = run_parallel(args.clients, port, [("POST", SLICES, slice_body(i)) for i in range(n)])
            get_s = run_parallel(args.clients, port, [("GET", f"{SLICES}/node-{i}-gpus", None) for i in range(n)])
            conn = http.client.HTTPConnection("127.0.0.1", port)
            lists = []
            for _ in range(5):
                t0 = time.perf_counter()
                conn.request("GET", SLICES)
                body = conn.getresponse().read()
                lists.append(time.perf_counter() - t0)
            items = len(json.loads(body)["items"])
            rv = json.loads(body)["metadata"]["resourceVersion"]

            # Watchers: record when each event arrives, keyed by object name.
            arrivals: list[dict[str, float]] = [{} for _ in range(args.watchers)]
            ready = threading.Barrier(args.watchers + 1)

            def watcher(k: int) -> None:
                w = http.client.HTTPConnection("127.0.0.1", port)
                w.request("GET", f"{SLICES}?watch=true&resourceVersion={rv}&timeoutSeconds=60")
                resp = w.getresponse()
                ready.wait()
                for line in resp:
                    now = time.perf_counter()
                    event = json.loads(line)
                    name = event["object"]["metadata"]["name"]
                    arrivals[k][name] = now
                    if name == "stop":
                        return

            threads = [threading.Thread(target=watcher, args=(k,), daemon=True) for k in range(args.watchers)]
            for t in threads:
                t.start()
            ready.wait()
            sent: dict[str, float] = {}
            for i in range(args.watched_writes):
                name = f"watched-{i}"
                body = slice_body(n + i).replace(f"node-{n + i}-gpus".encode(), name.encode())
                conn.request("POST", SLICES, body, HEADERS)
                conn.getresponse().read()
                sent[name] = time.perf_counter()
                time.sleep(0.005)
            conn.request("POST", "/apis/resource.k8s.io/v1/deviceclasses",
                         json.dumps({"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
                                     "metadata": {"name": "x"}}).encode(), HEADERS)
            conn.getresponse().read()
            stop = slice_body(n + args.watched_writes).replace(f"node-{n + args.watched_writes}-gpus".encode(),
                                                              b"stop")
            conn.request("POST", SLICES, stop, HEADERS)
            conn.getresponse().read()
            for t in threads:
                t.join(30)
        finally:
            proc.terminate()
            proc.wait()
    delays = sorted(max(0.0, arr[name] - at) * 1000 for arr in arrivals for name, at in sent.items() if name in arr)
    expected = len(sent) * args.watchers
    lists.sort()
    print(f"create: {n / create_s:8.0f} writes/s  ({n} ResourceSlices, {args.clients} clients, WAL + synchronous=FULL)")
    print(f"get:    {n / get_s:8.0f} requests/s")
    print(f"list:   {lists[len(lists) // 2] * 1000:8.1f} ms median for {items} ResourceSlices")
    print(f"watch:  {delays[len(delays) // 2]:8.1f} ms median, {delays[int(len(delays) * 0.99) - 1]:.1f} ms p99 "
          f"from acknowledged write to event ({args.watchers} watchers, {len(delays)}/{expected} events seen)")


if __name__ == "__main__":
    main()
