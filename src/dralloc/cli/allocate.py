"""``dralloc allocate``: allocate the pending ResourceClaims of some manifests on a node.

    dralloc allocate -f FILE... [--node NAME] [-o yaml|json|table|results] [--explain]

Input: DeviceClasses, ResourceSlices, ResourceClaims (with ``status.allocation`` = already allocated,
without = pending, allocated together in file order), Nodes, and DeviceTaintRules (their taints are added to
the selected devices, as kube-scheduler does). With one Node, ``--node`` may be omitted;
with several, the nodes are tried in order and the first that fits is used (named on stderr).

Output on success: the pending claims with ``status.allocation`` filled in, as a ``kind: List``.
``-o results`` prints the allocator's raw answer in the oracle's JSON shape
(``{"ok": true, "status": "allocated", "results": [...]}``).
Exit codes: 0 allocated, 1 unschedulable (explanation on stderr, or JSON with ``-o json --explain``),
2 invalid input, 3 allocation error (also where kube-scheduler's own search provably runs past its DRA filter
timeout: ``--explain`` says so on stderr).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from dralloc.allocator.inputs import Inputs, error_dict, pick_nodes, result_dict
from dralloc.allocator.inputs import load_inputs as _load_inputs
from dralloc.errors import AllocationError, InputError

OUTPUTS = ("yaml", "json", "table", "results")


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "allocate",
        help="allocate pending ResourceClaims on a node, as kube-scheduler would",
        description=__doc__.split("\n\n")[0],
    )
    p.add_argument("-f", "--filename", dest="files", action="extend", nargs="+", required=True, metavar="FILE",
                   help="manifest files or directories ('-' for stdin); repeatable")
    p.add_argument("--node", help="the node to allocate on (default: the only Node, or the first that fits)")
    p.add_argument("-o", "--output", choices=OUTPUTS, default="yaml", help="output format (default yaml)")
    p.add_argument("--explain", action="store_true",
                   help="with -o json: print the explanation as JSON on stdout when unschedulable; when "
                        "allocated, say on stderr if kube-scheduler's own search would time out first")
    p.add_argument("--filter-timeout", default="10s", metavar="DURATION",
                   help="kube-scheduler's DRA filter timeout (DynamicResourcesArgs.filterTimeout, default 10s): "
                        "where upstream's search provably runs past it, the answer is its timeout; 0 turns it "
                        "off (the answer dralloc's search reaches)")
    p.set_defaults(func=run)


def filter_timeout_steps(text: str) -> int | None:
    """``--filter-timeout`` as the upstream search steps it allows (None: no timeout)."""
    from dralloc.allocator.upstream_cost import timeout_steps
    from dralloc.scheduler.config.validation import DurationError, parse_duration

    try:
        seconds = parse_duration(text, "--filter-timeout")
    except DurationError as exc:
        raise InputError(str(exc)) from None
    if seconds < 0:
        raise InputError(f"--filter-timeout: {text}: must be zero or positive")
    return timeout_steps(seconds)


def load_inputs(files: list[str]) -> Inputs:
    """Load and sort the inputs, printing the loader's warnings."""
    inputs, notes = _load_inputs(files)
    for note in notes:
        print(f"warning: {note}", file=sys.stderr)
    return inputs


def _claims_with_allocation(claims: list[Any], results: list[Any]) -> list[Any]:
    from msgspec.structs import replace

    from dralloc.api.defaults import apply_defaults
    from dralloc.api.resource_v1 import ResourceClaimStatus

    out = []
    for claim, result in zip(claims, results):
        claim = apply_defaults(claim)
        status = claim.status if claim.status is not None else ResourceClaimStatus()
        out.append(replace(claim, status=replace(status, allocation=result)))
    return out


def _table(claims: list[Any], node: str) -> str:
    rows = [("CLAIM", "REQUEST", "DRIVER", "POOL", "DEVICE", "SHARE")]
    for c in claims:
        ref = f"{c.metadata.namespace}/{c.metadata.name}" if c.metadata.namespace else c.metadata.name
        for r in c.status.allocation.devices.results or ():
            rows.append((ref, r.request, r.driver, r.pool, r.device, r.share_id or ""))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = ["   ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in rows]
    return f"node: {node}\n" + "\n".join(lines) + "\n"


def run(args: argparse.Namespace) -> int:
    from dralloc.allocator import Allocator
    from dralloc.allocator.errors import AllocationTimeout

    inputs = load_inputs(args.files)
    nodes = pick_nodes(inputs, args.node)
    allocator = Allocator(inputs.slices, inputs.classes, inputs.allocated,
                          timeout_steps=filter_timeout_steps(args.filter_timeout))
    failures = []
    for node in nodes:
        try:
            outcome = allocator.allocate(node, inputs.pending)
        except AllocationError as exc:
            if args.explain and isinstance(exc, AllocationTimeout):
                print(f"node {exc.node_name}: {exc.note()}", file=sys.stderr)
            if args.output == "results":
                print(json.dumps(error_dict(exc), indent=2))
                return 3
            raise
        if outcome.status == "allocated":
            if len(nodes) > 1:
                print(f"allocated on node {outcome.node_name}", file=sys.stderr)
            return _print_success(args, inputs, outcome)
        failures.append(outcome)
    return _print_failure(args, failures)


def _print_success(args: argparse.Namespace, inputs: Inputs, outcome: Any) -> int:
    from dralloc.api import codec

    if args.explain and outcome.upstream.times_out:
        print(f"node {outcome.node_name}: {outcome.upstream.note()}", file=sys.stderr)

    if args.output == "results":
        print(json.dumps(result_dict(outcome), indent=2))
        return 0
    claims = _claims_with_allocation(inputs.pending, outcome.results)
    if args.output == "yaml":
        sys.stdout.write(codec.dump_yaml(claims))
    elif args.output == "json":
        doc = {"apiVersion": "v1", "kind": "List", "items": [codec.to_dict(c) for c in claims]}
        sys.stdout.write(json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
    else:
        sys.stdout.write(_table(claims, outcome.node_name))
    return 0


def _print_failure(args: argparse.Namespace, failures: list[Any]) -> int:
    if args.output == "results":
        print(json.dumps(result_dict(failures[-1]), indent=2))
        return 1
    if args.output == "json" and args.explain:
        nodes: list[dict[str, Any]] = []
        doc = {"status": "unschedulable", "nodes": nodes}
        for f in failures:
            entry = f.explanation.to_dict()
            if f.invalid_pools:
                entry["error"] = f.message
            nodes.append(entry)
        print(json.dumps(doc, indent=2))
        return 1
    shown = failures if len(failures) <= 3 else failures[:3]
    for f in shown:
        if f.invalid_pools:
            print(f"node {f.node_name}: {f.message}", file=sys.stderr)
        sys.stderr.write(f.explanation.text())
    if len(failures) > len(shown):
        print(f"... and {len(failures) - len(shown)} more nodes that cannot take the claims", file=sys.stderr)
    print("unschedulable: no node can take the pending claims", file=sys.stderr)
    return 1
