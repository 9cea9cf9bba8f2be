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
from pathlib import Path
from typing import Any

from dralloc.errors import DecodeError


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("validate", help="validate manifests as kube-apiserver would",
                              description=__doc__.split("\n\n")[0])
    p.add_argument("-f", "--filename", dest="files", action="extend", nargs="+", required=True, metavar="FILE",
                   help="manifest files or directories ('-' for stdin)")
    p.add_argument("--strict", action="store_true",
                   help="unknown and duplicate fields are errors (kube-apiserver's fieldValidation=Strict)")
    p.add_argument("-o", "--output", choices=("text", "json"), default="text")
    p.set_defaults(func=run)


def _texts(src: str) -> dict[str, str]:
    """Source name → text, for the duplicate-key scan (which needs the raw text)."""
    if src == "-":
        return {}
    path = Path(src)
    files = sorted(p for p in path.iterdir() if p.is_file() and p.suffix.lower() in (".yaml", ".yml", ".json")) \
        if path.is_dir() else [path]
    out = {}
    for f in files:
        try:
            out[str(f)] = f.read_text(encoding="utf-8-sig")
        except (OSError, UnicodeDecodeError):
            pass  # read_documents reports it
    return out


def check_sources(sources: list[str], strict: bool) -> list[dict[str, Any]]:
    """Validate every object of the sources; one report per object (or per undecodable document)."""
    from dralloc.api import codec
    from dralloc.api.strict import duplicates_by_document, unknown_fields
    from dralloc.validation import validate

    reports: list[dict[str, Any]] = []
    for src in sources:
        if src == "-":
            text = sys.stdin.read()
            docs = codec.parse_text(text, "<stdin>")
            dups = {"<stdin>": duplicates_by_document(text)}
        else:
            docs = codec.read_documents(src)
            dups = {name: duplicates_by_document(t) for name, t in _texts(src).items()}
        for doc in docs:
            field_problems = list(dups.get(doc.source, {}).get(doc.index, []))
            try:
                with warnings.catch_warnings(record=True) as caught:
                    warnings.simplefilter("always")
                    pairs = list(codec.iter_objects([doc]))
                for w in caught:
                    print(f"warning: {w.message}", file=sys.stderr)
            except DecodeError as exc:
                reports.append({"source": doc.source, "document": doc.index, "kind": _get(doc.data, "kind"),
                                "name": _get(_get(doc.data, "metadata"), "name"), "valid": False,
                                "errors": [{"type": "DecodeError", "field": "", "detail": str(exc),
                                            "message": str(exc)}], "warnings": []})
                continue
            for item_doc, obj in pairs:
                problems = field_problems + unknown_fields(item_doc.data)
                field_problems = []  # duplicates belong to the document; report them once
                errors = [e.to_dict() for e in validate(obj)]
                warns: list[str] = []
                if strict:
                    errors = [{"type": "FieldValueInvalid", "field": "", "detail": p, "message": p}
                              for p in problems] + errors
                else:
                    warns = problems
                meta = obj.metadata
                reports.append({"source": doc.source, "document": doc.index, "apiVersion": _get(item_doc.data, "apiVersion"),
                                "kind": type(obj).__name__, "namespace": meta.namespace, "name": meta.name,
                                "valid": not errors, "errors": errors, "warnings": warns})
    return reports


def _get(data: Any, key: str) -> Any:
    return data.get(key) if isinstance(data, dict) else None


def run(args: Any) -> int:
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
