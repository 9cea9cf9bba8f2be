"""Scheduler throughput on scheduler_perf's pod-affinity shapes (test/integration/scheduler_perf/affinity).

    .venv/bin/python benchmarks/bench_affinity.py [--scale 0.1] [--case NAME]...

Each case builds its nodes and pods in memory from scheduler_perf's templates, schedules the ``initPods``
(untimed, as upstream), then times one scheduling attempt per ``measurePods`` pod and prints pods/s beside
the floor upstream's CI holds kube-scheduler to for that workload (5000Nodes_*); "cpu p/s" divides by the
process's CPU time instead of the clock (the fairer figure on a busy machine). ``--scale`` multiplies nodes
and pods (0.1 = 500 nodes).

One deliberate difference: scheduler_perf's nodes carry no ``kubernetes.io/hostname`` label (no kubelet runs),
which makes a hostname anti-affinity term select no domain at all; here every node has it, as on a real
cluster, so SchedulingPodAntiAffinity really spreads its pods one per node (the harder case).
"""

from __future__ import annotations

import argparse
import gc
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import msgspec

from dralloc.api.core_v1 import (
    Affinity,
    Container,
    ContainerPort,
    Node,
    NodeAffinity,
    NodeStatus,
    Pod,
    PodAffinity,
    PodSpec,
    ResourceRequirements,
)
from dralloc.api.meta import ObjectMeta
from dralloc.api.quantity import Quantity
from dralloc.scheduler import Scheduler

HOST = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"


def nodes(count: int, zone: bool) -> list[Node]:
    """templates/node-default.yaml (pods 110, cpu 4, memory 32Gi), zone1 when the case labels them."""
    capacity = {"pods": Quantity("110"), "cpu": Quantity("4"), "memory": Quantity("32Gi")}
    out = []
    for i in range(count):
        name = f"scheduler-perf-{i:05d}"
        labels = {HOST: name}
        if zone:
            labels[ZONE] = "zone1"
        out.append(Node(metadata=ObjectMeta(name=name, labels=labels), status=NodeStatus(capacity=capacity)))
    return out


def _term(color: str, key: str) -> dict[str, Any]:
    return {"labelSelector": {"matchLabels": {"color": color}}, "topologyKey": key,
            "namespaces": ["sched-1", "sched-0"]}


def pod(name: str, namespace: str, labels: dict[str, str] | None, affinity: Affinity) -> Pod:
    """The templates' container: pause, port 80, 100m cpu and 500Mi memory requested and limited."""
    amounts = {"cpu": Quantity("100m"), "memory": Quantity("500Mi")}
    container = Container(name="pause", image="registry.k8s.io/pause:3.10.1",
                          ports=[ContainerPort(container_port=80)],
                          resources=ResourceRequirements(requests=amounts, limits=amounts))
    return Pod(metadata=ObjectMeta(name=name, namespace=namespace, labels=labels),
               spec=PodSpec(containers=[container], affinity=affinity))


ANTI = Affinity(pod_anti_affinity=msgspec.convert(
    {"requiredDuringSchedulingIgnoredDuringExecution": [_term("green", HOST)]}, PodAffinity))
AFFINE = Affinity(pod_affinity=msgspec.convert(
    {"requiredDuringSchedulingIgnoredDuringExecution": [_term("blue", ZONE)]}, PodAffinity))
PREFERRED = Affinity(pod_affinity=msgspec.convert({"preferredDuringSchedulingIgnoredDuringExecution": [
    {"weight": 1, "podAffinityTerm": _term("red", HOST)}]}, PodAffinity))
NODE_AFFINITY = Affinity(node_affinity=msgspec.convert(
    {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": ZONE, "operator": "In", "values": ["zone1", "zone2"]}]}]}}, NodeAffinity))


@dataclass
class Case:
    name: str
    nodes: int
    init_pods: int
    measure_pods: int
    zone: bool
    make: Callable[[str, str], Pod]
    floor: int  # upstream's CI threshold, pods/s


CASES = [
    Case("SchedulingPodAntiAffinity", 5000, 1000, 2000, False,
         lambda name, ns: pod(name, ns, {"color": "green"}, ANTI), 60),
    Case("SchedulingPodAffinity", 5000, 5000, 5000, True,
         lambda name, ns: pod(name, ns, {"color": "blue"}, AFFINE), 35),
    Case("SchedulingPreferredPodAffinity", 5000, 5000, 5000, False,
         lambda name, ns: pod(name, ns, {"color": "red"}, PREFERRED), 90),
    Case("SchedulingNodeAffinity", 5000, 5000, 10000, True,
         lambda name, ns: pod(name, ns, None, NODE_AFFINITY), 220),
]


def run(case: Case, scale: float) -> tuple[int, int, float, float, int]:
    """(nodes, measured pods, pods/s by the clock, pods/s by this process's CPU time, pending) for one case."""
    n_nodes = max(1, round(case.nodes * scale))
    n_init = max(1, round(case.init_pods * scale))
    n_measure = max(1, round(case.measure_pods * scale))
    init_ns, measure_ns = ("sched-0", "sched-1") if case.name != "SchedulingNodeAffinity" else ("default", "default")
    sched = Scheduler(nodes(n_nodes, case.zone), [case.make(f"init-{i}", init_ns) for i in range(n_init)])
    sched.schedule()
    measured = [case.make(f"measure-{i}", measure_ns) for i in range(n_measure)]
    gc.collect()
    t0, c0 = time.perf_counter(), time.process_time()
    pending = 0
    for p in measured:
        if sched.schedule_pod(p).status != "scheduled":
            pending += 1
    elapsed, cpu = time.perf_counter() - t0, time.process_time() - c0
    return n_nodes, n_measure, n_measure / elapsed, n_measure / cpu, pending


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scale", type=float, default=1.0, help="multiply nodes and pods (default 1: 5000 nodes)")
    parser.add_argument("--case", action="append", choices=[c.name for c in CASES], default=[])
    args = parser.parse_args()
    print(f"{'case':32} {'nodes':>6} {'pods':>6} {'pods/s':>8} {'cpu p/s':>8} {'floor':>6} {'pending':>8}")
    for case in CASES:
        if args.case and case.name not in args.case:
            continue
        n_nodes, n_pods, rate, cpu_rate, pending = run(case, args.scale)
        print(f"{case.name:32} {n_nodes:>6} {n_pods:>6} {rate:>8.0f} {cpu_rate:>8.0f} {case.floor:>6} {pending:>8}",
              flush=True)


if __name__ == "__main__":
    main()
