"""µs per patch applied on the write path (before validation and storage): a label added by a JSON merge patch
and by a strategic merge patch (what ``kubectl label`` sends for built-in kinds), a ResourceClaim consumer
added to ``status.reservedFor`` by a strategic merge patch (merged by uid), a Pod's image changed by a strategic
merge patch (containers merged by name), and a JSON patch replacing one label, on the objects of
bench_managed_fields (a ResourceSlice with 8 devices, a Pod with 2 containers).

    .venv/bin/python benchmarks/bench_patch.py [--repeat 5] [--number 2000]

Prints the median of the repeats.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import timeit
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "benchmarks"))


def per_call(fn: Any, number: int, repeat: int) -> float:
    return statistics.median(timeit.repeat(fn, number=number, repeat=repeat)) / number * 1e6


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--number", type=int, default=2000)
    args = parser.parse_args()
    from bench_managed_fields import objects

    from dralloc.server.apply.json_patch import json_patch, merge_patch
    from dralloc.server.apply.strategic_merge import strategic_merge_patch

    made = objects()
    slice_, pod = made["ResourceSlice (8 devices)"], made["Pod (2 containers)"]
    claim = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": dict(slice_["metadata"]),
             "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu"}}]}},
             "status": {"reservedFor": [{"resource": "pods", "name": f"p{i}", "uid": f"u{i}"} for i in range(4)]}}
    label = {"metadata": {"labels": {"tier": "gold"}}}
    cases = {
        "merge patch, slice label": lambda: merge_patch(slice_, label),
        "strategic, slice label": lambda: strategic_merge_patch(slice_, label, "ResourceSlice"),
        "strategic, claim reservedFor": lambda: strategic_merge_patch(
            claim, {"status": {"reservedFor": [{"resource": "pods", "name": "p9", "uid": "u9"}]}}, "ResourceClaim"),
        "strategic, pod image": lambda: strategic_merge_patch(
            pod, {"spec": {"containers": [{"name": "app", "image": "registry.example.com/app:2.0"}]}}, "Pod"),
        "json patch, slice label": lambda: json_patch(
            slice_, [{"op": "add", "path": "/metadata/labels", "value": {"tier": "gold"}}]),
    }
    print(f"{'patch':32} {'µs':>8}")
    for name, fn in cases.items():
        print(f"{name:32} {per_call(fn, args.number, args.repeat):8.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
