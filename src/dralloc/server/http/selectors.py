"""labelSelector and fieldSelector query parameters, parsed and matched as kube-apiserver does."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dralloc.server.http.errors import bad_request
from dralloc.validation.field import invalid
from dralloc.validation.formats import is_label_value, is_qualified_name

Matcher = Callable[[dict[str, Any]], bool]

_SPECIAL = frozenset("=!(),<>")
_WHITESPACE = frozenset(" \t\r\n")
_SYMBOLS = {")": "CLOSE", ",": "COMMA", "!": "NOT", "==": "EQ2", "=": "EQ", ">": "GT", "<": "LT", "!=": "NE",
            "(": "OPEN"}
_KEYWORDS = {"in": "IN", "notin": "NOTIN"}
_BINARY = "in, notin, =, ==, !=, gt, lt"  # apimachinery's list of binary operators, in its order


def _lex(text: str) -> list[tuple[str, str]]:
    """apimachinery's label selector tokens: (kind, literal), ending with ("END", "")."""
    tokens: list[tuple[str, str]] = []
    i, n = 0, len(text)
    while True:
        while i < n and text[i] in _WHITESPACE:
            i += 1
        if i == n:
            tokens.append(("END", ""))
            return tokens
        if text[i] in _SPECIAL:  # the longest run of symbols that is an operator
            j, best = i, None
            while j < n and text[j] in _SPECIAL:
                j += 1
                if text[i:j] in _SYMBOLS:
                    best = j
                elif best is not None:
                    break
            if best is None:
                tokens.append(("ERROR", f"error expected: keyword found '{text[i:j]}'"))
                i = j
                continue
            tokens.append((_SYMBOLS[text[i:best]], text[i:best]))
            i = best
        else:
            j = i
            while j < n and text[j] not in _SPECIAL and text[j] not in _WHITESPACE:
                j += 1
            word = text[i:j]
            tokens.append((_KEYWORDS.get(word, "ID"), word))
            i = j


class _LabelParser:
    """A recursive-descent parser with apimachinery's grammar and error messages (labels.Parse)."""

    def __init__(self, text: str) -> None:
        self.tokens = _lex(text)
        self.pos = 0

    def peek(self, values: bool = True) -> tuple[str, str]:
        kind, lit = self.tokens[self.pos]
        return ("ID", lit) if values and kind in ("IN", "NOTIN") else (kind, lit)

    def take(self, values: bool = True) -> tuple[str, str]:
        token = self.peek(values)
        self.pos += 1
        return token

    def parse(self) -> list[tuple[str, str, list[str]]]:
        requirements: list[tuple[str, str, list[str]]] = []
        while True:
            kind, lit = self.peek()
            if kind == "END":
                return requirements
            if kind not in ("ID", "NOT"):
                raise ValueError(f"found '{lit}', expected: !, identifier, or 'end of string'")
            try:
                requirements.append(self.requirement())
            except ValueError as exc:
                raise ValueError(f"unable to parse requirement: {exc}") from None
            kind, lit = self.take()
            if kind == "END":
                return requirements
            if kind != "COMMA":
                raise ValueError(f"found '{lit}', expected: ',' or 'end of string'")
            kind, lit = self.peek()
            if kind not in ("ID", "NOT"):
                raise ValueError(f"found '{lit}', expected: identifier after ','")

    def requirement(self) -> tuple[str, str, list[str]]:
        kind, key = self.take()
        negated = kind == "NOT"
        if negated:
            kind, key = self.take()
        if kind != "ID":
            raise ValueError(f"found '{key}', expected: identifier")
        problems = is_qualified_name(key)
        if problems:
            raise ValueError(str(invalid("<nil>", key, "; ".join(problems))))
        if negated:  # "!key" takes no operator: what follows must end the requirement
            return key, "!", []
        if self.peek()[0] in ("END", "COMMA"):
            return key, "exists", []
        kind, lit = self.take(values=False)
        op = {"IN": "in", "NOTIN": "notin", "EQ": "=", "EQ2": "=", "NE": "!=", "GT": ">", "LT": "<"}.get(kind)
        if op is None:
            raise ValueError(f"found '{lit}', expected: {_BINARY}")
        values = self.set_values() if op in ("in", "notin") else self.exact_value()
        errors = []
        ordered = sorted(set(values))
        if op in (">", "<"):
            for i, v in enumerate(ordered):
                try:
                    int(v)
                except ValueError:
                    errors.append(invalid(f"values[{i}]", v, "for 'Gt', 'Lt' operators, the value must be an integer"))
        for i, v in enumerate(ordered):
            problems = is_label_value(v)
            if problems:
                errors.append(invalid(f"values[{i}][{key}]", v, "; ".join(problems)))
        if errors:
            raise ValueError(str(errors[0]) if len(errors) == 1 else "[" + ", ".join(map(str, errors)) + "]")
        return key, op, ordered

    def set_values(self) -> list[str]:
        kind, lit = self.take()
        if kind != "OPEN":
            raise ValueError(f"found '{lit}' expected: '('")
        kind, lit = self.peek()
        if kind == "CLOSE":
            self.take()
            return [""]
        if kind not in ("ID", "COMMA"):
            raise ValueError(f"found '{lit}', expected: ',', ')' or identifier")
        values: list[str] = []
        while True:
            kind, word = self.take()
            if kind == "ID":
                values.append(word)
                nxt, nlit = self.peek()
                if nxt == "CLOSE":
                    break
                if nxt != "COMMA":
                    raise ValueError(f"found '{nlit}', expected: ',' or ')'")
            elif kind == "COMMA":
                if not values:
                    values.append("")
                nxt, _ = self.peek()
                if nxt == "CLOSE":
                    values.append("")
                    break
                if nxt == "COMMA":
                    self.take()
                    values.append("")
            else:
                raise ValueError(f"found '{word}', expected: ',', or identifier")
        kind, _ = self.take()
        if kind != "CLOSE":
            raise ValueError(f"found '{lit}', expected: ')'")
        return values

    def exact_value(self) -> list[str]:
        kind, lit = self.peek()
        if kind in ("END", "COMMA"):
            return [""]
        kind, lit = self.take()
        if kind != "ID":
            raise ValueError(f"found '{lit}', expected: identifier")
        return [lit]


def _requirement_matches(key: str, op: str, values: list[str], labels: dict[str, str]) -> bool:
    if op == "exists":
        return key in labels
    if op == "!":
        return key not in labels
    if op in ("=", "in"):
        return key in labels and labels[key] in values
    if op in ("!=", "notin"):
        return key not in labels or labels[key] not in values
    try:  # > and <: integers on both sides, else no match
        have, want = int(labels[key]), int(values[0])
    except (KeyError, ValueError):
        return False
    return have > want if op == ">" else have < want


def label_selector(text: str | None) -> Matcher:
    """A matcher for a labelSelector; 400 with apimachinery's parse error for a malformed one."""
    if not text:
        return lambda obj: True
    try:
        requirements = _LabelParser(text).parse()
    except ValueError as exc:
        raise bad_request(str(exc)) from None

    def match(obj: dict[str, Any]) -> bool:
        labels = (obj.get("metadata") or {}).get("labels") or {}
        return all(_requirement_matches(k, op, vs, labels) for k, op, vs in requirements)

    return match


def _split_top(text: str) -> list[str]:
    """Split a field selector on commas (outside parentheses)."""
    parts, depth, cur = [], 0, ""
    for ch in text:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    parts.append(cur)
    return [p for p in (x.strip() for x in parts) if p]


def _field_check(key: str, value: str, *, negate: bool) -> Matcher:
    def check(obj: Any) -> bool:
        return (_path_value(obj, key) != value) if negate else (_path_value(obj, key) == value)
    return check


# Selectable fields that are Go booleans: kube-apiserver formats them with strconv.FormatBool, so an unset one
# reads "false" and a set one "true" (never Python's "True").
_BOOLEAN_FIELDS = frozenset({"spec.hostNetwork", "spec.unschedulable"})


def _path_value(obj: dict[str, Any], path: str) -> str:
    cur: Any = obj
    for part in path.split("."):
        cur = cur.get(part) if isinstance(cur, dict) else None
    if path in _BOOLEAN_FIELDS:
        return "true" if cur is True else "false"
    return "" if cur is None else str(cur)


def field_selector(text: str | None, allowed: tuple[str, ...], resource_name: str, version: str,
                   renamed: dict[str, str] | None = None) -> Matcher:
    """A matcher of stored objects; ``renamed``: the labels a version accepts instead of ``allowed``, each with
    the stored field it reads (events.k8s.io's ``regarding.name`` reads ``involvedObject.name``)."""
    if not text:
        return lambda obj: True
    checks: list[Matcher] = []
    fields = tuple(renamed) if renamed is not None else ("metadata.name", "metadata.namespace") + allowed
    for req in _split_top(text):
        for op in ("!=", "==", "="):
            if op in req:
                key, _, value = req.partition(op)
                key, value = key.strip(), value.strip()
                break
        else:
            raise bad_request(f"invalid field selector {text!r}")
        if key not in fields:
            raise bad_request(f'field label not supported: {key}')
        checks.append(_field_check(renamed.get(key, key) if renamed else key, value, negate=op == "!="))
    return lambda obj: all(c(obj) for c in checks)
