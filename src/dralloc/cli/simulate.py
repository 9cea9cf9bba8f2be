"""``dralloc simulate``: schedule a batch of pods on a cluster dump as kube-scheduler 1.36 would.

    dralloc simulate -f CLUSTER... [-o table|json|yaml] [--report FILE.html] [--explain] [--seed N]
                     [--feature-gates A=true,...] [--percentage-of-nodes-to-score P] [--config FILE]
                     [--add-nodes N --like NODE] [--remove-node NAME]... [--max POD] [--strict]

Exit codes: 0 every pending pod was placed, 1 some stay pending, 2 invalid input (with --strict: also any
input that could change a placement but is not modelled, or an unknown or repeated field).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from dralloc.errors import InputError

OUTPUTS = ("table", "json", "yaml")


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("simulate", help="schedule pods on a cluster dump as kube-scheduler would",
                              description=__doc__.split("\n\n")[0])
    p.add_argument("-f", "--filename", dest="files", action="extend", nargs="+", required=True, metavar="FILE",
                   help="manifests: files, directories or '-' (kubectl get ... -o yaml output and workloads)")
    p.add_argument("-o", "--output", choices=OUTPUTS, default="table")
    p.add_argument("--report", metavar="FILE.html", help="write a self-contained HTML capacity report")
    p.add_argument("--explain", action="store_true",
                   help="for pending pods with claims: why the claims fit none of the closest nodes "
                        "(stderr, or an \"explanations\" object with -o json)")
    p.add_argument("--seed", type=int, default=0,
                   help="seed for the choices kube-scheduler makes at random (score ties, preemption offset)")
    p.add_argument("--config", metavar="FILE",
                   help="a kubescheduler.config.k8s.io/v1 KubeSchedulerConfiguration: profiles by schedulerName, "
                        "plugins enabled and disabled, weights, pluginConfig args, percentageOfNodesToScore")
    p.add_argument("--feature-gates", default="", metavar="A=true,B=false",
                   help="kube-scheduler feature gates over 1.36's defaults (e.g. DRANodeAllocatableResources=true)")
    p.add_argument("--percentage-of-nodes-to-score", type=int, default=0, metavar="P",
                   help="0 = adaptive (kube-scheduler's default); 100 = look at every node")
    p.add_argument("--add-nodes", type=int, default=0, metavar="N", help="what if: N more nodes like --like")
    p.add_argument("--like", metavar="NODE", help="the node --add-nodes clones (with its node-local slices)")
    p.add_argument("--remove-node", action="append", default=[], metavar="NAME",
                   help="what if: this node is gone (its pods become pending); repeatable")
    p.add_argument("--max", metavar="POD", help="after the batch: how many more copies of this pod fit, and where "
                                                "(PodGroup/NAME: whole copies of the group, per topology domain)")
    p.add_argument("--topology-key", metavar="LABEL",
                   help="with --report: a topology view per value of this node label (free devices, and the "
                        "largest gang of each PodGroup's pod shape that still fits there)")
    p.add_argument("--strict", action="store_true",
                   help="exit 2, printing only the warnings, when the input has unknown or repeated fields or "
                        "anything that could change a placement that the simulation does not model")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from dralloc.scheduler.features import FeatureGates
    from dralloc.simulator import Scheduler
    from dralloc.simulator.loading import load_checked_inputs

    if args.add_nodes and not args.like:
        raise InputError("--add-nodes needs --like NODE")
    if args.percentage_of_nodes_to_score < 0 or args.percentage_of_nodes_to_score > 100:
        raise InputError("--percentage-of-nodes-to-score: must be between 0 and 100")
    from dralloc.scheduler.config import load_config

    gates = FeatureGates.parse(args.feature_gates)
    objects, skipped_kinds, field_problems = load_checked_inputs(args.files)
    config = load_config(args.config, gates) if args.config else None
    sched = Scheduler.from_objects(objects, seed=args.seed, feature_gates=gates, config=config,
                                   percentage_of_nodes_to_score=args.percentage_of_nodes_to_score)
    for name in args.remove_node:
        sched.remove_node(name)
    added = sched.add_nodes(args.add_nodes, args.like) if args.add_nodes else []
    # Every warning once, in the order found: skipped kinds and fields, then what the simulation met.
    warnings = list(dict.fromkeys([*skipped_kinds, *field_problems, *sched.warnings]))
    if args.strict and (field_problems or sched.warnings):
        for w in warnings:
            print(f"warning: {w}", file=sys.stderr)
        return 2
    if args.add_nodes:
        print(f"what if: added {len(added)} nodes like {args.like}", file=sys.stderr)
    result = sched.schedule(progress=_progress() if sys.stderr.isatty() else None)
    if sys.stderr.isatty():
        sys.stderr.write("\r\033[K")
    result.warnings = list(dict.fromkeys([*warnings, *result.warnings]))
    for w in result.warnings:
        print(f"warning: {w}", file=sys.stderr)
    max_answer = sched.max_copies(args.max) if args.max else None
    if args.report:
        _write_report(args.report, sched, result, args.topology_key)
    explanations = {p.key: sched.explain(p.key) for p in result.unschedulable} if args.explain else {}
    if args.output == "json":
        doc = result.to_dict()
        if args.explain:
            doc["explanations"] = {key: [e.to_dict() for e in found] for key, found in explanations.items() if found}
        if max_answer is not None:
            doc["max"] = {"pod": args.max, "copies": max_answer[0], "nodes": max_answer[1], "stoppedBy": max_answer[2]}
        sys.stdout.write(json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
    elif args.output == "yaml":
        from dralloc.api import codec

        items = [p.pod for p in result.pods] + list(result.claims) + list(result.pod_group_objects)
        sys.stdout.write(codec.dump_yaml({"apiVersion": "v1", "kind": "List", "items": [codec.to_dict(i) for i in items]}))
    else:
        sys.stdout.write(table(result))
        if max_answer is not None:
            where = ", ".join(f"{n}: {c}" for n, c in sorted(max_answer[1].items())) or "none"
            print(f"\n{max_answer[0]} more copies of {args.max} fit ({where}); the next: {max_answer[2]}")
    if args.explain and args.output != "json":
        for key, found in explanations.items():
            for explanation in found:
                sys.stderr.write(f"{key}: ")
                sys.stderr.write(explanation.text())
    pending = [p for p in result.pods if p.status in ("unschedulable", "error", "pending")]
    return 1 if pending else 0


def _progress() -> Any:
    def show(done: int, left: int) -> None:
        if done % 50 == 0 or left == 0:
            sys.stderr.write(f"\rscheduling: {done} attempts, {left} pods queued")
            sys.stderr.flush()
    return show


def _write_report(path: str, sched: Any, result: Any, topology_key: str | None = None) -> None:
    from pathlib import Path

    from dralloc.simulator.report import render_report

    try:
        Path(path).write_text(render_report(sched, result, topology_key=topology_key), encoding="utf-8")
    except OSError as exc:
        raise InputError(f"--report: {exc.strerror or exc}: {path}") from None
    print(f"report written to {path}", file=sys.stderr)


def _group_row(group: Any, result: Any) -> tuple[str, str, str]:
    members = [p for p in result.pods if p.key in set(group.members)]
    nodes = sorted({p.node for p in members if p.node})
    total = len(members)
    where = group.domain or ("<placed>" if group.placed else "<pending>")
    if group.preempted_by is not None and group.scheduled < group.min_count:  # no longer running as a whole
        detail = f"{group.scheduled}/{total} pods (minCount {group.min_count}): preempted by {group.preempted_by}"
        return (f"podgroup {group.namespace}/{group.name}", "<preempted>", detail)
    if group.placed:
        detail = f"{group.scheduled}/{total} pods (minCount {group.min_count}) on {', '.join(nodes)}"
    else:
        detail = f"{group.scheduled}/{total} pods (minCount {group.min_count}): {group.message}"
        # kube-scheduler's group message says little; its members' own reasons say why, counted alike
        reasons: dict[str, int] = {}
        for p in members:
            if not p.node and p.message:
                reasons[p.message] = reasons.get(p.message, 0) + 1
        if reasons:
            detail += "; members: " + "; ".join(f"{n} × {m}" for m, n in reasons.items())
    return (f"podgroup {group.namespace}/{group.name}", where, detail)


def table(result: Any) -> str:
    rows = [("POD", "NODE", "CLAIM → DEVICES / REASON")]
    # A pod group is one row: where it went (its topology domain) and on which nodes, or why not.
    grouped = {key: g for g in result.pod_groups for key in g.members}
    shown: set[str] = set()
    for p in result.pods:
        group = grouped.get(p.key)
        if group is not None:
            if group.name not in shown:
                shown.add(group.name)
                rows.append(_group_row(group, result))
            continue
        node = p.node or f"<{p.status}>"
        detail: list[str] = []
        if p.node:
            for c in p.claims:
                alloc = c.status.allocation if c.status is not None else None
                devices = [f"{r.driver}/{r.pool}/{r.device}" for r in (alloc.devices.results or ())] \
                    if alloc is not None and alloc.devices is not None else []
                detail.append(f"{c.metadata.name} → {', '.join(devices) or '(not allocated)'}")
        else:
            detail.append(p.message)
        rows.append((p.key, node, "; ".join(d for d in detail if d)))
    widths = [max(len(r[i]) for r in rows) for i in range(2)]
    lines = [f"{r[0].ljust(widths[0])}   {r[1].ljust(widths[1])}   {r[2]}".rstrip() for r in rows]
    scheduled = len(result.scheduled)
    pending = len(result.unschedulable)
    lines.append("")
    lines.append(f"{scheduled} scheduled, {pending} pending, {len(result.evicted)} evicted "
                 f"(seed {result.seed}: ties between equally scored nodes are broken by this seed)")
    return "\n".join(lines) + "\n"
