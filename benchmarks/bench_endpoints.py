"""What the endpoints controllers of `dralloc serve` spend per pod created when Services are there already: a pod
changes the Endpoints and EndpointSlices of the Services that select it, and should cost nothing for the others.

    .venv/bin/python benchmarks/bench_endpoints.py [--selecting 20] [--others 0 1000] [--pods 200] [--batch 25]
    .venv/bin/python benchmarks/bench_endpoints.py --services 0 3000 [--creates 200]

Setup (not counted): ``--selecting`` Services that select the pods' label ``app: bench`` and ``--others`` Services
that select another label, in one namespace, written straight to an in-memory store, and the controllers' first
passes (one Endpoints object and one EndpointSlice each). Then ``--pods`` running, ready pods with an IP are
written, ``--batch`` at a time, each batch followed by one pass. Prints, for each count of other Services, the
Python steps (bytecodes, deterministic) per pod of the endpoints controllers' part of those passes and of the
whole pass: the figures should not grow with the other Services, only with the selecting ones (each of which
writes its Endpoints and slice again, listing every pod it selects, as kube-controller-manager does).

With ``--services``: Services created into a namespace that holds that many already (each with its Endpoints
and slice, written in the setup), ``--batch`` at a time, each batch followed by one pass; prints the process CPU
µs per Service create of those passes and of the next (which reads back their writes), the store's work
included: finding a new Service's slices must not read its namespace's other slices.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from types import FrameType
from typing import Any

from dralloc.server.controllers import ControllerManager, Options
from dralloc.store import SQLiteStore, SQLStore


def put(store: SQLStore, resource: str, obj: dict[str, Any]) -> None:
    def build(_old: Any, rv: str) -> dict[str, Any]:
        return {**obj, "metadata": {**obj["metadata"], "uid": f"uid-{obj['metadata']['name']}",
                                    "resourceVersion": rv}}

    store.create(resource, "default", obj["metadata"]["name"], build)


def service(name: str, app: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name, "namespace": "default"},
            "spec": {"selector": {"app": app}, "ports": [{"port": 80, "protocol": "TCP", "targetPort": 80}],
                     "clusterIP": "None", "type": "ClusterIP"}}


def pod(i: int) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": f"pod-{i}", "namespace": "default", "labels": {"app": "bench"}},
            "spec": {"containers": [{"name": "main", "image": "x:1"}], "nodeName": "node-1"},
            "status": {"phase": "Running", "podIP": f"10.{i // 65536}.{i // 256 % 256}.{i % 256}",
                       "conditions": [{"type": "Ready", "status": "True"}]}}


class Steps:
    """Bytecodes run, in all and inside the endpoints controllers' pass."""

    def __init__(self) -> None:
        self.total = 0
        self.endpoints = 0

    def tracer(self, frame: FrameType, event: str, _arg: Any) -> Any:
        frame.f_trace_opcodes = True
        if event == "opcode":
            self.total += 1
            f: FrameType | None = frame
            while f is not None:
                if f.f_code.co_name == "cycle" and f.f_code.co_filename.endswith("controllers/endpoints.py"):
                    self.endpoints += 1
                    break
                f = f.f_back
        return self.tracer


def run(selecting: int, others: int, pods: int, batch: int) -> tuple[float, float]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        store = SQLiteStore(":memory:")
    for i in range(selecting):
        put(store, "services", service(f"web-{i}", "bench"))
    for i in range(others):
        put(store, "services", service(f"other-{i}", "other"))
    manager = ControllerManager(store, Options(scheduler=False))
    manager.run_once(force=True)
    manager.run_once(force=True)
    steps = Steps()
    for start in range(0, pods, batch):
        for i in range(start, min(pods, start + batch)):
            put(store, "pods", pod(i))
        sys.settrace(steps.tracer)
        manager.run_once(force=False)
        sys.settrace(None)
    manager.pool.shutdown()
    store.close()
    return steps.endpoints / pods, steps.total / pods


def run_services(existing: int, creates: int, batch: int) -> float:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        store = SQLiteStore(":memory:")
    for i in range(existing):
        put(store, "services", service(f"old-{i}", "bench"))
    manager = ControllerManager(store, Options(scheduler=False))
    manager.run_once(force=True)
    manager.run_once(force=True)
    cpu = 0.0
    for start in range(0, creates, batch):
        for i in range(start, min(creates, start + batch)):
            put(store, "services", service(f"new-{i}", "bench"))
        began = time.process_time()
        manager.run_once(force=False)
        manager.run_once(force=False)  # (reads back what the pass wrote)
        cpu += time.process_time() - began
    manager.pool.shutdown()
    store.close()
    return cpu / creates * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--selecting", type=int, default=20)
    parser.add_argument("--others", type=int, nargs="+", default=[0, 1000])
    parser.add_argument("--pods", type=int, default=200)
    parser.add_argument("--batch", type=int, default=25)
    parser.add_argument("--services", type=int, nargs="+")
    parser.add_argument("--creates", type=int, default=200)
    args = parser.parse_args()
    if args.services:
        for existing in args.services:
            cpu = run_services(existing, args.creates, args.batch)
            print(f"{existing:5d} Services there: {cpu:8.0f} CPU µs per Service create in the controllers' passes")
        return
    for others in args.others:
        endpoints, total = run(args.selecting, others, args.pods, args.batch)
        print(f"{args.selecting} selecting, {others:5d} other Services: {endpoints:9.0f} Python steps per pod in the "
              f"endpoints controllers ({total:.0f} in the whole pass)")


if __name__ == "__main__":
    main()
