"""The workload controllers of `dralloc serve` (server/controllers/workloads.py) at scale: a Deployment of many
replicas made, scheduled and started (``--fake-kubelet``), then scaled and rolled out, through the controller
passes; and what one pass costs once it runs, when one of its pods changed (every pass with workloads looks at
every workload's pods).

    .venv/bin/python benchmarks/bench_workloads.py [--replicas 1000] [--rounds 20]

Setup (not timed): one node per 10 replicas, written straight to an in-memory store, and the first pass. Prints
the seconds from the Deployment's create to every pod Running and the Deployment's status saying so, the same
for a scale to 1.5 times the replicas and for a new template rolled out, each with the passes it took; then the
median µs of a pass after another client changed one pod's label (the workload cycle runs: nothing to write).
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import statistics
import time
from typing import Any

from dralloc.server.controllers import ControllerManager, Options
from dralloc.store import SQLiteStore, SQLStore

APPS = "apps/v1"


def put(store: SQLStore, resource: str, namespace: str, obj: dict[str, Any]) -> None:
    def build(_old: Any, rv: str) -> dict[str, Any]:
        obj["metadata"]["resourceVersion"] = rv
        return obj

    store.create(resource, namespace, obj["metadata"]["name"], build)


def change(store: SQLStore, resource: str, name: str, edit: Any) -> None:
    def build(old: dict[str, Any], rv: str) -> dict[str, Any]:
        new = {**old}  # (the store writes nothing when build answers its own object)
        edit(new)
        new["metadata"]["resourceVersion"] = rv
        return new

    store.update(resource, "default", name, build)


def settle(manager: ControllerManager, done: Any) -> tuple[float, int]:
    """Seconds and passes until ``done()``."""
    start, passes = time.perf_counter(), 0
    dirty = True
    while not done():
        dirty = manager.run_once(force=dirty) or True
        passes += 1
        if passes > 10_000:
            raise RuntimeError("did not settle")
    return time.perf_counter() - start, passes


def rolled_out(store: SQLStore, replicas: int, image: str) -> Any:
    def check() -> bool:
        deploy = store.get("deployments", "default", "web")
        status = deploy.get("status") or {}
        if status.get("observedGeneration") != deploy["metadata"].get("generation"):
            return False
        if (status.get("updatedReplicas"), status.get("availableReplicas"), status.get("replicas")) != \
                (replicas, replicas, replicas):
            return False
        pods = [p for p in store.list("pods")[0] if not p["metadata"].get("deletionTimestamp")]
        return len(pods) == replicas and all(p["spec"]["containers"][0]["image"] == image for p in pods)
    return check


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--replicas", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--profile", action="store_true", help="cProfile the passes after a pod changed")
    args = parser.parse_args()
    store = SQLiteStore(":memory:")
    put(store, "namespaces", "", {"apiVersion": "v1", "kind": "Namespace",
                                  "metadata": {"name": "default", "uid": "ns"}, "status": {"phase": "Active"}})
    put(store, "serviceaccounts", "default", {"apiVersion": "v1", "kind": "ServiceAccount",
                                              "metadata": {"name": "default", "namespace": "default", "uid": "sa"}})
    for n in range(max(args.replicas * 3 // 20, 1)):
        put(store, "nodes", "", {"apiVersion": "v1", "kind": "Node", "metadata": {"name": f"node-{n}", "uid": f"n{n}"},
                                 "status": {"allocatable": {"cpu": "64", "memory": "512Gi", "pods": "110"}}})
    manager = ControllerManager(store, Options(fake_kubelet=True))
    manager.run_once(force=True)
    template = {"metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "main", "image": "nginx:1"}], "restartPolicy": "Always",
                         "terminationGracePeriodSeconds": 0}}
    put(store, "deployments", "default", {
        "apiVersion": APPS, "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "default", "uid": "d", "generation": 1},
        "spec": {"replicas": args.replicas, "selector": {"matchLabels": {"app": "web"}}, "template": template,
                 "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}}}})
    seconds, passes = settle(manager, rolled_out(store, args.replicas, "nginx:1"))
    print(f"create {args.replicas} replicas: {seconds:.2f} s, {passes} passes")

    more = args.replicas * 3 // 2

    def scale(d: dict[str, Any]) -> None:
        d["spec"]["replicas"] = more
        d["metadata"]["generation"] += 1
    change(store, "deployments", "web", scale)
    seconds, passes = settle(manager, rolled_out(store, more, "nginx:1"))
    print(f"scale to {more}: {seconds:.2f} s, {passes} passes")

    def new_image(d: dict[str, Any]) -> None:
        d["spec"]["template"]["spec"]["containers"][0]["image"] = "nginx:2"
        d["metadata"]["generation"] += 1
    change(store, "deployments", "web", new_image)
    seconds, passes = settle(manager, rolled_out(store, more, "nginx:2"))
    print(f"roll out {more} pods to a new image: {seconds:.2f} s, {passes} passes")
    for _ in range(3):
        manager.run_once(force=True)

    pod = next(p["metadata"]["name"] for p in store.list("pods")[0] if not p["metadata"].get("deletionTimestamp"))
    times = []
    profile = cProfile.Profile() if args.profile else None
    for r in range(args.rounds):
        change(store, "pods", pod, lambda p, r=r: p["metadata"]["labels"].__setitem__("round", str(r)))
        start = time.perf_counter()
        if profile is not None:
            profile.enable()
        while manager.run_once(force=False):
            pass
        if profile is not None:
            profile.disable()
        times.append(time.perf_counter() - start)
    if profile is not None:
        pstats.Stats(profile).sort_stats("cumulative").print_stats(25)
    print(f"a pass after one of {more} pods changed: {statistics.median(times) * 1e6:.0f} µs (median)")


if __name__ == "__main__":
    main()
