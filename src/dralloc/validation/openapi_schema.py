"""A custom resource against its CustomResourceDefinition's structural OpenAPI v3 schema, as kube-apiserver's
custom resource handler treats it: the schema's value validation with upstream's paths and texts
(``spec.replicas: Invalid value: 200: spec.replicas in body should be less than or equal to 100``), a walk over
the value that reports every error. (Pruning and defaulting are :mod:`openapi_decoding`'s; a CRD version's objects
are validated by :class:`openapi_validator.Validator`, which runs this walk only for an object with an error.)

Schemas are the JSON of ``openAPIV3Schema`` (dicts), read as they are: no model of JSONSchemaProps. The rules
read only what a structural schema has (``type``, ``properties``, ``items``, ``additionalProperties``,
``x-kubernetes-*``, the value validations, and the ``allOf``/``anyOf``/``oneOf``/``not`` value validations).
"""

from __future__ import annotations

import base64
import datetime
import ipaddress
import json
import math
import re
import uuid
from collections.abc import Callable
from functools import lru_cache
from typing import Any

from dralloc.validation import field as f

# (pruning and defaulting, decoding's steps, are openapi_decoding's; their names stay importable from here)
from dralloc.validation.openapi_decoding import (  # noqa: F401
    EMBEDDED,
    INT_OR_STRING,
    PRESERVE,
    TYPE_META,
    Schema,
    apply_defaults,
    prune,
    with_defaults,
)

# --- validation -------------------------------------------------------------------------------------------

def validate(obj: dict[str, Any], schema: Schema) -> list[f.FieldError]:
    """The value validation of a whole custom resource (metadata aside: its own rules check it), by the walk
    alone (a CRD version's objects: ``openapi_validator.Validator``, which runs it only for an invalid one)."""
    root = {k: v for k, v in schema.items() if k != "properties"}
    root["properties"] = {k: v for k, v in (schema.get("properties") or {}).items() if k not in TYPE_META}
    errors: list[f.FieldError] = []
    _validate({k: v for k, v in obj.items() if k not in TYPE_META}, root, "", errors, {})
    return errors


def validate_value(value: Any, schema: Schema, path: str) -> list[f.FieldError]:
    """The value validation of one value at ``path`` (a schema's ``default``, say)."""
    errors: list[f.FieldError] = []
    _validate(value, schema, path, errors, {})
    return errors


def validate_with(value: Any, schema: Schema, path: str, errors: list[f.FieldError], plans: dict[int, Any]) -> None:
    """The value validation of one value at ``path`` into ``errors``, with the plans of the nodes met before
    (``plans``: kept by the caller across values of the same schema)."""
    _validate(value, schema, path, errors, plans)


_JSON_TYPES = {bool: "boolean", int: "integer", float: "number", str: "string", list: "array", dict: "object"}


def _type_name(value: Any) -> str:
    if value is None:
        return "null"
    return _JSON_TYPES.get(type(value), type(value).__name__)


def _is_type(value: Any, kind: str) -> bool:
    if kind == "integer":
        return (isinstance(value, int) and not isinstance(value, bool)) or (
            isinstance(value, float) and value.is_integer())
    if kind == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if kind == "string":
        return isinstance(value, str)
    if kind == "boolean":
        return isinstance(value, bool)
    if kind == "array":
        return isinstance(value, list)
    if kind == "object":
        return isinstance(value, dict)
    return True


def _in_body(path: str) -> str:
    return f"{path} in body" if path else "body"


_NUMERIC = ("maximum", "minimum", "multipleOf")
_STRING = ("maxLength", "minLength", "pattern", "format")
_OBJECT = ("required", "maxProperties", "minProperties")
_ARRAY = ("maxItems", "minItems", "x-kubernetes-list-type")
_COMBINATORS = ("allOf", "anyOf", "oneOf", "not")


class _Plan:
    """What a schema node checks, read from it once (see ``openapi_validator.Validator``)."""

    __slots__ = ("schema", "type", "int_or_string", "enum", "enum_strings", "numeric", "string", "object_counts",
                 "properties", "additional", "array_counts", "items", "combinators")

    def __init__(self, schema: Schema) -> None:
        self.schema = schema  # (kept: the plan is found by the node's id)
        self.type = schema.get("type")
        self.int_or_string = bool(schema.get(INT_OR_STRING))
        enum = schema.get("enum")
        self.enum: list[Any] | None = enum if isinstance(enum, list) else None
        # (a string is the same JSON as an enum value only when that value is the same string)
        self.enum_strings = frozenset(e for e in enum if type(e) is str) if isinstance(enum, list) else frozenset()
        self.numeric = any(k in schema for k in _NUMERIC)
        self.string = any(k in schema for k in _STRING)
        self.object_counts = any(k in schema for k in _OBJECT)
        found = schema.get("properties")
        self.properties: dict[str, Any] = found if isinstance(found, dict) else {}
        additional = schema.get("additionalProperties")
        self.additional: Schema | None = additional if isinstance(additional, dict) else None
        self.array_counts = any(k in schema for k in _ARRAY)
        items = schema.get("items")
        self.items: Schema | None = items if isinstance(items, dict) else None
        self.combinators = any(k in schema for k in _COMBINATORS)


def _plan(schema: Schema, plans: dict[int, _Plan]) -> _Plan:
    plan = plans.get(id(schema))
    if plan is None or plan.schema is not schema:
        plan = plans[id(schema)] = _Plan(schema)
    return plan


def _validate(value: Any, schema: Schema, path: str, errors: list[f.FieldError], plans: dict[int, _Plan]) -> None:
    if value is None:
        if schema.get("nullable") or schema.get(PRESERVE) is True and not schema.get("type"):
            return
        kind = schema.get("type")
        if kind:
            errors.append(f.FieldError(f.TYPE_INVALID, path, "null", f'{_in_body(path)} must be of type {kind}: "null"'))
        return
    plan = _plan(schema, plans)
    if plan.int_or_string:
        if not (_is_type(value, "integer") or isinstance(value, str)):
            errors.append(f.FieldError(f.TYPE_INVALID, path, _type_name(value),
                                       f'{_in_body(path)} must be of type integer or string: "{_type_name(value)}"'))
            return
    kind = plan.type
    if kind and not _is_type(value, kind):
        errors.append(f.FieldError(f.TYPE_INVALID, path, _type_name(value),
                                   f'{_in_body(path)} must be of type {kind}: "{_type_name(value)}"'))
        return
    before = len(errors)
    if plan.enum is not None:
        _enum_rule(value, plan, path, errors)
    if plan.numeric and isinstance(value, (int, float)) and not isinstance(value, bool):
        _numeric_rules(value, schema, path, errors)
    if plan.string and isinstance(value, str):
        _string_rules(value, schema, path, errors)
    if isinstance(value, dict):
        _object_rules(value, plan, path, errors, plans)
    elif isinstance(value, list):
        _array_rules(value, plan, path, errors, plans)
    if plan.combinators and len(errors) == before:
        _combinators(value, schema, path, errors, plans)


def _enum_rule(value: Any, plan: _Plan, path: str, errors: list[f.FieldError]) -> None:
    enum = plan.enum or []
    if value in plan.enum_strings if type(value) is str else any(_same_json(value, e) for e in enum):
        return
    errors.append(f.FieldError(f.NOT_SUPPORTED, path, value,
                               "supported values: " + ", ".join(_enum_text(e) for e in enum)))


def _number(value: Any) -> str:
    """A bound as kube-openapi prints it (Go's %v of a float64: no ``.0`` on whole numbers)."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e21:
        return str(int(value))
    return str(value)


def _same_json(a: Any, b: Any) -> bool:
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def _enum_text(value: Any) -> str:
    return f.go_quote(value) if isinstance(value, str) else f.format_value(value)


def _numeric_rules(value: float, schema: Schema, path: str, errors: list[f.FieldError]) -> None:
    maximum = schema.get("maximum")
    if isinstance(maximum, (int, float)):
        if schema.get("exclusiveMaximum") and value >= maximum:
            errors.append(f.invalid(path, value, f"{_in_body(path)} should be less than {_number(maximum)}"))
        elif value > maximum:
            errors.append(f.invalid(path, value, f"{_in_body(path)} should be less than or equal to "
                                                 f"{_number(maximum)}"))
    minimum = schema.get("minimum")
    if isinstance(minimum, (int, float)):
        if schema.get("exclusiveMinimum") and value <= minimum:
            errors.append(f.invalid(path, value, f"{_in_body(path)} should be greater than {_number(minimum)}"))
        elif value < minimum:
            errors.append(f.invalid(path, value, f"{_in_body(path)} should be greater than or equal to "
                                                 f"{_number(minimum)}"))
    factor = schema.get("multipleOf")
    if isinstance(factor, (int, float)) and factor > 0:
        quotient = value / factor
        if not math.isclose(quotient, round(quotient), rel_tol=0, abs_tol=1e-9):
            errors.append(f.invalid(path, value, f"{_in_body(path)} should be a multiple of {_number(factor)}"))


def _string_rules(value: str, schema: Schema, path: str, errors: list[f.FieldError]) -> None:
    length = len(value)  # (kube-openapi counts runes: Python's characters)
    max_length = schema.get("maxLength")
    if isinstance(max_length, int) and length > max_length:
        errors.append(f.too_long(path, max_length))
    min_length = schema.get("minLength")
    if isinstance(min_length, int) and length < min_length:
        errors.append(f.invalid(path, value, f"{_in_body(path)} should be at least {min_length} chars long"))
    pattern = schema.get("pattern")
    if isinstance(pattern, str):
        compiled = compiled_pattern(pattern)
        if compiled is not None and compiled.search(value) is None:
            errors.append(f.invalid(path, value, f"{_in_body(path)} should match '{pattern}'"))
    fmt = schema.get("format")
    if isinstance(fmt, str):
        check = FORMATS.get(fmt)
        if check is not None and not check(value):
            errors.append(f.invalid(path, value, f"{_in_body(path)} must be of type {fmt}: {f.go_quote(value)}"))


@lru_cache(maxsize=512)
def compiled_pattern(pattern: str) -> re.Pattern[str] | None:
    """An ECMA/RE2 pattern as Python's re (None: one Python cannot read, left unchecked rather than refused)."""
    try:
        return re.compile(pattern)
    except re.error:
        return None


def _object_rules(value: dict[str, Any], plan: _Plan, path: str, errors: list[f.FieldError],
                  plans: dict[int, _Plan]) -> None:
    if plan.object_counts:
        schema = plan.schema
        for name in schema.get("required") or ():
            if isinstance(name, str) and name not in value:
                errors.append(f.required(f.child(path, name)))
        count = len(value)
        if isinstance(schema.get("maxProperties"), int) and count > schema["maxProperties"]:
            errors.append(f.too_many(path, count, schema["maxProperties"]))
        if isinstance(schema.get("minProperties"), int) and count < schema["minProperties"]:
            errors.append(f.invalid(path, count, f"{_in_body(path)} should have at least {schema['minProperties']} "
                                                 f"properties"))
    properties, additional = plan.properties, plan.additional
    for key, item in value.items():
        child = properties.get(key)
        if child is None and additional is not None:
            child = additional
        if isinstance(child, dict):
            at = f.child(path, key)
            if child.get(EMBEDDED) and isinstance(item, dict):
                _embedded_rules(item, at, errors)
            _validate(item, child, at, errors, plans)


def _embedded_rules(value: dict[str, Any], path: str, errors: list[f.FieldError]) -> None:
    """An x-kubernetes-embedded-resource object needs its apiVersion and kind."""
    for key in ("apiVersion", "kind"):
        if not value.get(key):
            errors.append(f.required(f.child(path, key), "must not be empty"))


def _array_rules(value: list[Any], plan: _Plan, path: str, errors: list[f.FieldError],
                 plans: dict[int, _Plan]) -> None:
    schema = plan.schema
    if plan.array_counts:
        count = len(value)
        if isinstance(schema.get("maxItems"), int) and count > schema["maxItems"]:
            errors.append(f.too_many(path, count, schema["maxItems"]))
        if isinstance(schema.get("minItems"), int) and count < schema["minItems"]:
            errors.append(f.invalid(path, count, f"{_in_body(path)} should have at least {schema['minItems']} items"))
    items = plan.items
    if items is not None:
        for i, item in enumerate(value):
            _validate(item, items, f.index(path, i), errors, plans)
    if not plan.array_counts:
        return
    list_type = schema.get("x-kubernetes-list-type")
    if list_type == "set":
        seen: list[str] = []
        for i, item in enumerate(value):
            text = json.dumps(item, sort_keys=True)
            if text in seen:
                errors.append(f.duplicate(f.index(path, i), item))
            else:
                seen.append(text)
    elif list_type == "map":
        keys = [k for k in schema.get("x-kubernetes-list-map-keys") or () if isinstance(k, str)]
        seen_keys: list[str] = []
        for i, item in enumerate(value):
            if not isinstance(item, dict):
                continue
            key_value = {k: item[k] for k in keys if k in item}
            text = json.dumps(key_value, sort_keys=True)
            if text in seen_keys:
                # (Go prints the key map with %#v: the value is carried in the detail, unquoted)
                errors.append(f.FieldError(f.DUPLICATE, f.index(path, i), f.OMIT, _go_map(key_value)))
            else:
                seen_keys.append(text)


def _go_map(value: dict[str, Any]) -> str:
    """A map[string]interface{} as Go's %#v prints it (keys sorted): ``map[string]interface {}{"name":"a"}``."""
    return "map[string]interface {}{" + ", ".join(f"{json.dumps(k)}:{_go_value(v)}"
                                                  for k, v in sorted(value.items())) + "}"


def _go_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, (int, float)):
        return str(value)
    return json.dumps(value, separators=(",", ":"))


def _combinators(value: Any, schema: Schema, path: str, errors: list[f.FieldError], plans: dict[int, _Plan]) -> None:
    """allOf, anyOf, oneOf and not of value validations (a structural schema's may hold no types of their own)."""
    for sub in schema.get("allOf") or ():
        if isinstance(sub, dict):
            _validate(value, sub, path, errors, plans)
    any_of = [s for s in schema.get("anyOf") or () if isinstance(s, dict)]
    if any_of and not any(_passes(value, s, path, plans) for s in any_of):
        errors.append(f.invalid(path, value, f'"{path}" must validate at least one schema (anyOf)'))
    one_of = [s for s in schema.get("oneOf") or () if isinstance(s, dict)]
    if one_of:
        passing = sum(1 for s in one_of if _passes(value, s, path, plans))
        if passing != 1:
            errors.append(f.invalid(path, value, f'"{path}" must validate one and only one schema (oneOf)'))
    negated = schema.get("not")
    if isinstance(negated, dict) and _passes(value, negated, path, plans):
        errors.append(f.invalid(path, value, f'"{path}" must not validate the schema (not)'))


def _passes(value: Any, schema: Schema, path: str, plans: dict[int, _Plan]) -> bool:
    found: list[f.FieldError] = []
    _validate(value, schema, path, found, plans)
    return not found


# --- formats (kube-openapi's, those a CRD's schema may name) ------------------------------------------------

def _parses(parse: Callable[[str], Any]) -> Callable[[str], bool]:
    def check(value: str) -> bool:
        try:
            parse(value)
        except ValueError:
            return False
        return True
    return check


def _date_time(value: str) -> bool:
    text = value.replace("z", "Z")
    if text.endswith("Z"):
        text = text[:-1] + "+00:00"
    try:
        datetime.datetime.fromisoformat(text)
    except ValueError:
        return False
    return "T" in value.upper() or " " in value


def _base64(value: str) -> bool:
    try:
        base64.b64decode(value, validate=True)
    except ValueError:
        return False
    return True


_DURATION = re.compile(r"^[-+]?(\d+(\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)((\d+(\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h))*$|^0$")
_HOSTNAME = re.compile(r"^[a-zA-Z0-9]([-a-zA-Z0-9]{0,62})?(\.[a-zA-Z0-9]([-a-zA-Z0-9]{0,62})?)*\.?$")

FORMATS: dict[str, Callable[[str], bool]] = {
    "date-time": _date_time,
    "datetime": _date_time,
    "date": _parses(datetime.date.fromisoformat),
    "byte": _base64,
    "uuid": _parses(uuid.UUID),
    "ipv4": _parses(ipaddress.IPv4Address),
    "ipv6": _parses(ipaddress.IPv6Address),
    "cidr": _parses(lambda v: ipaddress.ip_network(v, strict=False)),
    "duration": lambda v: bool(_DURATION.match(v)),
    "hostname": lambda v: len(v) <= 255 and bool(_HOSTNAME.match(v)),
}
