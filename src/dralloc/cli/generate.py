"""``dralloc generate cluster``: write a synthetic cluster shaped like what real DRA drivers publish.

    dralloc generate cluster --nodes 4 --profile gpu-h100|dra-example|nic [-o yaml|json] [--seed S]
    dralloc generate node --profile gpu-h100 [--name NAME] [--zone ZONE] [-o yaml|json] [--seed S]
    dralloc generate trace --format alibaba-gpu-2023 --nodes NODES.csv [--pods PODS.csv] [-o yaml|json]

DeviceClasses, then per node its Node and ResourceSlices (see ``dralloc.simulator.generate`` for each
profile), as a ``kind: List``. The same arguments always print the same bytes.
"""

from __future__ import annotations

import json
import sys
from typing import Any


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("generate", help="generate synthetic clusters (nodes, device classes, slices)",
                              description=__doc__.split("\n\n")[0])
    what = p.add_subparsers(dest="what", metavar="WHAT", required=True)
    from dralloc.simulator.generate import PROFILES

    c = what.add_parser("cluster", help="nodes with the ResourceSlices a DRA driver would publish",
                        description=__doc__.split("\n\n")[0])
    c.add_argument("--nodes", type=_count, required=True, help="number of nodes")
    c.add_argument("--profile", choices=PROFILES, required=True,
                   help="gpu-h100: 8 H100 with MIG partitions per node; dra-example: the dra-example-driver's "
                        "8 GPUs; nic: 2 NICs with consumable bandwidth")
    c.add_argument("-o", "--output", choices=("yaml", "json"), default="yaml")
    c.add_argument("--seed", type=int, default=0, help="seed for UUIDs (default 0)")
    c.set_defaults(func=run)

    n = what.add_parser("node", help="one node and its ResourceSlices: a node template for dralloc plan",
                        description="One Node of a profile with the ResourceSlices its driver publishes, as a "
                                    "List: a node template for `dralloc plan --node-template NAME=FILE`.")
    n.add_argument("--profile", choices=PROFILES, required=True)
    n.add_argument("--name", default="", help="the node's name (default: <profile>-template)")
    n.add_argument("--zone", help="its topology.kubernetes.io/zone label (default zone-a)")
    n.add_argument("-o", "--output", choices=("yaml", "json"), default="yaml")
    n.add_argument("--seed", type=int, default=0, help="seed for UUIDs (default 0)")
    n.set_defaults(func=run_node)
    t = what.add_parser("trace", help="a production trace's nodes and pods as DRA objects",
                        description="Nodes with their ResourceSlices, the DeviceClass, pods and their "
                                    "ResourceClaims of a trace (the Alibaba GPU trace: GPU nodes only)")
    t.add_argument("--format", choices=("alibaba-gpu-2023",), required=True, help="the trace's format")
    t.add_argument("--nodes", required=True, metavar="NODES.csv", help="the node list")
    t.add_argument("--pods", metavar="PODS.csv", help="the pod list (leave out for the cluster alone)")
    t.add_argument("-o", "--output", choices=("yaml", "json"), default="yaml")
    t.set_defaults(func=run_trace)


def _count(text: str) -> int:
    import argparse

    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError("must not be negative")
    return value


def run(args: Any) -> int:
    from dralloc.simulator.generate import cluster_documents

    return _write(cluster_documents(args.nodes, args.profile, seed=args.seed), args.output)


def run_node(args: Any) -> int:
    from dralloc.errors import InputError
    from dralloc.simulator.generate import node_template_documents
    from dralloc.validation.formats import is_dns1123_subdomain

    name = args.name or f"{args.profile}-template"
    problems = is_dns1123_subdomain(name)
    if problems:
        raise InputError(f"--name: Invalid value: {name!r}: {'; '.join(problems)}")
    return _write(node_template_documents(args.profile, name, zone=args.zone, seed=args.seed), args.output)


def _write(items: list[dict[str, Any]], output: str) -> int:
    from dralloc.api import codec

    if output == "json":
        json.dump({"apiVersion": "v1", "kind": "List", "items": items}, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(codec.dump_yaml([codec.decode(d) for d in items]))
    return 0


def run_trace(args: Any) -> int:
    from dralloc.trace import alibaba

    items = alibaba.cluster_documents(alibaba.read_nodes(args.nodes))
    if args.pods:
        items += alibaba.workload_documents(alibaba.read_pods(args.pods))
    return _write(items, args.output)
