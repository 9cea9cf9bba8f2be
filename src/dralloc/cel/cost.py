"""A static upper estimate of a selector's evaluation cost, for kube-apiserver's "too complex" check.

cel-go's estimator charges every step of the evaluation and multiplies a comprehension's body by the
largest size its range can have. This estimate follows the same shape, deliberately on the low side so that
no selector kube-apiserver accepts is rejected here: one unit per node, list and map literals at their exact
size, and values read from a device at the limits the API puts on them (a device has at most 32 attributes
and capacities and 48 attribute values). Nested comprehensions over literal lists — the classic hostile
expression — multiply out exactly as upstream's do.
"""

from __future__ import annotations

from typing import Any

from dralloc.cel.syntax import Node, parse

MAX_MAP_ENTRIES = 32  # attributes + capacities per device
MAX_LIST_ITEMS = 48  # attribute values per device


def _size(node: Any) -> int:
    """Largest number of elements ``node`` can evaluate to, when it is iterated."""
    if node.kind == "list":
        return len(node.args)
    if node.kind == "map":
        return len(node.extra or ())
    if node.kind == "comp" and node.value in ("map", "filter", "transformList", "sortBy"):
        return _size(node.target)
    if node.kind == "call" and node.value in ("range",) and node.args and node.args[0].kind == "lit":
        try:
            return max(0, int(node.args[0].value))
        except (TypeError, ValueError):
            return MAX_LIST_ITEMS
    if node.kind in ("select", "call", "ident") and _reads_device_map(node):
        return MAX_MAP_ENTRIES
    return MAX_LIST_ITEMS


def _reads_device_map(node: Any) -> bool:
    # device.attributes / device.capacity and their per-domain maps
    n = node
    while n is not None and getattr(n, "kind", None) in ("select", "call"):
        if n.kind == "select" and n.value in ("attributes", "capacity"):
            return True
        n = n.target
    return False


def estimate(node: Any) -> int:
    if not isinstance(node, Node):
        return 0
    if node.kind == "comp":
        body = sum(estimate(a) for a in node.args) + 1
        return estimate(node.target) + _size(node.target) * body
    cost = 1
    if node.target is not None:
        cost += estimate(node.target)
    for a in node.args:
        cost += estimate(a)
    if node.kind == "map":
        for entry in node.extra or ():
            for part in entry[:2]:
                cost += estimate(part)
    return cost


def estimate_cost(expression: str) -> int:
    """The estimated worst-case cost of a selector (0 when it does not parse)."""
    try:
        return estimate(parse(expression))
    except Exception:  # noqa: BLE001 - compile errors are reported elsewhere
        return 0
