"""``dralloc replay``: replay a GPU trace through the scheduler with one scoring policy.

    dralloc replay --nodes NODES.csv --pods PODS.csv [--policy NAME | --plugin module:Class]
                   [--inflate R] [--seed S] [-o table|json] [--report FILE.html] [--events]
    dralloc replay -f CLUSTER... --pods PODS.yaml ...

Pods arrive one at a time in the FGD paper's order (shuffled by the seed, inflated by copies until their
GPU demand is R × the cluster's GPUs), are placed or dropped, and never leave. The result is the curve of
GPUs allocated against GPU demand arrived (both % of the cluster), with fragmentation. With --events pods arrive at their
creation time, leave at their deletion time and wait in the queue while nothing fits; the result adds
utilisation, fragmentation and queue length over time, and the pods' queue wait.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from dralloc.errors import InputError

MARKS = (50, 80, 90, 100, 110, 120, 130)


def register(subparsers: Any) -> None:
    from dralloc.scheduler.plugins.trace_policies.registry import POLICIES

    p = subparsers.add_parser("replay", help="replay a GPU trace with a scoring policy (allocation curve)",
                              description=__doc__.split("\n\n")[0])
    p.add_argument("--nodes", metavar="NODES.csv", help="the trace's node list (Alibaba GPU trace format)")
    p.add_argument("--pods", metavar="PODS", required=True,
                   help="the trace's pod list (CSV with --nodes; manifests with -f)")
    p.add_argument("-f", "--filename", dest="files", action="extend", nargs="+", metavar="CLUSTER",
                   help="the cluster as manifests (Nodes, ResourceSlices, DeviceClasses) instead of --nodes")
    p.add_argument("--policy", choices=POLICIES, default="default",
                   help="the scoring policy (default: kube-scheduler's default profile)")
    p.add_argument("--plugin", metavar="module:Class", help="your own score plugin instead of --policy")
    p.add_argument("--inflate", type=float, default=1.3, metavar="R",
                   help="add copies of random pods until the GPU demand is R × the cluster's GPUs "
                        "(default 1.3; 0: the pods as given)")
    p.add_argument("--seed", type=int, default=42, help="seed of the arrival order and node ranks (default 42)")
    p.add_argument("-o", "--output", choices=("table", "json"), default="table")
    p.add_argument("--report", metavar="FILE.html", help="write the curves as an HTML report with SVG charts")
    p.add_argument("--events", action="store_true",
                   help="replay arrivals and departures over time (the CSV's creation_time and deletion_time); "
                        "pods that do not fit wait in the queue")
    p.set_defaults(func=run)


def load_workload(args: argparse.Namespace) -> Any:
    from dralloc.trace import workload

    if args.files and args.nodes:
        raise InputError("give either --nodes (a trace CSV) or -f (manifests), not both")
    if args.files:
        return workload.from_manifests(args.files, [args.pods])
    if not args.nodes:
        raise InputError("--nodes NODES.csv or -f CLUSTER is required")
    return workload.from_csv(args.nodes, args.pods)


def run(args: argparse.Namespace) -> int:
    from dralloc.scheduler.plugins.trace_policies.registry import profile, user_profile
    from dralloc.trace.replay import replay

    if args.inflate < 0:
        raise InputError("--inflate: must not be negative")
    work = load_workload(args)
    if not work.nodes:
        raise InputError("the cluster has no nodes")
    chosen = user_profile(args.plugin) if args.plugin else profile(args.policy, seed=args.seed,
                                                                   workload=work.typical())
    if args.events:
        from dralloc.trace.events import replay_events

        result = replay_events(work, chosen, seed=args.seed, inflate=args.inflate)
    else:
        result = replay(work, chosen, seed=args.seed, inflate=args.inflate)
    if args.report:
        from dralloc.trace.report import html_report

        with open(args.report, "w", encoding="utf-8") as out:
            out.write(html_report([result]))
    if args.output == "json":
        json.dump(result.to_json(), sys.stdout)
        sys.stdout.write("\n")
        return 0
    print(f"policy {result.policy}, seed {result.seed}: {result.pods} pods on {len(work.nodes)} nodes "
          f"({result.total_gpus} GPUs), {result.failed_pods} found no node, {result.seconds:.1f} s")
    print(f"{'ARRIVED %':>10} {'ALLOCATED %':>12} {'FRAGMENTED %':>13}")
    for mark in MARKS:
        allocated, fragmented = result.at(mark), result.at(mark, result.frag_curve)
        if allocated is not None:
            print(f"{mark:>10} {allocated:>12.2f} {fragmented if fragmented is not None else 0:>13.2f}")
    if result.events is not None:
        ev = result.events
        print(f"events: {len(ev.times)} event times, peak allocated {max(ev.allocated, default=0):.2f} %, "
              f"peak waiting {max(ev.waiting, default=0)} pods, wait mean {ev.mean_wait:.1f} s, "
              f"p99 {ev.p99_wait:.0f} s, {ev.never_scheduled} never scheduled")
    return 0
