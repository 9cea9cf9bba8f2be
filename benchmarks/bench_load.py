"""Loading cluster dumps: parse, strict checks, decode and validation, as ``dralloc validate`` runs them.

    .venv/bin/python benchmarks/bench_load.py [--sizes small,large] [--yaml] [--repeat 3]

Writes the dumps first (benchmarks/cluster_dumps.py, cached in the system temp directory):

* small: 500 dra-example nodes (8 GPUs each) and 5000 pods;
* large: 1000 gpu-h100 nodes (8 H100s with every MIG placement, 152 devices per node) and 22000 pods.

For each it prints the median of ``--repeat`` runs of: parsing with the duplicate-key check, the unknown-field
check, decoding into models, kube-apiserver validation, and the whole ``codec.load_checked`` + validation.
``--yaml`` also times the same dump written as YAML.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

sys.path.insert(0, str(Path(__file__).parent))

import cluster_dumps

from dralloc.api import codec, strict
from dralloc.validation import validate

SIZES = {"small": (500, 5000, "dra-example"), "large": (1000, 22000, "gpu-h100")}


def dump_file(size: str, as_yaml: bool) -> Path:
    nodes, pods, profile = SIZES[size]
    base = Path(tempfile.gettempdir()) / f"dralloc-bench-{profile}-{nodes}n-{pods}p"
    path = base.with_suffix(".json")
    if not path.exists():
        cluster_dumps.write(path, nodes, pods, profile)
    if as_yaml:
        yaml_path = base.with_suffix(".yaml")
        if not yaml_path.exists():
            data = json.loads(path.read_bytes())
            yaml_path.write_text(yaml.dump(data, Dumper=yaml.CSafeDumper, default_flow_style=False))
        return yaml_path
    return path


def timed(fn: Callable[[], Any], repeat: int) -> tuple[tuple[float, float], Any]:
    """Median wall-clock and CPU seconds of ``repeat`` runs (CPU time is what to compare on a shared machine)."""
    walls, cpus, result = [], [], None
    for _ in range(repeat):
        w0, c0 = time.perf_counter(), time.process_time()
        result = fn()
        walls.append(time.perf_counter() - w0)
        cpus.append(time.process_time() - c0)
    return (statistics.median(walls), statistics.median(cpus)), result


def bench(path: Path, repeat: int) -> None:
    mb = path.stat().st_size / 1e6
    def parse() -> list[codec.Document]:
        with codec.cyclic_gc_paused():  # as load_checked does
            return codec.read_documents(path, check_duplicates=True)

    def decode() -> list[Any]:
        with codec.cyclic_gc_paused():
            return [codec.decode(i) for i in items]

    parse_s, docs = timed(parse, repeat)
    items = [d.data for doc in docs for d in (codec._list_items(doc) or [doc])]
    strict_s, _ = timed(lambda: [strict.unknown_fields(i) for i in items], repeat)
    decode_s, objects = timed(decode, repeat)
    validate_s, _ = timed(lambda: [validate(o) for o in objects], repeat)

    def whole() -> int:  # what dralloc validate does
        with codec.cyclic_gc_paused():
            loaded, _ = codec.load_checked([path])
            return sum(len(validate(o)) for o in loaded)

    whole_s, errors = timed(whole, repeat)
    print(f"{path.name}: {mb:.1f} MB, {len(objects)} objects, {errors} validation errors")
    print(f"  {'':<26}{'wall':>8}  {'cpu':>8}")
    for label, (wall, cpu) in (("parse + duplicate keys", parse_s), ("unknown fields", strict_s),
                               ("decode", decode_s), ("validate", validate_s),
                               ("load_checked + validate", whole_s)):
        print(f"  {label:<26}{wall:8.2f}  {cpu:8.2f} s")
    print(f"  {'throughput (cpu)':<26}{mb / whole_s[1]:8.1f} MB/s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="small,large")
    parser.add_argument("--yaml", action="store_true", help="also time the dumps written as YAML")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    for size in args.sizes.split(","):
        bench(dump_file(size, False), args.repeat)
        if args.yaml:
            bench(dump_file(size, True), args.repeat)


if __name__ == "__main__":
    main()
