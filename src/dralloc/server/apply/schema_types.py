"""The server-side apply schema of a custom resource, read from its CRD version's ``openAPIV3Schema`` as
kube-apiserver's field manager reads it (kube-openapi's conversion to a structured-merge-diff schema):

- an array is atomic unless its ``x-kubernetes-list-type`` says ``set`` (items owned value by value) or
  ``map`` (items owned by their ``x-kubernetes-list-map-keys``; a key field an item omits is identified by its
  schema ``default``, and left out of the item's key when it has none);
- an object is granular (owned field by field, a map's keys by ``additionalProperties``) unless its
  ``x-kubernetes-map-type`` is ``atomic``;
- fields the schema does not declare (under ``x-kubernetes-preserve-unknown-fields``) are deduced from their
  values: objects granular, lists atomic;
- ``metadata`` at the root is an ObjectMeta (finalizers a set, ownerReferences keyed by uid), whatever the
  schema says of it.
"""

from __future__ import annotations

from typing import Any

from dralloc.server.apply.fieldtypes import ATOMIC, OBJECT_META, SET, STRUCT, FieldType


def kind_type(schema: dict[str, Any]) -> FieldType:
    """The apply schema of a custom resource whose version has ``schema``."""
    root = field_type(schema)
    if root.kind == "atomic":
        return root
    return FieldType("struct", {**root.fields, "metadata": OBJECT_META}, values=root.values)


def field_type(schema: Any) -> FieldType:
    """The apply schema of one value of ``schema``."""
    if not isinstance(schema, dict):
        return STRUCT
    if schema.get("type") == "array" or "items" in schema:
        return _list_type(schema)
    if schema.get("x-kubernetes-map-type") == "atomic":
        return ATOMIC
    properties = schema.get("properties")
    extra = schema.get("additionalProperties")
    fields = {str(name): field_type(prop) for name, prop in properties.items()} \
        if isinstance(properties, dict) else {}
    values = field_type(extra) if isinstance(extra, dict) else None
    if not fields and values is None:
        return STRUCT  # a scalar, or an object whose fields are deduced: STRUCT is both
    return FieldType("struct", fields, values=values)


def _list_type(schema: dict[str, Any]) -> FieldType:
    list_type = schema.get("x-kubernetes-list-type")
    items = schema.get("items")
    if list_type == "set":
        return SET  # (of scalars: structural schemas allow no other)
    if list_type != "map":
        return ATOMIC
    keys = tuple(str(k) for k in schema.get("x-kubernetes-list-map-keys") or ())
    item_properties = (items or {}).get("properties") if isinstance(items, dict) else None
    defaults = {key: item_properties[key]["default"] for key in keys
                if isinstance(item_properties, dict) and isinstance(item_properties.get(key), dict)
                and "default" in item_properties[key]}
    return FieldType("list-map", keys=keys, key_defaults=defaults, item=field_type(items),
                     sorted_keys=tuple(sorted(keys)))
