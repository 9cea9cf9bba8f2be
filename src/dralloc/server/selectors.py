"""labelSelector and fieldSelector query parameters, parsed and matched as kube-apiserver does."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from dralloc.server.errors import bad_request

Matcher = Callable[[dict[str, Any]], bool]

_SET_RE = re.compile(r"^\s*(!?)\s*([A-Za-z0-9_./-]+)\s*(?:(in|notin)\s*\(([^)]*)\))?\s*$")


def _split_top(text: str) -> list[str]:
    """Split on commas outside parentheses."""
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


def label_selector(text: str | None) -> Matcher:
    if not text:
        return lambda obj: True
    checks: list[Callable[[dict[str, str]], bool]] = []
    for req in _split_top(text):
        for op in ("!=", "==", "="):
            if op in req and "(" not in req:
                key, _, value = req.partition(op)
                key, value = key.strip(), value.strip()
                if not key:
                    raise bad_request(f"unable to parse requirement: invalid label selector {text!r}")
                if op == "!=":
                    checks.append(lambda labels, k=key, v=value: labels.get(k) != v)
                else:
                    checks.append(lambda labels, k=key, v=value: labels.get(k) == v)
                break
        else:
            m = _SET_RE.match(req)
            if not m:
                raise bad_request(f"unable to parse requirement: invalid label selector {text!r}")
            neg, key, op, values = m.groups()
            if op:
                vals = {v.strip() for v in values.split(",") if v.strip()}
                if op == "in":
                    checks.append(lambda labels, k=key, vs=vals: labels.get(k) in vs)
                else:
                    checks.append(lambda labels, k=key, vs=vals: labels.get(k) not in vs)
            elif neg:
                checks.append(lambda labels, k=key: k not in labels)
            else:
                checks.append(lambda labels, k=key: k in labels)

    def match(obj: dict[str, Any]) -> bool:
        labels = (obj.get("metadata") or {}).get("labels") or {}
        return all(c(labels) for c in checks)

    return match


def _path_value(obj: dict[str, Any], path: str) -> str:
    cur: Any = obj
    for part in path.split("."):
        cur = cur.get(part) if isinstance(cur, dict) else None
    return "" if cur is None else str(cur)


def field_selector(text: str | None, allowed: tuple[str, ...], resource_name: str, version: str) -> Matcher:
    if not text:
        return lambda obj: True
    checks: list[Matcher] = []
    fields = ("metadata.name", "metadata.namespace") + allowed
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
        if op == "!=":
            checks.append(lambda obj, k=key, v=value: _path_value(obj, k) != v)
        else:
            checks.append(lambda obj, k=key, v=value: _path_value(obj, k) == v)
    return lambda obj: all(c(obj) for c in checks)
