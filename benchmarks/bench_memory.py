"""Peak memory of a simulation on H100 clusters: 8 GPUs per node with every MIG placement (152 devices a node).

    .venv/bin/python benchmarks/bench_memory.py [--nodes 500,5000] [--pods-per-node 2]

Each size runs in a fresh Python process (so one size's memory does not count against the next): it
generates the cluster (``dralloc generate cluster --profile gpu-h100``, decoded as it is made), builds the
scheduler, schedules two pods per node asking for MIG profiles and whole GPUs in a fixed mix (the
``h100_mig_500nodes`` scenario of ``dralloc bench schedule``), and prints seconds and the resident memory
after each phase, and the peak (``ru_maxrss``). The scheduling result is summed up by a digest of its JSON,
so two versions of the code can be checked for byte-identical placements.

With ``--dump`` it measures reading a dump instead: each size's cluster is written as one JSON List
(``dralloc generate cluster --profile gpu-h100 -o json``, 477 MB for 1000 nodes) and ``dralloc simulate -f``
reads it (strict checks, validation, then the scheduler with no pods), printing its seconds and peak memory.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

_CHILD = r"""
import gc, hashlib, json, resource, sys, time
from dralloc.simulator import perf
from dralloc.simulator.simulator import Scheduler

def rss_mib():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0

nodes, pods = int(sys.argv[1]), int(sys.argv[2])
out = {"nodes": nodes, "pods": pods}
t = time.perf_counter()
objects = perf.h100_mig(nodes, pods)
gc.collect()
out["generate_s"], out["objects_mib"] = time.perf_counter() - t, rss_mib()
t = time.perf_counter()
sched = Scheduler.from_objects(objects)
gc.collect()
out["build_s"], out["built_mib"] = time.perf_counter() - t, rss_mib()
t = time.perf_counter()
result = sched.schedule()
out["schedule_s"] = time.perf_counter() - t
out["scheduled"] = len(result.scheduled)
out["placements"] = hashlib.sha256(json.dumps(result.to_dict(), sort_keys=True).encode()).hexdigest()[:16]
out["peak_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps(out))
"""


def measure(nodes: int, pods: int) -> dict[str, float | int | str]:
    proc = subprocess.run([sys.executable, "-c", _CHILD, str(nodes), str(pods)], capture_output=True, text=True,
                          check=True)
    return json.loads(proc.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


# ``dralloc simulate -f FILE`` in this process, then its peak resident memory (KiB) on stderr.
_SIMULATE = r"""
import resource, sys
from dralloc.cli.main import main
code = main(["simulate", "-f", sys.argv[1]])
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr)
sys.exit(code)
"""


def measure_dump(nodes: int) -> tuple[int, float, float]:
    """The dump's size in bytes, and the seconds and peak MiB of ``dralloc simulate -f`` reading it."""
    with tempfile.TemporaryDirectory() as tmp:
        dump = Path(tmp) / "cluster.json"
        with dump.open("w") as out:
            subprocess.run([sys.executable, "-m", "dralloc", "generate", "cluster", "--nodes", str(nodes),
                            "--profile", "gpu-h100", "-o", "json"], stdout=out, check=True)
        start = time.perf_counter()
        run = subprocess.run([sys.executable, "-c", _SIMULATE, str(dump)], stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE, text=True, check=True)
        seconds = time.perf_counter() - start
        peak = int(run.stderr.strip().splitlines()[-1]) / 1024  # (the simulation's own, not the generator's)
        return dump.stat().st_size, seconds, peak


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--nodes", default="500,5000", help="comma-separated cluster sizes")
    parser.add_argument("--pods-per-node", type=int, default=2)
    parser.add_argument("--dump", action="store_true", help="read each cluster from a JSON dump with simulate -f")
    args = parser.parse_args()
    if args.dump:
        print(f"{'nodes':>7} {'devices':>9} {'dump MB':>8} {'simulate -f s':>14} {'peak MiB':>9}")
        for nodes in (int(n) for n in args.nodes.split(",")):
            size, seconds, peak = measure_dump(nodes)
            print(f"{nodes:7} {nodes * 152:9} {size / 1e6:8.0f} {seconds:14.1f} {peak:9.0f}", flush=True)
        return 0
    print(f"{'nodes':>7} {'devices':>9} {'pods':>7} {'gen s':>7} {'build s':>8} {'sched s':>8} {'objects MiB':>12} "
          f"{'built MiB':>10} {'peak MiB':>9} {'scheduled':>9}  placements")
    for nodes in (int(n) for n in args.nodes.split(",")):
        m = measure(nodes, nodes * args.pods_per_node)
        print(f"{nodes:7} {nodes * 152:9} {m['pods']:7} {m['generate_s']:7.1f} {m['build_s']:8.1f} "
              f"{m['schedule_s']:8.1f} {m['objects_mib']:12.0f} {m['built_mib']:10.0f} {m['peak_mib']:9.0f} "
              f"{m['scheduled']:9}  {m['placements']}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
