"""``dralloc plan``: what to add so pending pods fit, or what can go — on the simulator's exact rules.

    dralloc plan -f CLUSTER... --node-template NAME=FILE [--node-template NAME2=FILE2 ...]
                 [--max-nodes NAME=N ...] [--expander least-waste|most-pods|priority|price[,...]]
                 [--price NAME=X ...] [--priority NAME=N ...] [--config FILE] [-o table|json|yaml]
                 [--report FILE.html]
    dralloc plan --scale-down -f CLUSTER... [--utilization-threshold F] [-o table|json]

Scale up exits 0 when every pending pod fits after the plan, 1 when some cannot; scale down exits 0;
2 on invalid input.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from fractions import Fraction
from typing import Any

from dralloc.errors import InputError

OUTPUTS = ("table", "json", "yaml")


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("plan", help="how many nodes of which kind make pending pods fit; which nodes can go",
                              description=__doc__.split("\n\n")[0])
    p.add_argument("-f", "--filename", dest="files", action="extend", nargs="+", required=True, metavar="FILE",
                   help="the cluster: files, directories or '-' (kubectl get ... -o yaml output and workloads)")
    p.add_argument("--node-template", action="append", default=[], metavar="NAME=FILE",
                   help="a kind of node to add: a List with one Node and its local ResourceSlices; repeatable")
    p.add_argument("--max-nodes", action="append", default=[], metavar="NAME=N",
                   help="add at most N nodes of template NAME; repeatable")
    p.add_argument("--expander", default="least-waste", metavar="NAMES",
                   help="how to choose between templates, chained by commas as Cluster Autoscaler's: "
                        "least-waste (default), most-pods, priority, price")
    p.add_argument("--price", action="append", default=[], metavar="NAME=X",
                   help="price of one node of template NAME (the price expander); repeatable")
    p.add_argument("--priority", action="append", default=[], metavar="NAME=N",
                   help="priority of template NAME (the priority expander; higher wins); repeatable")
    p.add_argument("--scale-down", action="store_true", help="find nodes that can be removed together instead")
    p.add_argument("--utilization-threshold", type=float, default=0.5, metavar="F",
                   help="scale down: only nodes used below this fraction are candidates (default 0.5, as CA)")
    p.add_argument("-o", "--output", choices=OUTPUTS, default="table")
    p.add_argument("--report", metavar="FILE.html", help="scale up: write an HTML page of the plan")
    p.add_argument("--seed", type=int, default=0, help="seed for kube-scheduler's random choices (as simulate)")
    p.add_argument("--config", metavar="FILE",
                   help="a kubescheduler.config.k8s.io/v1 KubeSchedulerConfiguration: profiles by schedulerName, "
                        "plugins enabled and disabled, weights, pluginConfig args, percentageOfNodesToScore")
    p.add_argument("--feature-gates", default="", metavar="A=true,B=false",
                   help="kube-scheduler feature gates over 1.36's defaults")
    p.add_argument("--percentage-of-nodes-to-score", type=int, default=0, metavar="P")
    p.set_defaults(func=run)


def _pairs(values: list[str], flag: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for text in values:
        name, sep, value = text.partition("=")
        if not sep or not name or not value:
            raise InputError(f"{flag}: expected NAME=VALUE, got {text!r}")
        if name in out:
            raise InputError(f"{flag}: {name!r} given twice")
        out[name] = value
    return out


def _ints(values: list[str], flag: str, minimum: int) -> dict[str, int]:
    out = {}
    for name, value in _pairs(values, flag).items():
        try:
            out[name] = int(value)
        except ValueError:
            raise InputError(f"{flag}: {name}={value}: not an integer") from None
        if out[name] < minimum:
            raise InputError(f"{flag}: {name}={value}: must be at least {minimum}")
    return out


def _prices(values: list[str]) -> dict[str, Fraction]:
    out = {}
    for name, value in _pairs(values, "--price").items():
        try:
            out[name] = Fraction(value)
        except (ValueError, ZeroDivisionError):
            raise InputError(f"--price: {name}={value}: not a number") from None
        if out[name] < 0:
            raise InputError(f"--price: {name}={value}: must not be negative")
    return out


def run(args: argparse.Namespace) -> int:
    from dralloc.scheduler import FeatureGates
    from dralloc.simulator import Scheduler
    from dralloc.simulator.loading import load_validated
    from dralloc.simulator.planner import PlanSettings

    if not 0 <= args.percentage_of_nodes_to_score <= 100:
        raise InputError("--percentage-of-nodes-to-score: must be between 0 and 100")
    from dralloc.scheduler.config import load_config

    gates = FeatureGates.parse(args.feature_gates)
    config = load_config(args.config, gates) if args.config else None
    settings = PlanSettings(Scheduler, args.seed, gates, args.percentage_of_nodes_to_score, config)
    if args.scale_down:
        if args.node_template or args.max_nodes:
            raise InputError("--scale-down takes no --node-template or --max-nodes")
        if not 0 < args.utilization_threshold <= 1:
            raise InputError("--utilization-threshold: must be in (0, 1]")
    elif not args.node_template:
        raise InputError("plan: give at least one --node-template NAME=FILE (or --scale-down)")
    objects, warnings = load_validated(args.files)
    for w in warnings:
        print(f"warning: {w}", file=sys.stderr)
    if args.scale_down:
        return _scale_down(args, objects, settings)
    return _scale_up(args, objects, settings)


def _scale_up(args: argparse.Namespace, objects: list[Any], settings: Any) -> int:
    from dralloc.simulator.planner import load_template, plan_scale_up
    from dralloc.simulator.planner.expanders import parse_expander

    sources = _pairs(args.node_template, "--node-template")
    max_nodes = _ints(args.max_nodes, "--max-nodes", 0)
    expander = parse_expander(args.expander)
    priorities = _ints(args.priority, "--priority", -(2**31))
    prices = _prices(args.price)
    templates = [load_template(name, path) for name, path in sources.items()]
    plan = plan_scale_up(objects, templates, settings=settings, max_nodes=max_nodes, expander=expander,
                         priorities=priorities, prices=prices)
    if args.report:
        from pathlib import Path

        from dralloc.simulator.planner.report import render_plan

        try:
            Path(args.report).write_text(render_plan(plan), encoding="utf-8")
        except OSError as exc:
            raise InputError(f"--report: {exc.strerror or exc}: {args.report}") from None
        print(f"report written to {args.report}", file=sys.stderr)
    _write(plan.to_dict(), args.output, scale_up_table)
    return 1 if plan.unschedulable else 0


def _scale_down(args: argparse.Namespace, objects: list[Any], settings: Any) -> int:
    from dralloc.simulator.planner import plan_scale_down

    plan = plan_scale_down(objects, settings=settings,
                           threshold=Fraction(args.utilization_threshold).limit_denominator(10_000))
    _write(plan.to_dict(), args.output, scale_down_table)
    return 0


def _write(doc: dict[str, Any], output: str, table: Callable[[dict[str, Any]], str]) -> None:
    """The plan on stdout as ``-o json``, ``-o yaml`` or the table."""
    if output == "json":
        sys.stdout.write(json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
    elif output == "yaml":
        from dralloc.api import codec

        sys.stdout.write(codec.dump_yaml(doc))
    else:
        sys.stdout.write(table(doc))


def scale_up_table(doc: dict[str, Any]) -> str:
    lines = []
    added = ", ".join(f"{n}: {c}" for n, c in doc["add"].items()) or "nothing"
    lines.append(f"add: {added} (expander {doc['expander']})")
    lines.append("")
    rows = [("POD", "NODE / REASON")]
    for p in doc["pods"]:
        rows.append((f"{p['namespace']}/{p['name']}", p["node"] or f"<pending> {p['message']}"))
    width = max(len(r[0]) for r in rows)
    lines.extend(f"{r[0].ljust(width)}   {r[1]}".rstrip() for r in rows)
    lines.append("")
    lines.append(f"{len(doc['pods']) - doc['unschedulable']} of {len(doc['pods'])} pending pods fit after the plan, "
                 f"{doc['unschedulable']} fit no template")
    return "\n".join(lines) + "\n"


def scale_down_table(doc: dict[str, Any]) -> str:
    rows = [("NODE", "VERDICT")]
    rows.extend((n, "removable") for n in doc["removable"])
    rows.extend((b["node"], f"blocked: {b['reason']}") for b in doc["blocked"])
    width = max(len(r[0]) for r in rows)
    lines = [f"{r[0].ljust(width)}   {r[1]}".rstrip() for r in rows]
    lines.append("")
    lines.append(f"{len(doc['removable'])} nodes can be removed together, {len(doc['blocked'])} stay")
    return "\n".join(lines) + "\n"
