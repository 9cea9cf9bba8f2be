"""Pruning and defaulting as they were written before a CRD version's schema was read once into plans
(``openapi_decoding``): walks that read the schema's JSON at every value. The differential tests hold the plans
to them."""

from __future__ import annotations

import copy
from typing import Any

from dralloc.validation import field as f

Schema = dict[str, Any]
PRESERVE = "x-kubernetes-preserve-unknown-fields"
EMBEDDED = "x-kubernetes-embedded-resource"
_TYPE_META = ("apiVersion", "kind", "metadata")



def prune(obj: dict[str, Any], schema: Schema) -> list[str]:
    """Remove, in place, every field of ``obj`` (a whole custom resource) that ``schema`` does not declare,
    unless under ``x-kubernetes-preserve-unknown-fields``; the paths removed (``spec.foo``), sorted, as
    kube-apiserver's field validation reports them (``unknown field "spec.foo"``)."""
    removed: list[str] = []
    _prune_object(obj, schema, "", removed, root=True)
    return sorted(removed)


def _prune_value(value: Any, schema: Schema | None, path: str, removed: list[str]) -> None:
    if schema is None:
        return
    if isinstance(value, dict):
        _prune_object(value, schema, path, removed, root=bool(schema.get(EMBEDDED)))
    elif isinstance(value, list):
        items = schema.get("items")
        if isinstance(items, dict):
            for i, item in enumerate(value):
                _prune_value(item, items, f.index(path, i), removed)


def _prune_object(value: dict[str, Any], schema: Schema, path: str, removed: list[str], root: bool) -> None:
    properties = schema.get("properties")
    additional = schema.get("additionalProperties")
    preserve = schema.get(PRESERVE) is True
    for key in list(value):
        if root and key in _TYPE_META:
            if key == "metadata" and isinstance(value[key], dict) and not preserve:
                continue  # (object metadata is ObjectMeta's: checked by the metadata rules)
            continue
        child = properties.get(key) if isinstance(properties, dict) else None
        if child is None and isinstance(additional, dict):
            child = additional
        if child is None:
            if preserve or additional is True:
                continue
            removed.append(f.child(path, key))
            del value[key]
            continue
        _prune_value(value[key], child, f.child(path, key), removed)


# --- defaulting -------------------------------------------------------------------------------------------

def apply_defaults(value: Any, schema: Schema | None) -> None:
    """Fill in, in place, every missing field whose schema has a ``default`` (and a ``null`` where the schema
    is not nullable), then the defaults below it, as kube-apiserver's structural defaulting does on every
    write and on every read from storage. (``value`` itself is changed; a part below it that takes a default
    is replaced by a defaulted copy: :func:`with_defaults`.)"""
    shown = with_defaults(value, schema)
    if shown is value:
        return
    if isinstance(value, dict):
        value.clear()
        value.update(shown)
    elif isinstance(value, list):
        value[:] = shown


def with_defaults(value: Any, schema: Schema | None) -> Any:
    """``value`` with every missing field whose schema has a ``default`` filled in (and a ``null`` where the
    schema is not nullable), then the defaults below it, without changing ``value``: the parts that take no
    default are ``value``'s own (shared), and ``value`` itself comes back when nothing is defaulted. Reads
    default every object they show: most need nothing, and a copy of each would cost more than the look."""
    if schema is None:
        return value
    if isinstance(value, dict):
        out: Any = None
        properties = schema.get("properties")
        if isinstance(properties, dict):
            for key, child in properties.items():
                if not isinstance(child, dict) or "default" not in child:
                    continue
                if key not in value or (value[key] is None and not child.get("nullable")):
                    if out is None:
                        out = dict(value)
                    out[key] = copy.deepcopy(child["default"])
            for key, item in (out if out is not None else value).items():
                child = properties.get(key)
                if isinstance(child, dict):
                    shown = with_defaults(item, child)
                    if shown is not item:
                        if out is None:
                            out = dict(value)
                        out[key] = shown
        additional = schema.get("additionalProperties")
        if isinstance(additional, dict):
            for key, item in (out if out is not None else value).items():
                shown = with_defaults(item, additional)
                if shown is not item:
                    if out is None:
                        out = dict(value)
                    out[key] = shown
        return out if out is not None else value
    if isinstance(value, list):
        items = schema.get("items")
        if not isinstance(items, dict):
            return value
        listed: list[Any] | None = None
        for i, item in enumerate(value):
            if item is None and "default" in items and not items.get("nullable"):
                shown = with_defaults(copy.deepcopy(items["default"]), items)
            else:
                shown = with_defaults(item, items)
            if shown is not item:
                if listed is None:
                    listed = list(value)
                listed[i] = shown
        return listed if listed is not None else value
    return value



def without_nulls(value: Any) -> Any:
    """A copy of JSON without the object members whose value is null (what the unknown-field check read)."""
    if isinstance(value, dict):
        return {k: without_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [without_nulls(v) for v in value]
    return value
