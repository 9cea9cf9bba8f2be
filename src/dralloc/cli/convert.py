"""``dralloc convert``: print the resource.k8s.io/v1 form of v1beta1 / v1beta2 manifests.

    dralloc convert -f old.yaml [-o yaml|json]

Objects are decoded (v1beta1's ``basic`` device wrapper and flat requests become v1's inline devices and
``exactly`` requests) and printed as kube-apiserver would return them: camelCase, empty fields omitted,
canonical quantities. Several objects are printed as a multi-document YAML stream or a JSON ``List``.
"""

from __future__ import annotations

import sys
from typing import Any


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("convert", help="convert v1beta1/v1beta2 manifests to resource.k8s.io/v1",
                              description=__doc__.split("\n\n")[0])
    p.add_argument("-f", "--filename", dest="files", action="extend", nargs="+", required=True, metavar="FILE",
                   help="manifest files or directories ('-' for stdin)")
    p.add_argument("-o", "--output", choices=("yaml", "json"), default="yaml")
    p.set_defaults(func=run)


def run(args: Any) -> int:
    from dralloc.api import codec

    objects = [o for f in args.files for o in codec.load(f)]
    if args.output == "json":
        if len(objects) == 1:
            sys.stdout.write(codec.dump_json(objects[0]) + "\n")
        else:
            items = [codec.to_dict(o) for o in objects]
            sys.stdout.write(codec.dump_json({"apiVersion": "v1", "kind": "List", "items": items}) + "\n")
    else:
        sys.stdout.write(codec.dump_yaml_stream(objects))
    return 0
