"""``dralloc sweep``: replay a grid of policies × seeds × traces in parallel; a CSV and an SVG chart.

    dralloc sweep --nodes NODES.csv --pods PODS.csv [PODS2.csv ...] [--policies fgd,bestfit,...]
                  [--seeds 42-51] [--inflate 1.3] [--workers N | --ray] [--csv OUT.csv] [--chart OUT.svg]

Prints the table of mean GPU allocation at 100 % arrived (± sample sd over seeds) per trace and policy.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from dralloc.errors import InputError


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("sweep", help="replay policies × seeds × traces in parallel (CSV + SVG chart)",
                              description=__doc__.split("\n\n")[0])
    p.add_argument("--nodes", required=True, metavar="NODES.csv", help="the trace's node list")
    p.add_argument("--pods", required=True, nargs="+", metavar="PODS.csv", help="one or more pod lists")
    p.add_argument("--policies", default="random,dotprod,gpuclustering,gpupacking,bestfit,fgd",
                   help="comma-separated policy names (default: the paper's six)")
    p.add_argument("--seeds", default="42-51", help="seeds: 42-51 or 1,2,3 (default 42-51)")
    p.add_argument("--inflate", type=float, default=1.3, metavar="R", help="as replay's (default 1.3)")
    p.add_argument("--workers", type=int, default=0, help="worker processes (default: one per CPU)")
    p.add_argument("--ray", action="store_true", help="run the grid on Ray (pip install 'dralloc[ray]')")
    p.add_argument("--csv", metavar="OUT.csv", help="write one row per experiment")
    p.add_argument("--chart", metavar="OUT.svg", help="write unallocated GPU vs arrived, median over seeds")
    p.set_defaults(func=run)


def parse_seeds(text: str) -> list[int]:
    seeds: list[int] = []
    try:
        for part in text.split(","):
            lo, sep, hi = part.strip().partition("-")
            seeds.extend(range(int(lo), int(hi) + 1) if sep else [int(lo)])
    except ValueError:
        raise InputError(f"--seeds {text!r}: expected numbers and ranges like 42-51 or 1,2,3") from None
    if not seeds:
        raise InputError("--seeds: no seed given")
    return seeds


def run(args: argparse.Namespace) -> int:
    from dralloc.scheduler.plugins.trace_policies.registry import POLICIES
    from dralloc.trace import alibaba
    from dralloc.trace.sweep import chart, grid, run_grid, summary, to_csv

    policies = [p.strip() for p in args.policies.split(",") if p.strip()]
    unknown = [p for p in policies if p not in POLICIES]
    if unknown or not policies:
        raise InputError(f"--policies: unknown {', '.join(unknown) or 'nothing'} (known: {', '.join(POLICIES)})")
    alibaba.read_nodes(args.nodes)  # bad input fails here, not in a worker
    for pods in args.pods:
        alibaba.read_pods(pods)
    experiments = grid(args.nodes, args.pods, policies, parse_seeds(args.seeds), args.inflate)

    def progress(o: Any) -> None:
        e = o.experiment
        print(f"{e.trace} {e.policy} seed {e.seed}: {o.at(100)} % at 100 % arrived, {o.seconds:.1f} s",
              file=sys.stderr, flush=True)

    outcomes = run_grid(experiments, workers=args.workers, ray=args.ray, progress=progress)
    if args.csv:
        with open(args.csv, "w", encoding="utf-8") as out:
            out.write(to_csv(outcomes))
    if args.chart:
        with open(args.chart, "w", encoding="utf-8") as out:
            out.write(chart(outcomes) + "\n")
    print(f"{'TRACE':<28} {'POLICY':<14} {'ALLOCATED@100%':>15} {'SD':>6} {'SECONDS':>8} {'RUNS':>5}")
    for trace, policy, mean, sd, seconds, runs in summary(outcomes):
        print(f"{trace:<28} {policy:<14} {mean:>15.2f} {sd:>6.2f} {seconds:>8.1f} {runs:>5}")
    return 0
