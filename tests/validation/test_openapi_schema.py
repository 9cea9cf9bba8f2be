"""A custom resource against its structural schema: pruning, defaulting and value validation with
kube-apiserver's paths and texts."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dralloc.validation import openapi_schema as schema
from dralloc.validation.openapi_validator import Validator

SPEC = {"type": "object", "properties": {
    "name": {"type": "string", "minLength": 2, "maxLength": 5, "pattern": "^[a-z]+$"},
    "count": {"type": "integer", "minimum": 1, "exclusiveMaximum": True, "maximum": 10, "multipleOf": 2},
    "ratio": {"type": "number", "nullable": True},
    "port": {"x-kubernetes-int-or-string": True},
    "when": {"type": "string", "format": "date-time"},
    "tags": {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": 2,
             "x-kubernetes-list-type": "set"},
    "labels": {"type": "object", "additionalProperties": {"type": "string"}},
    "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
    "template": {"type": "object", "x-kubernetes-embedded-resource": True,
                 "properties": {"spec": {"type": "object", "properties": {"a": {"type": "string"}}}}},
    "mode": {"type": "string", "default": "fast"},
    "nested": {"type": "object", "default": {}, "properties": {"level": {"type": "integer", "default": 3}}},
}}
ROOT = {"type": "object", "properties": {"spec": SPEC}}


def errors(spec: dict[str, Any]) -> list[str]:
    return [str(e) for e in schema.validate({"apiVersion": "x/v1", "kind": "K", "spec": spec}, ROOT)]


@pytest.mark.parametrize(("spec", "message"), [
    ({"name": "a"}, 'spec.name: Invalid value: "a": spec.name in body should be at least 2 chars long'),
    ({"name": "abcdef"}, "spec.name: Too long: may not be more than 5 bytes"),
    ({"name": "ab1"}, "spec.name: Invalid value: \"ab1\": spec.name in body should match '^[a-z]+$'"),
    ({"count": 0}, "spec.count: Invalid value: 0: spec.count in body should be greater than or equal to 1"),
    ({"count": 10}, "spec.count: Invalid value: 10: spec.count in body should be less than 10"),
    ({"count": 3}, "spec.count: Invalid value: 3: spec.count in body should be a multiple of 2"),
    ({"count": 2.5}, 'spec.count: Invalid value: "number": spec.count in body must be of type integer: "number"'),
    ({"name": None}, 'spec.name: Invalid value: "null": spec.name in body must be of type string: "null"'),
    ({"port": 1.5}, 'spec.port: Invalid value: "number": spec.port in body must be of type integer or string: '
                    '"number"'),
    ({"when": "yesterday"}, 'spec.when: Invalid value: "yesterday": spec.when in body must be of type date-time: '
                            '"yesterday"'),
    ({"tags": []}, "spec.tags: Invalid value: 0: spec.tags in body should have at least 1 items"),
    ({"tags": ["a", "b", "c"]}, "spec.tags: Too many: 3: must have at most 2 items"),
    ({"tags": ["a", "a"]}, 'spec.tags[1]: Duplicate value: "a"'),
    ({"labels": {"a": 1}}, 'spec.labels.a: Invalid value: "integer": spec.labels.a in body must be of type string: '
                           '"integer"'),
    ({"template": {"spec": {}}}, "spec.template.apiVersion: Required value: must not be empty"),
])
def test_a_value_against_its_schema(spec: dict[str, Any], message: str) -> None:
    assert message in errors(spec)


def test_what_the_schema_allows_is_valid() -> None:
    assert errors({"name": "ab", "count": 4, "ratio": None, "port": "http", "when": "2026-01-02T03:04:05Z",
                   "tags": ["a", "b"], "labels": {"a": "b"}, "free": {"x": [1, {"y": 2}]},
                   "template": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}}}) == []
    assert errors({"port": 8080}) == []


def test_pruning_keeps_what_is_declared_preserved_or_an_embedded_resources_type_and_metadata() -> None:
    obj = {"apiVersion": "x/v1", "kind": "K", "metadata": {"name": "a"}, "extra": 1,
           "spec": {"name": "ab", "bogus": True, "labels": {"any": "thing"}, "free": {"deep": {"x": 1}},
                    "template": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
                                 "spec": {"a": "b", "c": "d"}, "other": 1}}}
    assert schema.prune(obj, ROOT) == ["extra", "spec.bogus", "spec.template.other", "spec.template.spec.c"]
    assert obj["spec"]["free"] == {"deep": {"x": 1}} and obj["spec"]["labels"] == {"any": "thing"}
    assert obj["spec"]["template"] == {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
                                       "spec": {"a": "b"}}


def test_defaults_fill_missing_and_null_fields_then_the_defaults_below_them() -> None:
    obj: dict[str, Any] = {"spec": {"mode": None}}
    schema.apply_defaults(obj, ROOT)
    assert obj["spec"]["mode"] == "fast" and obj["spec"]["nested"] == {"level": 3}
    kept: dict[str, Any] = {"spec": {"mode": "slow", "nested": {"level": 1}}}
    schema.apply_defaults(kept, ROOT)
    assert kept["spec"] == {"mode": "slow", "nested": {"level": 1}}


def _defaulted_in_place(value: Any, node: dict[str, Any] | None) -> None:
    """The structural defaulting rule, written plainly (the reference the module's walks are held to): each
    missing or (not nullable) null property with a default gets a copy of it, then everything below is
    defaulted; a null list item likewise."""
    if node is None:
        return
    if isinstance(value, dict):
        properties = node.get("properties") or {}
        for key, child in properties.items():
            if "default" in child and (key not in value or (value[key] is None and not child.get("nullable"))):
                value[key] = copy.deepcopy(child["default"])
        for key, item in value.items():
            if key in properties:
                _defaulted_in_place(item, properties[key])
        for item in value.values():
            _defaulted_in_place(item, node.get("additionalProperties"))
    elif isinstance(value, list) and node.get("items") is not None:
        items = node["items"]
        for i, item in enumerate(value):
            if item is None and "default" in items and not items.get("nullable"):
                value[i] = copy.deepcopy(items["default"])
            _defaulted_in_place(value[i], items)


# Schemas with defaults at every level: properties, additionalProperties, list items (a null item defaulted),
# nullable fields, defaults with defaults below them.
_DEFAULTING = {"type": "object", "properties": {"spec": {"type": "object", "properties": {
    "mode": {"type": "string", "default": "fast"},
    "ratio": {"type": "number", "nullable": True, "default": 1.5},
    "nested": {"type": "object", "default": {}, "properties": {"level": {"type": "integer", "default": 3},
                                                                "deep": {"type": "object", "default": {"x": 1}}}},
    "items": {"type": "array", "items": {"type": "object", "default": {"a": 1},
                                         "properties": {"b": {"type": "string", "default": "B"}}}},
    "map": {"type": "object", "additionalProperties": {"type": "object", "properties": {
        "c": {"type": "integer", "default": 7}}}}}}}}
_defaultable = st.recursive(
    st.none() | st.integers(0, 3) | st.sampled_from(["fast", "x"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
        st.sampled_from(["mode", "ratio", "nested", "level", "deep", "items", "b", "map", "c", "k"]), inner,
        max_size=4), max_leaves=12)


@given(st.dictionaries(st.sampled_from(["mode", "ratio", "nested", "items", "map", "other"]), _defaultable,
                       max_size=5))
def test_defaults_on_read_leave_the_stored_object_alone_and_show_what_defaulting_a_copy_shows(
        spec: dict[str, Any]) -> None:
    obj = {"apiVersion": "x/v1", "kind": "K", "spec": spec}
    before = copy.deepcopy(obj)
    expected = copy.deepcopy(obj)
    _defaulted_in_place(expected, _DEFAULTING)
    shown = schema.with_defaults(obj, _DEFAULTING)
    in_place = copy.deepcopy(obj)
    schema.apply_defaults(in_place, _DEFAULTING)
    assert in_place == expected
    assert shown == expected and obj == before  # (the stored object is not changed)
    if expected == before:
        assert shown is obj  # nothing to default: no copy


json_values = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=5),
                           lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner,
                                                                                       max_size=3), max_leaves=10)


@given(st.dictionaries(st.text(max_size=6), json_values, max_size=5))
def test_pruning_is_idempotent_and_leaves_nothing_unknown(spec: dict[str, Any]) -> None:
    obj = {"apiVersion": "x/v1", "kind": "K", "spec": copy.deepcopy(spec)}
    schema.prune(obj, ROOT)
    once = copy.deepcopy(obj)
    assert schema.prune(obj, ROOT) == [] and obj == once
    schema.validate(obj, ROOT)  # never raises, whatever the values


def test_ratcheting_drops_the_errors_of_values_an_update_left_as_they_were() -> None:
    from dralloc.validation.ratcheting import ratchet

    old = {"spec": {"name": "a1", "count": 3, "tags": ["x"]}}
    new = {"spec": {"name": "a1", "count": 5, "tags": ["x"], "ratio": "high"}}
    kept = [str(e) for e in ratchet(schema.validate(new, ROOT), new, old)]
    assert kept == ["spec.count: Invalid value: 5: spec.count in body should be a multiple of 2",
                    'spec.ratio: Invalid value: "string": spec.ratio in body must be of type number: "string"']
    required = {"type": "object", "properties": {"spec": {"type": "object", "required": ["name"]}}}
    missing = schema.validate({"spec": {"count": 6}}, required)
    assert [str(e) for e in ratchet(missing, {"spec": {"count": 6}}, {"spec": {"count": 4}})] == [
        "spec.name: Required value"]  # (its object changed)
    assert ratchet(missing, {"spec": {"count": 6}}, {"spec": {"count": 6}}) == []


def test_a_validator_reused_across_objects_reads_each_objects_own_values() -> None:
    validator = Validator(ROOT)
    bad = {"apiVersion": "x/v1", "kind": "K", "spec": {"name": "a", "count": 11}}
    good = {"apiVersion": "x/v1", "kind": "K", "spec": {"name": "ab", "count": 2}}
    first = [str(e) for e in validator.validate(bad)]
    assert first == [str(e) for e in schema.validate(bad, ROOT)] and len(first) == 3
    assert validator.validate(good) == [] and [str(e) for e in validator.validate(bad)] == first


def test_an_enum_compares_json_values_a_string_only_with_strings() -> None:
    node = {"enum": [1, "1", None]}
    assert schema.validate_value("1", node, "x") == [] and schema.validate_value(1, node, "x") == []
    assert [str(e) for e in schema.validate_value("2", node, "x")] == [
        'x: Unsupported value: "2": supported values: 1, "1", null']
    assert [str(e) for e in schema.validate_value(True, {"enum": [1]}, "x")] == [
        'x: Unsupported value: true: supported values: 1']
