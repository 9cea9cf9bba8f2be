"""``dralloc compare``: the nine multi-dimensional comparisons of two resource lists.

    dralloc compare cpu=1,memory=1G cpu=2,memory=2G,nvidia.com/gpu=2 [--missing zero|infinity] [-o json]

Prints ``less``, ``less_equal``, ``less_partly``, ``less_equal_partly``, ``equal``, ``greater``,
``greater_equal``, ``greater_partly`` and ``greater_equal_partly`` of A against B, a dimension missing on one
side taking the value ``--missing`` names (default zero).
"""

from __future__ import annotations

import json
import sys
from typing import Any


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("compare", help="compare two resource lists in all nine ways",
                              description=__doc__.split("\n\n")[0])
    p.add_argument("left", metavar="A", help='resource list, e.g. "cpu=1,memory=1Gi"')
    p.add_argument("right", metavar="B", help="resource list to compare A with")
    p.add_argument("--missing", choices=("zero", "infinity"), default="zero",
                   help="value of a dimension present on one side only (default: zero)")
    p.add_argument("-o", "--output", choices=("text", "json"), default="text")
    p.set_defaults(func=run)


def run(args: Any) -> int:
    from dralloc.resources import ResourceList, compare_all

    results = compare_all(ResourceList.parse(args.left), ResourceList.parse(args.right), args.missing)
    if args.output == "json":
        json.dump(results, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        width = max(len(k) for k in results)
        for name, value in results.items():
            print(f"{name:<{width}}  {'true' if value else 'false'}")
    return 0
