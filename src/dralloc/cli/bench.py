"""``dralloc bench``: time the engine on a manifest file.

    dralloc bench allocate -f FILE [--node NAME] [--iterations N] [-o json]

Prints the search's step count (nodes visited: machine-independent, so a pruning regression shows even on a
noisy machine) and the median time of one allocate call for the file's pending claims on the node, both with
a fresh Allocator per call (built from the loaded objects, as a scheduler does per cycle; the allocated state
and the per-device cache live with a scheduler's cluster snapshot, so they are built once, outside the
timing) and with one Allocator reused across calls. Loading and parsing the file is in neither figure; CEL compilation is cached
process-wide (as upstream's CEL cache is), so it is in neither figure either.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("bench", help="benchmark the engine on a manifest file")
    sub = p.add_subparsers(dest="bench_command", metavar="WHAT", parser_class=type(p))
    a = sub.add_parser("allocate", help="search steps and median time per allocate call (fresh and reused allocator)")
    a.add_argument("-f", "--filename", dest="file", required=True, metavar="FILE")
    a.add_argument("--node", help="the node (default: the only/first Node in the file)")
    a.add_argument("--iterations", type=int, default=0, help="calls per figure (default: adaptive)")
    a.add_argument("-o", "--output", choices=("text", "json"), default="text")
    a.set_defaults(func=run_allocate)
    from dralloc.cli import bench_schedule

    bench_schedule.register(sub)
    p.set_defaults(func=lambda args: (p.print_help(sys.stderr), 2)[1])


def run_allocate(args: argparse.Namespace) -> int:
    from dralloc.allocator.benchmark import measure
    from dralloc.cli.allocate import load_inputs, pick_nodes

    inputs = load_inputs([args.file])
    node = pick_nodes(inputs, args.node)[0]
    res = measure(inputs, node, args.iterations)
    if args.output == "json":
        print(json.dumps(res))
    else:
        print(f"status:   {res['status']}\nsteps:    {res['steps']}\nfresh:    {res['fresh_us']} µs/allocate\n"
              f"reused:   {res['reused_us']} µs/allocate\niterations: {res['iterations']}")
    return 0
