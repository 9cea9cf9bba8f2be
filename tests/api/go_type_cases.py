"""Every leaf of the Pod, Node, PersistentVolumeClaim, Event and Secret schemas, values of other JSON types
for each, and the error Go's decoder gives, derived from the leaf's Go type and path by encoding/json's rules
(for the hypothesis tests of dralloc.api.gotypes and of the API server)."""

from __future__ import annotations

from typing import Any

from dralloc.api import gotypes
from dralloc.api.quantity import ERR_FORMAT_WRONG

WRONG: dict[int, list[Any]] = {
    gotypes._STRING: [5, 1.5, True, [], {}], gotypes._BOOL: ["x", 0, [], {}],
    gotypes._INT: ["1", True, 1.5, [], {}, 2 ** 64], gotypes._QUANTITY: [True, [], {}, "x"],
    gotypes._INT_OR_STRING: [True, 1.5, [], {}, 2 ** 40], gotypes._TIME: [1, True, [], {}],
    gotypes._MICRO_TIME: [1, True, [], {}], gotypes._BYTES: [1, True, {}, "x"],
}


def leaves(t: gotypes.GoType, struct: str, fields: tuple[str, ...], steps: tuple[Any, ...],
           seen: frozenset[str]) -> list[tuple[tuple[Any, ...], gotypes.GoType, str, tuple[str, ...]]]:
    """(steps to the leaf, its type, its Go error context) for every leaf below ``t``."""
    if t.kind == gotypes._STRUCT:
        if t.name in seen:
            return []
        out = []
        for name, child in t.fields.items():
            out += leaves(child, t.struct, (*fields, name), (*steps, name), seen | {t.name})
        return out
    if t.kind == gotypes._LIST:
        assert t.item is not None
        return leaves(t.item, struct, fields, (*steps, 0), seen)
    if t.kind == gotypes._MAP:
        assert t.item is not None
        return leaves(t.item, struct, fields, (*steps, "k"), seen)
    return [(steps, t, struct, fields)] if t.kind in WRONG else []


LEAVES = [(kind, *leaf) for kind in ("Pod", "Node", "PersistentVolumeClaim", "Event", "Secret")
          for leaf in leaves(gotypes.go_type("v1." + kind), "", (), (), frozenset())
          if leaf[0] not in (("apiVersion",), ("kind",))]  # (they say which schema applies)


def expected(value: Any, t: gotypes.GoType, struct: str, fields: tuple[str, ...]) -> str:
    """Go's error, from the leaf's Go type and the path, by the rules of encoding/json."""
    what = {str: "string", bool: "bool", list: "array", dict: "object"}.get(type(value), "number")
    name = t.name
    if t.kind == gotypes._INT and what == "number":
        what = f"number {value}"
    elif t.kind == gotypes._QUANTITY:
        return ERR_FORMAT_WRONG
    elif t.kind == gotypes._INT_OR_STRING:
        name, what = "int32", what if what != "number" else f"number {value}"
    elif t.kind in (gotypes._TIME, gotypes._MICRO_TIME):
        name = "string"
    elif t.kind == gotypes._BYTES and type(value) is str:
        return "illegal base64 data at input byte 0"
    return f"json: cannot unmarshal {what} into Go struct field {struct}.{'.'.join(fields)} of type {name}"


def nest(steps: tuple[Any, ...], value: Any) -> Any:
    """``value`` at ``steps`` (a 0 is a list's item, anything else a key) in new lists and dicts."""
    if not steps:
        return value
    inner = nest(steps[1:], value)
    return [inner] if steps[0] == 0 else {steps[0]: inner}


def build(kind: str, steps: tuple[Any, ...], value: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": kind, **nest(steps, value)}
