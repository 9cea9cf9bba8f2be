"""One consistent-enough read of the store for a controller pass: every object the controllers look at, as
stored, and decoded into dralloc's models on demand (decoded objects are kept between passes by
resourceVersion, so a pass over a thousand unchanged pods decodes none of them)."""

from __future__ import annotations

from typing import Any

from dralloc.api.codec import DecodeError, decode
from dralloc.store import SQLStore

RESOURCES = ("pods", "nodes", "resourceslices", "deviceclasses", "resourceclaims", "resourceclaimtemplates",
             "devicetaintrules")

Obj = dict[str, Any]


class DecodeCache:
    """Typed objects by (resource, namespace, name), valid while the resourceVersion is the same."""

    def __init__(self) -> None:
        self._items: dict[tuple[str, str, str], tuple[str, Any]] = {}

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

    def forget_missing(self, present: set[tuple[str, str, str]]) -> None:
        for key in [k for k in self._items if k not in present]:
            del self._items[key]


class Snapshot:
    def __init__(self, store: SQLStore, cache: DecodeCache) -> None:
        self.objects: dict[str, list[Obj]] = {r: store.list(r)[0] for r in RESOURCES}
        self.cache = cache
        cache.forget_missing({(r, (o.get("metadata") or {}).get("namespace") or "",
                               (o.get("metadata") or {}).get("name") or "")
                              for r, objs in self.objects.items() for o in objs})

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
        return {str((p.get("metadata") or {}).get("uid")): p for p in self.pods}

    def templates(self) -> dict[tuple[str, str], Obj]:
        return {((t.get("metadata") or {}).get("namespace") or "", (t.get("metadata") or {}).get("name") or ""): t
                for t in self.objects["resourceclaimtemplates"]}
