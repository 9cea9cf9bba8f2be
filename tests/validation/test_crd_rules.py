"""x-kubernetes-validations: CEL rules over a custom resource, with kube-apiserver's texts."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dralloc.validation import crd_rules


def spec_schema(*rules: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "properties": {"spec": {
        "type": "object", "x-kubernetes-validations": list(rules),
        "properties": {"min": {"type": "integer"}, "max": {"type": "integer"},
                       "items": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
                                 "items": {"type": "object", "properties": {"name": {"type": "string"},
                                                                            "size": {"type": "integer"}},
                                           "x-kubernetes-validations": [{"rule": "self.size >= oldSelf.size",
                                                                         "message": "may only grow"}]}}}}}}


def messages(schema: dict[str, Any], spec: dict[str, Any], old: dict[str, Any] | None = None) -> list[str]:
    args = (old,) if old is not None else ()
    return [str(e) for e in crd_rules.validate({"apiVersion": "x/v1", "kind": "K", "spec": spec}, schema,
                                               *({"spec": a} for a in args))]


def test_a_false_rule_is_reported_at_its_node_with_its_message_or_the_rule() -> None:
    assert messages(spec_schema({"rule": "self.min <= self.max", "message": "min must not exceed max"}),
                    {"min": 3, "max": 2}) == ['spec: Invalid value: "object": min must not exceed max']
    assert messages(spec_schema({"rule": "self.min <= self.max"}), {"min": 3, "max": 2}) == [
        'spec: Invalid value: "object": failed rule: self.min <= self.max']
    assert messages(spec_schema({"rule": "self.min <= self.max"}), {"min": 1, "max": 2}) == []


def test_message_expression_reason_and_field_path() -> None:
    rule = {"rule": "self.min <= self.max", "messageExpression": "'min ' + string(self.min) + ' is over max'",
            "reason": "FieldValueForbidden", "fieldPath": ".min"}
    assert messages(spec_schema(rule), {"min": 3, "max": 2}) == ["spec.min: Forbidden: min 3 is over max"]
    required = {"rule": "has(self.max)", "message": "max is needed", "reason": "FieldValueRequired"}
    assert messages(spec_schema(required), {"min": 1}) == ["spec: Required value: max is needed"]


def test_a_transition_rule_runs_on_updates_of_values_that_existed() -> None:
    immutable = spec_schema({"rule": "self == oldSelf", "message": "A computeDomain.spec is immutable"})
    assert messages(immutable, {"min": 1}) == []  # a create: no oldSelf
    assert messages(immutable, {"min": 1}, {"min": 1}) == []
    assert messages(immutable, {"min": 2}, {"min": 1}) == [
        'spec: Invalid value: "object": A computeDomain.spec is immutable']


def test_list_map_items_are_correlated_with_their_old_selves_by_key() -> None:
    schema = spec_schema()
    old = {"items": [{"name": "a", "size": 2}, {"name": "b", "size": 5}]}
    assert messages(schema, {"items": [{"name": "b", "size": 5}, {"name": "a", "size": 3}]}, old) == []
    assert messages(schema, {"items": [{"name": "b", "size": 4}, {"name": "c", "size": 1}]}, old) == [
        'spec.items[0]: Invalid value: "object": may only grow']


def test_an_evaluation_error_is_reported_with_the_rule() -> None:
    assert messages(spec_schema({"rule": "self.max > 1"}), {"min": 1}) == [
        'spec: Invalid value: "object": no such key: max evaluating rule: self.max > 1']


@pytest.mark.parametrize(("rule", "message"), [
    ({"rule": "self.("}, 'x-kubernetes-validations[0].rule: Invalid value: apiextensions.ValidationRule{Rule:"self.(", '
                         'Message:"", MessageExpression:"", Reason:(*apiextensions.FieldValueErrorReason)(nil), '
                         'FieldPath:"", OptionalOldSelf:(*bool)(nil)}: compilation failed: ERROR: <input>:1:6: '
                         "Syntax error: no viable alternative at input '.('"),
    ({"rule": "true", "reason": "Because"},
     'x-kubernetes-validations[0].reason: Unsupported value: "Because": supported values: "FieldValueInvalid", '
     '"FieldValueForbidden", "FieldValueRequired", "FieldValueDuplicate"'),
])
def test_rules_are_checked_when_the_crd_is_written(rule: dict[str, Any], message: str) -> None:
    found = [str(e) for e in crd_rules.rule_errors({"type": "object", "x-kubernetes-validations": [rule]}, "s")]
    assert len(found) == 1 and found[0].startswith("s." + message), found


_RULE_SCHEMAS = {
    "spec": spec_schema({"rule": "self.min <= self.max", "message": "order"}),
    "deep": {"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "min": {"type": "integer"}, "max": {"type": "integer"}, "free": {"type": "object"},
        "tags": {"type": "object", "additionalProperties": {"type": "integer", "x-kubernetes-validations": [
            {"rule": "self < 10", "message": "small"}]}},
        "items": {"type": "array", "items": {"type": "object", "properties": {"size": {"type": "integer",
                  "x-kubernetes-validations": [{"rule": "self >= oldSelf", "message": "grow"}]}}}}}}}},
    "both": {"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "min": {"type": "integer"}}, "additionalProperties": {"type": "integer", "x-kubernetes-validations": [
            {"rule": "self > 0", "message": "positive"}]}}}},
}
_specs = st.dictionaries(st.sampled_from(["min", "max", "free", "tags", "items", "other"]), st.one_of(
    st.integers(-2, 12), st.dictionaries(st.sampled_from(["a", "b"]), st.integers(-2, 12), max_size=2),
    st.lists(st.fixed_dictionaries({}, optional={"name": st.sampled_from(["a", "b"]), "size": st.integers(0, 5)}),
             max_size=3)), max_size=5)


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(sorted(_RULE_SCHEMAS)), _specs, st.one_of(st.none(), _specs))
def test_the_rules_part_of_a_schema_finds_what_the_whole_schema_finds(name: str, spec: dict[str, Any],
                                                                      old: dict[str, Any] | None) -> None:
    schema = _RULE_SCHEMAS[name]
    part = crd_rules.rules_schema(schema)
    assert part is not None
    assert messages(part, spec, old) == messages(schema, spec, old)


def test_the_rules_part_leaves_out_what_holds_no_rule() -> None:
    part = crd_rules.rules_schema(_RULE_SCHEMAS["deep"])
    assert part is not None
    spec = part["properties"]["spec"]
    assert set(spec["properties"]) == {"tags", "items"}  # (min, max and free hold no rule: not walked)
    assert crd_rules.rules_schema({"type": "object", "properties": {"a": {"type": "string"}}}) is None
    both = crd_rules.rules_schema(_RULE_SCHEMAS["both"])
    assert both is not None and both["properties"]["spec"]["properties"] == {"min": {}}  # (not an additional one)
