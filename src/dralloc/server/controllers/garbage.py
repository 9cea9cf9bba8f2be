"""The garbage collector, as kube-controller-manager's: objects whose owners are gone are deleted.

An object lists its owners in ``metadata.ownerReferences`` (a ResourceSlice owned by its Node, as a DRA
driver's kubelet plugin publishes them; a claim owned by its pod). Owners are looked up by kind, name and
uid (an object of that name with another uid is a different owner):

- every owner gone (dangling): the object is deleted (background propagation; a pod gracefully);
- an owner being deleted in the foreground (finalizer ``foregroundDeletion``) and no owner still standing:
  the object is deleted; once nothing refers to that owner any more its finalizer is removed, and the
  owner goes;
- some owner still standing: the references to gone owners (and to owners deleted in the foreground)
  are removed, the object stays;
- an owner deleted with ``propagationPolicy=Orphan`` (finalizer ``orphan``): the references to it are
  removed from every dependent, then the finalizer, and the owner goes.

An owner of a kind this server does not serve (a custom resource) counts as standing: the
collector cannot look it up, so it never deletes on its account (upstream's collector does not either,
for a kind it cannot resolve).

The collector keeps the keys of the objects that have owner references, and of those being deleted; the
store's change feed says which changed objects name owners or are being deleted, so a write of an
object without owners costs nothing here, and a pass runs only when something was deleted or an object
with owners (or being deleted) changed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from dralloc.server.controllers.snapshot import Mirror
from dralloc.server.controllers.writes import Writer
from dralloc.server.registry.kinds import APPS, BATCH, CORE, GATED_RESOURCES, RESOURCES, Resource
from dralloc.store import Change, NotFound, Outcome, SQLStore

Obj = dict[str, Any]
Key = tuple[str, str, str]  # (resource, namespace, name)

ORPHAN = "orphan"
FOREGROUND = "foregroundDeletion"
# kind -> resource, for owner references: resource.k8s.io kinds in any served version (and the gated kinds: a
# PodGroup owned by its Workload), core kinds in v1
_BY_KIND: dict[tuple[str, str], Resource] = {
    **{(r.group, r.kind): r for r in (*RESOURCES.values(), *GATED_RESOURCES.values(), *APPS.values(),
                                      *BATCH.values())},
    **{("", r.kind): r for r in CORE.values()},
}


def _meta(obj: Obj) -> Obj:
    meta = obj.get("metadata")
    return meta if isinstance(meta, dict) else {}


def _owner_resource(ref: Obj) -> Resource | None:
    api_version = ref.get("apiVersion")
    if not isinstance(api_version, str):
        return None
    group = api_version.rpartition("/")[0]
    return _BY_KIND.get((group, str(ref.get("kind"))))


@dataclass
class GarbageCollector:
    NOTED: ClassVar[frozenset[str] | None] = None  # the resources whose changes note() takes (None: all)
    writer: Writer
    delete_pod: Callable[[str, str, str | None], Any]  # graceful, as a client's delete of a pod
    # The controllers' mirror: objects of the resources it holds are read from it, not from the store (as
    # kube-controller-manager's collector reads its informers; a delete carries the uid it decided on).
    mirror: Mirror | None = None
    # What to look at in the next pass: objects with owner references that changed or whose owner changed
    # or went, and objects being deleted (they may hold a collector's finalizer).
    todo_dependents: set[Key] = field(default_factory=set)
    todo_owners: set[Key] = field(default_factory=set)
    # owner -> the objects that name it, and back (learnt when the dependents are looked at)
    dependents_of: dict[Key, set[Key]] = field(default_factory=dict)
    owners_of: dict[Key, set[Key]] = field(default_factory=dict)
    scanned: bool = False  # the first pass looks at everything the store holds

    @property
    def store(self) -> SQLStore:
        return self.writer.store

    @property
    def due(self) -> bool:
        return not self.scanned or bool(self.todo_dependents) or bool(self.todo_owners)

    def notes(self, changes: Sequence[Change]) -> None:
        """Take in changes of one resource from the store's feed, in the log's order."""
        for change in changes:
            if change.type == "DELETED":
                key = (change.resource, change.namespace, change.name)
                self.todo_dependents |= self.dependents_of.pop(key, set())  # their owner went
                self.todo_owners |= self.owners_of.pop(key, set())  # a foreground owner may wait for it
                continue
            if change.owned:
                self.todo_dependents.add((change.resource, change.namespace, change.name))
            if change.deleting:
                key = (change.resource, change.namespace, change.name)
                self.todo_owners.add(key)
                self.todo_dependents |= self.dependents_of.get(key, set())

    def cycle(self) -> bool:
        """One pass over what may have become garbage; True when it changed anything."""
        if not self.scanned:
            self.scanned = True
            self._scan()
        changed = False
        while self.todo_dependents:  # dependents first: an owner's finalizer waits for what they become
            changed |= self._collect(min(self.todo_dependents))
        owners, self.todo_owners = sorted(self.todo_owners), set()
        for key in owners:
            changed |= self._finish_owner(key)
        return changed

    def _scan(self) -> None:
        """Every stored object with owner references or being deleted (the first pass, after a start)."""
        for resource in (*RESOURCES, *GATED_RESOURCES, *CORE, *APPS, *BATCH):
            if resource == "events":
                continue
            for obj in self.store.list(resource)[0]:
                meta = _meta(obj)
                key = (resource, meta.get("namespace") or "", meta.get("name") or "")
                if meta.get("ownerReferences"):
                    self.todo_dependents.add(key)
                if meta.get("deletionTimestamp"):
                    self.todo_owners.add(key)

    def _get(self, key: Key) -> Obj | None:
        mirror = self.mirror
        if mirror is not None and mirror.synced and mirror.holds(key[0]):
            return mirror.get(key[0], (key[1], key[2]))
        try:
            return self.store.get(*key)
        except NotFound:
            return None

    def _owner(self, dependent: Key, ref: Obj) -> tuple[str, Key | None]:
        """How the owner stands ("unknown", "gone", "foreground", "orphaning", "standing"), and its key."""
        resource = _owner_resource(ref)
        if resource is None or not ref.get("name") or not ref.get("uid"):
            return "unknown", None
        key = (resource.name, dependent[1] if resource.namespaced else "", str(ref["name"]))
        owner = self._get(key)
        if owner is None or _meta(owner).get("uid") != ref["uid"]:
            return "gone", key
        meta = _meta(owner)
        if meta.get("deletionTimestamp") and FOREGROUND in (meta.get("finalizers") or []):
            return "foreground", key
        if meta.get("deletionTimestamp") and ORPHAN in (meta.get("finalizers") or []):
            return "orphaning", key
        return "standing", key

    def _collect(self, key: Key) -> bool:
        self.todo_dependents.discard(key)
        obj = self._get(key)
        meta = _meta(obj) if obj is not None else {}
        refs = [r for r in meta.get("ownerReferences") or [] if isinstance(r, dict)]
        verdicts = [(ref, *self._owner(key, ref)) for ref in refs]
        for owner in self.owners_of.pop(key, set()):
            self.dependents_of.get(owner, set()).discard(key)
        for _, _, owner_key in verdicts:
            if owner_key is not None:
                self.dependents_of.setdefault(owner_key, set()).add(key)
                self.owners_of.setdefault(key, set()).add(owner_key)
        if not refs or meta.get("deletionTimestamp"):
            return False  # no owners, or already on its way
        kinds = {v for _, v, _ in verdicts}
        if kinds & {"standing", "unknown"}:
            drop = {str(r.get("uid")) for r, v, _ in verdicts if v in ("gone", "foreground", "orphaning")}
            return bool(drop) and self._drop_references(key, str(meta.get("uid")), drop)
        if kinds == {"orphaning"}:
            return False  # the owner's orphaning removes the references
        if "orphaning" in kinds:  # the other owners are gone: keep the object, without those references
            drop = {str(r.get("uid")) for r, v, _ in verdicts if v != "orphaning"}
            return self._drop_references(key, str(meta.get("uid")), drop)
        self._delete(key, str(meta.get("uid")))
        return True

    def _finish_owner(self, key: Key) -> bool:
        """An owner being deleted with a collector's finalizer: orphan its dependents, or wait for them."""
        owner = self._get(key)
        meta = _meta(owner) if owner is not None else {}
        finalizers = meta.get("finalizers") or []
        if not meta.get("deletionTimestamp") or (ORPHAN not in finalizers and FOREGROUND not in finalizers):
            return False
        uid = str(meta.get("uid"))
        holders = [k for k in sorted(self.dependents_of.get(key, set())) if self._refers_to(k, uid)]
        changed = False
        if ORPHAN in finalizers:
            for dependent in holders:
                obj = self._get(dependent)
                if obj is not None:
                    changed |= self._drop_references(dependent, str(_meta(obj).get("uid")), {uid})
            holders = []
        if holders:
            return changed  # foreground: its dependents are being deleted; it goes once they are gone
        self.writer.update(*key, lambda o: _without_finalizers(o, {ORPHAN, FOREGROUND}), uid=uid)
        return True

    def _refers_to(self, key: Key, uid: str) -> bool:
        obj = self._get(key)
        return obj is not None and any(isinstance(r, dict) and r.get("uid") == uid
                                       for r in _meta(obj).get("ownerReferences") or [])

    def _drop_references(self, key: Key, uid: str, owners: set[str]) -> bool:
        dropped: list[bool] = []

        def drop(obj: Obj) -> Obj | None:
            dropped.clear()
            meta = obj["metadata"]
            refs = [r for r in meta.get("ownerReferences") or [] if not (isinstance(r, dict) and r.get("uid") in owners)]
            if len(refs) == len(meta.get("ownerReferences") or []):
                return None
            if refs:
                meta["ownerReferences"] = refs
            else:
                meta.pop("ownerReferences", None)
            dropped.append(True)
            return obj

        self.writer.update(*key, drop, uid=uid)
        return bool(dropped)

    def _delete(self, key: Key, uid: str) -> None:
        resource, namespace, name = key
        if resource == "pods":
            self.delete_pod(namespace, name, uid)
        else:
            self.writer.delete(resource, namespace, name, uid=uid)


def _without_finalizers(obj: Obj, names: set[str]) -> Obj | Outcome:
    meta = obj["metadata"]
    meta["finalizers"] = [f for f in meta.get("finalizers") or [] if f not in names]
    if not meta["finalizers"]:
        meta.pop("finalizers")
        if meta.get("deletionTimestamp"):
            return Outcome(obj, "DELETED")  # the last finalizer went: the deletion completes
    return obj
