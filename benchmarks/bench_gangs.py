"""Gang scheduling throughput: pods/s of pod group cycles with a rack constraint.

    .venv/bin/python benchmarks/bench_gangs.py [--scale F] [--no-share] [--repeat N]

1000 nodes × 8 GPUs (DRA, one ResourceSlice per node) in 125 racks of 8 nodes, and 1000 gangs of 8 pods,
each pod one GPU from a ResourceClaimTemplate, each gang a PodGroup with ``minCount: 8`` and a topology
constraint on the rack label (GenericWorkload, GangScheduling, TopologyAwareWorkloadScheduling on). Every
gang fits in one rack; the racks fill up one after another. Only ``schedule()`` is timed (claims from the
templates are made before, when the pods are admitted). ``--scale 0.1``: a tenth of the nodes, racks and gangs.

``--no-share`` evaluates every rack in every cycle instead of one rack per distinct state of its nodes (the
cost upstream's loop has); with ``--repeat`` both modes alternate run by run.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

from dralloc.api.codec import decode
from dralloc.scheduler import schedule_group
from dralloc.scheduler.features import FeatureGates
from dralloc.simulator import Simulator

RACK = "example.com/rack"
GATES = "GenericWorkload=true,GangScheduling=true,TopologyAwareWorkloadScheduling=true"


def objects(nodes: int, racks: int, gangs: int) -> list[Any]:
    out: list[Any] = []
    per_rack = nodes // racks
    for i in range(nodes):
        name = f"gpu-{i:04d}"
        out.append(decode({"apiVersion": "v1", "kind": "Node",
                           "metadata": {"name": name, "labels": {RACK: f"rack-{i // per_rack:03d}"}},
                           "status": {"allocatable": {"cpu": "128", "memory": "1Ti", "pods": "110"}}}))
        out.append(decode({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
                           "metadata": {"name": f"{name}-gpu"},
                           "spec": {"driver": "gpu.example.com", "nodeName": name,
                                    "pool": {"name": name, "generation": 1, "resourceSliceCount": 1},
                                    "devices": [{"name": f"gpu-{d}"} for d in range(8)]}}))
    out.append(decode({"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu"},
                       "spec": {"selectors": [{"cel": {"expression": 'device.driver == "gpu.example.com"'}}]}}))
    out.append(decode({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
                       "metadata": {"name": "one-gpu", "namespace": "default"},
                       "spec": {"spec": {"devices": {"requests": [{"name": "gpu",
                                                                   "exactly": {"deviceClassName": "gpu"}}]}}}}))
    for g in range(gangs):
        group = f"train-{g:04d}"
        out.append(decode({"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup",
                           "metadata": {"name": group, "namespace": "default"},
                           "spec": {"schedulingPolicy": {"gang": {"minCount": 8}},
                                    "schedulingConstraints": {"topology": [{"key": RACK}]}}}))
        for p in range(8):
            out.append(decode({"apiVersion": "v1", "kind": "Pod",
                               "metadata": {"name": f"{group}-{p}", "namespace": "default"},
                               "spec": {"schedulingGroup": {"podGroupName": group},
                                        "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}],
                                        "containers": [{"name": "w", "resources": {"requests": {"cpu": "4"}}}]}}))
    return out


def run(objs: list[Any], share: bool) -> tuple[int, int, float]:
    sched = Simulator.from_objects(objs, feature_gates=FeatureGates.parse(GATES))
    original = schedule_group.PodGroupCycle._signatures
    if not share:
        schedule_group.PodGroupCycle._signatures = lambda self, placements, pods: None  # type: ignore[method-assign]
    try:
        start = time.perf_counter()
        result = sched.schedule()
        elapsed = time.perf_counter() - start
    finally:
        schedule_group.PodGroupCycle._signatures = original  # type: ignore[method-assign]
    return len(result.scheduled), len(result.pods), elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument("--no-share", action="store_true", help="evaluate every rack in every cycle")
    parser.add_argument("--repeat", type=int, default=1, help="runs per mode, shared and not, alternating")
    args = parser.parse_args()
    nodes, racks, gangs = (max(1, int(n * args.scale)) for n in (1000, 125, 1000))
    objs = objects(nodes, racks, gangs)
    modes = [False] if args.no_share else ([True, False] if args.repeat > 1 else [True])
    print(f"{nodes} nodes x 8 GPUs in {racks} racks, {gangs} gangs x 8 one-GPU pods")
    for _ in range(args.repeat):
        for share in modes:
            scheduled, total, elapsed = run(objs, share)
            label = "one rack per node state" if share else "every rack"
            print(f"  {label:24s} {scheduled}/{total} scheduled in {elapsed:6.2f} s: {total / elapsed:7.0f} pods/s")


if __name__ == "__main__":
    main()
