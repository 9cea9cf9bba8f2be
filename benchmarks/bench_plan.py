"""Capacity planning cost: a scale-up plan for P pending one-GPU pods against an N-node dump, and a
scale-down plan over N nodes, and how both grow.

    .venv/bin/python benchmarks/bench_plan.py [--quick] [--nodes N] [--pods P]

Scale up: N busy CPU nodes (8 CPUs, 6 requested by a running ReplicaSet pod each) and P pending pods that
each want one GPU of the dra-example-driver's template node (8 GPUs); the answer is ceil(P / 8) nodes.
Scale down: N nodes of which a quarter run one small ReplicaSet pod (the rest are loaded), so a quarter
are candidates and each needs a simulation.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

from dralloc.api import codec
from dralloc.scheduler import Scheduler
from dralloc.simulator.planner import PlanSettings, plan_scale_down, plan_scale_up
from dralloc.simulator.planner.templates import template_from_objects

SETTINGS = PlanSettings(Scheduler)
OWNER = [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-abc", "uid": "rs-uid", "controller": True}]


def _node(name: str, cpu: str = "8") -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
            "status": {"allocatable": {"cpu": cpu, "memory": "32Gi", "pods": "110"}}}


def _pod(name: str, cpu: str, node: str | None = None, claim: bool = False) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}]}
    if node:
        spec["nodeName"] = node
    if claim:
        spec["resourceClaims"] = [{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}]
    return {"apiVersion": "v1", "kind": "Pod", "spec": spec,
            "metadata": {"name": name, "namespace": "default", "ownerReferences": OWNER}}


GPU_DOCS: list[dict[str, Any]] = [
    {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu"},
     "spec": {"selectors": [{"cel": {"expression": 'device.driver == "gpu.example.com"'}}]}},
    {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
     "metadata": {"name": "one-gpu", "namespace": "default"},
     "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu"}}]}}}},
]


def scale_up_case(nodes: int, pods: int) -> tuple[list[Any], Any]:
    docs = list(GPU_DOCS)
    for i in range(nodes):
        docs.append(_node(f"cpu-{i:05d}"))
        docs.append(_pod(f"busy-{i:05d}", "6", node=f"cpu-{i:05d}"))
    docs.extend(_pod(f"train-{i:05d}", "500m", claim=True) for i in range(pods))
    gpu_node = _node("gpu-template", cpu="64")
    gpu_slice = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "gpu-template-gpu"},
                 "spec": {"driver": "gpu.example.com", "nodeName": "gpu-template",
                          "pool": {"name": "gpu-template", "generation": 1, "resourceSliceCount": 1},
                          "devices": [{"name": f"gpu-{i}"} for i in range(8)]}}
    template = template_from_objects("gpu", [codec.decode(gpu_node), codec.decode(gpu_slice)])
    return [codec.decode(d) for d in docs], template


def scale_down_case(nodes: int) -> list[Any]:
    docs = []
    for i in range(nodes):
        docs.append(_node(f"n-{i:05d}"))
        docs.append(_pod(f"w-{i:05d}", "1" if i % 4 == 0 else "6", node=f"n-{i:05d}"))
    return [codec.decode(d) for d in docs]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--nodes", type=int, default=0)
    ap.add_argument("--pods", type=int, default=0)
    args = ap.parse_args()
    sizes = [(args.nodes, args.pods)] if args.nodes else \
        ([(100, 500), (200, 1000)] if args.quick else [(100, 500), (200, 1000), (500, 2500), (1000, 5000)])
    print("scale up: N busy CPU nodes, P pending one-GPU pods, 8-GPU template")
    for n, p in sizes:
        objects, template = scale_up_case(n, p)
        start = time.perf_counter()
        plan = plan_scale_up(objects, [template], settings=SETTINGS)
        took = time.perf_counter() - start
        print(f"  nodes={n:5d} pods={p:5d}: add {plan.add} unschedulable={plan.unschedulable} in {took:6.1f} s")
    print("scale down: N nodes, a quarter lightly used")
    for n, _ in sizes:
        objects = scale_down_case(n)
        start = time.perf_counter()
        down = plan_scale_down(objects, settings=SETTINGS)
        took = time.perf_counter() - start
        print(f"  nodes={n:5d}: {len(down.removable)} removable, {len(down.blocked)} blocked in {took:6.1f} s")


if __name__ == "__main__":
    main()
