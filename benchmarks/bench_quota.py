"""What the admission plugins of namespaced policy add to a create, and what the endpoints and disruption
controllers cost once a Service or a budget selects many pods.

    .venv/bin/python benchmarks/bench_quota.py [--pods 1000] [--repeat 20000]

Prints the µs (the quietest of five rounds) of the LimitRanger admission (defaults, then bounds) and of the ResourceQuota admission of one
pod create (dry run: nothing charged), first in a namespace without LimitRanges nor quotas (what every create
pays), then with one of each; and the ms of the endpoints controller's and the disruption controller's look at
a Service and a PodDisruptionBudget selecting ``--pods`` ready pods after one of them changed (nothing to
write: the common pass).
"""

from __future__ import annotations

import argparse
import statistics
import time
import timeit
import warnings
from typing import Any

from dralloc.server import create_app
from dralloc.server.controllers.disruption import DisruptionController
from dralloc.server.controllers.endpoints import EndpointsControllers
from dralloc.server.controllers.snapshot import Mirror, Snapshot
from dralloc.server.controllers.writes import Writer
from dralloc.server.registry import limit_ranges, quota
from dralloc.server.registry.quota_charges import QuotaCharges
from dralloc.store import SQLiteStore, SQLStore

POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
       "spec": {"containers": [{"name": "m", "image": "x", "resources": {"requests": {"cpu": "100m"},
                                                                         "limits": {"cpu": "200m"}}}]}}


def admission(store: SQLStore, repeat: int) -> float:
    charges = QuotaCharges()

    def create() -> None:
        admitted = limit_ranges.admit_pod(store, POD, "default")
        limit_ranges.check_pod(store, "default", admitted)
        quota.admit_create(store, charges, "pods", "", "default", admitted, True)

    return min(timeit.repeat(create, number=repeat // 5, repeat=5)) / (repeat // 5) * 1e6  # (the quietest fifth)


def put(store: SQLStore, resource: str, obj: dict[str, Any]) -> None:
    def build(_old: Any, rv: str) -> dict[str, Any]:
        return {**obj, "metadata": {**obj["metadata"], "resourceVersion": rv}}

    store.create(resource, obj["metadata"].get("namespace", ""), obj["metadata"]["name"], build)


def controllers(pods: int, rounds: int) -> tuple[float, float]:
    store = SQLiteStore(":memory:")
    put(store, "services", {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web", "namespace": "default",
                                                                                  "uid": "svc"},
                            "spec": {"selector": {"app": "web"}, "ports": [{"port": 80, "protocol": "TCP",
                                                                            "targetPort": 8080}]}})
    put(store, "poddisruptionbudgets", {
        "apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
        "metadata": {"name": "web", "namespace": "default", "uid": "pdb", "generation": 1},
        "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "web"}}}})
    ready = [{"type": "Ready", "status": "True"}]
    for i in range(pods):
        put(store, "pods", {"apiVersion": "v1", "kind": "Pod",
                            "metadata": {"name": f"web-{i}", "namespace": "default", "uid": f"u{i}",
                                         "labels": {"app": "web"}},
                            "spec": {"nodeName": "node-1", "containers": [{"name": "m", "image": "x"}]},
                            "status": {"phase": "Running", "podIP": f"10.88.{i // 250}.{i % 250 + 2}",
                                       "conditions": ready}})
    mirror = Mirror(store)
    mirror.relist()
    writer = Writer(store)
    endpoints, disruption = EndpointsControllers(writer), DisruptionController(writer)
    endpoints.cycle(Snapshot(mirror))  # (the first look writes them)
    disruption.cycle(Snapshot(mirror))
    mirror.relist()
    spent: dict[str, list[float]] = {"endpoints": [], "disruption": []}
    for r in range(rounds):
        def touch(old: dict[str, Any], rv: str, r: int = r) -> dict[str, Any]:
            meta = {**old["metadata"], "resourceVersion": rv, "annotations": {"round": str(r)}}
            return {**old, "metadata": meta}

        store.update("pods", "default", f"web-{r}", touch)  # another client changed one pod
        mirror.relist()
        mirror.items("pods")  # (parsed before the timing, as the controllers' mirror holds them)
        for name, controller in (("endpoints", endpoints), ("disruption", disruption)):
            controller.dirty_namespaces.add("default") if name == "endpoints" else disruption.dirty.add("default")
            t0 = time.perf_counter()
            wrote = controller.cycle(Snapshot(mirror))
            spent[name].append((time.perf_counter() - t0) * 1e3)
            assert not wrote
    return statistics.median(spent["endpoints"]), statistics.median(spent["disruption"])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pods", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=20000)
    args = parser.parse_args()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        app = create_app(SQLiteStore(":memory:"))
    store = app.api.store
    print(f"admission of a pod create, nothing in the namespace: {admission(store, args.repeat):6.2f} µs")
    put(store, "limitranges", {"apiVersion": "v1", "kind": "LimitRange", "metadata": {
        "name": "lr", "namespace": "default"}, "spec": {"limits": [{"type": "Container", "max": {"cpu": "1"},
                                                                  "default": {"memory": "1Gi"}}]}})
    put(store, "resourcequotas", {"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {
        "name": "q", "namespace": "default"}, "spec": {"hard": {"requests.cpu": "100", "pods": "1000"}},
        "status": {"hard": {"requests.cpu": "100", "pods": "1000"}, "used": {"requests.cpu": "0", "pods": "0"}}})
    print(f"admission of a pod create, a LimitRange and a quota:  {admission(store, args.repeat):6.2f} µs")
    ep, pdb = controllers(args.pods, 20)
    print(f"endpoints controller, a Service of {args.pods} pods, one changed:  {ep:7.2f} ms")
    print(f"disruption controller, a budget of {args.pods} pods, one changed: {pdb:7.2f} ms")


if __name__ == "__main__":
    main()
