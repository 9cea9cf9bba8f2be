"""Node matching as kube-scheduler's node affinity does it (terms ORed, requirements ANDed).

``matchExpressions`` look at the Node's labels, ``matchFields`` at ``metadata.name`` only. A term with
neither matches nothing. ``Gt``/``Lt`` compare integers; a label that is not an integer does not match.
Malformed selectors raise :class:`NodeSelectorError` (the allocator turns it into a hard error).
"""

from __future__ import annotations

from typing import Any


class NodeSelectorError(ValueError):
    """A node selector that node affinity cannot parse."""


def _parse_int(text: str) -> int | None:
    try:
        return int(text, 10)
    except (TypeError, ValueError):
        return None


def _requirement_matches(req: Any, value: str | None, *, field: bool) -> bool:
    op = req.operator
    values = req.values or []
    if field:
        if req.key != "metadata.name":
            raise NodeSelectorError(f"not a valid field selector key: {req.key!r}")
        if op not in ("In", "NotIn"):
            raise NodeSelectorError(f"{op!r} is not a valid field selector operator")
        if len(values) != 1:
            raise NodeSelectorError(f"unexpected number of value ({len(values)}) for node field selector: must have one element")
    if op == "In":
        if not values:
            raise NodeSelectorError("for 'in', 'notin' operators, values set can't be empty")
        return value is not None and value in values
    if op == "NotIn":
        if not values:
            raise NodeSelectorError("for 'in', 'notin' operators, values set can't be empty")
        return value is None or value not in values
    if op == "Exists":
        if values:
            raise NodeSelectorError("values set must be empty for exists and does not exist")
        return value is not None
    if op == "DoesNotExist":
        if values:
            raise NodeSelectorError("values set must be empty for exists and does not exist")
        return value is None
    if op in ("Gt", "Lt"):
        if len(values) != 1 or _parse_int(values[0]) is None:
            raise NodeSelectorError(f"for '{op}' operator, the value must be a single integer")
        if value is None:
            return False
        have = _parse_int(value)
        if have is None:
            return False
        want = _parse_int(values[0])
        return have > want if op == "Gt" else have < want  # type: ignore[operator]
    raise NodeSelectorError(f"{op!r} is not a valid label selector operator")


def node_selector_matches(selector: Any, node_name: str, labels: dict[str, str]) -> bool:
    """Whether a core/v1 NodeSelector selects the node (raises NodeSelectorError when malformed)."""
    matched = False
    for term in selector.node_selector_terms or []:
        exprs = term.match_expressions or []
        fields = term.match_fields or []
        if not exprs and not fields:
            continue
        # Every requirement is parsed (upstream parses the whole selector up front), so a malformed one
        # is an error even when an earlier requirement or term already decided the outcome.
        ok = True
        for req in exprs:
            if not _requirement_matches(req, labels.get(req.key), field=False):
                ok = False
        for req in fields:
            if not _requirement_matches(req, node_name, field=True):
                ok = False
        if ok:
            matched = True
    return matched


def node_matches(node_name: str, labels: dict[str, str], want_name: str | None, all_nodes: bool | None,
                 selector: Any) -> bool:
    """Upstream's NodeMatches: nodeName, else allNodes, else nodeSelector, else no match."""
    if want_name:
        return node_name == want_name
    if all_nodes:
        return True
    if selector is not None:
        return node_selector_matches(selector, node_name, labels)
    return False
