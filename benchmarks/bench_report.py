"""HTML report benchmark: building the report's data and rendering the page for growing clusters.

    .venv/bin/python benchmarks/bench_report.py [--nodes 100,1000,5000]

The cluster is examples/cluster/ with N more nodes like gpu-node-a (2 H100s with MIG partitions, 26 devices
each), after its batch is scheduled. Prints seconds for the simulation (cloning the nodes and scheduling), for
the report's data (CEL class and request matching, counters, folding) and for rendering, and the page size: the
heat map and the tables fold identical nodes and pools, so the page stays small.
"""

from __future__ import annotations

import argparse
import statistics
import time
import warnings
from pathlib import Path

from dralloc.api import codec
from dralloc.scheduler import Scheduler
from dralloc.simulator.report import render_data
from dralloc.simulator.report_data import build_report_data

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "cluster"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--nodes", default="100,1000,5000", help="comma-separated counts of added GPU nodes")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        objects = codec.load(EXAMPLE)
    print(f"{'GPU nodes':>9} {'devices':>8} {'simulate s':>10} {'data s':>8} {'render s':>9} {'page KiB':>9} "
          f"{'heat rows':>9}")
    for extra in (int(n) for n in args.nodes.split(",")):
        t0 = time.perf_counter()
        sched = Scheduler.from_objects(objects)
        sched.add_nodes(extra, "gpu-node-a")
        result = sched.schedule()
        simulate = time.perf_counter() - t0
        data_times, render_times = [], []
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            data = build_report_data(sched, result)
            t1 = time.perf_counter()
            page = render_data(data)
            t2 = time.perf_counter()
            data_times.append(t1 - t0)
            render_times.append(t2 - t1)
        devices = sum(len(s.spec.devices or ()) for s in sched.snapshot.slices)
        print(f"{extra + 2:>9} {devices:>8} {simulate:>10.2f} {statistics.median(data_times):>8.3f} "
              f"{statistics.median(render_times):>9.3f} {len(page.encode()) / 1024:>9.0f} {len(data.heatmap.rows):>9}")


if __name__ == "__main__":
    main()
