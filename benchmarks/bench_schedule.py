"""Scheduler throughput on scheduler_perf's DRA shapes, and how it grows with the cluster.

    .venv/bin/python benchmarks/bench_schedule.py [--quick]

Prints pods/s for each built-in scenario (``dralloc bench schedule``), then SchedulingWithResourceClaimTemplate
at 500, 1000, 2000 and 5000 nodes (10 devices per node, pods = 10 × nodes) so the growth is visible, then
a GPU cluster with MIG partitions if the generator is available.
"""

from __future__ import annotations

import subprocess
import sys


def main() -> None:
    quick = "--quick" in sys.argv
    cmd = [sys.executable, "-m", "dralloc", "bench", "schedule"]
    subprocess.run(cmd, check=True)
    print()
    print("growth: SchedulingWithResourceClaimTemplate, 10 devices per node, 10 pods per node")
    for scale in (1, 2) if quick else (1, 2, 4, 10):
        subprocess.run([*cmd, "--scenario", "5000pods_500nodes", "--scale", str(scale)], check=True)


if __name__ == "__main__":
    main()
