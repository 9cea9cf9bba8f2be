"""The CEL rules' walk as it was written before a CRD version's rules were read once (``crd_rules.RuleSet``):
it read each rule's JSON, compiled-program cache and messages at every value. The differential test holds the
rule set to it."""

from __future__ import annotations

from typing import Any

from dralloc.cel import CELCompileError
from dralloc.validation import field as f
from dralloc.validation.crd_rules import (
    _OLD_SELF,
    CALL_LIMIT_EXCEEDED,
    OUT_OF_BUDGET,
    REASONS,
    RULES,
    RUNTIME_COST_BUDGET,
    compiled,
)

_MISSING = object()


def validate(obj: Any, schema: dict[str, Any], old: Any = _MISSING,
             budget: int = RUNTIME_COST_BUDGET) -> list[f.FieldError]:
    """The errors of every rule in ``schema`` (the whole schema, or its :func:`rules_schema`) over a whole custom
    resource ``obj`` (``old``: as stored before an update), its rules sharing the runtime cost ``budget``."""
    errors: list[f.FieldError] = []
    _validate(obj, schema, old, "", errors, _Budget(budget), root=True)
    return errors


class _Budget:
    """What is left of an object's runtime cost budget; below zero, no further rule runs."""

    __slots__ = ("left",)

    def __init__(self, left: int) -> None:
        self.left = left


def _validate(value: Any, schema: dict[str, Any], old: Any, path: str, errors: list[f.FieldError],
              budget: _Budget, root: bool = False) -> None:
    if value is None or budget.left < 0:
        return
    rules = [r for r in schema.get(RULES) or () if isinstance(r, dict) and isinstance(r.get("rule"), str)]
    if rules and budget.left <= 0:
        errors.append(f.invalid(path, str(schema.get("type", "")), OUT_OF_BUDGET))
        budget.left = -1
        return
    for rule in rules:
        _run(rule, value, old, path, str(schema.get("type", "")), errors, budget)
        if budget.left < 0:
            return
    if isinstance(value, dict):
        properties = schema.get("properties") if isinstance(schema.get("properties"), dict) else {}
        additional = schema.get("additionalProperties")
        for key, item in value.items():
            if root and key in ("apiVersion", "kind", "metadata"):
                continue
            child = properties.get(key) if properties else None
            if child is None and isinstance(additional, dict):
                child = additional
            if isinstance(child, dict):
                before = old.get(key, _MISSING) if isinstance(old, dict) else _MISSING
                _validate(item, child, before, f.child(path, key), errors, budget)
                if budget.left < 0:
                    return
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        items = schema["items"]
        keys = schema.get("x-kubernetes-list-map-keys") if schema.get("x-kubernetes-list-type") == "map" else None
        olds = {_map_key(o, keys): o for o in old} if keys and isinstance(old, list) else {}
        for i, item in enumerate(value):
            before = olds.get(_map_key(item, keys), _MISSING) if keys else _MISSING
            _validate(item, items, before, f.index(path, i), errors, budget)
            if budget.left < 0:
                return


def _map_key(item: Any, keys: list[str]) -> str:
    return repr([item.get(k) for k in keys]) if isinstance(item, dict) else repr(item)


def _run(rule: dict[str, Any], value: Any, old: Any, path: str, kind: str, errors: list[f.FieldError],
         budget: _Budget) -> None:
    expression = rule["rule"]
    transition = bool(_OLD_SELF.search(expression))
    if transition and old is _MISSING:
        return  # a transition rule runs on updates of a value that existed before
    try:
        program = compiled(expression)
    except CELCompileError:
        return  # (refused when the CRD was written)
    activation = {"self": value, **({"oldSelf": old} if transition else {})}
    shown = str(rule.get("message") or "").strip() or expression.strip()
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
    message = str(rule.get("message") or "").strip() or f"failed rule: {expression.strip()}"
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
