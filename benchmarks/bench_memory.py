"""Peak memory of a simulation on H100 clusters: 8 GPUs per node with every MIG placement (152 devices a node).

    .venv/bin/python benchmarks/bench_memory.py [--nodes 500,5000] [--pods-per-node 2]

Each size runs in a fresh Python process (so one size's memory does not count against the next): it
generates the cluster (``dralloc generate cluster --profile gpu-h100``, decoded as it is made), builds the
scheduler, schedules two pods per node asking for MIG profiles and whole GPUs in a fixed mix (the
``h100_mig_500nodes`` scenario of ``dralloc bench schedule``), and prints seconds and the resident memory
after each phase, and the peak (``ru_maxrss``). The scheduling result is summed up by a digest of its JSON,
so two versions of the code can be checked for byte-identical placements.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

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


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--nodes", default="500,5000", help="comma-separated cluster sizes")
    parser.add_argument("--pods-per-node", type=int, default=2)
    args = parser.parse_args()
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
