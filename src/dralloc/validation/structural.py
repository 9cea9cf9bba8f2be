"""Whether a CustomResourceDefinition's OpenAPI v3 schema is one kube-apiserver takes in apiextensions.k8s.io/v1:
structural (every field typed, ``items`` for arrays, an object at the root, metadata restricted to name and
generateName) and within what its schema validation allows, with upstream's paths and texts
(``spec.versions[0].schema.openAPIV3Schema.properties[spec].type: Required value: must not be empty for
specified object fields``)."""

from __future__ import annotations

from typing import Any

from dralloc.validation import field as f
from dralloc.validation.openapi_schema import EMBEDDED, INT_OR_STRING, PRESERVE, validate_value

TYPES = ["array", "boolean", "integer", "number", "object", "string"]
LIST_TYPES = ["atomic", "map", "set"]
MAP_TYPES = ["atomic", "granular"]
# kube-apiserver's v1 schemas may not use these (upstream's specStandardValidatorV3)
_UNSUPPORTED = {"$ref": "$ref is not supported", "$schema": "$schema is not supported",
                "additionalItems": "additionalItems is not supported",
                "patternProperties": "patternProperties is not supported",
                "definitions": "definitions is not supported", "dependencies": "dependencies is not supported",
                "id": "id is not supported"}
_ROOT = 0
_NESTED = 1
_METADATA_FIELDS = ("name", "generateName")


def schema_errors(schema: Any, path: str) -> list[f.FieldError]:
    """Every error of ``openAPIV3Schema`` (``path`` is its field path)."""
    if not isinstance(schema, dict):
        return [f.invalid(path, schema, "must be an object")]
    errors: list[f.FieldError] = []
    if not schema.get("type") and schema.get(PRESERVE) is not True:
        errors.append(f.required(f.child(path, "type"), "must not be empty at the root"))
    elif schema.get("type") and schema.get("type") != "object":
        errors.append(f.invalid(f.child(path, "type"), schema["type"], "must be object at the root"))
    _walk(schema, path, _ROOT, errors, "root")
    return errors


def _walk(schema: dict[str, Any], path: str, level: int, errors: list[f.FieldError], role: str) -> None:
    for name, detail in _UNSUPPORTED.items():
        if name in schema:
            errors.append(f.forbidden(f.child(path, name), detail))
    kind = schema.get("type")
    if kind is not None and kind not in TYPES:
        errors.append(f.not_supported(f.child(path, "type"), kind, TYPES))
    preserve = schema.get(PRESERVE)
    if preserve is False:
        errors.append(f.invalid(f.child(path, PRESERVE), False, "must be true or undefined"))
    if role != "root" and not kind and not schema.get(INT_OR_STRING) and not schema.get(EMBEDDED) \
            and preserve is not True and role != "combinator":
        detail = "must not be empty for specified array items" if role == "items" else \
            "must not be empty for specified object fields"
        errors.append(f.required(f.child(path, "type"), detail))
    if role == "combinator" and kind:
        errors.append(f.forbidden(f.child(path, "type"), "must be empty to be structural"))
    if schema.get(INT_OR_STRING) and kind:
        errors.append(f.invalid(f.child(path, "type"), kind, "must be empty if x-kubernetes-int-or-string is true"))
    if schema.get(EMBEDDED) and kind != "object":
        if not kind:
            errors.append(f.required(f.child(path, "type"), "must be object if x-kubernetes-embedded-resource is true"))
        else:
            errors.append(f.invalid(f.child(path, "type"), kind,
                                    "must be object if x-kubernetes-embedded-resource is true"))
    if kind == "array" and "items" not in schema and role != "combinator":
        errors.append(f.required(f.child(path, "items"), "must be specified"))
    if schema.get("uniqueItems") is True:
        errors.append(f.forbidden(f.child(path, "uniqueItems"),
                                  "uniqueItems cannot be set to true since the runtime complexity becomes quadratic"))
    properties = schema.get("properties")
    additional = schema.get("additionalProperties")
    if additional is not None and properties and (additional is False or isinstance(additional, dict)):
        errors.append(f.forbidden(f.child(path, "additionalProperties"),
                                  "additionalProperties and properties are mutual exclusive"))
    _list_rules(schema, path, errors)
    if isinstance(properties, dict):
        if level == _ROOT or schema.get(EMBEDDED):
            _metadata_rules(properties, path, level, errors)
        for name in sorted(properties):
            child = properties[name]
            child_path = f"{f.child(path, 'properties')}[{name}]"
            if isinstance(child, dict):
                _walk(child, child_path, _NESTED, errors, "combinator" if role == "combinator" else "property")
    if isinstance(additional, dict):
        _walk(additional, f.child(path, "additionalProperties"), _NESTED, errors,
              "combinator" if role == "combinator" else "property")
    items = schema.get("items")
    if isinstance(items, dict):
        _walk(items, f.child(path, "items"), _NESTED, errors, "combinator" if role == "combinator" else "items")
    elif isinstance(items, list):
        errors.append(f.forbidden(f.child(path, "items"), "items must be a schema object and not an array"))
    int_or_string = bool(schema.get(INT_OR_STRING))
    for combinator in ("allOf", "anyOf", "oneOf"):
        for i, sub in enumerate(schema.get(combinator) or ()):
            if not isinstance(sub, dict):
                continue
            # an int-or-string's anyOf: [{type: integer}, {type: string}] (alone, or first in its allOf), as
            # controller-gen writes a Quantity or an IntOrString, is the one place a combinator may name types
            if int_or_string and ((combinator == "anyOf" and _is_int_or_string_pattern(schema.get("anyOf")))
                                  or (combinator == "allOf" and i == 0 and _is_int_or_string_pattern(sub.get("anyOf"))
                                      and set(sub) == {"anyOf"})):
                continue
            _walk(sub, f.index(f.child(path, combinator), i), level, errors, "combinator")
    if isinstance(schema.get("not"), dict):
        _walk(schema["not"], f.child(path, "not"), level, errors, "combinator")


def _is_int_or_string_pattern(any_of: Any) -> bool:
    return any_of == [{"type": "integer"}, {"type": "string"}]


def _metadata_rules(properties: dict[str, Any], path: str, level: int, errors: list[f.FieldError]) -> None:
    for name in ("apiVersion", "kind"):
        child = properties.get(name)
        if isinstance(child, dict) and child.get("type") != "string":
            errors.append(f.invalid(f"{f.child(path, 'properties')}[{name}].type", child.get("type"), "must be string"))
    metadata = properties.get("metadata")
    if not isinstance(metadata, dict):
        return
    meta_path = f"{f.child(path, 'properties')}[metadata]"
    if metadata.get("type") not in (None, "object"):
        errors.append(f.invalid(f.child(meta_path, "type"), metadata.get("type"), "must be object"))
    if level == _ROOT:
        allowed = {"type", "properties", "description"}
        extra = [k for k in metadata if k not in allowed]
        named = [k for k in (metadata.get("properties") or {}) if k not in _METADATA_FIELDS]
        if extra or named:
            errors.append(f.forbidden(meta_path, "must not specify anything other than name and generateName, but "
                                                 "metadata is implicitly specified"))


def _list_rules(schema: dict[str, Any], path: str, errors: list[f.FieldError]) -> None:
    list_type = schema.get("x-kubernetes-list-type")
    keys = schema.get("x-kubernetes-list-map-keys")
    if list_type is not None:
        if schema.get("type") != "array":
            errors.append(f.invalid(f.child(path, "x-kubernetes-list-type"), list_type,
                                    "must only be used if type is array"))
        elif list_type not in LIST_TYPES:
            errors.append(f.not_supported(f.child(path, "x-kubernetes-list-type"), list_type, LIST_TYPES))
    if list_type == "map":
        if not keys:
            errors.append(f.required(f.child(path, "x-kubernetes-list-map-keys"),
                                     "must not be empty if x-kubernetes-list-type is map"))
        items = schema.get("items")
        if isinstance(items, dict) and items.get("type") != "object":
            errors.append(f.invalid(f.child(f.child(path, "items"), "type"), items.get("type"),
                                    "must be object if parent array's x-kubernetes-list-type is map"))
        elif isinstance(items, dict) and isinstance(keys, list):
            props = items.get("properties") or {}
            for i, key in enumerate(keys):
                if key not in props:
                    errors.append(f.invalid(f.index(f.child(path, "x-kubernetes-list-map-keys"), i), key,
                                            "entries must all be names of item properties"))
    elif keys is not None and list_type is not None:
        errors.append(f.forbidden(f.child(path, "x-kubernetes-list-map-keys"),
                                  'must only be used if x-kubernetes-list-type is "map"'))
    map_type = schema.get("x-kubernetes-map-type")
    if map_type is not None and map_type not in MAP_TYPES:
        errors.append(f.not_supported(f.child(path, "x-kubernetes-map-type"), map_type, MAP_TYPES))


def default_errors(schema: Any, path: str, data_path: str = "") -> list[f.FieldError]:
    """Each ``default`` of a structural schema must be valid against its own schema (reported at the
    default, with the value's path in the object: ``...properties[replicas].default: Invalid value: "string":
    spec.replicas in body must be of type integer: "string"``)."""
    errors: list[f.FieldError] = []
    properties = schema.get("properties") if isinstance(schema, dict) else None
    if not isinstance(properties, dict):
        return errors
    for name in sorted(properties):
        child = properties[name]
        if not isinstance(child, dict):
            continue
        at = f"{f.child(path, 'properties')}[{name}]"
        value_path = f.child(data_path, name)
        if "default" in child and child["default"] is not None:
            for error in validate_value(child["default"], child, value_path):
                errors.append(f.FieldError(error.type, f.child(at, "default"), error.bad_value, error.detail))
        errors += default_errors(child, at, value_path)
    return errors
