"""Field ownership per field manager, recorded in ``metadata.managedFields``, as kube-apiserver keeps it.

Ownership follows the schema (``fieldtypes``): a field of a struct or a key of a map is owned on its own; an
item of an associative list (a pod's containers by name, a claim's ``status.devices`` by driver, pool, device
and share ID, ``status.reservedFor`` by uid, ...) or of a set (finalizers) is owned on its own and its fields
below it (``k:{"name":"app"}``, ``v:"x"`` in ``fieldsV1``); an atomic list, map or struct (most lists of
resource.k8s.io, a node selector) is owned whole.

An apply (``apply``) owns exactly the fields of its configuration. Its configuration is merged into the live
object (``fieldmerge``); what the manager applied last time and no longer applies is removed unless another
manager owns it (so an applier dropping its container removes it, and another manager's container stays). An
apply that changes a value another manager owns is a conflict (409, naming the manager and the field as
``.spec.containers[name="app"].image``) unless ``force=true``, which takes the field over.

Creates, updates and patches (``record_update``) are recorded as ``Update`` entries, one per manager, API
version and subresource: the writer takes over every field it added or changed from every other manager,
without conflict, and everybody loses the fields it removed. A map or list item the write created is owned
itself too (``".": {}``), as structured-merge-diff's comparison reports it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from dralloc.server.apply.fieldmerge import merge, remove
from dralloc.server.apply.fieldsets import MISSING, compare, config_fields, created_fields, with_named_fields
from dralloc.server.apply.fieldsv1 import Path, owned_among, parse_fields, path_order, path_string, to_fields
from dralloc.server.apply.fieldtypes import FieldType, KindSchema, kind_type, skeleton
from dralloc.server.clock import now
from dralloc.server.http.errors import ApiError
from dralloc.server.registry.kinds import CORE, RESOURCES

# Never owned: identity, type and server-set metadata (kube-apiserver's stripped fields). ``metadata`` itself is
# stripped as a member only, so its fields stay owned.
_STRIPPED: frozenset[Path] = frozenset(
    {("f:apiVersion",), ("f:kind",), ("f:metadata",)}
    | {("f:metadata", f"f:{name}") for name in ("name", "namespace", "creationTimestamp", "selfLink", "uid",
                                                  "clusterName", "generation", "managedFields", "resourceVersion")})
_MANAGED_FIELDS: Path = ("f:metadata", "f:managedFields")
# Kinds whose status is written through a status subresource.
_STATUS_SUBRESOURCE_KINDS = frozenset(r.kind for r in (*RESOURCES.values(), *CORE.values()) if r.status)
_STRIPPED_TREE: Mapping[str, Any] = MappingProxyType({
    "f:apiVersion": True, "f:kind": True,
    "f:metadata": MappingProxyType({p[1]: True for p in _STRIPPED if len(p) == 2})})


def _ignored(kind: Any, subresource: str, schema: KindSchema | None) -> Path | None:
    """The part of the object a write through this endpoint can never own (the strategies' reset fields: the
    main endpoint of a kind with a status subresource ignores ``status``, the status endpoint ``spec``)."""
    if not (schema.status_subresource if schema is not None else kind in _STATUS_SUBRESOURCE_KINDS):
        return None
    return ("f:spec",) if subresource == "status" else ("f:status",)


# What a create never owns, by the part its endpoint ignores (the trees are only read).
_STRIPPED_TREES: Mapping[str, Mapping[str, Any]] = MappingProxyType(
    {part: MappingProxyType({**_STRIPPED_TREE, part: True}) for part in ("f:spec", "f:status")})
# Each kind's empty object, made once: a create's walk only reads it.
_SKELETONS: dict[int, dict[str, Any]] = {}
_NO_FIELDS: dict[str, Any] = {}  # the empty object of a kind whose objects carry no field when empty (only read)


def _skeleton(node: FieldType) -> dict[str, Any]:
    if not node.always:
        return _NO_FIELDS  # (a custom resource's: its schema is made and dropped with its CRD, never kept here)
    found = _SKELETONS.get(id(node))
    if found is None:
        found = _SKELETONS[id(node)] = skeleton(node)  # (the kinds' nodes are constants: their ids stay)
    return found


def _owned(paths: set[Path], ignored: Path | None) -> set[Path]:
    paths = paths - _STRIPPED
    if ignored is not None:
        paths = {p for p in paths if p[:len(ignored)] != ignored}
    return paths


def _entry(manager: str, api_version: str, fields: set[Path] | dict[str, Any], operation: str, subresource: str,
           time: str | None = None) -> dict[str, Any]:
    """A managedFields entry owning ``fields`` (a field set, or its fieldsV1 tree)."""
    entry = {"manager": manager, "operation": operation, "apiVersion": api_version, "time": time or now(),
             "fieldsType": "FieldsV1", "fieldsV1": fields if isinstance(fields, dict) else to_fields(fields)}
    if subresource:
        entry["subresource"] = subresource
    return entry


def _with_fields(entry: dict[str, Any], owned: set[Path], left: set[Path]) -> dict[str, Any] | None:
    """``entry`` owning ``left`` of what it owned (``owned``): itself if nothing went, None if everything did."""
    if left == owned:
        return entry
    return {**entry, "fieldsV1": to_fields(left)} if left else None


def _sorted_entries(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """kube-apiserver's order: appliers first, then by time (to the second), manager, API version, subresource."""
    def key(e: dict[str, Any]) -> tuple[str, ...]:
        return tuple(str(e.get(k) or "") for k in ("operation", "time", "manager", "apiVersion", "subresource"))
    return sorted(entries, key=key)


MAX_UPDATE_MANAGERS = 10  # kube-apiserver's cap on Update entries
ANCIENT_CHANGES = "ancient-changes"


def _capped(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """At most MAX_UPDATE_MANAGERS Update entries, as kube-apiserver's field manager caps them after every
    update: the oldest updaters (by time to the second, then manager identifier) are merged, per API version,
    into an ``ancient-changes`` entry of that version (the first updater of a version becomes it when a second
    one of that version is merged in); the entry takes the time of the last one merged into it."""
    updaters = [e for e in entries if e.get("operation") != "Apply"]
    if len(updaters) <= MAX_UPDATE_MANAGERS:
        return entries
    by_key = {_manager_key(e): e for e in entries}
    updaters.sort(key=lambda e: (str(e.get("time") or ""), _manager_key(e)))
    first_of_version: dict[str, str] = {}
    count = len(updaters)
    for entry in updaters:
        if count <= MAX_UPDATE_MANAGERS:
            break
        version = str(entry.get("apiVersion") or "")
        key = _manager_key(entry)
        if version not in first_of_version:
            first_of_version[version] = key
            continue
        bucket_key = _manager_key({"manager": ANCIENT_CHANGES, "operation": "Update", "apiVersion": version})
        if key == bucket_key:
            continue  # an older bucket of this version met again: never merged into itself
        if bucket_key not in by_key:
            first = by_key.pop(first_of_version[version])
            by_key[bucket_key] = {k: v for k, v in first.items() if k != "subresource"} | {"manager": ANCIENT_CHANGES}
        bucket = by_key[bucket_key]
        fields = parse_fields(bucket.get("fieldsV1")) | parse_fields(entry.get("fieldsV1"))
        by_key[bucket_key] = {**bucket, "time": entry.get("time"), "fieldsV1": to_fields(fields)}
        del by_key[key]
        count -= 1
    return list(by_key.values())


def _store(meta: dict[str, Any], entries: list[dict[str, Any]]) -> None:
    if entries:
        meta["managedFields"] = _sorted_entries(entries) if len(entries) > 1 else entries
    else:
        meta.pop("managedFields", None)


def _identity(entry: dict[str, Any]) -> tuple[Any, ...]:
    """What tells managers apart: an applier by name and subresource, an updater by its API version too."""
    operation = entry.get("operation")
    version = entry.get("apiVersion") if operation != "Apply" else None
    return entry.get("manager"), operation, version, entry.get("subresource") or ""


def record_update(old: dict[str, Any] | None, new: dict[str, Any], manager: str, api_version: str,
                  subresource: str = "", time: str | None = None, schema: KindSchema | None = None) -> None:
    """Record in ``new``'s managedFields that ``manager`` wrote it over ``old`` (None: a create, compared with an
    empty object of its kind), at ``time`` (None: now); ``schema``: the kind's own, else the table's."""
    node = schema.node if schema is not None else kind_type(new.get("kind"))
    ignored = _ignored(new.get("kind"), subresource, schema)
    meta = new.setdefault("metadata", {})
    entries = [e for e in meta.get("managedFields") or [] if isinstance(e, dict)]
    if old is None and not entries:  # the common create: one walk, nobody else to take fields from
        skip_tree = _STRIPPED_TREE if ignored is None else _STRIPPED_TREES[ignored[0]]
        tree = created_fields(new, node, _skeleton(node), skip_tree)
        _store(meta, [_entry(manager, api_version, tree, "Update", subresource, time)] if tree else [])
        return
    skip = {_MANAGED_FIELDS} if ignored is None else {_MANAGED_FIELDS, ignored}
    changed, removed = compare(old if old is not None else skeleton(node), new, node, skip)
    changed = _owned(changed, ignored)
    me = (manager, "Update", api_version, subresource)
    mine: dict[str, Any] | None = None
    kept: list[dict[str, Any]] = []
    touched = changed | removed
    for e in entries:
        if _identity(e) == me and mine is None:
            mine = e
            continue
        if not touched or not owned_among(e.get("fieldsV1"), touched):
            kept.append(e)  # the write took nothing from this manager
            continue
        owned = parse_fields(e.get("fieldsV1"))
        still = _with_fields(e, owned, owned - touched)
        if still is not None:
            kept.append(still)
    if mine is not None or changed:
        before = parse_fields(mine.get("fieldsV1")) if mine is not None else set()
        own = _owned((before - removed) | changed, ignored)
        if changed:  # the write took fields: the entry is stamped with its time
            kept.append(_entry(manager, api_version, own, "Update", subresource, time))
        elif mine is not None and own:
            still = _with_fields(mine, before, own)
            if still is not None:
                kept.append(still)
    _store(meta, _capped(kept))


def _manager_text(entry: dict[str, Any]) -> str:
    """How a conflict names a manager (kube-apiserver's printManager)."""
    text = json.dumps(entry.get("manager", ""))
    if entry.get("subresource"):
        text += f' with subresource {json.dumps(entry["subresource"])}'
    if entry.get("operation") == "Update":
        text += f' using {entry.get("apiVersion", "")}'
    return text


def _manager_key(entry: dict[str, Any]) -> str:
    """The manager identifier conflicts are sorted by (the JSON of the entry's identifying fields)."""
    ident: dict[str, Any] = {"manager": entry.get("manager", ""), "operation": entry.get("operation", "")}
    if entry.get("operation") != "Apply" and entry.get("apiVersion"):
        ident["apiVersion"] = entry["apiVersion"]
    if entry.get("subresource"):
        ident["subresource"] = entry["subresource"]
    return json.dumps(ident, separators=(",", ":"))


def _conflict_error(conflicts: list[tuple[dict[str, Any], set[Path]]]) -> ApiError:
    ordered = sorted(((_manager_key(e), _manager_text(e), sorted(paths, key=path_order))
                      for e, paths in conflicts), key=lambda c: c[0])
    causes = [{"reason": "FieldManagerConflict", "message": f"conflict with {text}", "field": path_string(p)}
              for _, text, paths in ordered for p in paths]
    count = len(causes)
    if count == 1:
        message = f"Apply failed with 1 conflict: conflict with {ordered[0][1]}: {causes[0]['field']}"
    else:
        lines = []
        for _, text, paths in ordered:
            lines.append(f"conflicts with {text}:")
            lines.extend(f"- {path_string(p)}" for p in paths)
        message = f"Apply failed with {count} conflicts: " + "\n".join(lines)
    return ApiError(409, message, "Conflict", details={"causes": causes})


def typed_patch_name(applied: dict[str, Any], api_version: str) -> str:
    """How kube-apiserver's field manager names an applied object in its errors: namespace/name; GVK."""
    meta = applied.get("metadata")
    if not isinstance(meta, dict):
        meta = {}
    group_version = api_version if "/" in api_version else "/" + api_version
    return f"{meta.get('namespace') or ''}/{meta.get('name') or ''}; {group_version}, Kind={applied.get('kind')}"


def undeclared_fields_error(applied: dict[str, Any], api_version: str, unknown: list[str]) -> ApiError:
    """An applied configuration with fields its kind's schema lacks: the field manager cannot type it, whatever
    fieldValidation says (``unknown``: the fields' paths, ``spec.x``)."""
    errors = [f".{path}: field not declared in schema" for path in unknown]
    text = errors[0] if len(errors) == 1 else "\n  ".join(["errors:", *errors])
    return ApiError(400, f"failed to create typed patch object ({typed_patch_name(applied, api_version)}): {text}")


def apply(current: dict[str, Any] | None, applied: dict[str, Any], manager: str, force: bool,
          api_version: str, subresource: str = "", schema: KindSchema | None = None) -> dict[str, Any]:
    """The object after ``manager`` applies ``applied`` to ``current`` (None: the object is new);
    ``schema``: the kind's own, else the table's."""
    kind = applied.get("kind")
    node = schema.node if schema is not None else kind_type(kind)
    ignored = _ignored(kind, subresource, schema)
    config = _owned(config_fields(applied, node, typed_patch_name(applied, api_version)), ignored)
    if current is None:
        result = merge(MISSING, applied, node)
        meta = result.setdefault("metadata", {})
        _store(meta, [_entry(manager, api_version, config, "Apply", subresource)] if config else [])
        return result
    entries = [e for e in (current.get("metadata") or {}).get("managedFields") or [] if isinstance(e, dict)]
    me = (manager, "Apply", None, subresource)
    mine = next((e for e in entries if _identity(e) == me), None)
    others = [e for e in entries if e is not mine]
    result = merge(current, applied, node)
    if mine is not None:
        # Remove what the manager applied last time, no longer applies and nobody else owns.
        last = parse_fields(mine.get("fieldsV1"))
        if last - config:
            owned = set(config).union(*(parse_fields(e.get("fieldsV1")) for e in others))
            remove(result, with_named_fields(last) - with_named_fields(owned), node)
    skip = {_MANAGED_FIELDS} if ignored is None else {_MANAGED_FIELDS, ignored}
    changed, removed = compare(current, result, node, skip)
    conflicts: list[tuple[dict[str, Any], set[Path]]] = []
    kept: list[dict[str, Any]] = []
    for e in others:
        contested = owned_among(e.get("fieldsV1"), changed)
        if contested and not force:
            conflicts.append((e, contested))
            continue
        if not contested and not owned_among(e.get("fieldsV1"), removed):
            kept.append(e)
            continue
        owned = parse_fields(e.get("fieldsV1"))
        still = _with_fields(e, owned, owned - contested - removed)
        if still is not None:
            kept.append(still)
    if conflicts:
        raise _conflict_error(conflicts)
    if config:
        unchanged = mine is not None and not changed and not removed
        kept.append(_entry(manager, api_version, config, "Apply", subresource,
                           mine.get("time") if unchanged and mine is not None else None))
    _store(result.setdefault("metadata", {}), kept)
    return result
