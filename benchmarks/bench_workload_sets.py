"""Expanding JobSets and LeaderWorkerSets into pods, beside the same pods from plain Jobs and StatefulSets.

    .venv/bin/python benchmarks/bench_workload_sets.py [--jobs 125] [--pods 8] [--repeat 3] [--simulate]

Times ``sort_objects`` (the controllers' expansion, names and UIDs drawn from the seed) on ``--jobs`` × ``--pods``
pods made four ways: plain Indexed Jobs; one JobSet of ``--jobs`` replicas of an Indexed Job; the same JobSet
with exclusive topology (the pod webhook's affinity terms); a LeaderWorkerSet of ``--jobs`` groups of size
``--pods``. The runs alternate shape by shape, ``--repeat`` times; the best is printed with pods/s.

``--simulate`` also schedules the exclusive JobSet and the plain Jobs on ``--jobs`` racks of 2 nodes (pods/s
of the whole simulation: the exclusive pods carry required pod affinity and anti-affinity).
"""

from __future__ import annotations

import argparse
import time
from typing import Any

from dralloc.api.codec import decode
from dralloc.controllers.names import NameGenerator
from dralloc.simulator import Simulator
from dralloc.simulator.loading import sort_objects

POD_SPEC = {"containers": [{"name": "w", "resources": {"requests": {"cpu": "1", "memory": "1Gi"}}}]}


def plain_jobs(jobs: int, pods: int) -> list[Any]:
    return [decode({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": f"train-w-{j}", "namespace": "default"},
                    "spec": {"parallelism": pods, "completions": pods, "completionMode": "Indexed",
                             "template": {"spec": {**POD_SPEC, "restartPolicy": "OnFailure"}}}})
            for j in range(jobs)]


def jobset(jobs: int, pods: int, exclusive: bool = False) -> list[Any]:
    annotations = {"alpha.jobset.sigs.k8s.io/exclusive-topology": "rack"} if exclusive else {}
    return [decode({"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet",
                    "metadata": {"name": "train", "namespace": "default", "annotations": annotations},
                    "spec": {"replicatedJobs": [{"name": "w", "replicas": jobs, "template": {"spec": {
                        "parallelism": pods, "completions": pods, "template": {"spec": POD_SPEC}}}}]}})]


def leaderworkerset(groups: int, size: int) -> list[Any]:
    return [decode({"apiVersion": "leaderworkerset.x-k8s.io/v1", "kind": "LeaderWorkerSet",
                    "metadata": {"name": "serve", "namespace": "default"},
                    "spec": {"replicas": groups, "leaderWorkerTemplate": {"size": size,
                                                                          "workerTemplate": {"spec": POD_SPEC}}}})]


def racks(count: int) -> list[Any]:
    return [decode({"apiVersion": "v1", "kind": "Node",
                    "metadata": {"name": f"n{r}-{i}", "labels": {"rack": f"r{r}", "kubernetes.io/hostname": f"n{r}-{i}"}},
                    "status": {"allocatable": {"cpu": "8", "memory": "64Gi", "pods": "110"}}})
            for r in range(count) for i in range(2)]


def expand_seconds(objects: list[Any]) -> tuple[float, int]:
    start = time.perf_counter()
    out = sort_objects(objects, NameGenerator(0))
    return time.perf_counter() - start, len(out.pods)


def simulate_seconds(objects: list[Any]) -> tuple[float, int]:
    start = time.perf_counter()
    sim = Simulator.from_objects(objects)
    sim.run()
    return time.perf_counter() - start, sum(1 for r in sim.results.values() if r.node)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=125)
    parser.add_argument("--pods", type=int, default=8)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--simulate", action="store_true")
    args = parser.parse_args()
    shapes = {"plain Jobs": plain_jobs(args.jobs, args.pods), "JobSet": jobset(args.jobs, args.pods),
              "JobSet, exclusive": jobset(args.jobs, args.pods, exclusive=True),
              "LeaderWorkerSet": leaderworkerset(args.jobs, args.pods)}
    best: dict[str, tuple[float, int]] = {}
    for _ in range(args.repeat):
        for name, objects in shapes.items():
            seconds, pods = expand_seconds(objects)
            if name not in best or seconds < best[name][0]:
                best[name] = (seconds, pods)
    print(f"expansion of {args.jobs} x {args.pods} pods (best of {args.repeat}):")
    for name, (seconds, pods) in best.items():
        print(f"  {name:18} {pods:6d} pods  {seconds * 1000:8.1f} ms  {pods / seconds:9.0f} pods/s")
    if args.simulate:
        nodes = racks(args.jobs)
        runs = {"plain Jobs": nodes + shapes["plain Jobs"], "JobSet, exclusive": nodes + shapes["JobSet, exclusive"]}
        print(f"simulation on {args.jobs} racks of 2 nodes:")
        for name, objects in runs.items():
            seconds, bound = simulate_seconds(objects)
            print(f"  {name:18} {bound:6d} bound {seconds:8.2f} s  {bound / seconds:9.0f} pods/s")


if __name__ == "__main__":
    main()
