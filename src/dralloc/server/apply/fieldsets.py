"""Field sets as structured-merge-diff keeps them for ``managedFields``, over the schema of ``fieldtypes``.

A field set is a set of paths; a path is a tuple of path elements written as in ``fieldsV1`` (``fieldsv1``):
``f:name`` for a field, ``k:{"name":"app"}`` for an item of an associative list and ``v:"value"`` for an item
of a set. Every path in the set is owned itself.

- ``config_fields`` is what an applied configuration owns: every scalar, every atomic value, every list item
  and every field set to null or ``{}``; a struct is owned only through its fields.
- ``compare`` lists the paths a write changed (added or modified) and removed, as structured-merge-diff's
  comparison of the old and new object does: a map or list item that did not exist before is itself
  "added", so the writer owns it (``.``) as well as its fields.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterable, Mapping
from functools import partial
from json.encoder import encode_basestring
from typing import Any

from dralloc.server.apply.fieldsv1 import Path, element_string, item_order, path_string
from dralloc.server.apply.fieldtypes import ATOMIC, STRUCT, FieldType
from dralloc.server.http.errors import ApiError

# A create's managedFields are walked in C where the optional extension _fastfields.c was built at install time
# (the same trees, keys in the same order; its list items' keys are still made here, in Python).
# DRALLOC_PURE_PYTHON=1 walks them in Python, as it reads protobuf bodies in Python.
try:
    if os.environ.get("DRALLOC_PURE_PYTHON", "") not in ("", "0"):
        raise ImportError("DRALLOC_PURE_PYTHON is set")
    from dralloc.server.apply import _fastfields
except ImportError:  # not built (no compiler when installed), or switched off
    _fastfields = None  # type: ignore[assignment]

MISSING: Any = object()  # an absent value (a JSON null is None)


_ENCODER = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False)  # configuration only, no state


_GO_ESCAPED = re.compile("[<>&\u2028\u2029]")


def _json(value: Any) -> str:
    """Compact JSON as Go's encoding/json writes it (which escapes <, > and & in strings)."""
    text = _ENCODER.encode(value)
    if _GO_ESCAPED.search(text):
        text = (text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
                .replace("\u2028", "\\u2028").replace("\u2029", "\\u2029"))
    return text


def _scalar_json(value: Any) -> str:
    if isinstance(value, str):
        text: str = encode_basestring(value)
        return _json(value) if _GO_ESCAPED.search(text) else text
    if value is True or value is False or value is None:
        return "true" if value is True else "false" if value is False else "null"
    if isinstance(value, int):
        return str(value)
    return _json(value)


def item_element(node: FieldType, item: Any) -> str | None:
    """The path element of an item of an associative list or set; None if the schema cannot key it."""
    if node.kind == "set":
        return None if item is None or isinstance(item, (dict, list)) else "v:" + _scalar_json(item)
    if not isinstance(item, dict):
        return None
    parts = []
    defaults = node.key_defaults
    for name in node.sorted_keys:
        if name in item:
            parts.append(f'"{name}":{_scalar_json(item[name])}')
        elif name in defaults:
            parts.append(f'"{name}":{_scalar_json(defaults[name])}')
    return "k:{" + ",".join(parts) + "}" if parts else None


def keyed_items(node: FieldType, items: list[Any]) -> list[tuple[str, Any]] | None:
    """The items of a granular list with their path elements, or None if one cannot be keyed (then the
    list is handled whole)."""
    out = []
    for item in items:
        element = item_element(node, item)
        if element is None:
            return None
        out.append((element, item))
    return out


def _granular_list(node: FieldType, value: Any) -> bool:
    return node.kind in ("list-map", "set") and isinstance(value, list)


# ---- what a configuration owns --------------------------------------------------------------------------

def config_fields(obj: dict[str, Any], node: FieldType, what: str) -> set[Path]:
    """The paths an applied object owns; ``what`` names the object in the error a bad list gets."""
    out: set[Path] = set()
    _struct_fields(obj, node, (), out, what)
    return out


def _struct_fields(obj: dict[str, Any], node: FieldType, path: Path, out: set[Path], what: str) -> None:
    for key, value in obj.items():
        child = path + ("f:" + key,)
        _value_fields(value, node.child(key), child, out, what)
        if value is None or (isinstance(value, dict) and not value):
            out.add(child)


def _value_fields(value: Any, node: FieldType, path: Path, out: set[Path], what: str) -> None:
    if isinstance(value, dict) and node.kind != "atomic":
        _struct_fields(value, node, path, out, what)
    elif _granular_list(node, value):
        items = keyed_items(node, value)
        if items is None:
            why = (f"associative list with keys has an element that omits all key fields {_json(list(node.keys))}"
                   if node.keys else "associative list without keys has an element that is not a scalar")
            raise ApiError(400, f"failed to create typed patch object ({what}): {path_string(path)}: {why}")
        seen: set[str] = set()
        item_node = node.item or ATOMIC
        for element, item in items:
            if element in seen:
                raise ApiError(400, f"failed to create typed patch object ({what}): {path_string(path)}: "
                                    f"duplicate entries for key {element_string(element)}")
            seen.add(element)
            _value_fields(item, item_node, path + (element,), out, what)
            out.add(path + (element,))
    elif not (isinstance(value, list) and not value and node.kind in ("list-map", "set")):
        out.add(path)  # a scalar, an atomic value, or a list of any other type; an empty granular list owns nothing


# ---- what a write changed ------------------------------------------------------------------------------

def compare(old: Any, new: Any, node: FieldType, skip: Iterable[Path] = ()) -> tuple[set[Path], set[Path]]:
    """The paths ``new`` added or modified, and the paths it removed, relative to ``old``."""
    changed: set[Path] = set()
    removed: set[Path] = set()
    _compare(old, new, node, (), changed, removed, frozenset(skip))
    return changed, removed


def _empty(value: Any) -> bool:
    return value is MISSING or value is None or (isinstance(value, (dict, list)) and not value)


def _compare(old: Any, new: Any, node: FieldType, path: Path, changed: set[Path], removed: set[Path],
             skip: frozenset[Path]) -> None:
    if node.kind != "atomic" and not (_empty(old) and _empty(new)):
        # A null on one side is an empty map or list, as structured-merge-diff reads it.
        if isinstance(old, dict) or isinstance(new, dict):
            if (old is MISSING or old is None or isinstance(old, dict)) and \
                    (new is MISSING or new is None or isinstance(new, dict)):
                _compare_struct({} if old is None else old, {} if new is None else new, node, path, changed,
                                removed, skip)
                return
        elif node.kind in ("list-map", "set") and (old is MISSING or old is None or isinstance(old, list)) and \
                (new is MISSING or new is None or isinstance(new, list)):
            if _compare_list([] if old is None else old, [] if new is None else new, node, path, changed,
                             removed, skip):
                return
    if old is MISSING:  # a leaf: a scalar, an atomic value, or an empty map or list
        changed.add(path)
    elif new is MISSING:
        removed.add(path)
    elif old != new or type(old) is not type(new):
        changed.add(path)


def _compare_struct(old: Any, new: Any, node: FieldType, path: Path, changed: set[Path], removed: set[Path],
                    skip: frozenset[Path]) -> None:
    names = dict.fromkeys(old if old is not MISSING else ())
    names.update(dict.fromkeys(new if new is not MISSING else ()))
    names.update(dict.fromkeys(node.always))
    for name in names:
        child = path + ("f:" + name,)
        if child in skip:
            continue
        a = old.get(name, node.always.get(name, MISSING)) if old is not MISSING else MISSING
        b = new.get(name, node.always.get(name, MISSING)) if new is not MISSING else MISSING
        if a is b or (a is not MISSING and b is not MISSING and a == b):
            continue  # the same value on both sides: nothing below changed
        _compare(a, b, node.child(name), child, changed, removed, skip)
    if old is MISSING:
        changed.add(path)
    elif new is MISSING:
        removed.add(path)


def _compare_list(old: Any, new: Any, node: FieldType, path: Path, changed: set[Path], removed: set[Path],
                  skip: frozenset[Path]) -> bool:
    old_items = keyed_items(node, old) if old is not MISSING else []
    new_items = keyed_items(node, new) if new is not MISSING else []
    if old_items is None or new_items is None:
        return False  # not keyable: compared whole
    before: dict[str, list[Any]] = {}
    after: dict[str, list[Any]] = {}
    for element, item in old_items:
        before.setdefault(element, []).append(item)
    for element, item in new_items:
        after.setdefault(element, []).append(item)
    item_node = node.item or ATOMIC
    for element in {**before, **after}:
        a, b = before.get(element, []), after.get(element, [])
        where = path + (element,)
        if len(a) == 1 and len(b) == 1 and a[0] == b[0]:
            continue
        if len(a) <= 1 and len(b) <= 1:
            _compare(a[0] if a else MISSING, b[0] if b else MISSING, item_node, where, changed, removed, skip)
        elif len(a) >= 2 and len(b) >= 2:
            if a != b:
                changed.add(where)
        elif len(a) >= 2:
            removed.add(where)
        else:
            changed.add(where)
    if old is MISSING:
        changed.add(path)
    elif new is MISSING:
        removed.add(path)
    return True


# ---- what a create adds, in one walk ---------------------------------------------------------------------

def created_fields(new: dict[str, Any], node: FieldType, before: dict[str, Any],
                   skip: Mapping[str, Any]) -> dict[str, Any]:
    """The ``fieldsV1`` tree of ``to_fields(compare(before, new, node)[0])`` for a create, where ``before`` is the
    kind's empty object (``fieldtypes.skeleton``), built in one walk without field sets: the write path's
    common case. ``skip`` is a tree of path elements never owned (True: the whole subtree)."""
    if _fastfields is not None and type(before) is dict:
        return _fastfields.created_fields(STRUCT, _created_list, new, node, before, skip)
    return created_fields_python(new, node, before, skip)


def created_fields_python(new: dict[str, Any], node: FieldType, before: dict[str, Any],
                          skip: Mapping[str, Any]) -> dict[str, Any]:
    """:func:`created_fields` walked in Python (what _fastfields.c does, where it is built)."""
    return _created_struct(new, node, before, skip, {})


# What each field of a struct becomes in a create's walk, by the struct's schema node, the tree of fields never
# owned below it, what it was in the kind's empty object and its field names: (field name, path element, what
# is never owned below it, its schema node, whether the object holds it (else: an ``always`` value), what it
# was before). A create meets the same few shapes again and again (every pod's spec, containers and volumes,
# every device of a slice): the sorting, the path elements and the lookups are made once per shape, not once
# per field of every object. Keyed by ids; the entry holds the node, the tree and the empty object, so no id
# is reused while the entry lives (the empty objects are only read, as the walk reads them).
_Plan = tuple[tuple[str, str, Any, FieldType, bool, Any], ...]
_STRUCT_PLANS: dict[tuple[int, int, int, tuple[str, ...]], tuple[FieldType, Any, Any, _Plan]] = {}
_STRUCT_PLANS_MAX = 8192


def _created_struct(obj: dict[str, Any], node: FieldType, before: Any, skip: Mapping[str, Any] | None,
                    out: dict[str, Any]) -> dict[str, Any]:
    """Add ``obj``'s fields to ``out`` (which holds ``"."`` already when the map is new)."""
    key = (id(node), id(skip), id(before), tuple(obj))
    found = _STRUCT_PLANS.get(key)
    if found is None or found[0] is not node or found[1] is not skip or found[2] is not before:
        found = (node, skip, before, _struct_plan(obj, node, before, skip))
        if len(_STRUCT_PLANS) < _STRUCT_PLANS_MAX:
            _STRUCT_PLANS[key] = found
    always = node.always
    for name, element, inner, child, sent, was in found[3]:
        value = obj[name] if sent else always[name]  # an unset value struct of a new parent: owned as {}
        if was is MISSING:
            if inner is not None:
                was = {}  # stripped as a member (metadata): never owned itself
            elif not isinstance(value, (dict, list)):
                out[element] = {}  # a new scalar (most fields): a leaf
                continue
            else:
                out[element] = created_new(value, child)
                continue
        sub = _created_value(value, child, was, inner)
        if sub is not None:
            out[element] = sub
    return out


def _struct_plan(obj: dict[str, Any], node: FieldType, before: Any, skip: Mapping[str, Any] | None) -> _Plan:
    always = node.always
    names: Iterable[str] = obj if before is not MISSING or not always else {**obj, **always}
    plan = []
    for name in sorted(names):
        element = "f:" + name
        inner = skip.get(element) if skip else None
        if inner is True:
            continue
        was = before.get(name, MISSING) if before is not MISSING else MISSING
        plan.append((name, element, inner, node.child(name), name in obj, was))
    return tuple(plan)


def _created_value(value: Any, node: FieldType, before: Any, skip: Mapping[str, Any] | None) -> dict[str, Any] | None:
    if node.kind != "atomic" and value:
        if isinstance(value, dict) and (before is MISSING or isinstance(before, dict)):
            if before is not MISSING:
                return _created_struct(value, node, before, skip, {}) or None
            out = _created_struct(value, node, before, skip, {".": {}})
            return out if len(out) > 1 else {}
        if isinstance(value, list) and node.kind in ("list-map", "set") and (before is MISSING or before == []):
            tree = _created_list(value, node, before is MISSING)
            if tree is not None:
                return tree
    if before is MISSING:
        return {}
    return None if before == value and type(before) is type(value) else {}


def _created_list(value: list[Any], node: FieldType, new: bool = True) -> dict[str, Any] | None:
    """The tree of a non-empty associative list or set whose items are all new (``new``: and the list too);
    None when an item cannot be keyed (the list is then owned whole)."""
    items = keyed_items(node, value)
    if items is None:
        return None
    tree: dict[str, Any] = {".": {}} if new else {}
    item_node = node.item or ATOMIC
    duplicates: set[str] = set()
    if len(items) > 1:
        items.sort(key=lambda pair: item_order(node, pair[1]))
        seen: set[str] = set()
        for element, _ in items:
            (duplicates if element in seen else seen).add(element)
    for element, item in items:
        if element not in tree:  # a duplicated item is owned, nothing below it
            tree[element] = {} if element in duplicates else created_new(item, item_node) or {}
    return tree


def created_new_python(value: Any, node: FieldType) -> dict[str, Any]:
    """The tree ``value`` owns where nothing was before and nothing below it is left out (a new field's value,
    a new list item): the walk in Python."""
    if node.kind != "atomic" and value:
        if isinstance(value, dict):
            out = _created_struct(value, node, MISSING, None, {".": {}})
            return out if len(out) > 1 else {}
        if isinstance(value, list) and node.kind in ("list-map", "set"):
            tree = _created_list(value, node)
            if tree is not None:
                return tree
    return {}


# The same walk in C where _fastfields.c was built (see created_fields): a create's new fields are most of its
# managedFields' cost.
created_new: Callable[[Any, FieldType], dict[str, Any]] = created_new_python
if _fastfields is not None:
    created_new = partial(_fastfields.created_new, STRUCT, _created_list)


def with_named_fields(paths: set[Path]) -> set[Path]:
    """The set with every field on the way to a member as a member too (structured-merge-diff's
    EnsureNamedFieldsAreMembers; every object field counts as named, the list items on the way do not)."""
    out = set(paths)
    for path in paths:
        for i in range(1, len(path)):
            if path[i - 1].startswith("f:"):
                out.add(path[:i])
    return out
