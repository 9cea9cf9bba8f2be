"""Volumes in `dralloc serve`'s controllers: what a pass costs over a cluster whose pods all have bound claims
(the volume controllers look at every claim and volume when a pod or a storage object changes), and how long a
new pod with a WaitForFirstConsumer claim takes from its writes to bound (the scheduler's PreBind, the
simulated provisioner, the PV controller's binding, then the pod's binding).

    .venv/bin/python benchmarks/bench_serve_volumes.py [--pods 2000] [--rounds 20]

Setup (not timed): one node per 8 pods, a default WaitForFirstConsumer StorageClass, the pods bound, each with
its own claim bound to its own volume, written straight to an in-memory store; then the first pass (it lists
everything). Prints the median µs of one pass after a pod's label change and after a claim's label change,
and the median ms from a new pod and its claim written to the pod bound (passes run until the controllers
settle, ``--provision-volumes`` on).
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Any

from dralloc.server.controllers import ControllerManager, Options
from dralloc.store import SQLiteStore, SQLStore

HOST = "kubernetes.io/hostname"


def put(store: SQLStore, resource: str, namespace: str, obj: dict[str, Any]) -> None:
    def build(_old: Any, rv: str) -> dict[str, Any]:
        obj["metadata"]["resourceVersion"] = rv
        return obj

    store.create(resource, namespace, obj["metadata"]["name"], build)


def claim(name: str, uid: str, volume: str | None = None) -> dict[str, Any]:
    obj: dict[str, Any] = {
        "apiVersion": "v1", "kind": "PersistentVolumeClaim",
        "metadata": {"name": name, "namespace": "default", "uid": uid, "finalizers": ["kubernetes.io/pvc-protection"]},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}},
                 "storageClassName": "standard", "volumeMode": "Filesystem"},
        "status": {"phase": "Pending"}}
    if volume is not None:
        obj["spec"]["volumeName"] = volume
        obj["metadata"]["annotations"] = {"pv.kubernetes.io/bind-completed": "yes"}
        obj["status"] = {"phase": "Bound", "accessModes": ["ReadWriteOnce"], "capacity": {"storage": "1Gi"}}
    return obj


def pod(name: str, uid: str, claim_name: str, node: str | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [{"name": "main", "image": "x:1", "resources": {"requests": {"cpu": "100m"}}}],
                            "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": claim_name}}]}
    if node is not None:
        spec["nodeName"] = node
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default", "uid": uid,
                                                            "labels": {"app": "x"}},
            "spec": spec, "status": {"phase": "Running" if node else "Pending"}}


def populate(store: SQLStore, pods: int) -> None:
    put(store, "storageclasses", "", {
        "apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
        "metadata": {"name": "standard", "uid": "sc",
                     "annotations": {"storageclass.kubernetes.io/is-default-class": "true"}},
        "provisioner": "example.com/csi", "reclaimPolicy": "Delete", "volumeBindingMode": "WaitForFirstConsumer"})
    for n in range((pods + 7) // 8):
        put(store, "nodes", "", {"apiVersion": "v1", "kind": "Node",
                                 "metadata": {"name": f"node-{n}", "uid": f"n{n}", "labels": {HOST: f"node-{n}"}},
                                 "status": {"allocatable": {"cpu": "64", "memory": "512Gi", "pods": "110"}}})
    for i in range(pods):
        node = f"node-{i // 8}"
        put(store, "persistentvolumes", "", {
            "apiVersion": "v1", "kind": "PersistentVolume",
            "metadata": {"name": f"pv-{i}", "uid": f"pv-uid-{i}", "finalizers": ["kubernetes.io/pv-protection"]},
            "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"], "storageClassName": "standard",
                     "persistentVolumeReclaimPolicy": "Delete", "volumeMode": "Filesystem",
                     "csi": {"driver": "example.com/csi", "volumeHandle": f"pv-{i}"},
                     "claimRef": {"kind": "PersistentVolumeClaim", "namespace": "default", "name": f"data-{i}",
                                  "uid": f"claim-uid-{i}", "apiVersion": "v1"},
                     "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [
                         {"key": HOST, "operator": "In", "values": [node]}]}]}}},
            "status": {"phase": "Bound"}})
        put(store, "persistentvolumeclaims", "default", claim(f"data-{i}", f"claim-uid-{i}", f"pv-{i}"))
        put(store, "pods", "default", pod(f"pod-{i}", f"pod-uid-{i}", f"data-{i}", node))


def timed_pass(manager: ControllerManager) -> float:
    t0 = time.perf_counter()
    manager.run_once(force=False)
    return (time.perf_counter() - t0) * 1e6


def relabel(store: SQLStore, resource: str, name: str, value: str) -> None:
    def change(old: dict[str, Any], rv: str) -> dict[str, Any]:
        return {**old, "metadata": {**old["metadata"], "labels": {"app": value}, "resourceVersion": rv}}

    store.update(resource, "default", name, change)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pods", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=20)
    args = parser.parse_args()
    store = SQLiteStore(":memory:")
    populate(store, args.pods)
    manager = ControllerManager(store, Options(provision_volumes=True))
    t0 = time.perf_counter()
    manager.run_once()
    while manager.run_once(force=False):
        pass
    first = time.perf_counter() - t0
    pod_pass, claim_pass, bound = [], [], []
    for r in range(args.rounds):
        relabel(store, "pods", f"pod-{r}", f"x{r}")
        pod_pass.append(timed_pass(manager))
        relabel(store, "persistentvolumeclaims", f"data-{r}", f"x{r}")
        claim_pass.append(timed_pass(manager))
    for r in range(args.rounds):
        put(store, "persistentvolumeclaims", "default", claim(f"new-{r}", f"new-claim-uid-{r}"))
        put(store, "pods", "default", pod(f"new-pod-{r}", f"new-pod-uid-{r}", f"new-{r}"))
        t0 = time.perf_counter()
        passes = 0
        while not store.get("pods", "default", f"new-pod-{r}")["spec"].get("nodeName") and passes < 20:
            manager.run_once(force=passes > 0)
            passes += 1
        bound.append((time.perf_counter() - t0) * 1e3)
        while manager.run_once(force=False):
            pass
    store.close()
    print(f"serve volumes: {args.pods} bound pods with a bound claim each; first pass {first * 1e3:.0f} ms")
    print(f"  pass after a pod's label change: {statistics.median(pod_pass):8.0f} µs")
    print(f"  pass after a claim's label change: {statistics.median(claim_pass):6.0f} µs")
    print(f"  a pod and its WaitForFirstConsumer claim written -> provisioned, bound, pod bound: "
          f"{statistics.median(bound):6.1f} ms")


if __name__ == "__main__":
    main()
