"""Workload-aware preemption throughput: how long a high-priority gang takes to preempt its way in.

    .venv/bin/python benchmarks/bench_gang_preemption.py [--nodes N] [--gangs G] [--mode PodGroup|Pod] [--repeat R]

``--nodes`` nodes of 8 CPUs, each full with a running low-priority gang of 8 one-CPU pods (one PodGroup per
node, priority 1, ``disruptionMode`` as ``--mode``), then ``--gangs`` pending gangs of 8 one-CPU pods at
priority 10 (GenericWorkload, GangScheduling, WorkloadAwarePreemption on). Every pending gang fails its first
cycle, preempts (the whole cluster is its domain: every lower-priority unit is a candidate, each reprieve a
group cycle), then binds once its victims are gone. Prints the pods bound per second of ``schedule()`` and the
seconds per preempting gang; ``--repeat`` runs it that many times.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

from dralloc.api.codec import decode
from dralloc.scheduler.features import FeatureGates
from dralloc.simulator import Simulator

GATES = "GenericWorkload=true,GangScheduling=true,WorkloadAwarePreemption=true"


def _group(name: str, priority: int, mode: str | None) -> Any:
    spec: dict[str, Any] = {"schedulingPolicy": {"gang": {"minCount": 8}}, "priority": priority}
    if mode is not None:
        spec["disruptionMode"] = mode
    return decode({"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup",
                   "metadata": {"name": name, "namespace": "default"}, "spec": spec})


def _pod(name: str, group: str, priority: int, node: str | None) -> Any:
    spec: dict[str, Any] = {"priority": priority, "schedulingGroup": {"podGroupName": group},
                            "containers": [{"name": "w", "resources": {"requests": {"cpu": "1"}}}]}
    if node is not None:
        spec["nodeName"] = node
    return decode({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
                   "spec": spec})


def objects(nodes: int, gangs: int, mode: str) -> list[Any]:
    out: list[Any] = []
    for i in range(nodes):
        name = f"node-{i:04d}"
        out.append(decode({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name},
                           "status": {"allocatable": {"cpu": "8", "memory": "64Gi", "pods": "110"}}}))
        out.append(_group(f"low-{i:04d}", 1, mode))
        out.extend(_pod(f"low-{i:04d}-{p}", f"low-{i:04d}", 1, name) for p in range(8))
    for g in range(gangs):
        out.append(_group(f"high-{g:04d}", 10, None))
        out.extend(_pod(f"high-{g:04d}-{p}", f"high-{g:04d}", 10, None) for p in range(8))
    return out


def run(objs: list[Any]) -> tuple[int, int, float]:
    sched = Simulator.from_objects(objs, feature_gates=FeatureGates.parse(GATES))
    start = time.perf_counter()
    result = sched.schedule()
    elapsed = time.perf_counter() - start
    return len(result.scheduled), len(result.evicted), elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=100)
    parser.add_argument("--gangs", type=int, default=10)
    parser.add_argument("--mode", choices=("PodGroup", "Pod"), default="PodGroup")
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()
    objs = objects(args.nodes, args.gangs, args.mode)
    for _ in range(args.repeat):
        bound, evicted, elapsed = run(objs)
        print(f"{args.nodes} nodes, {args.gangs} gangs ({args.mode} mode victims): {bound} pods bound, "
              f"{evicted} evicted in {elapsed:.2f} s: {bound / elapsed:.0f} pods/s, "
              f"{elapsed / max(args.gangs, 1):.3f} s per preempting gang")


if __name__ == "__main__":
    main()
