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
2 invalid input, 3 allocation error.
"""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from typing import Any

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
                   help="with -o json: print the explanation as JSON on stdout when unschedulable")
    p.set_defaults(func=run)


class Inputs:
    def __init__(self) -> None:
        self.slices: list[Any] = []
        self.classes: list[Any] = []
        self.allocated: list[Any] = []
        self.pending: list[Any] = []
        self.nodes: list[Any] = []
        self.taint_rules: list[Any] = []


def load_inputs(files: list[str]) -> Inputs:
    """Load and sort the objects of the input files (raises InputError on bad input)."""

    inputs = Inputs()
    objects: list[Any] = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for f in files:
            objects.extend(_load(f))
    for w in caught:
        print(f"warning: {w.message}", file=sys.stderr)
    for o in objects:
        kind = type(o).__name__
        if kind == "ResourceSlice":
            inputs.slices.append(o)
        elif kind == "DeviceClass":
            inputs.classes.append(o)
        elif kind == "ResourceClaim":
            if o.status is not None and o.status.allocation is not None:
                inputs.allocated.append(o)
            else:
                inputs.pending.append(o)
        elif kind == "Node":
            inputs.nodes.append(o)
        elif kind == "DeviceTaintRule":
            inputs.taint_rules.append(o)
    if inputs.taint_rules:
        from dralloc.allocator.taintrules import apply_taint_rules

        inputs.slices = apply_taint_rules(inputs.slices, inputs.taint_rules)
    for c in inputs.pending + inputs.allocated:
        if not c.metadata.name:
            raise InputError("ResourceClaim: metadata.name: Required value")
    return inputs


def _load(path: str) -> list[Any]:
    """codec.load, with a plain-YAML fallback while the codec's document reader is unreliable.

    The fallback only runs when codec.load fails with something other than an InputError (a bug, not bad
    input); it still decodes every document through codec.decode.
    """
    from dralloc.api import codec

    try:
        return codec.load(path)
    except InputError:
        raise
    except Exception:  # noqa: BLE001 - adapter for a dependency still being written
        import yaml

        from dralloc.errors import DecodeError

        try:
            if path == "-":
                text = sys.stdin.read()
            else:
                with open(path, encoding="utf-8") as fh:
                    text = fh.read()
            docs = list(yaml.load_all(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)))
        except OSError as exc:
            raise DecodeError(f"{path}: {exc.strerror or exc}") from None
        except yaml.YAMLError as exc:
            raise DecodeError(f"{path}: {exc}") from None
        out: list[Any] = []
        for i, d in enumerate(docs):
            if d is None:
                continue
            if isinstance(d, dict) and d.get("kind") == "List":
                items = d.get("items") or []
            else:
                items = [d]
            for item in items:
                out.append(codec.decode(item, where=f"{path}: document {i + 1}"))
        return out


def pick_nodes(inputs: Inputs, node_name: str | None) -> list[Any]:
    from dralloc.api.core_v1 import Node
    from dralloc.api.meta import ObjectMeta

    if node_name:
        for n in inputs.nodes:
            if n.metadata.name == node_name:
                return [n]
        if inputs.nodes:
            raise InputError(f"--node: node {node_name!r} is not in the input")
        return [Node(metadata=ObjectMeta(name=node_name))]
    if not inputs.nodes:
        raise InputError("no Node in the input: add one or name it with --node")
    return inputs.nodes


def result_dict(outcome: Any) -> dict[str, Any]:
    """The oracle's JSON shape for an outcome."""
    from dralloc.api import codec

    if outcome.status == "allocated":
        return {"ok": True, "status": "allocated", "results": [codec.to_dict(r) for r in outcome.results]}
    d: dict[str, Any] = {"ok": False, "status": "unschedulable", "unschedulable": True}
    if outcome.invalid_pools:
        d["error"] = outcome.message
    return d


def error_dict(exc: Exception) -> dict[str, Any]:
    return {"ok": False, "status": "error", "error": str(exc)}


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

    inputs = load_inputs(args.files)
    nodes = pick_nodes(inputs, args.node)
    allocator = Allocator(inputs.slices, inputs.classes, inputs.allocated)
    failures = []
    for node in nodes:
        try:
            outcome = allocator.allocate(node, inputs.pending)
        except AllocationError as exc:
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
        doc = {"status": "unschedulable", "nodes": []}
        for f in failures:
            entry = f.explanation.to_dict()
            if f.invalid_pools:
                entry["error"] = f.message
            doc["nodes"].append(entry)
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
