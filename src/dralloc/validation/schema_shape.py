"""The JSON types of an ``openAPIV3Schema``'s fields, as Go's decoder of apiextensions' JSONSchemaProps requires
them: a CRD whose schema has a value of the wrong type is refused before any rule reads it (``json: cannot
unmarshal array into Go struct field JSONSchemaProps.properties of type map[string]v1.JSONSchemaProps``)."""

from __future__ import annotations

from typing import Any

from dralloc.api.gojson import go_json_type

_STRING = ("string", (str,))
_BOOL = ("bool", (bool,))
_NUMBER = ("float64", (int, float))
_INT = ("int64", (int,))
# field -> (Go type, the Python types of its JSON); the schema-valued fields are walked below
_SCALARS: dict[str, tuple[str, tuple[type, ...]]] = {
    **{k: _STRING for k in ("id", "$schema", "$ref", "description", "type", "format", "title", "pattern",
                            "x-kubernetes-list-type", "x-kubernetes-map-type")},
    **{k: _BOOL for k in ("exclusiveMaximum", "exclusiveMinimum", "uniqueItems", "nullable",
                          "x-kubernetes-preserve-unknown-fields", "x-kubernetes-embedded-resource",
                          "x-kubernetes-int-or-string")},
    **{k: _NUMBER for k in ("maximum", "minimum", "multipleOf")},
    **{k: _INT for k in ("maxLength", "minLength", "maxItems", "minItems", "maxProperties", "minProperties")},
}
_STRING_LISTS = ("required", "x-kubernetes-list-map-keys")
_SCHEMA_MAPS = ("properties", "patternProperties", "definitions")
_SCHEMA_LISTS = ("allOf", "oneOf", "anyOf")
_RULE_STRINGS = ("rule", "message", "messageExpression", "reason", "fieldPath")


def shape_error(schema: Any) -> str | None:
    """Go's decoding error of the first value of the wrong JSON type in ``schema``, or None."""
    return _schema(schema, "JSONSchemaProps")


def _bad(value: Any, where: str, go_type: str) -> str:
    return f"json: cannot unmarshal {go_json_type(value)} into Go struct field {where} of type {go_type}"


def _schema(schema: Any, where: str) -> str | None:
    if schema is None:
        return None
    if not isinstance(schema, dict):
        return _bad(schema, where, "v1.JSONSchemaProps")
    for key, value in schema.items():
        if value is None:
            continue
        at = f"JSONSchemaProps.{key}"
        problem = _field(key, value, at)
        if problem is not None:
            return problem
    return None


def _field(key: str, value: Any, at: str) -> str | None:
    if key in _SCALARS:
        go_type, types = _SCALARS[key]
        if not isinstance(value, types) or (bool not in types and isinstance(value, bool)) or (
                go_type == "int64" and isinstance(value, float)):
            return _bad(value, at, go_type)
        return None
    if key in _STRING_LISTS:
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            return _bad(value, at, "[]string")
        return None
    if key == "enum" and not isinstance(value, list):
        return _bad(value, at, "[]v1.JSON")
    if key in _SCHEMA_MAPS:
        if not isinstance(value, dict):
            return _bad(value, at, "map[string]v1.JSONSchemaProps")
        return next((p for p in (_schema(v, at) for v in value.values()) if p), None)
    if key in _SCHEMA_LISTS:
        if not isinstance(value, list):
            return _bad(value, at, "[]v1.JSONSchemaProps")
        return next((p for p in (_schema(v, at) for v in value) if p), None)
    if key == "not":
        return _schema(value, at)
    if key == "items":  # a schema, or a list of schemas
        if isinstance(value, list):
            return next((p for p in (_schema(v, at) for v in value) if p), None)
        return _schema(value, at) if isinstance(value, dict) else _bad(value, at, "v1.JSONSchemaPropsOrArray")
    if key in ("additionalProperties", "additionalItems"):  # a schema, or a bool
        if isinstance(value, bool):
            return None
        return _schema(value, at) if isinstance(value, dict) else _bad(value, at, "v1.JSONSchemaPropsOrBool")
    if key == "x-kubernetes-validations":
        if not isinstance(value, list):
            return _bad(value, at, "v1.ValidationRules")
        for rule in value:
            if not isinstance(rule, dict):
                return _bad(rule, at, "v1.ValidationRule")
            for name in _RULE_STRINGS:
                if rule.get(name) is not None and not isinstance(rule[name], str):
                    return _bad(rule[name], f"ValidationRule.{name}", "string")
            if rule.get("optionalOldSelf") is not None and not isinstance(rule["optionalOldSelf"], bool):
                return _bad(rule["optionalOldSelf"], "ValidationRule.optionalOldSelf", "bool")
    return None
