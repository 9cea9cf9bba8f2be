"""A pass of `dralloc serve`'s controllers over a cluster that already runs many pods: what one pass costs when
little changed, the common case under a stream of writes (passes run at most every 10 ms, so a pass that
looks at every object again turns a busy cluster's writes into a busy controller thread).

    .venv/bin/python benchmarks/bench_controllers.py [--pods 5000]

Setup (not timed): one node per 8 pods with a ResourceSlice of 8 GPUs, the pods bound, each with its own
allocated and reserved ResourceClaim, written straight to an in-memory store; then the first pass (it lists
everything). Prints the median µs of one pass after: another client's DeviceClass create (nothing for any
controller), a ResourceClaim create (not reserved: nothing to release) and a pod's label change (its claim
is looked at, and the pods: a changed pod may need claims or scheduling), and of the pass that schedules and
binds a new pod (the scheduler's cache is kept from pass to pass: the pass brings it up to date with what
changed rather than building it from every pod again).
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Any

from dralloc.server.controllers import ControllerManager
from dralloc.store import SQLiteStore, SQLStore

R = "resource.k8s.io/v1"


def put(store: SQLStore, resource: str, namespace: str, obj: dict[str, Any]) -> None:
    def build(_old: Any, rv: str) -> dict[str, Any]:
        obj["metadata"]["resourceVersion"] = rv
        return obj

    store.create(resource, namespace, obj["metadata"]["name"], build)


def populate(store: SQLStore, pods: int) -> None:
    put(store, "deviceclasses", "", {"apiVersion": R, "kind": "DeviceClass", "metadata": {"name": "gpu", "uid": "c"}})
    for n in range((pods + 7) // 8):
        node = f"node-{n}"
        put(store, "nodes", "", {"apiVersion": "v1", "kind": "Node", "metadata": {"name": node, "uid": f"n{n}"},
                                 "status": {"allocatable": {"cpu": "64", "memory": "512Gi", "pods": "110"}}})
        put(store, "resourceslices", "", {
            "apiVersion": R, "kind": "ResourceSlice", "metadata": {"name": f"{node}-gpus", "uid": f"s{n}"},
            "spec": {"driver": "gpu.example.com", "nodeName": node,
                     "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
                     "devices": [{"name": f"gpu-{g}"} for g in range(8)]}})
    for i in range(pods):
        node, uid = f"node-{i // 8}", f"pod-uid-{i}"
        claim = f"pod-{i}-gpu"
        put(store, "pods", "default", {
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": f"pod-{i}", "namespace": "default", "uid": uid, "labels": {"app": "x"}},
            "spec": {"nodeName": node, "containers": [{"name": "main", "image": "x:1",
                                                        "resources": {"claims": [{"name": "gpu"}]}}],
                     "resourceClaims": [{"name": "gpu", "resourceClaimName": claim}]},
            "status": {"phase": "Running"}})
        put(store, "resourceclaims", "default", {
            "apiVersion": R, "kind": "ResourceClaim",
            "metadata": {"name": claim, "namespace": "default", "uid": f"claim-uid-{i}",
                         "finalizers": ["resource.kubernetes.io/delete-protection"]},
            "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu"}}]}},
            "status": {"allocation": {"devices": {"results": [
                {"request": "gpu", "driver": "gpu.example.com", "pool": node, "device": f"gpu-{i % 8}"}]},
                "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
                    {"key": "metadata.name", "operator": "In", "values": [node]}]}]}},
                "reservedFor": [{"resource": "pods", "name": f"pod-{i}", "uid": uid}]}})


def timed_pass(manager: ControllerManager) -> float:
    t0 = time.perf_counter()
    manager.run_once(force=False)
    return (time.perf_counter() - t0) * 1e6


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pods", type=int, default=5000)
    parser.add_argument("--rounds", type=int, default=20)
    args = parser.parse_args()
    store = SQLiteStore(":memory:")
    populate(store, args.pods)
    manager = ControllerManager(store)
    t0 = time.perf_counter()
    manager.run_once()
    first = time.perf_counter() - t0
    class_pass, claim_pass, pod_pass, schedule_pass = [], [], [], []
    for r in range(args.rounds):
        put(store, "deviceclasses", "", {"apiVersion": R, "kind": "DeviceClass", "metadata": {"name": f"c{r}"}})
        class_pass.append(timed_pass(manager))
        put(store, "resourceclaims", "default", {
            "apiVersion": R, "kind": "ResourceClaim", "metadata": {"name": f"new-{r}", "namespace": "default"},
            "spec": {"devices": {"requests": []}}})
        claim_pass.append(timed_pass(manager))

        def relabel(old: dict[str, Any], rv: str, r: int = r) -> dict[str, Any]:
            return {**old, "metadata": {**old["metadata"], "labels": {"app": f"x{r}"}, "resourceVersion": rv}}

        store.update("pods", "default", f"pod-{r}", relabel)
        pod_pass.append(timed_pass(manager))
    for r in range(args.rounds + 1):  # (the first after the DeviceClass creates builds the scheduler's cluster)
        put(store, "pods", "default", {
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": f"new-pod-{r}", "namespace": "default", "uid": f"new-pod-uid-{r}"},
            "spec": {"containers": [{"name": "main", "image": "x:1", "resources": {"requests": {"cpu": "100m"}}}]}})
        schedule_pass.append(timed_pass(manager))
        manager.run_once(force=False)  # (the pass that reads back its own writes)
    schedule_pass = schedule_pass[1:]
    store.close()
    print(f"controllers: {args.pods} bound pods with a claim each; first pass (lists everything) {first * 1e3:.0f} ms")
    print(f"  pass after a DeviceClass create: {statistics.median(class_pass):8.0f} µs")
    print(f"  pass after a ResourceClaim create: {statistics.median(claim_pass):6.0f} µs")
    print(f"  pass after a pod's label change: {statistics.median(pod_pass):8.0f} µs")
    print(f"  pass that schedules and binds a new pod: {statistics.median(schedule_pass):8.0f} µs")


if __name__ == "__main__":
    main()
