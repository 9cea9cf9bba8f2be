"""How the controllers write: read the object, change a copy, write it back with the read resourceVersion as
precondition, and start again on a conflict (client-go's RetryOnConflict), so a concurrent client's update
is never overwritten."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dralloc.server.clock import now
from dralloc.server.json_copy import json_copy
from dralloc.server.uids import new_uid
from dralloc.store import Conflict, NotFound, Outcome, SQLStore

ATTEMPTS = 5

Mutation = Callable[[dict[str, Any]], "dict[str, Any] | Outcome | None"]



class Writer:
    """Writes for the controllers; remembers the resourceVersions it wrote so that the controllers can tell
    their own changes from other clients' (an own write never wakes a retry of unschedulable pods)."""

    def __init__(self, store: SQLStore) -> None:
        self.store = store
        self.own: set[int] = set()

    def _note(self, obj: dict[str, Any]) -> dict[str, Any]:
        rv = (obj.get("metadata") or {}).get("resourceVersion")
        if rv:
            self.own.add(int(rv))
        return obj

    def update(self, resource: str, namespace: str, name: str, mutate: Mutation,
               uid: str | None = None) -> dict[str, Any] | None:
        """Apply ``mutate`` (on a copy of the current object; None = nothing to change, an Outcome of type
        DELETED removes it) with the read resourceVersion as precondition, retrying on conflicts. None when
        the object is gone (or was replaced by another with the same name: ``uid``)."""
        for _ in range(ATTEMPTS):
            try:
                current = self.store.get(resource, namespace, name)
            except NotFound:
                return None
            meta = current.get("metadata") or {}
            if uid is not None and meta.get("uid") != uid:
                return None
            changed = mutate(json_copy(current))
            if changed is None:
                return current
            expect = str(meta.get("resourceVersion") or "")

            def build(_old: dict[str, Any], rv: str, changed: Any = changed) -> Any:
                obj = changed.object if isinstance(changed, Outcome) else changed
                obj = {**obj, "metadata": {**(obj.get("metadata") or {}), "resourceVersion": rv}}
                return Outcome(obj, changed.type) if isinstance(changed, Outcome) else obj

            try:
                return self._note(self.store.update(resource, namespace, name, build, expect or None))
            except Conflict:
                continue
            except NotFound:
                return None
        return None

    def create(self, resource: str, namespace: str, obj: dict[str, Any],
               new_name: Callable[[], str] | None = None,
               finish: Callable[[dict[str, Any]], None] | None = None) -> dict[str, Any]:
        """Create ``obj`` with a new uid and creationTimestamp; with ``new_name`` (generateName), a name taken
        by another object is replaced by a new one; ``finish`` fills in what depends on the uid (a Job's
        selector), as a strategy's with_system_fields."""
        for _ in range(ATTEMPTS):
            meta = dict(obj["metadata"])
            name = meta["name"]

            def build(_old: Any, rv: str, meta: dict[str, Any] = meta, obj: dict[str, Any] = obj) -> dict[str, Any]:
                made = {**obj, "metadata": {**meta, "uid": new_uid(), "creationTimestamp": now(),
                                            "resourceVersion": rv}}
                if finish is not None:
                    made = json_copy(made)
                    finish(made)
                return made

            try:
                return self._note(self.store.create(resource, namespace, name, build))
            except Conflict:
                if new_name is None:
                    raise
                obj = {**obj, "metadata": {**meta, "name": new_name()}}
        raise Conflict("no free generated name")

    def delete(self, resource: str, namespace: str, name: str, uid: str | None = None) -> dict[str, Any] | None:
        """Remove the object now (finalizers still hold it: then it is only marked), if it still has ``uid``."""
        def check(old: dict[str, Any]) -> Outcome | None:
            meta = old.get("metadata") or {}
            if uid is not None and meta.get("uid") != uid:
                raise _Replaced()
            if not meta.get("finalizers"):
                return None
            if meta.get("deletionTimestamp"):
                return Outcome(old, "MODIFIED")
            return Outcome({**old, "metadata": {**meta, "deletionTimestamp": now(),
                                                "deletionGracePeriodSeconds": 0}}, "MODIFIED")

        try:
            return self._note(self.store.delete(resource, namespace, name, check=check))
        except (NotFound, _Replaced):
            return None


class _Replaced(Exception):
    pass
