"""PodTopologySpread throughput on scheduler_perf's topology_spreading shapes, beside upstream's CI floors.

    .venv/bin/python benchmarks/bench_topology_spread.py [--scale F] [--case NAME]...

The three performance workloads of ``test/integration/scheduler_perf/topology_spreading``, at 5000 nodes
(``--scale 0.1``: 500 nodes and a tenth of the pods):

* TopologySpreading/5000Nodes_5000Pods: 5000 plain pods first, then 5000 measured pods with a DoNotSchedule
  zone constraint (maxSkew 5, ``color: blue``). Floor 460 pods/s.
* PreferredTopologySpreading/5000Nodes_5000Pods: the same with ScheduleAnyway. Floor 340 pods/s.
* DefaultTopologySpreading/5000Nodes_50000Pods: 5000 plain pods, a Service selecting ``app: scheduler-perf``,
  then 50 000 measured pods with that label and no constraints (the system defaults spread them). Floor 160.

Nodes are ``node-default.yaml`` (4 cpu, 32Gi, 110 pods) with ``topology.kubernetes.io/zone`` drawn from
moon-1..3 (seeded), no hostname label, as scheduler_perf creates them. Only the measured pods are timed,
scheduled one attempt each in creation order; pods/s per second of wall time and of the process's CPU.
"""

from __future__ import annotations

import argparse
import random
import time
from typing import Any

from dralloc.api.codec import decode
from dralloc.api.core_v1 import Node, Pod
from dralloc.scheduler import Scheduler

ZONE = "topology.kubernetes.io/zone"
FLOORS = {"TopologySpreading": 460, "PreferredTopologySpreading": 340, "DefaultTopologySpreading": 160}
# (init pods, measured pods) at 5000 nodes
SHAPES = {"TopologySpreading": (5000, 5000), "PreferredTopologySpreading": (5000, 5000),
          "DefaultTopologySpreading": (5000, 50000)}

RESOURCES = {"limits": {"cpu": "100m", "memory": "500Mi"}, "requests": {"cpu": "100m", "memory": "500Mi"}}


def nodes(count: int, seed: int) -> list[Node]:
    rng = random.Random(seed)
    return [decode({
        "apiVersion": "v1", "kind": "Node", "metadata": {"name": f"scheduler-perf-{i:05d}", "labels": {ZONE: rng.choice(["moon-1", "moon-2", "moon-3"])}},
        "status": {"capacity": {"pods": "110", "cpu": "4", "memory": "32Gi"}},
    }) for i in range(count)]


def _pod(name: str, namespace: str, labels: dict[str, str] | None, resources: bool,
         spread: str | None = None) -> Pod:
    container: dict[str, Any] = {"name": "pause", "image": "registry.k8s.io/pause:3.10.1"}
    if resources:
        container["ports"] = [{"containerPort": 80}]
        container["resources"] = RESOURCES
    spec: dict[str, Any] = {"containers": [container]}
    if spread is not None:
        spec["topologySpreadConstraints"] = [{"maxSkew": 5, "topologyKey": ZONE, "whenUnsatisfiable": spread,
                                              "labelSelector": {"matchLabels": {"color": "blue"}}}]
    meta: dict[str, Any] = {"name": name, "namespace": namespace}
    if labels:
        meta["labels"] = labels
    out: Pod = decode({"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec})
    return out


def run_case(case: str, scale: float, seed: int) -> tuple[int, int, float, float, int]:
    init, measured = (max(1, int(n * scale)) for n in SHAPES[case])
    cluster = nodes(max(3, int(5000 * scale)), seed)
    services: list[Any] = []
    if case == "DefaultTopologySpreading":
        services.append(decode({"apiVersion": "v1", "kind": "Service",
                                "metadata": {"name": "service-0", "namespace": "service-ns"},
                                "spec": {"selector": {"app": "scheduler-perf"}, "ports": [{"port": 80}]}}))
    extra: dict[str, Any] = {"services": services} if services else {}
    sched = Scheduler(cluster, [_pod(f"init-{i}", "init", None, True) for i in range(init)], seed=seed, **extra)
    sched.schedule()
    if case == "DefaultTopologySpreading":
        pods = [_pod(f"pod-{i}", "service-ns", {"app": "scheduler-perf"}, False) for i in range(measured)]
    else:
        when = "DoNotSchedule" if case == "TopologySpreading" else "ScheduleAnyway"
        pods = [_pod(f"spreading-pod-{i}", "measured", {"color": "blue"}, True, when) for i in range(measured)]
    start, cpu = time.perf_counter(), time.process_time()
    pending = 0
    for p in pods:
        if sched.schedule_pod(p).status != "scheduled":
            pending += 1
    elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
    return len(cluster), measured, elapsed, cpu, pending


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scale", type=float, default=1.0, help="fraction of scheduler_perf's sizes (default 1)")
    parser.add_argument("--case", action="append", choices=sorted(SHAPES), default=[])
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    # pods/s per second of wall time, and per second of the process's CPU (what a busy machine leaves)
    print(f"{'case':28} {'nodes':>6} {'pods':>6} {'sched s':>8} {'pods/s':>8} {'cpu pods/s':>10} {'floor':>6} "
          f"{'pending':>8}")
    for case in args.case or list(SHAPES):
        n, pods, elapsed, cpu, pending = run_case(case, args.scale, args.seed)
        print(f"{case:28} {n:>6} {pods:>6} {elapsed:>8.2f} {pods / elapsed:>8.0f} {pods / cpu:>10.0f} "
              f"{FLOORS[case]:>6} {pending:>8}", flush=True)


if __name__ == "__main__":
    main()
