"""The server's work per create, without HTTP or other processes: creates sent one at a time through the ASGI
app of ``dralloc serve`` (anonymous, a SQLite file, every write durable), as uvicorn would hand them over.

    .venv/bin/python benchmarks/bench_write_path.py [--creates 2000] [--repeat 5] [--kind deviceclasses]
                                                    [--go-client]

Prints, per kind (DeviceClass, ResourceClaim in ``default``, ResourceSlice of 8 devices, a Pod, a custom resource whose
CRD's schema prunes, defaults and validates it with a CEL rule), the µs of CPU time
per create (the median of the repeats; a shared machine moves it by tens of percent). ``--go-client``: each
body has the ``"creationTimestamp": null`` a Go client writes into every new object. For figures that do
not move, count instructions: run one kind under callgrind for two numbers of creates and divide the
difference, which cancels start-up and imports::

    valgrind --tool=callgrind --callgrind-out-file=a.out .venv/bin/python benchmarks/bench_write_path.py \\
        --kind deviceclasses --creates 100 --repeat 1
    (the same with --creates 400 into b.out; per create: (summary of b.out - summary of a.out) / 300)
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

from dralloc.server import create_app
from dralloc.store import SQLiteStore

KINDS: dict[str, tuple[str, Callable[[int], dict[str, Any]]]] = {
    "deviceclasses": ("/apis/resource.k8s.io/v1/deviceclasses", lambda i: {
        "apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": f"class-{i}"},
        "spec": {"selectors": [{"cel": {"expression": "device.driver == 'gpu.example.com'"}}]}}),
    "resourceclaims": ("/apis/resource.k8s.io/v1/namespaces/default/resourceclaims", lambda i: {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": f"claim-{i}"},
        "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com"}}]}}}),
    "resourceslices": ("/apis/resource.k8s.io/v1/resourceslices", lambda i: {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": f"node-{i}-gpu"},
        "spec": {"driver": "gpu.example.com", "nodeName": f"node-{i}",
                 "pool": {"name": f"node-{i}", "generation": 1, "resourceSliceCount": 1},
                 "devices": [{"name": f"gpu-{g}", "attributes": {"model": {"string": "h100"}, "index": {"int": g},
                                                                 "driverVersion": {"version": "560.35.3"}},
                              "capacity": {"memory": {"value": "80Gi"}}} for g in range(8)]}}),
    "pods": ("/api/v1/namespaces/default/pods", lambda i: {
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"pod-{i}", "labels": {"app": "bench"}},
        "spec": {"containers": [{"name": "main", "image": "registry.example/app:1.0",
                                 "resources": {"requests": {"cpu": "100m"}}}]}}),
    # a custom resource of a CRD with a schema to prune, default and validate, and a CEL rule
    "widgets": ("/apis/example.com/v1/namespaces/default/widgets", lambda i: {
        "apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": f"widget-{i}"},
        "spec": {"size": "large", "min": 1, "max": 8, "ports": [{"name": "http", "port": 80}]}}),
}
_WIDGET_SPEC = {"type": "object", "x-kubernetes-validations": [{"rule": "self.min <= self.max"}], "properties": {
    "size": {"type": "string", "enum": ["small", "large"]}, "replicas": {"type": "integer", "default": 1},
    "min": {"type": "integer", "minimum": 0}, "max": {"type": "integer", "maximum": 100},
    "ports": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
              "items": {"type": "object", "properties": {"name": {"type": "string"}, "port": {"type": "integer"}}}}}}
# What a kind needs created first (not measured)
SETUP: dict[str, list[tuple[str, dict[str, Any]]]] = {"widgets": [(
    "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
    {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
     "metadata": {"name": "widgets.example.com"},
     "spec": {"group": "example.com", "scope": "Namespaced", "names": {"plural": "widgets", "kind": "Widget"},
              "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": {
                  "type": "object", "properties": {"spec": _WIDGET_SPEC}}}}]}})]}


def scope(path: str, body: bytes) -> dict[str, Any]:
    """An HTTP request's ASGI scope as uvicorn makes it (kubectl's headers, no query string)."""
    return {"type": "http", "asgi": {"version": "3.0", "spec_version": "2.3"}, "http_version": "1.1",
            "server": ("127.0.0.1", 6443), "client": ("127.0.0.1", 50000), "scheme": "http", "method": "POST",
            "root_path": "", "path": path, "raw_path": path.encode(), "query_string": b"", "state": {},
            "headers": [(b"host", b"127.0.0.1:6443"), (b"user-agent", b"kubectl/v1.36.0 (linux/amd64)"),
                        (b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]}


async def post(app: Any, path: str, body: bytes) -> tuple[int, bytes]:
    """One POST through the ASGI app: its status and body."""
    messages = [{"type": "http.request", "body": body, "more_body": False}]
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return messages.pop() if messages else {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    await app(scope(path, body), receive, send)
    return sent[0]["status"], b"".join(m.get("body", b"") for m in sent[1:])


async def create_all(app: Any, path: str, bodies: list[bytes]) -> None:
    for body in bodies:
        status, answer = await post(app, path, body)
        if status != 201:
            raise RuntimeError(f"create failed: {status} {answer[:300]!r}")


def as_go_client(body: dict[str, Any]) -> dict[str, Any]:
    """The body as a Go client sends it: a zero metav1.Time marshals as null."""
    return {**body, "metadata": {**body["metadata"], "creationTimestamp": None}}


def cpu_per_create(kind: str, creates: int, go_client: bool = False) -> float:
    """µs of CPU per create of ``creates`` new objects of ``kind`` into a fresh store."""
    path, make = KINDS[kind]
    shape: Callable[[dict[str, Any]], dict[str, Any]] = as_go_client if go_client else (lambda body: body)
    bodies = [json.dumps(shape(make(i)), separators=(",", ":")).encode() for i in range(creates)]
    with tempfile.TemporaryDirectory() as tmp, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        store = SQLiteStore(str(Path(tmp) / "db.sqlite"))
        app = create_app(store, anonymous=True)

        async def run() -> float:
            store.attach_loop(asyncio.get_running_loop())  # as the served app: writes commit on the loop
            for setup_path, setup_body in SETUP.get(kind, []):
                await create_all(app, setup_path, [json.dumps(setup_body).encode()])
            await create_all(app, path, bodies[:1])  # first-use work (imports, compiled selectors) left out
            start = time.process_time()
            await create_all(app, path, bodies[1:])
            return time.process_time() - start

        elapsed = asyncio.run(run())
        store.close()
    return elapsed / max(creates - 1, 1) * 1e6


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--creates", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--kind", choices=sorted(KINDS), action="append")
    parser.add_argument("--go-client", action="store_true", help="bodies as a Go client writes them")
    args = parser.parse_args()
    for kind in args.kind or list(KINDS):
        runs = [cpu_per_create(kind, args.creates, args.go_client) for _ in range(args.repeat)]
        print(f"{kind:15} {statistics.median(runs):7.1f} µs of CPU per create (median of {args.repeat}; "
              f"{min(runs):.1f}–{max(runs):.1f})")


if __name__ == "__main__":
    main()
