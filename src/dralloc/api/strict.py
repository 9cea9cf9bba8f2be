"""Strict decoding: every unknown field and every duplicate key of a manifest, with its path.

kube-apiserver's ``fieldValidation=Strict`` (and ``kubectl --validate=strict``) rejects a body that names a
field the schema does not have or repeats a key; ``Warn`` reports the same problems as warnings. The texts
are upstream's: ``unknown field "spec.devices[0].foo"`` and ``duplicate field "metadata.name"``.
"""

from __future__ import annotations

import json
import types
import typing
from functools import cache
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
    _walk(data, model, "", found)
    return [f'unknown field "{p}"' for p in found]


# --- walking the schema -----------------------------------------------------------------------------

@cache
def _fields(model: type) -> dict[str, Any]:
    hints = typing.get_type_hints(model)
    return {f.encode_name: hints[f.name] for f in msgspec.structs.fields(model)}


def _strip_optional(tp: Any) -> Any:
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        return args[0] if len(args) == 1 else Any
    return tp


def _walk(value: Any, tp: Any, path: str, found: list[str]) -> None:
    tp = _strip_optional(tp)
    if tp is Any or tp is Quantity or value is None:
        return  # free-form (RawExtension, managedFields) or a leaf
    origin = typing.get_origin(tp)
    if origin is list:
        if isinstance(value, list):
            (item_tp,) = typing.get_args(tp)
            for i, item in enumerate(value):
                _walk(item, item_tp, f"{path}[{i}]", found)
        return
    if origin is dict:
        if isinstance(value, dict):
            _, item_tp = typing.get_args(tp)
            for k, item in value.items():
                _walk(item, item_tp, f"{path}[{k}]", found)
        return
    if isinstance(tp, type) and issubclass(tp, msgspec.Struct) and isinstance(value, dict):
        fields = _fields(tp)
        for k, item in value.items():
            child = f"{path}.{k}" if path else k
            if k not in fields:
                found.append(child)
            else:
                _walk(item, fields[k], child, found)


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
