"""Trace replay speed: one FGD-paper experiment (openb_pod_list_default inflated to 130 %, 1213 GPU nodes).

    .venv/bin/python benchmarks/bench_replay.py [--trace DIR] [--policies fgd,random] [--seed 42] [--compare N] [--events]

Prints, per policy, the wall and CPU seconds of one whole experiment with the framework's cross-cycle memo
(``Framework(memo=True)``, what ``dralloc replay`` uses) and the allocation at 100 % arrived. ``--compare N``
also replays the first N arrivals with and without the memo, alternating, and checks that both give the
same rows (allocation and fragmentation after every arrival). ``--events`` times the event-driven replay
(``dralloc replay --events``: arrivals and departures at the trace's times) instead. The trace directory defaults to the
alibaba/clusterdata ``cluster-trace-gpu-v2023/csv`` copy at ``../shared/traces/alibaba-gpu-v2023``.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from dralloc.scheduler.plugins.trace_policies.registry import profile
from dralloc.trace import workload
from dralloc.trace.events import replay_events
from dralloc.trace.replay import replay

DEFAULT_TRACE = Path(__file__).resolve().parent.parent.parent / "shared" / "traces" / "alibaba-gpu-v2023"


def timed(work: workload.Workload, policy: str, seed: int, inflate: float, memo: bool,
          events: bool = False) -> tuple[float, float, object]:
    wall, cpu = time.perf_counter(), time.process_time()
    run = replay_events if events else replay
    result = run(work, profile(policy, seed=seed, workload=work.typical()), seed=seed, inflate=inflate, memo=memo)
    return time.perf_counter() - wall, time.process_time() - cpu, result


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--trace", type=Path, default=DEFAULT_TRACE)
    parser.add_argument("--policies", default="fgd,random,bestfit,default")
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--compare", type=int, default=0, metavar="N")
    parser.add_argument("--events", action="store_true", help="time the event-driven replay")
    args = parser.parse_args()
    started = time.perf_counter()
    work = workload.from_csv(str(args.trace / "openb_node_list_gpu_node.csv"),
                             str(args.trace / "openb_pod_list_default.csv"))
    print(f"read the trace: {time.perf_counter() - started:.1f} s ({len(work.nodes)} nodes, {len(work.pods)} pods)")
    for policy in args.policies.split(","):
        wall, cpu, result = timed(work, policy, args.seed, 1.3, True, args.events)
        print(f"{policy:<14} one experiment: {wall:6.1f} s wall, {cpu:6.1f} s CPU, {result.pods} pods, "  # type: ignore[attr-defined]
              f"{result.failed_pods} failed, allocation at 100 %: {result.at(100)}")  # type: ignore[attr-defined]
    if args.compare:
        prefix = workload.Workload(work.nodes, work.slices, work.classes, work.pods[: args.compare])
        for policy in args.policies.split(","):
            rows = []
            for memo in (False, True, False, True):
                wall, cpu, result = timed(prefix, policy, args.seed, 0, memo, args.events)
                rows.append(result.rows)  # type: ignore[attr-defined]
                print(f"{policy:<14} first {args.compare} pods, memo {'on ' if memo else 'off'}: "
                      f"{wall:6.1f} s wall, {cpu:6.1f} s CPU")
            print(f"{policy:<14} same rows with and without the memo: {all(r == rows[0] for r in rows)}")


if __name__ == "__main__":
    main()
