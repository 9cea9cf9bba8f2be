"""Run every allocator perf scenario of a directory and print our search steps and µs per allocate beside
upstream Go's.

    .venv/bin/python benchmarks/bench_allocator.py --perf DIR [SCENARIO...] [--iterations N]

The directory holds one ``<scenario>.yaml`` per scenario (DeviceClasses, ResourceSlices, ResourceClaims and
one Node: the pending claims are allocated together on it; scheduler_perf's DRA shapes) and
``oracle-timings.json``: per scenario, upstream Go's ``allocate_one_invocations``, ``fresh_us_median`` and
``reused_us_median`` measured on the same files. fresh = a new Allocator per call (built from the loaded
objects) + allocate; reused = one Allocator.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_PERF = ROOT.parent / "shared" / "perf"  # (a sibling directory of scenarios, when there is one)
sys.path.insert(0, str(ROOT / "src"))


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("scenarios", nargs="*")
    parser.add_argument("--iterations", type=int, default=0)
    parser.add_argument("--perf", type=Path, default=DEFAULT_PERF, metavar="DIR",
                        help="the scenarios and oracle-timings.json")
    args = parser.parse_args()
    if not (args.perf / "oracle-timings.json").is_file():
        parser.error(f"--perf {args.perf}: no oracle-timings.json there (a directory of scenarios is needed)")
    perf: Path = args.perf
    from dralloc.allocator.benchmark import measure
    from dralloc.allocator.inputs import load_inputs, pick_nodes

    go = json.loads((perf / "oracle-timings.json").read_text())
    names = args.scenarios or sorted(k for k in go if not k.startswith("_"))
    header = (f"{'scenario':36} {'status':14} {'steps':>7} {'Go steps':>8} {'fresh µs':>11} {'Go fresh':>11} "
              f"{'reused µs':>11} {'Go reused':>11}")
    print(header)
    print("-" * len(header))
    for name in names:
        inputs, _ = load_inputs([str(perf / f"{name}.yaml")])
        node = pick_nodes(inputs, None)[0]
        res = measure(inputs, node, args.iterations)
        g = go.get(name, {})
        print(f"{name:36} {res['status']:14} {res['steps'] or 0:>7} {g.get('allocate_one_invocations', 0):>8} "
              f"{res['fresh_us']:>11.1f} {g.get('fresh_us_median', 0):>11.1f} "
              f"{res['reused_us']:>11.1f} {g.get('reused_us_median', 0):>11.1f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
