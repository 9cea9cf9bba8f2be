"""The value validation of the objects of one CRD version's schema, read once.

Nearly every object a server is sent is valid. So each schema node is read once into a check that answers only
whether a value has an error there or below (:func:`_check`): a closure that tests the common cases (a value of
the node's type, its bounds, lengths, pattern, format, enum of strings, required fields, counts, a set's or a
map-list's unique entries) without making a field path or a message. Whatever such a check does not decide
itself (a value of another type, a null, a float for an integer, ``multipleOf``, allOf/anyOf/oneOf/not, ...) it
hands to the walk that reports errors (:mod:`openapi_schema`), run on that value alone. Only when a check finds an
error does the walk run over the whole object, and its errors, paths and texts are the answer; so the check
changes how fast a valid object is accepted, never what an invalid one is told.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

from dralloc.validation import field as f
from dralloc.validation import openapi_schema as walk
from dralloc.validation.openapi_decoding import EMBEDDED, INT_OR_STRING, TYPE_META, Schema

Check = Callable[[Any], bool]
_ABSENT = object()
# The Python types of JSON values that each schema type takes without more thought (an integer-valued float for
# "integer" is the walk's to decide)
_TYPES: dict[str, tuple[type, ...]] = {"integer": (int,), "number": (int, float), "string": (str,),
                                       "boolean": (bool,), "array": (list,), "object": (dict,)}
_ANY_TYPE = (str, int, float, bool, list, dict)
_LEFT_TO_THE_WALK = ("allOf", "anyOf", "oneOf", "not", "multipleOf")
# What a root schema may hold for its check to read only the values of its declared fields
_PLAIN_ROOT = frozenset(("type", "properties", "description", "title", "nullable", "x-kubernetes-validations",
                         "x-kubernetes-preserve-unknown-fields", "x-kubernetes-embedded-resource"))


class Validator:
    """The value validation of one schema (see the module's note). Hold one per schema (a CRD version's) and
    reuse it."""

    def __init__(self, schema: Schema) -> None:
        self.schema = schema
        # the root without apiVersion, kind and metadata (their own rules check them)
        root = {k: v for k, v in schema.items() if k != "properties"}
        root["properties"] = {k: v for k, v in (schema.get("properties") or {}).items() if k not in TYPE_META}
        self._root = root
        self._plans: dict[int, Any] = {}  # (the walk's plans of the nodes it has met)
        self._valid = _check(root, self._walk_finds_none)
        # a root that reads only its declared fields' values passes a whole object as it passes it without its
        # apiVersion, kind and metadata (not declared in ``root``: not looked at): no copy to make
        self._whole = set(schema) <= _PLAIN_ROOT and schema.get("type") in ("object", None)

    def validate(self, obj: dict[str, Any]) -> list[f.FieldError]:
        """The value validation of a whole custom resource (metadata aside: its own rules check it)."""
        if self._whole and self._valid(obj):
            return []
        body = {k: v for k, v in obj.items() if k not in TYPE_META}
        if not self._whole and self._valid(body):
            return []
        errors: list[f.FieldError] = []
        walk.validate_with(body, self._root, "", errors, self._plans)
        return errors

    def _walk_finds_none(self, value: Any, schema: Schema) -> bool:
        errors: list[f.FieldError] = []
        walk.validate_with(value, schema, "", errors, self._plans)
        return not errors


def _check(schema: Schema, walk_finds_none: Callable[[Any, Schema], bool]) -> Check:
    """Whether a value has no error at ``schema``'s node or below (see the module's note)."""
    def by_walk(value: Any) -> bool:
        return walk_finds_none(value, schema)

    if any(k in schema for k in _LEFT_TO_THE_WALK):
        return by_walk
    kind = schema.get("type")
    taken = _TYPES.get(kind, _ANY_TYPE) if isinstance(kind, str) else _ANY_TYPE
    if schema.get(INT_OR_STRING):
        taken = tuple(t for t in taken if t in (int, str))
    enum = schema.get("enum")
    if isinstance(enum, list):
        # a string matches only a string of the enum; any other value is the walk's (JSON compared)
        taken = (str,) if str in taken else ()
    checks: dict[type, Check | None] = {}
    for python_type in taken:
        made = _value_check(python_type, schema, walk_finds_none)
        if made is False:
            return by_walk
        checks[python_type] = made
    if len(checks) == 1:
        ((only, check),) = checks.items()
        if check is None:
            def one_type(value: Any) -> bool:
                return type(value) is only or walk_finds_none(value, schema)
            return one_type

        def one_checked_type(value: Any) -> bool:
            if type(value) is only:
                return check(value)
            return walk_finds_none(value, schema)
        return one_checked_type

    def any_type(value: Any) -> bool:
        check = checks.get(type(value), _ABSENT)
        if check is None:
            return True
        if check is _ABSENT:
            return walk_finds_none(value, schema)
        return check(value)  # type: ignore[operator]
    return any_type


def _value_check(python_type: type, schema: Schema, walk_finds_none: Callable[[Any, Schema], bool]
                 ) -> Check | None | Literal[False]:
    """The check of the values of one Python type at a node: None when there is nothing to check, False when
    the node is the walk's (a bound that is not a number, ...)."""
    if python_type is str:
        return _string_check(schema)
    if python_type in (int, float):
        return _number_check(schema)
    if python_type is dict:
        return _object_check(schema, walk_finds_none)
    if python_type is list:
        return _array_check(schema, walk_finds_none)
    return None  # a boolean: no value rule reads one


def _string_check(schema: Schema) -> Check | None:
    enum = schema.get("enum")
    allowed = frozenset(e for e in enum if type(e) is str) if isinstance(enum, list) else None
    max_length = schema.get("maxLength") if isinstance(schema.get("maxLength"), int) else None
    min_length = schema.get("minLength") if isinstance(schema.get("minLength"), int) else None
    pattern = walk.compiled_pattern(schema["pattern"]) if isinstance(schema.get("pattern"), str) else None
    fmt = walk.FORMATS.get(schema["format"]) if isinstance(schema.get("format"), str) else None
    if allowed is None and max_length is None and min_length is None and pattern is None and fmt is None:
        return None

    def string(value: str) -> bool:
        if allowed is not None and value not in allowed:
            return False
        length = len(value)
        if max_length is not None and length > max_length:
            return False
        if min_length is not None and length < min_length:
            return False
        if pattern is not None and pattern.search(value) is None:
            return False
        return fmt is None or fmt(value)
    return string


def _number_check(schema: Schema) -> Check | None:
    maximum = schema.get("maximum")
    maximum = maximum if isinstance(maximum, (int, float)) else None
    minimum = schema.get("minimum")
    minimum = minimum if isinstance(minimum, (int, float)) else None
    if maximum is None and minimum is None:
        return None
    below = bool(schema.get("exclusiveMaximum"))
    above = bool(schema.get("exclusiveMinimum"))

    def number(value: float) -> bool:
        if maximum is not None and (value >= maximum if below else value > maximum):
            return False
        return minimum is None or not (value <= minimum if above else value < minimum)
    return number


def _object_check(schema: Schema, walk_finds_none: Callable[[Any, Schema], bool]) -> Check | None | Literal[False]:
    try:
        required = [name for name in schema.get("required") or () if isinstance(name, str)]
    except TypeError:
        return False  # (not a list: the walk's)
    max_properties = schema.get("maxProperties") if isinstance(schema.get("maxProperties"), int) else None
    min_properties = schema.get("minProperties") if isinstance(schema.get("minProperties"), int) else None
    properties = schema.get("properties")
    fields: dict[str, Check | None] = {}
    if isinstance(properties, dict):
        for key, child in properties.items():
            if child is not None:  # (a field declared as null is not declared: additionalProperties applies)
                fields[key] = _field_check(child, walk_finds_none)
    additional = schema.get("additionalProperties")
    other = _field_check(additional, walk_finds_none) if isinstance(additional, dict) else None
    if not required and max_properties is None and min_properties is None and not fields and other is None:
        return None
    if not required and max_properties is None and min_properties is None and other is None:
        def declared_fields(value: dict[str, Any]) -> bool:
            for key, item in value.items():
                check = fields.get(key)
                if check is not None and not check(item):
                    return False
            return True
        return declared_fields

    def an_object(value: dict[str, Any]) -> bool:
        for name in required:
            if name not in value:
                return False
        if max_properties is not None and len(value) > max_properties:
            return False
        if min_properties is not None and len(value) < min_properties:
            return False
        for key, item in value.items():
            check = fields.get(key, _ABSENT)
            if check is _ABSENT:
                check = other
            if check is not None and not check(item):  # type: ignore[operator]
                return False
        return True
    return an_object


def _field_check(schema: Any, walk_finds_none: Callable[[Any, Schema], bool]) -> Check | None:
    """A field's check; None for a field whose schema is not an object (the walk checks nothing there)."""
    if not isinstance(schema, dict):
        return None
    check = _check(schema, walk_finds_none)
    if not schema.get(EMBEDDED):
        return check

    def embedded(value: Any) -> bool:
        # an embedded resource needs its apiVersion and kind
        if isinstance(value, dict) and not (value.get("apiVersion") and value.get("kind")):
            return False
        return check(value)
    return embedded


def _array_check(schema: Schema, walk_finds_none: Callable[[Any, Schema], bool]) -> Check | None | Literal[False]:
    max_items = schema.get("maxItems") if isinstance(schema.get("maxItems"), int) else None
    min_items = schema.get("minItems") if isinstance(schema.get("minItems"), int) else None
    items = schema.get("items")
    item_check = _check(items, walk_finds_none) if isinstance(items, dict) else None
    list_type = schema.get("x-kubernetes-list-type")
    keys: tuple[str, ...] = ()
    if list_type == "map":
        try:
            keys = tuple(k for k in schema.get("x-kubernetes-list-map-keys") or () if isinstance(k, str))
        except TypeError:
            return False  # (not a list: the walk's)
    elif list_type != "set":
        list_type = None
    if max_items is None and min_items is None and item_check is None and list_type is None:
        return None

    def an_array(value: list[Any]) -> bool:
        count = len(value)
        if max_items is not None and count > max_items:
            return False
        if min_items is not None and count < min_items:
            return False
        if item_check is not None:
            for item in value:
                if not item_check(item):
                    return False
        if list_type == "set":
            return _unique(value) or walk_finds_none(value, schema)
        if list_type == "map":
            return _unique_keys(value, keys) or walk_finds_none(value, schema)
        return True
    return an_array


# The values whose equality in Python is their JSON text's (True == 1 and 1.0 == 1 are not)
_PLAIN = (str, int, type(None))


def _unique(value: list[Any]) -> bool:
    """True when a set's items are strings, integers or nulls, all different (else: the walk decides)."""
    for item in value:
        if type(item) not in _PLAIN:
            return False
    return len(set(value)) == len(value)


def _unique_keys(value: list[Any], keys: tuple[str, ...]) -> bool:
    """True when a map-list's entries have key values that are strings, integers or nulls, no two the same
    (else: the walk decides)."""
    seen = set()
    for item in value:
        if not isinstance(item, dict):
            continue
        found = tuple(item.get(k, _ABSENT) for k in keys) if len(keys) != 1 else item.get(keys[0], _ABSENT)
        for part in found if len(keys) != 1 else (found,):
            if part is not _ABSENT and type(part) not in _PLAIN:
                return False
        if found in seen:
            return False
        seen.add(found)
    return True
