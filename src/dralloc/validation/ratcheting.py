"""Validation ratcheting of custom resources (kube-apiserver's CRDValidationRatcheting, on by default since
1.30, GA in 1.33): on an update, a schema or CEL error in a value the update did not change is dropped, so that
a CRD whose schema became stricter does not block updates of other fields of objects written before."""

from __future__ import annotations

import re
from typing import Any

from dralloc.validation import field as f

_SEGMENT = re.compile(r"([^.\[\]]+)|\[(\d+)\]")
_ABSENT = object()


def _at(obj: Any, path: str) -> Any:
    """The value at a field path (``spec.ports[1].name``), or _ABSENT."""
    value = obj
    for match in _SEGMENT.finditer(path):
        name, index = match.group(1), match.group(2)
        if name is not None:
            if not isinstance(value, dict) or name not in value:
                return _ABSENT
            value = value[name]
        else:
            i = int(index)
            if not isinstance(value, list) or i >= len(value):
                return _ABSENT
            value = value[i]
    return value


def _parent(path: str) -> str:
    cut = max(path.rfind("."), path.rfind("["))
    return path[:cut] if cut > 0 else ""


def _unchanged(new: Any, old: Any, path: str) -> bool:
    """Whether the value at ``path`` is the same before and after (for a value absent from both: its parent)."""
    before, after = _at(old, path), _at(new, path)
    if before is _ABSENT and after is _ABSENT:
        return bool(path) and _unchanged(new, old, _parent(path))
    return before is not _ABSENT and before == after


def ratchet(errors: list[f.FieldError], new: Any, old: Any) -> list[f.FieldError]:
    """``errors`` of an update of ``old`` to ``new`` without those of values the update left as they were."""
    return [e for e in errors if not _unchanged(new, old, e.field)]
