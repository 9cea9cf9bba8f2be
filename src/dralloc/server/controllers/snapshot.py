"""One consistent-enough read of the store for a controller pass: every object the controllers look at, as
stored, and decoded into dralloc's models on demand (decoded objects are kept between passes by
resourceVersion, so a pass over a thousand unchanged pods decodes none of them)."""

from __future__ import annotations

from typing import Any

import msgspec

from dralloc.api.codec import decode
from dralloc.errors import DecodeError
from dralloc.store import SQLStore

RESOURCES = ("pods", "nodes", "resourceslices", "deviceclasses", "resourceclaims", "resourceclaimtemplates",
             "devicetaintrules")

Obj = dict[str, Any]
_decode_json = msgspec.json.Decoder(dict[str, Any]).decode


class DecodeCache:
    """Parsed objects by their stored JSON text, and typed objects by (resource, namespace, name) while the
    resourceVersion is the same."""

    def __init__(self) -> None:
        self._items: dict[tuple[str, str, str], tuple[str, Any]] = {}
        self.parsed: dict[str, dict[str, Obj]] = {}

    def typed(self, resource: str, obj: Obj) -> Any:
        meta = obj.get("metadata") or {}
        key = (resource, meta.get("namespace") or "", meta.get("name") or "")
        rv = str(meta.get("resourceVersion"))
        hit = self._items.get(key)
        if hit is not None and hit[0] == rv:
            return hit[1]
        try:
            value = decode(obj)
        except DecodeError:
            value = None  # an object dralloc cannot read takes no part (as an informer that fails to decode)
        self._items[key] = (rv, value)
        return value

    def forget_missing(self, resources: set[str], present: set[tuple[str, str, str]]) -> None:
        for key in [k for k in self._items if k[0] in resources and k not in present]:
            del self._items[key]


class Snapshot:
    """Each resource is listed when first asked for (a pass over a cluster without pods lists no slices)."""

    def __init__(self, store: SQLStore, cache: DecodeCache) -> None:
        self.store = store
        self.objects = _Lists(store, cache.parsed)
        self.cache = cache
        self._templates: dict[tuple[str, str], Obj] | None = None
        self._pods_by_uid: dict[str, Obj] | None = None

    def forget_deleted(self) -> None:
        """Drop decoded objects that are gone, of the resources this snapshot listed."""
        listed = set(self.objects)
        self.cache.forget_missing(listed, {(r, (o.get("metadata") or {}).get("namespace") or "",
                                            (o.get("metadata") or {}).get("name") or "")
                                           for r in listed for o in self.objects[r]})

    def typed(self, resource: str, objs: list[Obj] | None = None) -> list[Any]:
        out = [self.cache.typed(resource, o) for o in (self.objects[resource] if objs is None else objs)]
        return [o for o in out if o is not None]

    @property
    def pods(self) -> list[Obj]:
        return self.objects["pods"]

    @property
    def claims(self) -> list[Obj]:
        return self.objects["resourceclaims"]

    def pods_by_uid(self) -> dict[str, Obj]:
        if self._pods_by_uid is None:
            self._pods_by_uid = {str((p.get("metadata") or {}).get("uid")): p for p in self.pods}
        return self._pods_by_uid

    def templates(self) -> dict[tuple[str, str], Obj]:
        if self._templates is None:
            self._templates = {}
            for t in self.objects["resourceclaimtemplates"]:
                meta = t.get("metadata") or {}
                self._templates[(meta.get("namespace") or "", meta.get("name") or "")] = t
        return self._templates


class _Lists(dict[str, list[Obj]]):
    def __init__(self, store: SQLStore, parsed: dict[str, dict[str, Obj]]) -> None:
        super().__init__()
        self._store = store
        self._parsed = parsed

    def __missing__(self, resource: str) -> list[Obj]:
        # Stored JSON text that did not change since the last pass maps to the object parsed then (a string
        # lookup costs a fraction of a parse). The objects are shared between passes: read-only.
        rows, _ = self._store.list_raw(resource)
        before = self._parsed.get(resource, {})
        now = {raw: before.get(raw) or _decode_json(raw) for raw in rows}
        self._parsed[resource] = now
        objs = [now[raw] for raw in rows]
        self[resource] = objs
        return objs
