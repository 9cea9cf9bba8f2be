"""``dralloc fit``: does a pod fit a node, counting the cpu/memory its DRA claims take (KEP-5517)?

    dralloc fit -f cluster/ [--pod NAME] [--node NAME] [-o text|json]

Input: Nodes, Pods (a pod with ``spec.nodeName`` already runs there), ResourceClaims with their allocation,
and ResourceSlices. For the pod (the one without ``nodeName``, or ``--pod``) each node is checked as
kube-scheduler's NodeResourcesFit would, with claim footprints added; failures read
``Insufficient cpu: requested 4, free 2.5``. Exit code 0 when the pod fits some node, 1 when none, 2 bad input.
"""

from __future__ import annotations

import json
import sys
import warnings
from typing import Any

from dralloc.errors import InputError


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("fit", help="check whether a pod fits nodes, DRA claim resources included",
                              description=__doc__.split("\n\n")[0])
    p.add_argument("-f", "--filename", dest="files", action="extend", nargs="+", required=True, metavar="FILE")
    p.add_argument("--pod", help="the pod to place (NAME or NAMESPACE/NAME); default: the one pending pod")
    p.add_argument("--node", help="check only this node")
    p.add_argument("-o", "--output", choices=("text", "json"), default="text")
    p.set_defaults(func=run)


def run(args: Any) -> int:
    from dralloc.api import codec
    from dralloc.resources.fit import node_fit

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        objects = [o for f in args.files for o in codec.load(f)]
    by_kind: dict[str, list[Any]] = {}
    for o in objects:
        by_kind.setdefault(type(o).__name__, []).append(o)
    pods, nodes = by_kind.get("Pod", []), by_kind.get("Node", [])
    if not nodes:
        raise InputError("no Node in the input")
    pod = _pick_pod(pods, args.pod)
    if args.node:
        nodes = [n for n in nodes if n.metadata.name == args.node]
        if not nodes:
            raise InputError(f"no Node named {args.node!r} in the input")
    results = []
    for node in nodes:
        running = [p for p in pods if p is not pod and p.spec.node_name == node.metadata.name]
        results.append(node_fit(pod, node, running, by_kind.get("ResourceClaim", []),
                                by_kind.get("ResourceSlice", [])))
    if args.output == "json":
        json.dump({"pod": f"{pod.metadata.namespace or 'default'}/{pod.metadata.name}",
                   "nodes": [r.to_dict() for r in results]}, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        for r in results:
            print(f"{r.node}: fits" if r.fits else f"{r.node}: " + "; ".join(r.reasons))
    return 0 if any(r.fits for r in results) else 1


def _pick_pod(pods: list[Any], wanted: str | None) -> Any:
    if wanted:
        ns, _, name = wanted.rpartition("/")
        for p in pods:
            if p.metadata.name == name and (not ns or (p.metadata.namespace or "default") == ns):
                return p
        raise InputError(f"no Pod named {wanted!r} in the input")
    pending = [p for p in pods if not p.spec.node_name]
    if len(pending) != 1:
        raise InputError(f"{len(pending)} pods without spec.nodeName in the input; choose one with --pod")
    return pending[0]
