"""A CRD schema's ``x-kubernetes-validations`` CEL rules, through dralloc's CEL engine, as kube-apiserver runs
them on custom resources: ``self`` is the value the rule's schema node holds, ``oldSelf`` the same value before an
update (a rule naming ``oldSelf`` is a transition rule: it runs on updates of values that existed before), and a
rule that is not true is reported at the node (or its ``fieldPath``) with its ``message``, its
``messageExpression``'s value or ``failed rule: <rule>``, as its ``reason`` says. Rules are compiled when their
CRD is written (``compilation failed: ...`` at ``x-kubernetes-validations[i].rule``)."""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from dralloc.cel import CELCompileError, Program, compile_expression
from dralloc.validation import field as f

RULES = "x-kubernetes-validations"
# kube-apiserver's runtime cost budget of one object's rules (celconfig.RuntimeCELCostBudget); each rule also has
# the per-call limit its program is compiled with (celconfig.PerCallLimit)
RUNTIME_COST_BUDGET = 10_000_000
CALL_LIMIT_EXCEEDED = "operation cancelled: actual cost limit exceeded"
OUT_OF_BUDGET = "validation failed due to running out of cost budget, no further validation rules will be run"
_VARIABLES = {"self": "dyn", "oldSelf": "dyn"}
_OLD_SELF = re.compile(r"\boldSelf\b")
_MISSING = object()


def _go_rule(rule: dict[str, Any]) -> str:
    """An apiextensions.ValidationRule as kube-apiserver's error shows it (Go's %#v; a reason is shown by its
    value, where Go shows a pointer's address)."""
    def q(key: str) -> str:
        return f.go_quote(str(rule.get(key) or ""))
    reason = "(*apiextensions.FieldValueErrorReason)(nil)" if not rule.get("reason") else \
        f"(*apiextensions.FieldValueErrorReason)({f.go_quote(str(rule['reason']))})"
    return (f"apiextensions.ValidationRule{{Rule:{q('rule')}, Message:{q('message')}, "
            f"MessageExpression:{q('messageExpression')}, Reason:{reason}, FieldPath:{q('fieldPath')}, "
            f"OptionalOldSelf:(*bool)(nil)}}")


@lru_cache(maxsize=1024)
def compiled(expression: str) -> Program:
    """A rule or message expression compiled once (CELCompileError when it does not compile)."""
    return compile_expression(expression, _VARIABLES)


def rule_errors(schema: Any, path: str) -> list[f.FieldError]:
    """The compile errors of every rule in a CRD's schema (``path``: the schema's field path)."""
    errors: list[f.FieldError] = []
    _walk_schema(schema, path, errors)
    return errors


def _walk_schema(schema: Any, path: str, errors: list[f.FieldError]) -> None:
    if not isinstance(schema, dict):
        return
    for i, rule in enumerate(schema.get(RULES) or ()):
        at = f.index(f.child(path, RULES), i)
        if not isinstance(rule, dict) or not isinstance(rule.get("rule"), str) or not rule["rule"].strip():
            errors.append(f.required(f.child(at, "rule"), ""))
            continue
        for key in ("rule", "messageExpression"):
            text = rule.get(key)
            if isinstance(text, str) and text:
                try:
                    compiled(text)
                except CELCompileError as exc:
                    what = "compilation failed" if key == "rule" else "messageExpression compilation failed"
                    # (the value is a Go struct, printed unquoted: carried in the detail)
                    errors.append(f.FieldError(f.INVALID, f.child(at, key), f.OMIT, f"{_go_rule(rule)}: {what}: {exc}"))
        reason = rule.get("reason")
        if reason is not None and reason not in REASONS:
            errors.append(f.not_supported(f.child(at, "reason"), reason, list(REASONS)))
    for name, child in sorted((schema.get("properties") or {}).items()):
        _walk_schema(child, f"{f.child(path, 'properties')}[{name}]", errors)
    for key in ("items", "additionalProperties"):
        if isinstance(schema.get(key), dict):
            _walk_schema(schema[key], f.child(path, key), errors)


REASONS = {"FieldValueInvalid": f.INVALID, "FieldValueForbidden": f.FORBIDDEN, "FieldValueRequired": f.REQUIRED,
           "FieldValueDuplicate": f.DUPLICATE}


def rules_schema(schema: Any) -> dict[str, Any] | None:
    """The part of ``schema`` :func:`validate` needs: each rule, the way to it and what a rule's error or an old
    value's matching reads (``type``, the list type and map keys); None when the schema holds no rule. A
    custom resource's rules are usually a few, high up: its other fields need not be walked on every write.
    (A declared field without rules stays as ``{}`` beside additionalProperties with rules: it is not one of
    them.)"""
    if not isinstance(schema, dict):
        return None
    out: dict[str, Any] = {}
    additional = rules_schema(schema.get("additionalProperties"))
    properties = schema.get("properties")
    if isinstance(properties, dict):
        kept = {}
        for key, child in properties.items():
            found = rules_schema(child)
            if found is not None:
                kept[key] = found
            elif additional is not None and isinstance(child, dict):
                kept[key] = {}
        if kept:
            out["properties"] = kept
    if additional is not None:
        out["additionalProperties"] = additional
    items = rules_schema(schema.get("items"))
    if items is not None:
        out["items"] = items
    if RULES in schema:
        out[RULES] = schema[RULES]
    if not out:
        return None
    for key in ("type", "x-kubernetes-list-type", "x-kubernetes-list-map-keys"):
        if key in schema:
            out[key] = schema[key]
    return out


class RuleSet:
    """The rules of one schema (a CRD version's, or its :func:`rules_schema`), read once: each node's rules
    compiled, with what their errors show, and the way to them; the parts of the schema without rules below are
    not walked."""

    def __init__(self, schema: dict[str, Any]) -> None:
        self._root = _Node(schema)

    def validate(self, obj: Any, old: Any = _MISSING, budget: int = RUNTIME_COST_BUDGET) -> list[f.FieldError]:
        """The errors of every rule over a whole custom resource ``obj`` (``old``: as stored before an update),
        its rules sharing the runtime cost ``budget``."""
        errors: list[f.FieldError] = []
        if self._root.walked:
            _validate(obj, self._root, old, "", errors, _Budget(budget), root=True)
        return errors


def validate(obj: Any, schema: dict[str, Any], old: Any = _MISSING,
             budget: int = RUNTIME_COST_BUDGET) -> list[f.FieldError]:
    """:meth:`RuleSet.validate` with ``schema`` (the whole schema, or its :func:`rules_schema`) read for this
    call."""
    return RuleSet(schema).validate(obj, old, budget)


class _Budget:
    """What is left of an object's runtime cost budget; below zero, no further rule runs."""

    __slots__ = ("left",)

    def __init__(self, left: int) -> None:
        self.left = left


class _Rule:
    """One rule as its node runs it: compiled (None: it did not compile, and was refused when its CRD was
    written), whether it is a transition rule, and what its error shows."""

    __slots__ = ("rule", "expression", "program", "transition", "shown", "message")

    def __init__(self, rule: dict[str, Any]) -> None:
        self.rule = rule
        self.expression: str = rule["rule"]
        try:
            self.program: Program | None = compiled(self.expression)
        except CELCompileError:
            self.program = None
        self.transition = bool(_OLD_SELF.search(self.expression))
        self.shown = str(rule.get("message") or "").strip() or self.expression.strip()
        self.message = str(rule.get("message") or "").strip() or f"failed rule: {self.expression.strip()}"


class _Node:
    """What the rules' walk reads of one schema node: its rules, its type's name (their errors' value), its
    fields', map values' and items' nodes, a map-list's keys; ``walked``: whether it or anything below has a
    rule."""

    __slots__ = ("rules", "kind", "fields", "additional", "items", "map_keys", "walked", "fields_walked")

    def __init__(self, schema: dict[str, Any]) -> None:
        self.rules = [_Rule(r) for r in schema.get(RULES) or () if isinstance(r, dict) and isinstance(r.get("rule"), str)]
        self.kind = str(schema.get("type", ""))
        properties = schema.get("properties")
        additional = schema.get("additionalProperties")
        self.additional = _walked(additional) if isinstance(additional, dict) else None
        # a declared field's node; None for a field the walk does not go into (no rule below, or a schema that
        # is not an object), which does not fall back to additionalProperties
        self.fields: dict[str, _Node | None] = {}
        if isinstance(properties, dict):
            for key, child in properties.items():
                if child is not None:
                    self.fields[key] = _walked(child) if isinstance(child, dict) else None
        items = schema.get("items")
        self.items = _walked(items) if isinstance(items, dict) else None
        self.map_keys = schema.get("x-kubernetes-list-map-keys") if schema.get("x-kubernetes-list-type") == "map" \
            else None
        # whether an object's fields are walked (most nodes with rules have none below them)
        self.fields_walked = self.additional is not None or any(n is not None for n in self.fields.values())
        self.walked = bool(self.rules or self.fields_walked or self.items is not None)


def _walked(schema: dict[str, Any]) -> _Node | None:
    """A node, None when neither it nor anything below it has a rule."""
    node = _Node(schema)
    return node if node.walked else None


def _validate(value: Any, node: _Node, old: Any, path: str, errors: list[f.FieldError],
              budget: _Budget, root: bool = False) -> None:
    if value is None or budget.left < 0:
        return
    rules = node.rules
    if rules:
        if budget.left <= 0:
            errors.append(f.invalid(path, node.kind, OUT_OF_BUDGET))
            budget.left = -1
            return
        for rule in rules:
            _run(rule, value, old, path, node.kind, errors, budget)
            if budget.left < 0:
                return
    if isinstance(value, dict):
        if not node.fields_walked:
            return
        fields, additional = node.fields, node.additional
        for key, item in value.items():
            if root and key in ("apiVersion", "kind", "metadata"):
                continue
            child = fields.get(key, additional)
            if child is not None:
                before = old.get(key, _MISSING) if isinstance(old, dict) else _MISSING
                _validate(item, child, before, f.child(path, key), errors, budget)
                if budget.left < 0:
                    return
    elif isinstance(value, list) and node.items is not None:
        items = node.items
        keys = node.map_keys
        olds = {_map_key(o, keys): o for o in old} if keys and isinstance(old, list) else {}
        for i, item in enumerate(value):
            before = olds.get(_map_key(item, keys), _MISSING) if keys else _MISSING
            _validate(item, items, before, f.index(path, i), errors, budget)
            if budget.left < 0:
                return


def _map_key(item: Any, keys: list[str]) -> str:
    return repr([item.get(k) for k in keys]) if isinstance(item, dict) else repr(item)


def _run(compiled_rule: _Rule, value: Any, old: Any, path: str, kind: str, errors: list[f.FieldError],
         budget: _Budget) -> None:
    transition = compiled_rule.transition
    if transition and old is _MISSING:
        return  # a transition rule runs on updates of a value that existed before
    program = compiled_rule.program
    if program is None:
        return  # (refused when the CRD was written)
    rule = compiled_rule.rule
    activation = {"self": value, "oldSelf": old} if transition else {"self": value}
    shown = compiled_rule.shown
    result, cost, failure = program.evaluate_counted(activation)
    if cost > budget.left:
        errors.append(f.invalid(path, kind, OUT_OF_BUDGET))
        budget.left = -1
        return
    budget.left -= cost
    if failure is not None:
        text = str(failure)
        if text.startswith("no such overload"):
            detail = (f"'{text}': call arguments did not match a supported operator, function or macro signature "
                      f"for rule: {shown}")
        elif text.startswith(CALL_LIMIT_EXCEEDED):
            errors.append(f.invalid(path, kind, f"'{text}': no further validation rules will be run due to call "
                                                f"cost exceeds limit for rule: {shown}"))
            budget.left = -1
            return
        else:
            detail = f"{text} evaluating rule: {shown}"
        errors.append(f.invalid(path, kind, detail))
        return
    if result is True:
        return
    message = compiled_rule.message
    at = path + str(rule.get("fieldPath") or "") if rule.get("fieldPath") else path
    at = at.lstrip(".")
    message_expression = rule.get("messageExpression")
    if isinstance(message_expression, str) and message_expression:
        try:
            produced, cost, failure = compiled(message_expression).evaluate_counted(activation)
        except CELCompileError:
            produced, cost, failure = None, 0, None
        stop = None
        if cost > budget.left:
            stop = "messageExpression evaluation failed due to running out of cost budget, no further validation " \
                   "rules will be run"
        elif failure is not None and str(failure).startswith(CALL_LIMIT_EXCEEDED):
            stop = ("no further validation rules will be run due to call cost exceeds limit for messageExpression: "
                    + f.go_quote(message_expression))
        if stop is not None:  # (the rule's own error is not reported)
            errors.append(f.invalid(at, kind, stop))
            budget.left = -1
            return
        budget.left -= cost
        if failure is None and isinstance(produced, str) and produced.strip():
            message = produced.strip()
    reason = REASONS.get(str(rule.get("reason") or "FieldValueInvalid"), f.INVALID)
    if reason == f.FORBIDDEN:
        errors.append(f.forbidden(at, message))
    elif reason == f.REQUIRED:
        errors.append(f.required(at, message))
    elif reason == f.DUPLICATE:
        errors.append(f.duplicate(at, kind))
    else:
        errors.append(f.invalid(at, kind, message))
