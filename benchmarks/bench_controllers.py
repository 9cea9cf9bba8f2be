"""A pass of `dralloc serve`'s controllers over a cluster that already runs many pods: what one pass costs when
little changed, the common case under a stream of writes (passes run at most every 10 ms, so a pass that
looks at every object again turns a busy cluster's writes into a busy controller thread).

    .venv/bin/python benchmarks/bench_controllers.py [--pods 5000] [--gang 8]

Setup (not timed): one node per 8 pods with a ResourceSlice of 8 GPUs, the pods bound, each with its own
allocated and reserved ResourceClaim, written straight to an in-memory store; then the first pass (it lists
everything). Prints the median µs of one pass after: another client's DeviceClass create (nothing for any
controller), a ResourceClaim create (not reserved: nothing to release) and a pod's label change (its claim
is looked at, and the pods: a changed pod may need claims or scheduling), and of the pass that schedules and
binds a new pod (the scheduler's cache is kept from pass to pass: the pass brings it up to date with what
changed rather than building it from every pod again).

With ``--gang N`` (the gates ``GenericWorkload`` and ``GangScheduling`` on) it also times gangs: each round
writes a PodGroup of ``minCount`` N and its N pods, then runs passes until the controllers settle (the pass that
binds the gang in one pod group cycle, then those that read back its writes: the claims, the bindings and the
group's ``PodGroupScheduled`` condition). Prints the median ms from the gang's writes to settled and how often
the scheduler's cluster side was built over all rounds.

With ``--burst N`` it times instead what the controllers' thread spends per write under a stream of creates, as
``dralloc serve`` takes them: N pods (as kubectl sends them, admitted and defaulted by the API app: about 2 KB
each as stored) are created through the app into a SQLite file, ``--batch`` at a time (30: what a pass takes in
at about 3000 writes/s, passes starting at most every 10 ms), and a pass runs after each batch (the scheduler
off: no pod could fit anywhere). Prints the CPU µs per create of those passes, and of the reads of the change
feed in them (the events since the last pass, which the store answers from the writes it committed lately)::

    .venv/bin/python benchmarks/bench_controllers.py --burst 3000 [--batch 30] [--repeat 3]

``--kind deployments`` or ``--kind jobs`` streams workloads instead of pods: Deployments of 0 replicas (each
gets its ReplicaSet, revision and status) or suspended Jobs (each gets its status and Suspended event), which
make no pods; also the Python steps per create of those passes with ``--steps`` (slow: every step traced).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any

from bench_write_path import KINDS, create_all

from dralloc.scheduler.features import FeatureGates
from dralloc.server import create_app
from dralloc.server.controllers import ControllerManager, Options
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


def gang_rounds(store: SQLStore, manager: ControllerManager, rounds: int, size: int) -> list[float]:
    """ms from writing each gang (a PodGroup and its pods, 100m CPU each) to the controllers settled."""
    settled = []
    for r in range(rounds):
        put(store, "podgroups", "default", {
            "apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup",
            "metadata": {"name": f"gang-{r}", "namespace": "default", "uid": f"gang-uid-{r}", "generation": 1},
            "spec": {"schedulingPolicy": {"gang": {"minCount": size}}}})
        for i in range(size):
            put(store, "pods", "default", {
                "apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": f"gang-{r}-{i}", "namespace": "default", "uid": f"gang-{r}-uid-{i}"},
                "spec": {"schedulingGroup": {"podGroupName": f"gang-{r}"},
                         "containers": [{"name": "main", "image": "x:1", "resources": {"requests": {"cpu": "100m"}}}]}})
        t0 = time.perf_counter()
        dirty = manager.run_once(force=False)
        while dirty:
            dirty = manager.run_once(force=True)
        settled.append((time.perf_counter() - t0) * 1e3)
    return settled


_POD_SPEC: dict[str, Any] = {"containers": [{"name": "main", "image": "registry.example/app:1.0"}]}
_TEMPLATE = {"metadata": {"labels": {"app": "x"}}, "spec": _POD_SPEC}
WORKLOADS = {
    "deployments": ("/apis/apps/v1/namespaces/default/deployments", lambda i: {
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": f"d-{i}"},
        "spec": {"replicas": 0, "selector": {"matchLabels": {"app": "x"}}, "template": _TEMPLATE}}),
    "jobs": ("/apis/batch/v1/namespaces/default/jobs", lambda i: {
        "apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": f"j-{i}"},
        "spec": {"suspend": True, "template": {**_TEMPLATE, "spec": {**_POD_SPEC, "restartPolicy": "Never"}}}}),
}


def burst(creates: int, batch: int, kind: str = "pods", steps: bool = False) -> tuple[float, float]:
    """CPU µs per create of the passes over ``creates`` creates of ``kind``, ``batch`` per pass, and of their feed
    reads (``steps``: the Python steps per create of the passes instead, and 0)."""
    path, make = WORKLOADS.get(kind) or KINDS[kind]
    bodies = [json.dumps(make(i), separators=(",", ":")).encode() for i in range(creates + 5)]
    with tempfile.TemporaryDirectory() as tmp, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        store = SQLiteStore(str(Path(tmp) / "db.sqlite"))
        app = create_app(store, anonymous=True)
        manager = ControllerManager(store, Options(scheduler=False))
        read_feed = store.changes_since
        spent = {"passes": 0, "feed": 0, "steps": 0}

        def count(frame: Any, event: str, arg: Any) -> Any:
            frame.f_trace_opcodes = True
            if event == "opcode":
                spent["steps"] += 1
            return count

        def timed_feed(*args: Any, **kwargs: Any) -> Any:
            t0 = time.thread_time_ns()
            try:
                return read_feed(*args, **kwargs)
            finally:
                spent["feed"] += time.thread_time_ns() - t0

        async def run() -> None:
            store.attach_loop(asyncio.get_running_loop())  # (as the served app: writes commit on the loop)
            await create_all(app, path, bodies[:5])
            manager.run_once(force=True)  # (the first passes list everything)
            manager.run_once(force=True)
            store.changes_since = timed_feed  # type: ignore[method-assign]
            for start in range(5, creates + 5, batch):
                await create_all(app, path, bodies[start:start + batch])
                t0 = time.thread_time_ns()
                if steps:
                    sys.settrace(count)
                manager.run_once(force=False)
                sys.settrace(None)
                spent["passes"] += time.thread_time_ns() - t0

        asyncio.run(run())
        manager.pool.shutdown()
        store.close()
    if steps:
        return spent["steps"] / creates, 0.0
    return spent["passes"] / creates / 1e3, spent["feed"] / creates / 1e3


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pods", type=int, default=5000)
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--gang", type=int, default=0, metavar="N", help="also time gangs of N pods")
    parser.add_argument("--burst", type=int, default=0, metavar="N",
                        help="time the passes over N pod creates instead (CPU µs per create)")
    parser.add_argument("--batch", type=int, default=30, help="(--burst) creates per pass")
    parser.add_argument("--repeat", type=int, default=3, help="(--burst) runs; the median is printed")
    parser.add_argument("--kind", default="pods", choices=["pods", *WORKLOADS], help="(--burst) what is created")
    parser.add_argument("--steps", action="store_true", help="(--burst) Python steps per create instead of CPU time")
    args = parser.parse_args()
    if args.burst and args.steps:
        print(f"controllers under a stream of {args.burst} {args.kind} creates, {args.batch} per pass: "
              f"{burst(args.burst, args.batch, args.kind, steps=True)[0]:.0f} Python steps per create")
        return
    if args.burst:
        runs = [burst(args.burst, args.batch, args.kind) for _ in range(args.repeat)]
        print(f"controllers under a stream of {args.burst} {args.kind} creates, {args.batch} per pass "
              f"(median of {args.repeat}):")
        print(f"  passes: {statistics.median(r[0] for r in runs):6.1f} µs CPU per create")
        print(f"  of which reading the change feed: {statistics.median(r[1] for r in runs):6.1f} µs")
        return
    store = SQLiteStore(":memory:")
    populate(store, args.pods)
    gates = FeatureGates.parse("GenericWorkload=true,GangScheduling=true") if args.gang else FeatureGates()
    manager = ControllerManager(store, Options(feature_gates=gates))
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
    builds = manager.scheduler.live.builds
    gangs = gang_rounds(store, manager, args.rounds, args.gang) if args.gang else []
    gang_builds = manager.scheduler.live.builds - builds
    store.close()
    print(f"controllers: {args.pods} bound pods with a claim each; first pass (lists everything) {first * 1e3:.0f} ms")
    print(f"  pass after a DeviceClass create: {statistics.median(class_pass):8.0f} µs")
    print(f"  pass after a ResourceClaim create: {statistics.median(claim_pass):6.0f} µs")
    print(f"  pass after a pod's label change: {statistics.median(pod_pass):8.0f} µs")
    print(f"  pass that schedules and binds a new pod: {statistics.median(schedule_pass):8.0f} µs")
    if gangs:
        print(f"  a gang of {args.gang} written -> bound, its writes read back: {statistics.median(gangs):8.1f} ms "
              f"(cluster side built {gang_builds} times in {args.rounds} gangs)")


if __name__ == "__main__":
    main()
