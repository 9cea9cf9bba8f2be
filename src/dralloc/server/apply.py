"""Field ownership per field manager, recorded in ``metadata.managedFields``, as kube-apiserver keeps it.

A manager's applied configuration owns the fields it sets (``fieldsV1``: ``{"f:spec": {"f:driver": {}}}``;
lists are atomic in resource.k8s.io, so a list is owned whole). Applying again removes the fields the
manager owned before but no longer sets, then merges the new configuration. Creates, updates and patches
are recorded too (operation ``Update``, one entry per manager, API version and subresource): the writer takes
over the fields it changed from every other manager, without conflict. An apply that changes a field
another manager owns is a conflict (409, naming that manager) unless ``force=true``, which takes it over.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from dralloc.server.clock import now
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
    if not isinstance(fields, dict):  # a malformed entry a client sent owns nothing
        return out
    for key, sub in fields.items():
        path = prefix + (str(key)[2:],)
        if sub and isinstance(sub, dict):
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


def _entry(manager: str, api_version: str, fields: dict[str, Any], operation: str = "Apply",
           subresource: str = "") -> dict[str, Any]:
    entry = {"manager": manager, "operation": operation, "apiVersion": api_version,
             "time": now(), "fieldsType": "FieldsV1", "fieldsV1": fields}
    if subresource:
        entry["subresource"] = subresource
    return entry


def _overlaps(path: tuple[str, ...], paths: set[tuple[str, ...]]) -> bool:
    return any(path[:len(q)] == q or q[:len(path)] == path for q in paths)


def _manager_text(entry: dict[str, Any]) -> str:
    """How a conflict names a manager (structured-merge-diff's printManager)."""
    text = json.dumps(entry.get("manager", ""))
    if entry.get("subresource"):
        text += f' with subresource {json.dumps(entry["subresource"])}'
    if entry.get("operation") == "Update":
        text += f' using {entry.get("apiVersion", "")}'
    return text


def record_update(old: dict[str, Any] | None, new: dict[str, Any], manager: str, api_version: str,
                  subresource: str = "") -> None:
    """Record in ``new``'s managedFields that ``manager`` wrote it over ``old`` (None: a create): the manager's
    Update entry gains every field it changed, other managers lose those fields and any field that is gone."""
    new_paths = _paths(fields_of(new))
    old_paths = _paths(fields_of(old)) if old is not None else set()
    changed = {p for p in new_paths if p not in old_paths or _get(old, p) != _get(new, p)}
    removed = old_paths - new_paths
    meta = new.setdefault("metadata", {})
    entries = [e for e in meta.get("managedFields") or [] if isinstance(e, dict)]
    key = (manager, "Update", api_version, subresource)
    mine: set[tuple[str, ...]] = set()
    kept: list[dict[str, Any]] = []
    for e in entries:
        owned = _paths(e.get("fieldsV1") or {})
        if (e.get("manager"), e.get("operation"), e.get("apiVersion"), e.get("subresource", "")) == key:
            mine = {p for p in owned if not _overlaps(p, removed)}
            continue
        left = {p for p in owned if not _overlaps(p, changed) and not _overlaps(p, removed)}
        if left:
            kept.append(e if left == owned else {**e, "fieldsV1": _tree(left)})
    mine |= changed
    if mine:
        kept.append(_entry(manager, api_version, _tree(mine), "Update", subresource))
    if kept:
        meta["managedFields"] = kept
    else:
        meta.pop("managedFields", None)


def apply(current: dict[str, Any] | None, applied: dict[str, Any], manager: str, force: bool,
          api_version: str) -> dict[str, Any]:
    """The object after ``manager`` applies ``applied`` to ``current`` (None: the object is new)."""
    from dralloc.server.patch import merge_patch

    new_fields = fields_of(applied)
    new_paths = _paths(new_fields)
    if current is None:
        result = copy.deepcopy(applied)
        result.setdefault("metadata", {})["managedFields"] = [_entry(manager, api_version, _tree(new_paths))]
        return result
    entries = [e for e in (current.get("metadata") or {}).get("managedFields") or [] if isinstance(e, dict)]
    mine = next((e for e in entries if e.get("manager") == manager and e.get("operation") == "Apply"), None)
    conflicts: list[tuple[str, tuple[str, ...]]] = []
    others: list[dict[str, Any]] = []
    for e in entries:
        if e is mine:
            continue
        owned = _paths(e.get("fieldsV1") or {})
        contested = {p for p in owned if _overlaps(p, new_paths)}
        contested = {p for p in contested if _get(current, p) != _get(applied, p)}
        if contested and not force:
            conflicts.extend((_manager_text(e), p) for p in sorted(contested))
            continue
        if contested:  # force: the other manager loses these fields
            kept = owned - contested
            e = {**e, "fieldsV1": _tree(kept)}
            if not kept:
                continue
        others.append(e)
    if conflicts:
        lines = [f'conflict with {m}: .{".".join(p)}' for m, p in conflicts]
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
    result.setdefault("metadata", {})["managedFields"] = others + [_entry(manager, api_version, _tree(new_paths))]
    return result


def _tree(paths: set[tuple[str, ...]]) -> dict[str, Any]:
    """The fieldsV1 tree of a set of leaf paths, fields in sorted order at every level (as structured-merge-diff
    serialises a field set), so the same ownership is written the same way every time."""
    root: dict[str, Any] = {}
    for path in sorted(paths):
        node = root
        for part in path:
            node = node.setdefault(f"f:{part}", {})
    return root
