"""Runner for the CEL conformance suite in ../shared/cel-spec (JSON form of google/cel-spec's simple tests)."""

from __future__ import annotations

import base64
import json
import math
from pathlib import Path
from typing import Any

from dralloc.cel import CELCompileError, CELRuntimeError, compile_expression
from dralloc.cel.syntax import UInt
from dralloc.cel.values import CelType, equals

# Sections of the suite that apply to the Kubernetes DRA environment (cel-spec README).
FILES = ["basic", "comparisons", "conversions", "fields", "fp_math", "integer_math", "lists", "logic", "macros",
         "macros2", "namespace", "optionals", "parse", "plumbing", "string", "string_ext", "bindings_ext",
         "type_deduction"]


def decode_value(v: dict[str, Any]) -> Any:
    t = v["type"]
    if t == "int64":
        return int(v["value"])
    if t == "uint64":
        return UInt(int(v["value"]))
    if t == "double":
        x = v["value"]
        return float(x) if isinstance(x, str) else float(x)
    if t == "string":
        return v["value"]
    if t == "bytes":
        return base64.b64decode(v["value"])
    if t == "bool":
        return v["value"]
    if t == "null":
        return None
    if t == "list":
        return [decode_value(x) for x in v["value"]]
    if t == "map":
        return {decode_value(e["key"]): decode_value(e["value"]) for e in v["value"]}
    if t == "type":
        return CelType(v["value"])
    raise ValueError(f"unsupported value type {t}")


def same(a: Any, b: Any) -> bool:
    if type(a) is float and type(b) is float:
        if math.isnan(a) and math.isnan(b):
            return True
        return a == b and math.copysign(1, a) == math.copysign(1, b)
    if type(a) is not type(b) and not (isinstance(a, list) and isinstance(b, list)):
        return False
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return len(a) == len(b) and all(k in b and same(v, b[k]) for k, v in a.items())
    return equals(a, b)


def load_cases(root: Path) -> list[tuple[str, dict[str, Any]]]:
    cases = []
    for name in FILES:
        data = json.loads((root / f"{name}.json").read_text())
        for test in data["tests"]:
            cases.append((f"{name}/{test['section']}/{test['name']}", test))
    return cases


def run_case(test: dict[str, Any]) -> tuple[bool, str]:
    decls: dict[str, str] = {}
    functions: list[str] = []
    for d in test.get("type_env") or []:
        if "ident" in d:
            decls[d["ident"]] = d["type"]
        for o in d.get("overloads") or []:
            params = list(o["params"])
            receiver = params.pop(0) + "::" if o["is_instance_function"] else ""
            functions.append(f"{receiver}{d['function']}({', '.join(params)}) -> {o['result']}")
    bindings = {k: decode_value(v) for k, v in (test.get("bindings") or {}).items()}
    for k in bindings:
        decls.setdefault(k, "dyn")
    expected = test.get("expected")
    try:
        program = compile_expression(test["expr"], decls, container=test.get("container") or "",
                                     check=not test.get("disable_check"), macros=not test.get("disable_macros"),
                                     functions=functions, escaped_identifiers=True)
        deduced = test.get("deduced_type")
        if deduced is not None and program.result_type != deduced:
            return False, f"deduced type {program.result_type}, want {deduced}"
        if test.get("check_only"):
            return True, "checked"
        result = program.evaluate(bindings)
    except CELCompileError as exc:
        if test.get("disable_check"):
            # parse errors still fail a parse-only test; checker errors would not have happened
            if expected and expected.get("error"):
                return True, "error"
            return False, f"compile error: {exc}"
        return (bool(expected and expected.get("error")), f"compile error: {exc}")
    except CELRuntimeError as exc:
        return (bool(expected and expected.get("error")), f"runtime error: {exc}")
    if expected is None or expected.get("error") or "unknown" in expected:
        return False, f"expected an error, got {result!r}"
    want = decode_value(expected)
    return same(result, want), f"got {result!r}, want {want!r}"
