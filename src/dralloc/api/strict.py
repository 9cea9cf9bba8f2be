"""Strict decoding: every unknown field and every duplicate key of a manifest, with its path.

kube-apiserver's ``fieldValidation=Strict`` (and ``kubectl --validate=strict``) rejects a body that names a
field the schema does not have or repeats a key; ``Warn`` reports the same problems as warnings. The texts
are upstream's: ``unknown field "spec.devices[0].foo"`` and ``duplicate field "metadata.name"``.
"""

from __future__ import annotations

import json
import types
import typing
from typing import Any

import msgspec
import yaml

from dralloc.api import conversion
from dralloc.api.quantity import Quantity


def field_problems(raw: bytes | str, *, yaml_input: bool = False, **kw: Any) -> list[str]:
    """Problems of one encoded object: duplicate keys first (as found), then unknown fields (document order)."""
    yaml_input = yaml_input or bool(kw.get("yaml"))
    duplicates: list[str] = []
    if yaml_input and raw.lstrip()[:1] in (b"{", "{"):
        yaml_input = False  # JSON is YAML too; the JSON scanner is much faster (kubectl sends JSON)
    try:
        data = _load_yaml(raw, duplicates) if yaml_input else _load_json(raw, duplicates)
    except (ValueError, yaml.YAMLError):
        return []  # not decodable at all: the caller reports the parse error itself
    return duplicates + unknown_fields(data)


def unknown_fields(data: Any) -> list[str]:
    """``unknown field "<path>"`` for each key of a decoded object that its kind's schema lacks."""
    if not isinstance(data, dict):
        return []
    from dralloc.api.codec import model_for

    model = model_for(data.get("apiVersion"), data.get("kind"))
    if model is None:
        return []
    if data.get("apiVersion") in conversion.SERVED_VERSIONS and data.get("apiVersion") != conversion.V1:
        data = conversion.to_v1(data)
    found: list[str] = []
    _walk(data, _node(model), "", found)
    return [f'unknown field "{p}"' for p in found]


# --- walking the schema -----------------------------------------------------------------------------
# Each model type compiles once into a small node tree: ("struct", {json name: node}), ("list", node),
# ("map", node) or None for a leaf / free-form value, so the walk itself never touches ``typing``.

_LEAF = None


def _strip_optional(tp: Any) -> Any:
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        return args[0] if len(args) == 1 else Any
    return tp


_NODES: dict[Any, Any] = {}


def _node(tp: Any) -> Any:
    tp = _strip_optional(tp)
    if tp is Any or tp is Quantity:
        return _LEAF
    origin = typing.get_origin(tp)
    if origin is list:
        item = _node(typing.get_args(tp)[0])
        return ("list", item) if item is not _LEAF else _LEAF
    if origin is dict:
        item = _node(typing.get_args(tp)[1])
        return ("map", item) if item is not _LEAF else _LEAF
    if isinstance(tp, type) and issubclass(tp, msgspec.Struct):
        node = _NODES.get(tp)
        if node is None:
            fields: dict[str, Any] = {}
            node = _NODES[tp] = ("struct", fields)  # registered first: types may refer to themselves
            hints = typing.get_type_hints(tp)
            for f in msgspec.structs.fields(tp):
                fields[f.encode_name] = _node(hints[f.name])
        return node
    return _LEAF


def _walk(value: Any, node: Any, path: str, found: list[str]) -> None:
    kind, sub = node
    if kind == "struct":
        if not isinstance(value, dict):
            return
        for k, item in value.items():
            if k not in sub:
                found.append(f"{path}.{k}" if path else k)
            else:
                child = sub[k]
                if child is not None and item is not None:
                    _walk(item, child, f"{path}.{k}" if path else k, found)
    elif kind == "list":
        if isinstance(value, list):
            for i, item in enumerate(value):
                if item is not None:
                    _walk(item, sub, f"{path}[{i}]", found)
    elif isinstance(value, dict):
        for k, item in value.items():
            if item is not None:
                _walk(item, sub, f"{path}[{k}]", found)


# --- duplicate keys ---------------------------------------------------------------------------------

def _load_json(raw: bytes | str, duplicates: list[str]) -> Any:
    # object_pairs_hook sees each object before its parent; record duplicates with a path found later.
    marks: list[tuple[dict[str, Any], list[str]]] = []

    def hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        obj: dict[str, Any] = {}
        dups: list[str] = []
        for k, v in pairs:
            if k in obj:
                dups.append(k)
            obj[k] = v
        if dups:
            marks.append((obj, dups))
        return obj

    data = json.loads(raw, object_pairs_hook=hook)
    if marks:
        _name_duplicates(data, marks, duplicates)
    return data


def _name_duplicates(data: Any, marks: list[tuple[dict[str, Any], list[str]]], out: list[str]) -> None:
    by_id = {id(obj): dups for obj, dups in marks}

    def visit(value: Any, path: str) -> None:
        if isinstance(value, dict):
            for k in by_id.get(id(value), ()):
                out.append(f'duplicate field "{path + "." + k if path else k}"')
            for k, v in value.items():
                visit(v, f"{path}.{k}" if path else k)
        elif isinstance(value, list):
            for i, v in enumerate(value):
                visit(v, f"{path}[{i}]")

    visit(data, "")


class _DupLoader(yaml.SafeLoader):
    pass


def _construct_mapping(loader: _DupLoader, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
    loader.flatten_mapping(node)
    obj: dict[Any, Any] = {}
    dups: list[str] = []
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=True)
        if key in obj:
            dups.append(str(key))
        obj[key] = loader.construct_object(value_node, deep=True)
    if dups:
        loader.dup_marks.append((obj, dups))  # type: ignore[attr-defined]
    return obj


_DupLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


def _load_yaml(raw: bytes | str, duplicates: list[str]) -> Any:
    loader = _DupLoader(raw)
    loader.dup_marks = []  # type: ignore[attr-defined]
    try:
        data = loader.get_single_data()
    finally:
        loader.dispose()
    if loader.dup_marks:  # type: ignore[attr-defined]
        _name_duplicates(data, loader.dup_marks, duplicates)  # type: ignore[attr-defined]
    return data


def duplicates_by_document(text: str) -> dict[int, list[str]]:
    """``duplicate field`` messages of each document (1-based index) of a YAML or JSON stream."""
    out: dict[int, list[str]] = {}
    loader = _DupLoader(text)
    loader.dup_marks = []  # type: ignore[attr-defined]
    index = 0
    try:
        while loader.check_node():
            index += 1
            loader.dup_marks = []  # type: ignore[attr-defined]
            data = loader.get_data()
            if loader.dup_marks:  # type: ignore[attr-defined]
                found: list[str] = []
                _name_duplicates(data, loader.dup_marks, found)  # type: ignore[attr-defined]
                out[index] = found
    except yaml.YAMLError:
        pass  # the regular parser reports syntax errors with their position
    finally:
        loader.dispose()
    return out
