"""Run every perf scenario of ../shared/perf and print our search steps and µs per allocate beside upstream Go's.

    .venv/bin/python benchmarks/bench_allocator.py [SCENARIO...] [--iterations N]

fresh = a new Allocator per call (built from the loaded objects) + allocate; reused = one Allocator.
Go's figures are the medians of oracle-timings.json (experimental allocator, same kind of machine).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PERF = ROOT.parent / "shared" / "perf"
sys.path.insert(0, str(ROOT / "src"))


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("scenarios", nargs="*")
    parser.add_argument("--iterations", type=int, default=0)
    args = parser.parse_args()
    from dralloc.allocator.benchmark import measure
    from dralloc.allocator.inputs import load_inputs, pick_nodes

    go = json.loads((PERF / "oracle-timings.json").read_text())
    names = args.scenarios or sorted(k for k in go if not k.startswith("_"))
    header = (f"{'scenario':36} {'status':14} {'steps':>7} {'Go steps':>8} {'fresh µs':>11} {'Go fresh':>11} "
              f"{'reused µs':>11} {'Go reused':>11}")
    print(header)
    print("-" * len(header))
    for name in names:
        inputs, _ = load_inputs([str(PERF / f"{name}.yaml")])
        node = pick_nodes(inputs, None)[0]
        res = measure(inputs, node, args.iterations)
        g = go.get(name, {})
        print(f"{name:36} {res['status']:14} {res['steps'] or 0:>7} {g.get('allocate_one_invocations', 0):>8} "
              f"{res['fresh_us']:>11.1f} {g.get('fresh_us_median', 0):>11.1f} "
              f"{res['reused_us']:>11.1f} {g.get('reused_us_median', 0):>11.1f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
