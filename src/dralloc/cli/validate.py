"""``dralloc validate``: check manifests with kube-apiserver's validation rules.

    dralloc validate -f examples/ [--strict] [-o text|json]

One line per object: ``ResourceSlice/node-1-gpus: valid``, or one line per field error
(``ResourceSlice/node-1-gpus: spec.devices[3].name: Invalid value: "GPU_0": ...``). Unknown and duplicate
fields are warnings (stderr), or errors with ``--strict``. Exit code 0 when every object is valid, 2 otherwise.
"""

from __future__ import annotations

import json
import sys
import warnings
from collections.abc import Callable
from typing import Any


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("validate", help="validate manifests as kube-apiserver would",
                              description=__doc__.split("\n\n")[0])
    p.add_argument("-f", "--filename", dest="files", action="extend", nargs="+", required=True, metavar="FILE",
                   help="manifest files or directories ('-' for stdin)")
    p.add_argument("--strict", action="store_true",
                   help="unknown and duplicate fields are errors (kube-apiserver's fieldValidation=Strict)")
    p.add_argument("-o", "--output", choices=("text", "json"), default="text")
    p.set_defaults(func=run)


def check_sources(sources: list[str], strict: bool) -> list[dict[str, Any]]:
    """Validate every object of the sources; one report per object (or per undecodable document)."""
    from dralloc.api import codec
    from dralloc.validation import validate

    reports: list[dict[str, Any]] = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        # one object at a time: only its report is kept (a large dump is never held whole)
        for checked in codec.iter_checked(sources):
            reports.append(_report(checked, strict, validate))
    for w in caught:
        print(f"warning: {w.message}", file=sys.stderr)
    return reports


def _report(checked: Any, strict: bool, validate: Callable[[Any], list[Any]]) -> dict[str, Any]:
    """One object's report: its decode error, or its validation errors (and, with ``strict``, its
    problems as errors rather than warnings)."""
    doc = checked.document
    problems = list(checked.problems)
    if checked.error is not None:
        errors = [{"type": "DecodeError", "field": "", "detail": str(checked.error),
                   "message": str(checked.error)}]
        if strict:
            errors += [_problem_error(p) for p in problems]
        return {"source": doc.source, "document": doc.index, "kind": checked.kind, "name": checked.name,
                "valid": False, "errors": errors, "warnings": [] if strict else problems}
    obj = checked.obj
    errors = [e.to_dict() for e in validate(obj)]
    warns: list[str] = []
    if strict:
        errors = [_problem_error(p) for p in problems] + errors
    else:
        warns = problems
    meta = obj.metadata
    return {"source": doc.source, "document": doc.index, "apiVersion": obj.api_version,
            "kind": type(obj).__name__, "namespace": meta.namespace, "name": meta.name,
            "valid": not errors, "errors": errors, "warnings": warns}


def _problem_error(problem: str) -> dict[str, str]:
    return {"type": "FieldValueInvalid", "field": "", "detail": problem, "message": problem}


def _get(data: Any, key: str) -> Any:
    return data.get(key) if isinstance(data, dict) else None


def run(args: Any) -> int:
    from dralloc.api.codec import cyclic_gc_paused

    with cyclic_gc_paused():  # nothing here makes reference cycles; the collector would only slow it down
        reports = check_sources(args.files, args.strict)
    if args.output == "json":
        json.dump(reports, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        for r in reports:
            label = f"{r['kind'] or 'object'}/{r['name'] or '(unnamed)'}"
            for w in r["warnings"]:
                print(f"warning: {label}: {w}", file=sys.stderr)
            if r["valid"]:
                print(f"{label}: valid")
            for e in r["errors"]:
                print(f"{label}: {e['message']}")
    return 0 if all(r["valid"] for r in reports) else 2
