"""Server-side apply: field ownership per field manager, recorded in ``metadata.managedFields``.

A manager's applied configuration owns the fields it sets (``fieldsV1``: ``{"f:spec": {"f:driver": {}}}``;
lists are atomic in resource.k8s.io, so a list is owned whole). Applying again removes the fields the
manager owned before but no longer sets, then merges the new configuration. A field owned by another
*apply* manager with a different value is a conflict (409) unless ``force=true``, which takes it over.
Updates by non-apply clients are not tracked as owners (a simplification of kube-apiserver's merge).
"""

from __future__ import annotations

import copy
from datetime import UTC, datetime
from typing import Any

from dralloc.server.errors import ApiError

# Identity and server-set metadata never count as owned fields.
_UNOWNED_META = {"name", "namespace", "uid", "resourceVersion", "generation", "creationTimestamp",
                 "managedFields", "deletionTimestamp", "selfLink"}


def fields_of(obj: Any, top: bool = True) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if not isinstance(obj, dict):
        return out
    for key, value in obj.items():
        if top and key in ("apiVersion", "kind"):
            continue
        if top and key == "metadata" and isinstance(value, dict):
            meta = {k: v for k, v in value.items() if k not in _UNOWNED_META}
            if meta:
                out["f:metadata"] = fields_of(meta, top=False)
            continue
        out[f"f:{key}"] = fields_of(value, top=False) if isinstance(value, dict) else {}
    return out


def _paths(fields: dict[str, Any], prefix: tuple[str, ...] = ()) -> set[tuple[str, ...]]:
    """Leaf paths of a fieldsV1 tree (a map that is owned whole has no children)."""
    out: set[tuple[str, ...]] = set()
    for key, sub in fields.items():
        path = prefix + (key[2:],)
        if sub:
            out |= _paths(sub, path)
        else:
            out.add(path)
    return out


def _get(obj: Any, path: tuple[str, ...]) -> Any:
    for part in path:
        if not isinstance(obj, dict) or part not in obj:
            return None
        obj = obj[part]
    return obj


def _remove(obj: dict[str, Any], path: tuple[str, ...]) -> None:
    parents = [obj]
    for part in path[:-1]:
        nxt = parents[-1].get(part)
        if not isinstance(nxt, dict):
            return
        parents.append(nxt)
    parents[-1].pop(path[-1], None)
    for depth in range(len(parents) - 1, 0, -1):  # drop maps the removal left empty
        if not parents[depth]:
            parents[depth - 1].pop(path[depth - 1], None)


def _entry(manager: str, api_version: str, fields: dict[str, Any]) -> dict[str, Any]:
    return {"manager": manager, "operation": "Apply", "apiVersion": api_version,
            "time": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"), "fieldsType": "FieldsV1",
            "fieldsV1": fields}


def apply(current: dict[str, Any] | None, applied: dict[str, Any], manager: str, force: bool,
          api_version: str) -> dict[str, Any]:
    """The object after ``manager`` applies ``applied`` to ``current`` (None: the object is new)."""
    from dralloc.server.patch import merge_patch

    new_fields = fields_of(applied)
    new_paths = _paths(new_fields)
    if current is None:
        result = copy.deepcopy(applied)
        result.setdefault("metadata", {})["managedFields"] = [_entry(manager, api_version, new_fields)]
        return result
    entries = [e for e in (current.get("metadata") or {}).get("managedFields") or [] if isinstance(e, dict)]
    mine = next((e for e in entries if e.get("manager") == manager and e.get("operation") == "Apply"), None)
    conflicts: list[tuple[str, tuple[str, ...]]] = []
    others: list[dict[str, Any]] = []
    for e in entries:
        if e is mine:
            continue
        if e.get("operation") == "Apply":
            owned = _paths(e.get("fieldsV1") or {})
            contested = {p for p in owned if any(p[:len(q)] == q or q[:len(p)] == p for q in new_paths)}
            contested = {p for p in contested if _get(current, p) != _get(applied, p)}
            if contested and not force:
                conflicts.extend((e.get("manager", ""), p) for p in sorted(contested))
                continue
            if contested:  # force: the other manager loses these fields
                kept = owned - contested
                e = {**e, "fieldsV1": _tree(kept)}
                if not kept:
                    continue
        others.append(e)
    if conflicts:
        lines = [f'conflict with "{m}": .{".".join(p)}' for m, p in conflicts]
        raise ApiError(409, f"Apply failed with {len(conflicts)} conflict{'s' if len(conflicts) > 1 else ''}: "
                            + "\n".join(lines), "Conflict",
                       details={"causes": [{"reason": "FieldManagerConflict", "message": line,
                                            "field": "." + ".".join(p)} for line, (_, p) in zip(lines, conflicts)]})
    result = copy.deepcopy(current)
    if mine is not None:
        still_owned = set().union(*(_paths(e.get("fieldsV1") or {}) for e in others)) if others else set()
        for path in sorted(_paths(mine.get("fieldsV1") or {}) - new_paths, key=len, reverse=True):
            if path not in still_owned:
                _remove(result, path)
    result = merge_patch(result, applied)
    result.setdefault("metadata", {})["managedFields"] = others + [_entry(manager, api_version, new_fields)]
    return result


def _tree(paths: set[tuple[str, ...]]) -> dict[str, Any]:
    root: dict[str, Any] = {}
    for path in paths:
        node = root
        for part in path:
            node = node.setdefault(f"f:{part}", {})
    return root
