"""Merging an applied configuration into the live object, and removing what its applier gave up, following
the schema of ``fieldtypes`` as structured-merge-diff does.

Maps and structs merge field by field; an associative list merges item by item by key and a set value by
value (items the configuration does not name keep their place, the configuration's items come in its order);
an atomic value, or a list that cannot be keyed, is replaced whole. A null in the configuration clears a
scalar or atomic value and leaves a map or a granular list as it is.
"""

from __future__ import annotations

from typing import Any

from dralloc.server.apply.fieldsets import MISSING, item_element, keyed_items
from dralloc.server.apply.fieldsv1 import Path
from dralloc.server.apply.fieldtypes import ATOMIC, FieldType


def _copy(value: Any) -> Any:
    """A copy of a JSON value (no cycles, immutable scalars: much cheaper than ``copy.deepcopy``)."""
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy(v) for v in value]
    return value


def merge(live: Any, config: Any, node: FieldType) -> Any:
    """``config`` merged into ``live`` (MISSING: absent); the result shares nothing with either."""
    if config is MISSING:
        return _copy(live)
    if node.kind != "atomic":
        if isinstance(live, dict) and live and (isinstance(config, dict) or config is None):
            return _merge_struct(live, config or {}, node)
        if node.kind in ("list-map", "set") and isinstance(live, list) and live and \
                (isinstance(config, list) or config is None):
            merged = _merge_list(live, config or [], node)
            if merged is not None:
                return merged
    if isinstance(config, dict):
        return _merge_struct({}, config, node)
    return _copy(config)


def _merge_struct(live: dict[str, Any], config: dict[str, Any], node: FieldType) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in live.items():
        merged = merge(value, config.get(key, MISSING), node.child(key))
        if merged is not None:
            out[key] = merged
    for key, value in config.items():
        if key not in live:
            merged = merge(MISSING, value, node.child(key))
            if merged is not None:
                out[key] = merged
    return out


def _merge_list(live: list[Any], config: list[Any], node: FieldType) -> list[Any] | None:
    """Live items the configuration does not name stay where they are; the configuration's items (merged
    with their live counterparts) follow its order. None if the live list cannot be keyed."""
    live_items = keyed_items(node, live)
    config_items = keyed_items(node, config)
    if live_items is None or config_items is None:
        return None
    item_node = node.item or ATOMIC
    live_by: dict[str, Any] = {}
    for element, item in live_items:
        live_by.setdefault(element, item)
    config_by = dict(config_items)
    shared = [e for e, _ in config_items if e in live_by]
    next_shared = shared.pop(0) if shared else None
    out: list[Any] = []
    done: set[str] = set()
    i = j = 0
    while i < len(live_items) or j < len(config_items):
        if i < len(live_items) and j < len(config_items):
            element = live_items[i][0]
            if element == config_items[j][0]:
                done.add(element)
                out.append(merge(live_by.get(element, MISSING), config_by[element], item_node))
                i += 1
                j += 1
                next_shared = shared.pop(0) if shared else None
                continue
            if element in config_by and next_shared is not None and next_shared != element:
                i += 1  # a shared item, placed where the configuration puts it
                continue
        if i < len(live_items):
            element, item = live_items[i]
            if element not in config_by:
                out.append(_copy(item))
                i += 1
                continue
            if element in done:
                i += 1
        if j < len(config_items):
            element = config_items[j][0]
            done.add(element)
            out.append(merge(live_by.get(element, MISSING), config_by[element], item_node))
            j += 1
            if next_shared == element:
                next_shared = shared.pop(0) if shared else None
    return [item for item in out if item is not None]


def remove(obj: dict[str, Any], paths: set[Path], node: FieldType) -> None:
    """Remove each path from ``obj`` (a field, or a list item with what is below it); a map or list the
    removal leaves empty goes too."""
    for path in sorted(paths, key=len):
        _remove(obj, path, node)


def _remove(container: Any, path: Path, node: FieldType) -> bool:
    """Remove ``path`` below ``container``; True if ``container`` is left empty by it."""
    element, rest = path[0], path[1:]
    if element.startswith("f:"):
        if not isinstance(container, dict) or element[2:] not in container:
            return False
        name = element[2:]
        if not rest or _remove(container[name], rest, node.child(name)):
            del container[name]
        return not container
    if not isinstance(container, list):
        return False
    for index, item in enumerate(container):
        if item_element(node, item) == element:
            if not rest or _remove(item, rest, node.item or ATOMIC):
                del container[index]
            return not container
    return False
