"""``fieldsV1``, the wire form of a field set in ``managedFields``, and paths as conflicts print them.

A path element is written ``f:name`` (a field), ``k:{"name":"app"}`` (an associative list item: its key fields
sorted by name, as compact JSON) or ``v:"value"`` (a set item). Elements are sorted at every level as
structured-merge-diff sorts them: fields by name, then list keys, then set values, by value (numbers, strings,
booleans, lists, maps, null). An owned path that also has owned paths below it carries ``".": {}``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from dralloc.server.apply.fieldtypes import FieldType

Path = tuple[str, ...]


def parse_fields(fields: Any) -> set[Path]:
    """The paths a ``fieldsV1`` tree owns (anything malformed owns nothing)."""
    out: set[Path] = set()
    if isinstance(fields, dict):
        _parse(fields, (), out)
    return out


def owned_among(fields: Any, paths: Iterable[Path]) -> set[Path]:
    """Which of ``paths`` a ``fieldsV1`` tree owns, found by following each path (no parse of the whole tree:
    most writes touch a few paths of entries that own many)."""
    out: set[Path] = set()
    if not isinstance(fields, dict):
        return out
    for path in paths:
        node: Any = fields
        for element in path:
            node = node.get(element) if isinstance(node, dict) else None
            if node is None:
                break
        else:
            if not isinstance(node, dict) or not node or "." in node:
                out.add(path)
    return out


def _parse(tree: dict[str, Any], path: Path, out: set[Path]) -> None:
    for key, sub in tree.items():
        if key == "." or not isinstance(key, str) or key[1:2] != ":":
            continue
        child = path + (key,)
        if not isinstance(sub, dict) or not sub or "." in sub:
            out.add(child)
        if isinstance(sub, dict):
            _parse(sub, child, out)


def _value_order(value: Any) -> tuple[Any, ...]:
    """structured-merge-diff's order of scalar values: numbers, strings, booleans, lists, maps, null."""
    if isinstance(value, bool):
        return (2, value)
    if isinstance(value, (int, float)):
        return (0, value)
    if isinstance(value, str):
        return (1, value)
    if isinstance(value, list):
        return (3, [_value_order(v) for v in value])
    if isinstance(value, dict):
        return (4, sorted((k, _value_order(v)) for k, v in value.items()))
    return (5,)


def item_order(node: FieldType, item: Any) -> tuple[Any, ...]:
    """``element_order`` of an item's path element, from the item itself."""
    if node.kind == "set":
        return (2, _value_order(item))
    key = sorted((k, item[k] if k in item else node.key_defaults[k]) for k in node.keys
                 if k in item or k in node.key_defaults)
    return (1, [(k, _value_order(v)) for k, v in key])


def element_order(element: str) -> tuple[Any, ...]:
    """Fields before list keys before set values; fields by name, keys and values by value."""
    kind, text = element[0], element[2:]
    if kind == "f":
        return (0, text)
    try:
        value = json.loads(text)
    except ValueError:
        return (3, text)
    if kind == "k" and isinstance(value, dict):
        return (1, [(k, _value_order(v)) for k, v in value.items()])
    return (2, _value_order(value))


def to_fields(paths: Iterable[Path]) -> dict[str, Any]:
    """The ``fieldsV1`` tree of a field set, elements sorted at every level as structured-merge-diff writes it
    (so the same ownership reads the same every time)."""
    root: dict[str, Any] = {}
    members: set[int] = set()
    for path in paths:
        node = root
        for element in path:
            node = node.setdefault(element, {})
        members.add(id(node))
    return _sorted(root, members)


def _sorted(tree: dict[str, Any], members: set[int]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for element in sorted(tree, key=element_order) if len(tree) > 1 else tree:
        sub = tree[element]
        if sub:
            written = _sorted(sub, members)
            out[element] = {".": {}, **written} if id(sub) in members else written
        else:
            out[element] = {}
    return out


def element_string(element: str) -> str:
    """``.name``, ``[name="app",other=1]`` or ``[="value"]``, as structured-merge-diff prints a path element."""
    kind, text = element[0], element[2:]
    if kind == "f":
        return "." + text
    value = json.loads(text)
    if kind == "k" and isinstance(value, dict):
        return "[" + ",".join(f"{k}={_print_value(v)}" for k, v in value.items()) + "]"
    return f"[={_print_value(value)}]"


def _print_value(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    return str(value)


def path_string(path: Path) -> str:
    return "".join(element_string(e) for e in path)


def path_order(path: Path) -> tuple[Any, ...]:
    """The order structured-merge-diff iterates a set in: at each level the members, then the children."""
    last = len(path) - 1
    return tuple((0 if i == last else 1, element_order(e)) for i, e in enumerate(path))
