"""Load and validate a generated 5000-node cluster dump (5000 ResourceSlices × 8 GPUs).

    .venv/bin/python benchmarks/bench_validate.py [--nodes N]

Prints the time to load (JSON → typed objects) and to validate, and what dominates the validation.
The dump is written to a temporary file, in the shape `kubectl get resourceslices -o json` prints.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import pstats
import tempfile
import time
from pathlib import Path

from dralloc.api.codec import load
from dralloc.validation import validate


def make_dump(nodes: int) -> dict:
    items = []
    for n in range(nodes):
        node = f"node-{n:04d}"
        devices = [{
            "name": f"gpu-{g}",
            "attributes": {
                "productName": {"string": "NVIDIA H100 80GB HBM3"}, "architecture": {"string": "Hopper"},
                "driverVersion": {"version": "560.35.3"}, "cudaComputeCapability": {"version": "9.0.0"},
                "uuid": {"string": f"GPU-{n:08x}-{g:04x}-4c5e-8a7f-0b2c3d4e5f00"}, "index": {"int": g},
                "type": {"string": "gpu"}, "brand": {"string": "Nvidia"}},
            "capacity": {"memory": {"value": "80Gi"}, "multiprocessors": {"value": "132"}},
        } for g in range(8)]
        items.append({"metadata": {"name": f"{node}-gpu.nvidia.com-abcde"},
                      "spec": {"driver": "gpu.nvidia.com", "nodeName": node,
                               "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
                               "devices": devices}})
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSliceList", "items": items}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--profile", action="store_true", help="print the top functions of the validation")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "dump.json"
        path.write_text(json.dumps(make_dump(args.nodes)))
        size = path.stat().st_size
        t0 = time.perf_counter()
        objects = load(path)
        t1 = time.perf_counter()
        errors = sum(len(validate(o)) for o in objects)
        t2 = time.perf_counter()
    print(f"dump: {args.nodes} ResourceSlices, {args.nodes * 8} devices, {size / 1e6:.1f} MB")
    print(f"load:     {t1 - t0:6.3f} s")
    print(f"validate: {t2 - t1:6.3f} s  ({(t2 - t1) / len(objects) * 1e6:.0f} µs per slice, {errors} errors)")
    print(f"total:    {t2 - t0:6.3f} s")
    if args.profile:
        prof = cProfile.Profile()
        prof.enable()
        for o in objects:
            validate(o)
        prof.disable()
        pstats.Stats(prof).sort_stats("tottime").print_stats(8)


if __name__ == "__main__":
    main()
