"""``dralloc bench schedule``: pods scheduled per second on scheduler_perf's DRA shapes (or a dump).

    dralloc bench schedule [--scenario NAME]... [--scale K] [-f CLUSTER...] [-o text|json]

Each scenario is built in memory (see ``dralloc.simulator.perf``); ``--scale K`` multiplies nodes and
pods. With ``-f`` the given cluster dump is scheduled instead. Building (decoding excluded) and scheduling
are timed separately; peak RSS is the process's.
"""

from __future__ import annotations

import argparse
import json
from typing import Any


def register(sub: Any) -> None:
    from dralloc.simulator.benchmark import SCENARIOS

    p = sub.add_parser("schedule", help="pods/s of the scheduler on scheduler_perf's DRA shapes",
                       description=__doc__.split("\n\n")[0])
    p.add_argument("--scenario", action="append", choices=sorted(SCENARIOS), default=[],
                   help="repeatable (default: all)")
    p.add_argument("--scale", type=int, default=1, help="multiply nodes and pods (default 1)")
    p.add_argument("-f", "--filename", dest="files", action="extend", nargs="+", metavar="FILE",
                   help="schedule this cluster dump instead of the built-in scenarios")
    p.add_argument("-o", "--output", choices=("text", "json"), default="text")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from dralloc.errors import InputError
    from dralloc.simulator.benchmark import SCENARIOS
    from dralloc.simulator.benchmark import run as run_one

    if args.scale < 1:
        raise InputError("--scale: must be at least 1")
    timings = []
    if args.files:
        from dralloc.simulator.loading import load_validated

        objects, _ = load_validated(args.files)
        timings.append(run_one(",".join(args.files), objects))
    else:
        for name in args.scenario or list(SCENARIOS):
            timings.append(run_one(name, SCENARIOS[name](args.scale)))
    if args.output == "json":
        print(json.dumps([t.to_dict() for t in timings], indent=2))
        return 0
    print(f"{'scenario':28} {'nodes':>6} {'pods':>6} {'build s':>8} {'sched s':>8} {'pods/s':>8} {'pending':>8} {'RSS MiB':>8}")
    for t in timings:
        print(f"{t.scenario:28} {t.nodes:>6} {t.pods:>6} {t.build_s:>8.2f} {t.schedule_s:>8.2f} "
              f"{t.pods_per_s:>8.0f} {t.unschedulable:>8} {t.peak_rss_mib:>8.0f}")
    return 0
