"""``dralloc cel``: evaluate a CEL device selector on every device of some ResourceSlices.

    dralloc cel 'device.attributes["gpu.example.com"].model == "a100"' -f slices.yaml [-o json]

Prints one line per device (``DRIVER/POOL/DEVICE: true``, ``false`` or ``error: ...``), which is what a driver
author needs to debug a DeviceClass. A selector that does not compile is reported with cel-go's position and
caret, exit code 2. Exit code 0 when at least one device matches, 1 when none does.
"""

from __future__ import annotations

import json
import sys
import warnings
from typing import Any

from dralloc.errors import InputError


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("cel", help="evaluate a CEL device selector on the devices of ResourceSlices",
                              description=__doc__.split("\n\n")[0])
    p.add_argument("expression", help="the CEL selector expression")
    p.add_argument("-f", "--filename", dest="files", action="extend", nargs="+", required=True, metavar="FILE",
                   help="manifest files or directories ('-' for stdin); only ResourceSlices are used")
    p.add_argument("-o", "--output", choices=("text", "json"), default="text")
    p.set_defaults(func=run)


def run(args: Any) -> int:
    from dralloc.api import codec
    from dralloc.api.resource_v1 import ResourceSlice
    from dralloc.cel import CELCompileError, CELRuntimeError, compile_selector

    try:
        selector = compile_selector(args.expression)
    except CELCompileError as exc:
        raise InputError(f"CEL compile error: {exc.detail}") from None
    rows: list[dict[str, Any]] = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        objects = [o for f in args.files for o in codec.load(f)]
    for s in objects:
        if not isinstance(s, ResourceSlice):
            continue
        for device in s.spec.devices or []:
            row: dict[str, Any] = {"driver": s.spec.driver, "pool": s.spec.pool.name, "device": device.name}
            try:
                row["result"] = selector.matches(device, s.spec.driver)
            except CELRuntimeError as exc:
                row["result"] = None
                row["error"] = f"CEL runtime error: {exc}"
            rows.append(row)
    if args.output == "json":
        json.dump(rows, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        for r in rows:
            value = r.get("error") or ("true" if r["result"] else "false")
            print(f"{r['driver']}/{r['pool']}/{r['device']}: {value}")
    return 0 if any(r["result"] for r in rows) else 1
