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


# --- the rule set read once, against the walk that read the rules' JSON at every value -------------------------

import crd_rules_reference as before  # noqa: E402
from hypothesis import HealthCheck  # noqa: E402

_EXPRESSIONS = ["true", "false", "self == oldSelf", "has(self.a)", "self.a > 1", "size(self) < 2",
                "self.all(x, x != 'b')", "self.map(x, x).size() >= 0", "oldSelf.a <= self.a", "self.nope("]
_rules = st.fixed_dictionaries({"rule": st.sampled_from(_EXPRESSIONS)}, optional={
    "message": st.sampled_from(["", " bad ", "must hold"]),
    "messageExpression": st.sampled_from(["'got ' + string(size(self))", "self.missing", "42"]),
    "fieldPath": st.sampled_from([".a", ".b.c"]),
    "reason": st.sampled_from(sorted(crd_rules.REASONS))})
_KEYS = ["a", "b", "c"]


def _rule_schemas(child: st.SearchStrategy[dict[str, Any]]) -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries({}, optional={
        "type": st.sampled_from(["object", "array", "integer"]),
        "x-kubernetes-validations": st.lists(_rules, max_size=2),
        "properties": st.dictionaries(st.sampled_from(_KEYS), child, max_size=2),
        "additionalProperties": child,
        "items": child,
        "x-kubernetes-list-type": st.just("map"),
        "x-kubernetes-list-map-keys": st.just(["a"])})


_rule_schema = st.recursive(st.fixed_dictionaries({}, optional={
    "type": st.sampled_from(["integer", "string"]), "x-kubernetes-validations": st.lists(_rules, min_size=1,
                                                                                         max_size=1)}),
    _rule_schemas, max_leaves=6)
_values = st.recursive(st.none() | st.integers(-1, 3) | st.sampled_from(["a", "b"]),
                       lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(_KEYS), inner,
                                                                                   max_size=3), max_leaves=8)


def _values_of(schema: dict[str, Any], depth: int = 0) -> st.SearchStrategy[Any]:
    """Values shaped as ``schema`` (its fields, map values and items), and any value now and then."""
    if depth > 4:
        return _values
    shaped: list[st.SearchStrategy[Any]] = [_values]
    if "properties" in schema or "additionalProperties" in schema:
        fields = st.fixed_dictionaries({}, optional={k: _values_of(v, depth + 1)
                                                     for k, v in (schema.get("properties") or {}).items()})
        more = st.dictionaries(st.sampled_from(["x", "y"]), _values_of(schema.get("additionalProperties") or {},
                                                                         depth + 1), max_size=2)
        shaped += [st.builds(lambda a, b: {**b, **a}, fields, more)] * 4
    if "items" in schema:
        shaped += [st.lists(_values_of(schema["items"], depth + 1), max_size=3)] * 4
    return st.one_of(shaped)


@st.composite
def _rule_cases(draw: st.DrawFn) -> tuple[dict[str, Any], Any, Any]:
    spec_schema = draw(_rule_schema)
    spec = draw(_values_of(spec_schema))
    old = draw(st.none() | _values_of(spec_schema) | st.just(spec))
    return spec_schema, spec, old


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_rule_cases(), st.sampled_from([0, 3, 40, crd_rules.RUNTIME_COST_BUDGET]), st.booleans())
def test_the_rule_set_reports_what_the_rules_walk_reported(case: tuple[dict[str, Any], Any, Any], budget: int,
                                                          pruned: bool) -> None:
    spec_schema, spec, old_spec = case
    schema = {"type": "object", "properties": {"spec": spec_schema}}
    if pruned:
        schema = crd_rules.rules_schema(schema) or {}
    obj = {"apiVersion": "x/v1", "kind": "K", "spec": spec}
    old = (() if old_spec is None else ({"apiVersion": "x/v1", "kind": "K", "spec": old_spec},))
    expected = [(e.type, e.field, str(e)) for e in before.validate(obj, schema, *old, budget=budget)]
    found = crd_rules.RuleSet(schema).validate(obj, *old, budget=budget)
    assert [(e.type, e.field, str(e)) for e in found] == expected


def test_a_declared_field_without_rules_is_not_checked_by_the_rules_of_additional_properties() -> None:
    schema = {"type": "object", "properties": {"spec": {
        "type": "object", "properties": {"a": {"type": "integer"}},
        "additionalProperties": {"type": "integer", "x-kubernetes-validations": [
            {"rule": "self > 5", "message": "  must be over 5  "}]}}}}
    expected = ['spec.b: Invalid value: "integer": must be over 5']
    assert messages(schema, {"a": 1, "b": 2}) == expected
    assert [str(e) for e in crd_rules.RuleSet(crd_rules.rules_schema(schema) or {}).validate(
        {"spec": {"a": 1, "b": 2}})] == expected
