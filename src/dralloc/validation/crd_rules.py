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

from dralloc.cel import CELCompileError, CELRuntimeError, Program, compile_expression
from dralloc.validation import field as f

RULES = "x-kubernetes-validations"
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


def validate(obj: Any, schema: dict[str, Any], old: Any = _MISSING) -> list[f.FieldError]:
    """The errors of every rule in ``schema`` over a whole custom resource ``obj`` (``old``: as stored before
    an update)."""
    errors: list[f.FieldError] = []
    _validate(obj, schema, old, "", errors, root=True)
    return errors


def _validate(value: Any, schema: dict[str, Any], old: Any, path: str, errors: list[f.FieldError],
              root: bool = False) -> None:
    if value is None:
        return
    for rule in schema.get(RULES) or ():
        if isinstance(rule, dict) and isinstance(rule.get("rule"), str):
            _run(rule, value, old, path, str(schema.get("type", "")), errors)
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
                _validate(item, child, before, f.child(path, key), errors)
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        items = schema["items"]
        keys = schema.get("x-kubernetes-list-map-keys") if schema.get("x-kubernetes-list-type") == "map" else None
        olds = {_map_key(o, keys): o for o in old} if keys and isinstance(old, list) else {}
        for i, item in enumerate(value):
            before = olds.get(_map_key(item, keys), _MISSING) if keys else _MISSING
            _validate(item, items, before, f.index(path, i), errors)


def _map_key(item: Any, keys: list[str]) -> str:
    return repr([item.get(k) for k in keys]) if isinstance(item, dict) else repr(item)


def _run(rule: dict[str, Any], value: Any, old: Any, path: str, kind: str, errors: list[f.FieldError]) -> None:
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
    try:
        result = program.evaluate(activation)
    except CELRuntimeError as exc:
        text = str(exc)
        if text.startswith("no such overload"):
            detail = (f"'{text}': call arguments did not match a supported operator, function or macro signature "
                      f"for rule: {shown}")
        else:
            detail = f"{text} evaluating rule: {shown}"
        errors.append(f.invalid(path, kind, detail))
        return
    if result is True:
        return
    message = str(rule.get("message") or "").strip() or f"failed rule: {expression.strip()}"
    message_expression = rule.get("messageExpression")
    if isinstance(message_expression, str) and message_expression:
        try:
            produced = compiled(message_expression).evaluate(activation)
            if isinstance(produced, str) and produced.strip():
                message = produced.strip()
        except (CELCompileError, CELRuntimeError):
            pass
    at = path + str(rule.get("fieldPath") or "") if rule.get("fieldPath") else path
    at = at.lstrip(".")
    reason = REASONS.get(str(rule.get("reason") or "FieldValueInvalid"), f.INVALID)
    if reason == f.FORBIDDEN:
        errors.append(f.forbidden(at, message))
    elif reason == f.REQUIRED:
        errors.append(f.required(at, message))
    elif reason == f.DUPLICATE:
        errors.append(f.duplicate(at, kind))
    else:
        errors.append(f.invalid(at, kind, message))
