"""The messages of a schema table compiled for reading (:class:`_Plan`): each field's raw keys (number << 3 |
wire type) mapped to a slot (the field's place in the Go struct's order) and, per slot, what the field
becomes. The two passes (walker.py) and the single pass's code generator (single_pass.py) both read a table
through its plans; how deep a table's objects nest (:func:`_nesting`) is a property of the plans too."""

from __future__ import annotations

import sys
from typing import Any

from dralloc.server.protobuf.schema import SCALARS, SPECIAL, UNBOUNDED, Field, Schema

# Nesting of messages (the tables' own depth is far less; this bounds a walk should a table ever recurse)
MAX_DEPTH = 100
# What a field becomes (a _Plan's codes; the commonest first in the walk's chain of tests)
_STRING, _MESSAGE, _REPEATED, _MAP, _PACKABLE, _SCALAR, _SPECIAL = range(7)


class _Plan:
    """A message of a table, compiled for the walk."""

    __slots__ = ("name", "schema", "keys", "slots", "message_types", "reorder")

    def __init__(self, name: str, schema: dict[int, Field]) -> None:
        self.name = name
        self.schema = schema
        self.keys: dict[int, int] = {}  # raw key of a field in a wire type it may come in → slot
        # per slot: (code, JSON name or "" when inline, keep_zero, inline, kind: a _Plan or a type name, Field,
        # rank: the field's place in field-number order, the order Go writes fields in)
        self.slots: list[tuple[int, str, bool, bool, Any, Field, int]] = []
        # the JSON names in struct order, when it is not field-number order (the single pass reorders)
        self.reorder: tuple[str, ...] = ()
        self.message_types: frozenset[str] = frozenset()  # the table's messages (a map's zero value)


_PLANS: dict[int, tuple[Schema, dict[str, _Plan]]] = {}


def _plans(table: Schema) -> dict[str, _Plan]:
    """The compiled messages of ``table`` (compiled on first use; the entry holds the table, so its id stays
    its own)."""
    found = _PLANS.get(id(table))
    if found is not None and found[0] is table:
        return found[1]
    plans = {name: _Plan(name, schema) for name, schema in table.items()}
    for plan in plans.values():
        plan.message_types = frozenset(table)
        for slot, (number, f) in enumerate(plan.schema.items()):
            plan.keys[number << 3 | f.wire] = slot
            if f.varint and f.repeated:
                plan.keys[number << 3 | 2] = slot  # packed
            # a type name, or the _Plan of a message (as the old reading, a SPECIAL name in a table is that
            # message only when the field is a single one)
            kind: Any = f.type if f.type in SCALARS or f.type in SPECIAL else plans.get(f.type, f.type)
            if f.map:
                code = _MAP
            elif f.repeated:
                code = _PACKABLE if f.varint else _REPEATED
            elif f.type == "string":
                code = _STRING
            elif f.type in SCALARS:
                code = _SCALAR
            elif f.type in table:
                code, kind = _MESSAGE, plans[f.type]
            else:
                code = _SPECIAL
            rank = sorted(plan.schema).index(number)
            plan.slots.append((code, "" if f.inline else f.name, f.keep_zero, f.inline, kind, f, rank))
        if list(plan.schema) != sorted(plan.schema):
            plan.reorder = tuple(f.name for f in plan.schema.values())
            if any(f.inline for f in plan.schema.values()):
                raise ValueError(f"{plan.name}: an inline field in a message whose struct order is not its "
                                 f"field-number order")
    _PLANS[id(table)] = (table, plans)
    return plans


def _recursive(plans: dict[str, _Plan]) -> set[str]:
    """The messages that can hold themselves, at any depth."""
    def reaches(start: _Plan) -> set[str]:
        seen: set[str] = set()
        stack = [start]
        while stack:
            for slot in stack.pop().slots:
                kind = slot[4]
                if isinstance(kind, _Plan) and kind.name not in seen:
                    seen.add(kind.name)
                    stack.append(kind)
        return seen
    return {name for name, plan in plans.items() if name in reaches(plan)}


_NESTING: dict[tuple[int, str], tuple[Schema, int]] = {}


def _nesting(table: Schema, name: str) -> int:
    """decoder.py's :func:`nesting` of message ``name`` of ``table`` (computed once)."""
    found = _NESTING.get((id(table), name))
    if found is not None and found[0] is table:
        return found[1]
    plans = _plans(table)
    depths: dict[str, int] = {}

    def depth(plan: _Plan) -> int:  # the plan's object is level 1
        if plan.name not in depths:
            deepest = 0
            for code, _name, _keep, inline, kind, _f, _rank in plan.slots:
                below = depth(kind) if isinstance(kind, _Plan) else 0
                if inline:
                    below -= 1  # (its fields are the object's own)
                elif code in (_REPEATED, _MAP, _PACKABLE):
                    below += 1  # the list or the map
                deepest = max(deepest, below)
            depths[plan.name] = 1 + deepest
        return depths[plan.name]

    unbounded = _recursive(plans) or any(f.type in UNBOUNDED for fields in table.values() for f in fields.values())
    value = sys.maxsize if unbounded else depth(plans[name])
    _NESTING[id(table), name] = (table, value)
    return value
