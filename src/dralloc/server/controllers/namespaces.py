"""The namespace controller, as kube-controller-manager's: the content of a namespace being deleted goes, then
the namespace.

A namespace marked ``Terminating`` by a delete gets every namespaced object in it deleted as a client would
delete it (a bound pod gracefully, an object with finalizers only marked until its controllers let it go).
While content remains the namespace carries kube-controller-manager's deletion conditions
(``NamespaceContentRemaining``, ``NamespaceFinalizersRemaining``, ...); once nothing is left the controller
removes the ``kubernetes`` finalizer from ``spec.finalizers`` (what ``/finalize`` does) and deletes the
namespace again, which removes it (or leaves it to its own ``metadata.finalizers``).

The store's change feed tells which namespaces to look at: one that is being deleted, and one in which an
object changed or went while it is being deleted; a write anywhere else costs nothing here.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from dralloc.server.clock import now
from dralloc.server.controllers.writes import Writer
from dralloc.server.crds.served import namespaced_custom_resources
from dralloc.server.registry.kinds import (
    APPS,
    BATCH,
    CORE,
    ENDPOINT_SLICES,
    GATED_RESOURCES,
    LEASES,
    POLICY,
    RESOURCES,
)
from dralloc.server.registry.namespaces import FINALIZER
from dralloc.store import Change, NotFound, SQLStore

Obj = dict[str, Any]

# Every namespaced resource the server serves (or may have served: the gated ones), in the order their content
# is deleted: the workloads first, so that their controllers make no more pods.
_TABLES = (APPS, BATCH, CORE, RESOURCES, LEASES, GATED_RESOURCES, POLICY, ENDPOINT_SLICES)
NAMESPACED = tuple(r.name for table in _TABLES for r in table.values() if r.namespaced)


def _meta(obj: Obj) -> Obj:
    meta = obj.get("metadata")
    return meta if isinstance(meta, dict) else {}


def deletion_conditions(remaining: dict[str, int], finalizers: dict[str, int]) -> list[Obj]:
    """kube-controller-manager's conditions of a namespace being deleted: nothing failed; what is left, by
    resource (``pods. has 2 resource instances``) and by finalizer."""
    def condition(type_: str, status: str, reason: str, message: str) -> Obj:
        return {"type": type_, "status": status, "lastTransitionTime": now(), "reason": reason, "message": message}

    left = ", ".join(sorted(f"{_group_resource(r)} has {n} resource instances" for r, n in remaining.items()))
    held = ", ".join(sorted(f"{name} in {n} resource instances" for name, n in finalizers.items()))
    return [
        condition("NamespaceDeletionDiscoveryFailure", "False", "ResourcesDiscovered",
                  "All resources successfully discovered"),
        condition("NamespaceDeletionGroupVersionParsingFailure", "False", "ParsedGroupVersions",
                  "All legacy kube types successfully parsed"),
        condition("NamespaceDeletionContentFailure", "False", "ContentDeleted",
                  "All content successfully deleted, may be waiting on finalization"),
        condition("NamespaceContentRemaining", "True", "SomeResourcesRemain", f"Some resources are remaining: {left}")
        if remaining else condition("NamespaceContentRemaining", "False", "ContentRemoved",
                                    "All content successfully removed"),
        condition("NamespaceFinalizersRemaining", "True", "SomeFinalizersRemain",
                  f"Some content in the namespace has finalizers remaining: {held}")
        if finalizers else condition("NamespaceFinalizersRemaining", "False", "ContentHasNoFinalizers",
                                     "All content-preserving finalizers finished"),
    ]


def _group_resource(resource: str) -> str:
    """As the namespace controller names a resource: ``pods.`` (the core group is empty),
    ``resourceclaims.resource.k8s.io``; a custom resource comes named so (``widgets.example.com``)."""
    r = next((table[resource] for table in _TABLES if resource in table), None)
    if r is None:
        return resource
    return f"{r.name}.{r.group}"


def _with_conditions(ns: Obj, conditions: list[Obj]) -> Obj | None:
    """``ns`` with these conditions (a condition whose status, reason and message stay keeps its time);
    None when nothing changes."""
    status = ns.setdefault("status", {})
    old = {c.get("type"): c for c in status.get("conditions") or [] if isinstance(c, dict)}
    merged = []
    for c in conditions:
        before = old.get(c["type"])
        same = before is not None and all(before.get(k) == c[k] for k in ("status", "reason", "message"))
        merged.append(before if same else c)
    if merged == status.get("conditions"):
        return None
    status["conditions"] = merged
    return ns


@dataclass
class NamespaceDeleter:
    NOTED: ClassVar[frozenset[str] | None] = None  # (a namespace's, and any content's of one being deleted)
    writer: Writer
    delete_pod: Callable[[str, str, str | None], Any]  # graceful, as a client's delete of a pod
    deleting: set[str] = field(default_factory=set)  # namespaces known to be being deleted
    todo: set[str] = field(default_factory=set)  # ... of which something changed since the last look
    scanned: bool = False  # the first pass looks at every namespace

    @property
    def store(self) -> SQLStore:
        return self.writer.store

    @property
    def due(self) -> bool:
        return not self.scanned or bool(self.todo)

    def notes(self, changes: Sequence[Change]) -> None:
        """Take in changes of one resource from the store's feed, in the log's order."""
        if changes[0].resource == "namespaces":
            for change in changes:
                if change.type == "DELETED":
                    self.deleting.discard(change.name)
                    self.todo.discard(change.name)
                elif change.deleting:
                    self.deleting.add(change.name)
                    self.todo.add(change.name)
        elif deleting := self.deleting:  # (the content of a namespace being deleted)
            self.todo.update([c.namespace for c in changes if c.namespace in deleting])

    def cycle(self) -> bool:
        """Look at the namespaces being deleted whose content changed; True when anything was written."""
        if not self.scanned:
            self.scanned = True
            for ns in self.store.list("namespaces")[0]:
                if _meta(ns).get("deletionTimestamp"):
                    self.deleting.add(_meta(ns)["name"])
                    self.todo.add(_meta(ns)["name"])
        changed = False
        todo, self.todo = sorted(self.todo), set()
        for name in todo:
            changed |= self._sync(name)
        return changed

    def _sync(self, name: str) -> bool:
        """Delete the namespace's content; once it is gone, finalize and delete the namespace. True when
        anything was written."""
        try:
            ns = self.store.get("namespaces", "", name)
        except NotFound:
            self.deleting.discard(name)
            return False
        meta = _meta(ns)
        if not meta.get("deletionTimestamp"):
            self.deleting.discard(name)
            return False
        uid = str(meta.get("uid"))
        wrote = False
        if FINALIZER in ((ns.get("spec") or {}).get("finalizers") or []):
            wrote = self._delete_content(name)
            remaining, finalizers = self._remaining(name)
            conditions = deletion_conditions(remaining, finalizers)
            wrote |= self._write(ns, lambda o: _with_conditions(o, conditions))
            if remaining:
                return wrote  # the content goes first; its changes bring the namespace back here
            wrote |= self._write(ns, _finalized)
        after = self.writer.delete("namespaces", "", name, uid=uid)
        return wrote or (after is not None and _meta(after).get("resourceVersion") != meta.get("resourceVersion"))

    def _write(self, ns: Obj, mutate: Callable[[Obj], Obj | None]) -> bool:
        meta = _meta(ns)
        after = self.writer.update("namespaces", "", str(meta.get("name")), mutate, uid=str(meta.get("uid")))
        return after is not None and _meta(after).get("resourceVersion") != meta.get("resourceVersion")

    def _delete_content(self, namespace: str) -> bool:
        """Delete what is in the namespace and not yet being deleted; True when something was."""
        deleted = False
        for resource in (*NAMESPACED, *namespaced_custom_resources(self.store)):  # (and the CRDs' resources)
            for obj in self.store.list(resource, namespace)[0]:
                meta = _meta(obj)
                if meta.get("deletionTimestamp"):
                    continue
                if resource == "pods":
                    self.delete_pod(namespace, str(meta.get("name")), meta.get("uid"))
                else:
                    self.writer.delete(resource, namespace, str(meta.get("name")), uid=meta.get("uid"))
                deleted = True
        return deleted

    def _remaining(self, namespace: str) -> tuple[dict[str, int], dict[str, int]]:
        """How many objects of each resource are left, and how many hold each finalizer."""
        remaining: dict[str, int] = {}
        finalizers: dict[str, int] = {}
        custom = namespaced_custom_resources(self.store)  # (and the CRDs' resources, named with their group)
        for resource in (*NAMESPACED, *custom):
            objs = self.store.list(resource, namespace)[0]
            if objs:
                remaining[custom.get(resource, resource)] = len(objs)
            for obj in objs:
                for f in _meta(obj).get("finalizers") or []:
                    finalizers[str(f)] = finalizers.get(str(f), 0) + 1
        return remaining, finalizers


def _finalized(ns: Obj) -> Obj | None:
    """``ns`` without the ``kubernetes`` finalizer in ``spec.finalizers`` (what ``/finalize`` writes)."""
    spec = ns.get("spec") or {}
    finalizers = [f for f in spec.get("finalizers") or [] if f != FINALIZER]
    if finalizers == spec.get("finalizers"):
        return None
    ns["spec"] = {**spec, "finalizers": finalizers}
    return ns
