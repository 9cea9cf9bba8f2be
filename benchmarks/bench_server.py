"""API server throughput: a real `dralloc serve` process on a SQLite file, driven over HTTP.

    .venv/bin/python benchmarks/bench_server.py [--objects N]

Prints creates/s (each one a durable transaction: WAL, synchronous=FULL), gets/s, list latency for N
ResourceSlices, and the delay from a write to its watch event.
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


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def slice_body(i: int) -> bytes:
    devices = [{"name": f"gpu-{g}", "attributes": {"model": {"string": "h100"}, "index": {"int": g}},
                "capacity": {"memory": {"value": "80Gi"}}} for g in range(8)]
    return json.dumps({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
                       "metadata": {"name": f"node-{i}-gpus"},
                       "spec": {"driver": "gpu.example.com", "nodeName": f"node-{i}",
                                "pool": {"name": f"node-{i}", "generation": 1, "resourceSliceCount": 1},
                                "devices": devices}}).encode()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--objects", type=int, default=1000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        port = free_port()
        proc = subprocess.Popen([sys.executable, "-m", "dralloc", "serve", "--db", str(Path(tmp) / "b.db"),
                                 "--port", str(port)], stderr=subprocess.DEVNULL)
        try:
            for _ in range(100):
                try:
                    conn = http.client.HTTPConnection("127.0.0.1", port)
                    conn.request("GET", "/healthz")
                    conn.getresponse().read()
                    break
                except OSError:
                    time.sleep(0.1)
            headers = {"content-type": "application/json"}
            t0 = time.perf_counter()
            for i in range(args.objects):
                conn.request("POST", SLICES, slice_body(i), headers)
                assert conn.getresponse().read() and True
            t1 = time.perf_counter()
            for i in range(args.objects):
                conn.request("GET", f"{SLICES}/node-{i}-gpus")
                conn.getresponse().read()
            t2 = time.perf_counter()
            conn.request("GET", SLICES)
            items = len(json.loads(conn.getresponse().read())["items"])
            t3 = time.perf_counter()

            delays = []
            for i in range(20):
                watch = http.client.HTTPConnection("127.0.0.1", port)
                conn.request("GET", SLICES + "?limit=1")
                rv = json.loads(conn.getresponse().read())["metadata"]["resourceVersion"]
                watch.request("GET", f"{SLICES}?watch=true&resourceVersion={rv}&timeoutSeconds=5")
                resp = watch.getresponse()
                got = threading.Event()
                seen = [0.0]

                def reader() -> None:
                    resp.readline()
                    seen[0] = time.perf_counter()
                    got.set()

                threading.Thread(target=reader, daemon=True).start()
                time.sleep(0.05)
                start = time.perf_counter()
                conn.request("POST", SLICES, slice_body(args.objects + i), headers)
                conn.getresponse().read()
                got.wait(5)
                delays.append((seen[0] - start) * 1000)
                watch.close()
        finally:
            proc.terminate()
            proc.wait()
    print(f"create: {args.objects / (t1 - t0):8.0f} objects/s  (durable: WAL + synchronous=FULL)")
    print(f"get:    {args.objects / (t2 - t1):8.0f} requests/s")
    print(f"list:   {(t3 - t2) * 1000:8.1f} ms for {items} ResourceSlices")
    delays.sort()
    print(f"watch:  {delays[len(delays) // 2]:8.1f} ms median from write to event")


if __name__ == "__main__":
    main()
