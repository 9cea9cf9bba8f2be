"""The Kubernetes regex library (library/regex.go): find and findAll."""

from __future__ import annotations

from typing import Any

from dralloc.cel.library.patterns import PATTERNS, regex
from dralloc.cel.library.registry import member, want


@member("find", "string")
def _find(s: Any, pattern: Any) -> str:
    want("find", type(s) is str and type(pattern) in PATTERNS, s, pattern)
    m = regex(pattern).search(s)
    return m.group(0) if m else ""


@member("findAll", "list")
def _find_all(s: Any, pattern: Any, limit: Any = -1) -> list[str]:
    want("findAll", type(s) is str and type(pattern) in PATTERNS and type(limit) is int, s, pattern)
    if limit == 0:
        return []
    out = [m.group(0) for m in regex(pattern).finditer(s)]
    return out if limit < 0 else out[:limit]
