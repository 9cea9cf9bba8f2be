"""A CRD version's schema read once (pruning and defaulting plans, the validator's checks) against the walks
that read the schema's JSON at every value, over generated structural schemas and objects: the same unknown
fields, the same pruned and defaulted objects (key order too: the answer's bytes), the same errors."""

from __future__ import annotations

import copy
import json
from typing import Any

import openapi_reference as before
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dralloc.validation import openapi_schema
from dralloc.validation.openapi_decoding import Decoding
from dralloc.validation.openapi_validator import Validator, _check

KEYS = ["a", "b", "name", "port"]
PATTERNS = ["^[a-z]+$", "b", "^(a|1)"]
FORMATS = ["date-time", "uuid", "ipv4", "duration", "byte", "hostname", "bogus"]
STRINGS = ["", "a", "ab", "abc", "a1", "b", "1", "2026-01-02T03:04:05Z", "10.0.0.1", "5s", "YWJj",
           "123e4567-e89b-12d3-a456-426614174000", "host.example"]

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 5) | st.sampled_from(STRINGS) | st.sampled_from([1.0, 2.5]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(KEYS + ["x"]), inner, max_size=3),
    max_leaves=8)


def _node(base: dict[str, Any], optional: dict[str, st.SearchStrategy[Any]]) -> st.SearchStrategy[dict[str, Any]]:
    common = {"nullable": st.booleans(), "default": json_values}
    return st.fixed_dictionaries({k: st.just(v) for k, v in base.items()}, optional={**common, **optional})


_numbers = st.integers(-2, 4) | st.sampled_from([0.5, 100])
leaves = st.one_of(
    _node({"type": "string"}, {"enum": st.lists(st.sampled_from(["a", "b", "abc", 1]), max_size=3),
                               "maxLength": st.integers(0, 3), "minLength": st.integers(0, 3),
                               "pattern": st.sampled_from(PATTERNS), "format": st.sampled_from(FORMATS)}),
    _node({"type": "integer"},
          {"minimum": _numbers, "maximum": _numbers, "exclusiveMinimum": st.booleans(),
           "exclusiveMaximum": st.booleans(), "multipleOf": st.sampled_from([2, 0.5]),
           "enum": st.lists(st.sampled_from([1, 2, "1"]), max_size=2)}),
    _node({"type": "number"}, {"minimum": _numbers, "maximum": _numbers, "exclusiveMaximum": st.booleans()}),
    _node({"type": "boolean"}, {"enum": st.just([True])}),
    _node({"x-kubernetes-int-or-string": True}, {"pattern": st.sampled_from(PATTERNS), "maximum": _numbers,
                                                 "maxLength": st.integers(0, 3)}),
    _node({"x-kubernetes-preserve-unknown-fields": True}, {"type": st.just("object")}),
)


def _containers(child: st.SearchStrategy[dict[str, Any]]) -> st.SearchStrategy[dict[str, Any]]:
    return st.one_of(
        _node({"type": "object"}, {
            "properties": st.dictionaries(st.sampled_from(KEYS), child, max_size=3),
            "additionalProperties": child | st.booleans(),
            "required": st.lists(st.sampled_from(KEYS), max_size=2),
            "maxProperties": st.integers(0, 3), "minProperties": st.integers(0, 2),
            "x-kubernetes-preserve-unknown-fields": st.just(True),
            "x-kubernetes-embedded-resource": st.just(True)}),
        _node({"type": "array"}, {
            "items": child, "maxItems": st.integers(0, 3), "minItems": st.integers(0, 2),
            "x-kubernetes-list-type": st.sampled_from(["atomic", "set", "map"]),
            "x-kubernetes-list-map-keys": st.lists(st.sampled_from(KEYS), max_size=2)}),
        st.fixed_dictionaries({"type": st.just("object"), "properties": st.dictionaries(
            st.sampled_from(KEYS), child, max_size=2)}, optional={
            "allOf": st.lists(st.fixed_dictionaries({}, optional={"required": st.lists(st.sampled_from(KEYS),
                                                                                          max_size=1)}), max_size=1),
            "anyOf": st.lists(st.fixed_dictionaries({"required": st.lists(st.sampled_from(KEYS), max_size=1)}),
                              min_size=1, max_size=2),
            "oneOf": st.lists(st.fixed_dictionaries({"maxProperties": st.integers(0, 2)}), min_size=1, max_size=2),
            "not": st.fixed_dictionaries({"required": st.lists(st.sampled_from(KEYS), min_size=1, max_size=1)})}),
    )


schemas = st.recursive(leaves, _containers, max_leaves=8)


def values_of(schema: Any, depth: int = 0) -> st.SearchStrategy[Any]:
    """Values near what ``schema`` allows (its fields, types and enums), and any JSON now and then."""
    if not isinstance(schema, dict) or depth > 5:
        return json_values
    kind = schema.get("type")
    options: list[st.SearchStrategy[Any]] = [json_values]
    if kind == "object" or schema.get("x-kubernetes-preserve-unknown-fields"):
        properties = schema.get("properties") or {}
        additional = schema.get("additionalProperties")
        extra = values_of(additional, depth + 1) if isinstance(additional, dict) else json_values
        fields = st.fixed_dictionaries({}, optional={k: values_of(v, depth + 1) for k, v in properties.items()})
        more = st.dictionaries(st.sampled_from(["x", "y", "apiVersion", "kind"]), extra, max_size=2)
        options += [fields, st.builds(lambda a, b: {**b, **a}, fields, more)] * 3
    elif kind == "array":
        options += [st.lists(values_of(schema.get("items"), depth + 1), max_size=3)] * 3
    elif kind == "string":
        options += [st.sampled_from(STRINGS + [e for e in schema.get("enum") or () if isinstance(e, str)])] * 6
    elif kind in ("integer", "number"):
        options += [st.integers(-3, 5), st.sampled_from([0.5, 2.0, 100])] * 3
    elif kind == "boolean":
        options += [st.booleans()] * 3
    else:
        options += [st.integers(-3, 110) | st.sampled_from(STRINGS)] * 3
    return st.one_of(options)


@st.composite
def schemas_and_objects(draw: st.DrawFn) -> tuple[dict[str, Any], dict[str, Any]]:
    spec = draw(schemas)
    root: dict[str, Any] = {"type": "object", "properties": {"spec": spec}}
    if draw(st.booleans()):
        root["properties"]["status"] = draw(schemas)
    obj: dict[str, Any] = {"apiVersion": "x/v1", "kind": "K", "metadata": {"name": "a"}}
    obj["spec"] = draw(values_of(spec))
    # a root with rules of its own (read without the object's apiVersion, kind and metadata)
    root.update(draw(st.fixed_dictionaries({}, optional={
        "required": st.lists(st.sampled_from(["spec", "kind", "metadata"]), max_size=2),
        "maxProperties": st.integers(0, 2), "minProperties": st.integers(1, 3)})))
    if "status" in root["properties"] and draw(st.booleans()):
        obj["status"] = draw(values_of(root["properties"]["status"]))
    if draw(st.integers(0, 4)) == 0:
        obj["extra"] = draw(json_values)
    return root, obj


_settings = settings(max_examples=120, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
                     deadline=None)


def _text(value: Any) -> str:
    return json.dumps(value)  # (key order too)


@_settings
@given(schemas_and_objects())
def test_the_pruning_plans_remove_and_report_what_the_schema_walk_did(case: tuple[dict[str, Any], Any]) -> None:
    root, obj = case
    decoding = Decoding(root)
    sent = copy.deepcopy(obj)
    assert decoding.unknown_fields(obj) == before.prune(before.without_nulls(obj), root)
    assert _text(obj) == _text(sent)  # (the check changes nothing)
    pruned, expected = copy.deepcopy(obj), copy.deepcopy(obj)
    assert decoding.prune(pruned) == before.prune(expected, root)
    assert _text(pruned) == _text(expected)


@_settings
@given(schemas_and_objects())
def test_the_defaulting_plans_default_what_the_schema_walk_did(case: tuple[dict[str, Any], Any]) -> None:
    root, obj = case
    decoding = Decoding(root)
    sent = copy.deepcopy(obj)
    shown, expected = decoding.with_defaults(obj), before.with_defaults(obj, root)
    assert _text(shown) == _text(expected) and _text(obj) == _text(sent)
    assert (shown is obj) == (expected is obj)  # (nothing to default: the object itself, no copy)
    in_place, reference = copy.deepcopy(obj), copy.deepcopy(obj)
    decoding.apply_defaults(in_place)
    before.apply_defaults(reference, root)
    assert _text(in_place) == _text(reference)


@_settings
@given(schemas_and_objects())
def test_the_validators_checks_find_the_errors_the_schema_walk_finds(case: tuple[dict[str, Any], Any]) -> None:
    root, obj = case
    validator = Validator(root)
    expected = [(e.type, e.field, str(e)) for e in openapi_schema.validate(obj, root)]
    assert [(e.type, e.field, str(e)) for e in validator.validate(obj)] == expected
    # as an object is written: pruned and defaulted first, then validated
    written = copy.deepcopy(obj)
    Decoding(root).prune(written)
    Decoding(root).apply_defaults(written)
    expected = [(e.type, e.field, str(e)) for e in openapi_schema.validate(written, root)]
    assert [(e.type, e.field, str(e)) for e in validator.validate(written)] == expected


_NOT_RULES = ("type", "items", "properties", "additionalProperties", "exclusiveMaximum", "exclusiveMinimum",
              "x-kubernetes-list-map-keys")


@st.composite
def nodes_and_values(draw: st.DrawFn) -> tuple[dict[str, Any], Any]:
    node = draw(st.one_of(leaves, leaves, schemas))
    # (a leaf with one or two rules: a value then often meets only their bounds)
    rules = sorted(k for k in node if k not in _NOT_RULES)
    kept = draw(st.sets(st.sampled_from(rules), max_size=2)) if rules else set()
    node = {k: v for k, v in node.items() if k not in rules or k in kept}
    return node, draw(values_of(node))


@settings(max_examples=400, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
          deadline=None)
@given(nodes_and_values())
def test_a_nodes_check_passes_a_value_exactly_when_the_schema_walk_finds_no_error(
        case: tuple[dict[str, Any], Any]) -> None:
    node, value = case
    plans: dict[int, Any] = {}

    def walk_finds_none(part: Any, schema: dict[str, Any]) -> bool:
        errors: list[Any] = []
        openapi_schema.validate_with(part, schema, "", errors, plans)
        return not errors

    assert _check(node, walk_finds_none)(value) == (openapi_schema.validate_value(value, node, "x") == [])


_ITEMS = {"x-kubernetes-preserve-unknown-fields": True}


@pytest.mark.parametrize(("node", "value"), [
    # a set's and a map-list's entries are compared as JSON: true is not 1, 1.0 is not 1, "1" is not 1
    ({"type": "array", "items": _ITEMS, "x-kubernetes-list-type": "set"}, [True, 1]),
    ({"type": "array", "items": _ITEMS, "x-kubernetes-list-type": "set"}, [1, 1.0]),
    ({"type": "array", "items": _ITEMS, "x-kubernetes-list-type": "set"}, ["1", 1]),
    ({"type": "array", "items": _ITEMS, "x-kubernetes-list-type": "set"}, [None, None]),
    ({"type": "array", "items": _ITEMS, "x-kubernetes-list-type": "set"}, [{"a": 1}, {"a": 1}]),
    ({"type": "array", "items": _ITEMS, "x-kubernetes-list-type": "set"}, ["a", "b", "a"]),
    ({"type": "array", "items": _ITEMS, "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["k"]},
     [{"k": True}, {"k": 1}]),
    ({"type": "array", "items": _ITEMS, "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["k"]},
     [{"k": None}, {}]),
    ({"type": "array", "items": _ITEMS, "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["k"]},
     [{}, {"j": 1}]),
    ({"type": "array", "items": _ITEMS, "x-kubernetes-list-type": "map",
      "x-kubernetes-list-map-keys": ["k", "j"]}, [{"k": "a", "j": 1}, {"k": "a", "j": 2}, {"k": "a", "j": 1}]),
    # bounds: exclusive ones refuse the bound itself
    ({"type": "integer", "maximum": 3, "exclusiveMaximum": True}, 3),
    ({"type": "integer", "minimum": 3, "exclusiveMinimum": True}, 3),
    ({"type": "number", "maximum": 2.5}, 2.5),
    ({"type": "integer", "maximum": 3}, 3.0),
    ({"type": "integer"}, 2.5),
    ({"type": "integer"}, True),
    ({"x-kubernetes-int-or-string": True}, 1.0),
    ({"x-kubernetes-int-or-string": True}, 1.5),
    ({"enum": [1, "1"]}, True),
    ({"type": "string", "enum": ["a", 1]}, "1"),
    ({"type": "object", "required": ["a", "b"]}, {"b": 1}),
    ({"type": "object", "properties": {"t": {"type": "object", "x-kubernetes-embedded-resource": True}}},
     {"t": {"apiVersion": "v1"}}),
    ({"type": "object", "additionalProperties": {"type": "object", "x-kubernetes-embedded-resource": True}},
     {"t": {"kind": "K"}}),
    ({"type": "object", "properties": {"a": None}, "additionalProperties": {"type": "string"}}, {"a": 1}),
    ({"type": "string", "nullable": True}, None),
    ({"type": "string"}, None),
])
def test_a_nodes_check_and_the_schema_walk_agree_where_python_and_json_values_differ(node: dict[str, Any],
                                                                                     value: Any) -> None:
    plans: dict[int, Any] = {}

    def walk_finds_none(part: Any, schema: dict[str, Any]) -> bool:
        errors: list[Any] = []
        openapi_schema.validate_with(part, schema, "", errors, plans)
        return not errors

    assert _check(node, walk_finds_none)(value) == (openapi_schema.validate_value(value, node, "x") == [])
    root = {"type": "object", "properties": {"spec": {"type": "object", "properties": {"v": node}}}}
    obj = {"apiVersion": "x/v1", "kind": "K", "spec": {"v": value}}
    assert [str(e) for e in Validator(root).validate(obj)] == [str(e) for e in openapi_schema.validate(obj, root)]
