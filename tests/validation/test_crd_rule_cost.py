"""The runtime cost of a CRD's x-kubernetes-validations rules, as kube-apiserver limits it: each rule's call
has its cost limit (the rule fails, and no further rule runs), and the rules of one object share a budget (the
rule that runs past it fails, and no further rule runs)."""

from __future__ import annotations

import copy
from typing import Any

from dralloc.validation import crd_rules


def schema(*rules: str, max_items: int | None = None) -> dict[str, Any]:
    items: dict[str, Any] = {"type": "array", "items": {"type": "integer"},
                             "x-kubernetes-validations": [{"rule": r} for r in rules]}
    if max_items is not None:
        items["maxItems"] = max_items
    return {"type": "object", "properties": {"spec": {"type": "object", "properties": {"xs": items}}}}


def texts(errors: list[Any]) -> list[str]:
    return [f"{e.field}: {e.detail}" for e in errors]


def test_a_rule_past_its_call_cost_limit_fails_and_stops_the_rules() -> None:
    pairs = "self.all(x, self.all(y, x != y || x == y))"
    obj = {"spec": {"xs": list(range(1000))}}
    errors = crd_rules.validate(obj, schema(pairs, "size(self) < 0"))
    assert texts(errors) == [
        "spec.xs: 'operation cancelled: actual cost limit exceeded': no further validation rules will be run due "
        f"to call cost exceeds limit for rule: {pairs}"]


def test_rules_share_the_objects_budget() -> None:
    loop = "self.all(x, x >= 0)"
    obj = {"spec": {"xs": list(range(100))}}
    one = crd_rules.validate(obj, schema(loop), budget=10_000)
    assert one == []  # one run fits
    spent = 10_000 - _left_after(obj, schema(loop))
    assert spent > 0
    errors = crd_rules.validate(obj, schema(loop, loop, "size(self) < 0"), budget=spent + spent // 2)
    assert texts(errors) == ["spec.xs: validation failed due to running out of cost budget, no further validation "
                             "rules will be run"]


def test_a_node_reached_with_no_budget_left_fails() -> None:
    obj = {"spec": {"xs": [1]}}
    errors = crd_rules.validate(obj, schema("size(self) < 0"), budget=0)
    assert texts(errors) == ["spec.xs: validation failed due to running out of cost budget, no further validation "
                             "rules will be run"]


def _left_after(obj: dict[str, Any], rules: dict[str, Any]) -> int:
    budget = crd_rules._Budget(10_000)
    crd_rules._validate(obj, crd_rules._Node(rules), crd_rules._MISSING, "", [], budget, root=True)
    return budget.left


# --- the estimated cost, checked when the CRD is written ------------------------------------------------------

from dralloc.api.apiextensions_v1 import decode  # noqa: E402
from dralloc.validation.crd import validate_crd, validate_crd_update  # noqa: E402

SCHEMA_PATH = "spec.versions[0].schema.openAPIV3Schema"
XS_RULE = f"{SCHEMA_PATH}.properties[spec].properties[xs].x-kubernetes-validations[0].rule"
ADVICE = ("(try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and "
          "strings are declared)")


def crd_with(xs: dict[str, Any]) -> dict[str, Any]:
    root = {"type": "object", "properties": {"spec": {"type": "object", "properties": {"xs": xs}}}}
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "widgets.example.com"},
            "spec": {"group": "example.com", "scope": "Namespaced",
                     "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
                     "versions": [{"name": "v1", "served": True, "storage": True,
                                   "schema": {"openAPIV3Schema": root}}]}}


def ports(rule: str, **bounds: Any) -> dict[str, Any]:
    item = {"type": "string", **({"maxLength": bounds["max_length"]} if "max_length" in bounds else {})}
    xs: dict[str, Any] = {"type": "array", "items": item, "x-kubernetes-validations": [{"rule": rule}]}
    if "max_items" in bounds:
        xs["maxItems"] = bounds["max_items"]
    return xs


def messages(obj: dict[str, Any]) -> list[str]:
    return [str(e) for e in validate_crd(decode(obj))]


SPLIT = "self.all(p, int(p.split('/')[0]) >= 1)"


def test_a_rule_over_an_unbounded_list_of_unbounded_strings_is_refused() -> None:
    assert messages(crd_with(ports(SPLIT))) == [
        f"{XS_RULE}: Forbidden: estimated rule cost exceeds budget by factor of more than 100x {ADVICE}",
        f"{XS_RULE}: Forbidden: contributed to estimated rule cost total exceeding cost limit for entire "
        "OpenAPIv3 schema",
        f"{SCHEMA_PATH}: Forbidden: x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 "
        f"schema exceeds budget by factor of more than 100x {ADVICE}"]


def test_bounds_bring_the_rule_within_its_budget() -> None:
    assert messages(crd_with(ports(SPLIT, max_items=64, max_length=16))) == []
    assert messages(crd_with(ports("self == oldSelf"))) == []  # an immutable list: linear, within budget
    assert messages(crd_with(ports("size(self) <= 3"))) == []


def test_a_rule_runs_once_per_item_of_the_lists_above_it() -> None:
    item_rule = {"type": "string", "maxLength": 100, "x-kubernetes-validations": [{"rule": "self.matches('^a+$')"}]}
    unbounded = {"type": "array", "items": item_rule}
    refused = messages(crd_with(unbounded))
    assert refused[0].startswith(f"{SCHEMA_PATH}.properties[spec].properties[xs].items.x-kubernetes-validations[0]"
                                 ".rule: Forbidden: estimated rule cost exceeds budget by factor of ")
    assert messages(crd_with({**unbounded, "maxItems": 1000})) == []


def test_the_rules_of_a_schema_share_a_total() -> None:
    # each rule within its own limit (7.5M), together over 100M: the four dearest are named
    rules = [{"rule": f"self.all(x, x.matches('^{chr(97 + i)}$'))"} for i in range(14)]
    xs = {"type": "array", "maxItems": 500000, "items": {"type": "string", "maxLength": 100},
          "x-kubernetes-validations": rules}
    found = messages(crd_with(xs))
    assert not any("estimated rule cost exceeds" in m for m in found)
    rule_path = f"{SCHEMA_PATH}.properties[spec].properties[xs].x-kubernetes-validations[{{}}].rule"
    assert [m.split(": ")[0] for m in found] == [rule_path.format(i) for i in range(4)] + [SCHEMA_PATH]
    assert found[-1].startswith(f"{SCHEMA_PATH}: Forbidden: x-kubernetes-validations estimated rule cost total for "
                                "entire OpenAPIv3 schema exceeds budget by factor of ")


def test_an_update_that_leaves_a_schema_as_it_was_does_not_check_its_rules_own_cost_again() -> None:
    old = crd_with(ports("self.all(p, p.matches('^a+$'))", max_items=1000000, max_length=100))
    assert any("estimated rule cost exceeds budget" in m for m in messages(old))
    new = copy.deepcopy(old)
    new["spec"]["names"]["shortNames"] = ["wd"]
    errors = [str(e) for e in validate_crd_update(decode(new), decode(old), True)]
    assert not any("estimated rule cost exceeds budget" in e for e in errors)
    new["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["xs"]["maxLength"] = 5
    errors = [str(e) for e in validate_crd_update(decode(new), decode(old), True)]
    assert any("estimated rule cost exceeds budget" in e for e in errors)


def test_numbers_and_escaped_property_names_are_sized_by_their_schema() -> None:
    # (as Gateway API's parentRefs rule reads them: distinct by namespace and port)
    refs = {"type": "array", "maxItems": 32, "items": {"type": "object", "properties": {
        "namespace": {"type": "string", "maxLength": 63}, "port": {"type": "integer"}}},
        "x-kubernetes-validations": [{"rule": "self.all(a, self.all(b, a.port != b.port || "
                                               "a.__namespace__ != b.__namespace__))"}]}
    assert messages(crd_with(refs)) == []


def test_a_message_expression_past_the_budget_or_its_call_limit_fails_in_its_rules_place() -> None:
    def with_message(expression: str) -> dict[str, Any]:
        rules = schema()
        rules["properties"]["spec"]["properties"]["xs"]["x-kubernetes-validations"] = [
            {"rule": "size(self) < 0", "messageExpression": expression}, {"rule": "size(self) < 0"}]
        return rules

    obj = {"spec": {"xs": list(range(100))}}
    errors = crd_rules.validate(obj, with_message("self.map(x, string(x)).join(',')"), budget=10)
    assert texts(errors) == ["spec.xs: messageExpression evaluation failed due to running out of cost budget, no "
                             "further validation rules will be run"]
    pairs = "self.all(a, self.all(b, a != b || a == b)) ? 'x' : 'y'"
    errors = crd_rules.validate({"spec": {"xs": list(range(1000))}}, with_message(pairs))
    assert texts(errors) == ["spec.xs: no further validation rules will be run due to call cost exceeds limit for "
                             f'messageExpression: "{pairs}"']


def test_a_root_rule_reads_the_objects_names_as_strings() -> None:
    obj = crd_with({"type": "string"})
    obj["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["x-kubernetes-validations"] = [
        {"rule": "self.metadata.name.matches('^[a-z]+$')"}]
    assert messages(obj) == []
