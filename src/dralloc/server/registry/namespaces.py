"""Namespaces as kube-apiserver keeps them.

- The system namespaces (``default``, ``kube-system``, ``kube-public``, ``kube-node-lease``) exist from the first
  start, and a missing one is made again within a minute, as kube-apiserver's system namespaces controller
  does; the first three may not be deleted (the NamespaceLifecycle admission plugin's immortal namespaces).
- The namespace strategy: a new namespace is ``Active`` with the ``kubernetes`` finalizer in
  ``spec.finalizers``; every write keeps the label ``kubernetes.io/metadata.name: <name>``; the main endpoint
  cannot change ``status`` nor ``spec.finalizers`` (``/finalize`` changes the finalizers, ``/status`` the
  status).
- Deleting a namespace first only marks it (``deletionTimestamp``, phase ``Terminating``); the namespace
  controller (``controllers/namespaces``) then deletes its content, removes the ``kubernetes`` finalizer
  and deletes it again, which removes it.
- NamespaceLifecycle: a create in a namespace that does not exist is refused (404), in a namespace being
  deleted too (403); updates and deletes are not checked.

:class:`NamespaceCache` answers "does this namespace exist, is it terminating" for every namespaced create
without reading the store: it is filled from the store once, kept current by the server's own namespace
writes, and at most once a second (when something was committed) from the store's change feed, which brings
the namespace controller's removals and other replicas' writes. A namespace the cache does not know, or
knows as terminating, is looked up in the store before a create is refused, as the admission plugin looks
up a namespace its informer has not seen yet.
"""

from __future__ import annotations

import threading
import time
from typing import Any

from dralloc.server.clock import now
from dralloc.server.http.errors import ApiError
from dralloc.server.http.routing import Target
from dralloc.server.registry import service_accounts as accounts
from dralloc.server.uids import new_uid
from dralloc.store import Conflict, Gone, NotFound, Outcome, SQLStore
from dralloc.validation import field as f
from dralloc.validation.namespace import spec_finalizer_errors

SYSTEM_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")
IMMORTAL_NAMESPACES = frozenset(("default", "kube-system", "kube-public"))
FINALIZER = "kubernetes"  # spec.finalizers: the namespace controller removes it once the content is gone
NAME_LABEL = "kubernetes.io/metadata.name"
TERMINATING_CAUSE = "NamespaceTerminating"
SYSTEM_NAMESPACES_EVERY = 60.0  # seconds between two passes of the system namespaces controller
REFRESH_SECONDS = 1.0  # the change feed is read at most this often (and only after commits)
# kube-apiserver's answer to a second delete while the namespace controller is still at work.
PURGING = ("The system is ensuring all content is removed from this namespace.  Upon completion, this namespace "
           "will automatically be purged by the system.")


# --- the strategy -----------------------------------------------------------------------------------


def _dict(value: Any) -> dict[str, Any]:
    return dict(value) if isinstance(value, dict) else {}


def with_name_label(ns: dict[str, Any]) -> None:
    meta = ns.setdefault("metadata", {})
    labels = _dict(meta.get("labels"))
    labels[NAME_LABEL] = meta.get("name") or ""
    meta["labels"] = labels


def prepare_create(ns: dict[str, Any]) -> None:
    """A new namespace: Active, with the ``kubernetes`` finalizer and its name label, whatever status it sent."""
    spec = _dict(ns.get("spec"))
    finalizers = list(spec.get("finalizers") or []) if isinstance(spec.get("finalizers"), list) else []
    if FINALIZER not in finalizers:
        finalizers.append(FINALIZER)
    spec["finalizers"] = finalizers
    ns["spec"] = spec
    ns["status"] = {"phase": "Active"}
    with_name_label(ns)


def prepare_update(merged: dict[str, Any], old: dict[str, Any], sub: str) -> None:
    """An update through the main endpoint keeps the stored finalizers (``/finalize`` changes them); every
    update keeps the name label."""
    if sub == "":
        spec = _dict(merged.get("spec"))
        old_finalizers = (old.get("spec") or {}).get("finalizers")
        if old_finalizers is None:
            spec.pop("finalizers", None)
        else:
            spec["finalizers"] = old_finalizers
        merged["spec"] = spec
    with_name_label(merged)


def status_errors(ns: dict[str, Any]) -> list[f.FieldError]:
    """ValidateNamespaceStatusUpdate: the phase a status write leaves must be Active, or Terminating once the
    namespace is being deleted (upstream's path is ``status.Phase``, capital P)."""
    phase = _dict(ns.get("status")).get("phase") or ""
    if not _dict(ns.get("metadata")).get("deletionTimestamp"):
        if phase != "Active":
            return [f.invalid("status.Phase", phase, "may only be 'Active' if `deletionTimestamp` is empty")]
    elif phase != "Terminating":
        return [f.invalid("status.Phase", phase, "may only be 'Terminating' if `deletionTimestamp` is not empty")]
    return []


def finalizer_errors(ns: dict[str, Any], indexed: bool) -> list[f.FieldError]:
    """The finalizers of a namespace's spec (:func:`dralloc.validation.namespace.spec_finalizer_errors`)."""
    return spec_finalizer_errors(ns.get("spec"), indexed)


def terminating(ns: dict[str, Any]) -> bool:
    return bool((ns.get("metadata") or {}).get("deletionTimestamp")) or \
        (ns.get("status") or {}).get("phase") == "Terminating"


def check_delete(name: str) -> None:
    """NamespaceLifecycle: the immortal namespaces may not be deleted."""
    if name in IMMORTAL_NAMESPACES:
        raise ApiError(403, f'namespaces "{name}" is forbidden: this namespace may not be deleted',
                       details={"name": name, "kind": "namespaces"})


def mark_terminating(old: dict[str, Any]) -> Outcome | None:
    """The namespace storage's delete: the first one marks the namespace Terminating (200, the object); later
    ones wait for the namespace controller (409) until ``spec.finalizers`` is empty, then the object goes (or
    waits for its metadata finalizers). None: remove it now."""
    meta = old.get("metadata") or {}
    if not meta.get("deletionTimestamp"):
        status = {**_dict(old.get("status")), "phase": "Terminating"}
        return Outcome({**old, "metadata": {**meta, "deletionTimestamp": now()}, "status": status}, "MODIFIED")
    if (old.get("spec") or {}).get("finalizers"):
        raise ApiError(409, f'Operation cannot be fulfilled on namespaces "{meta.get("name")}": {PURGING}',
                       "Conflict", details={"name": meta.get("name"), "kind": "namespaces"})
    if meta.get("finalizers"):
        return Outcome(old, "MODIFIED")
    return None


def ensure_system_namespaces(store: SQLStore) -> None:
    """Create the system namespaces that are not stored (kube-apiserver's system namespaces controller)."""
    for name in SYSTEM_NAMESPACES:
        try:
            store.get("namespaces", "", name)
            continue
        except NotFound:
            pass
        ns: dict[str, Any] = {"kind": "Namespace", "apiVersion": "v1", "metadata": {"name": name}}
        prepare_create(ns)

        def build(_old: Any, rv: str, ns: dict[str, Any] = ns) -> dict[str, Any]:
            meta = {**ns["metadata"], "uid": new_uid(), "creationTimestamp": now(), "resourceVersion": rv}
            return {**ns, "metadata": meta}

        try:
            store.create("namespaces", "", name, build)
        except Conflict:  # another replica made it meanwhile
            pass
    for name in SYSTEM_NAMESPACES:
        accounts.ensure_default_account(store, name)  # (kube-controller-manager's, before any pod comes)


# --- NamespaceLifecycle -----------------------------------------------------------------------------


class NamespaceCache:
    """Which namespaces exist and which are terminating (see the module docstring for how it stays current).
    Owned by the ApiServer; its data lives as long as the store it reads."""

    def __init__(self, store: SQLStore) -> None:
        self.store = store
        self._terminating: dict[str, bool] = {}  # name -> being deleted
        self._position = 0
        self._committed = False  # something was committed since the feed was last read
        self._next_refresh = 0.0
        self._lock = threading.Lock()
        self._reload()
        store.subscribe(self._on_commit)

    def _on_commit(self) -> None:
        self._committed = True

    def _reload(self) -> None:
        objs, rv = self.store.list("namespaces")
        self._terminating = {o["metadata"]["name"]: terminating(o) for o in objs}
        self._position = rv

    def _refresh(self) -> None:
        """Take in the namespace changes of the store's feed (at most every REFRESH_SECONDS)."""
        if not self._committed or time.monotonic() < self._next_refresh:
            return
        with self._lock:
            self._committed = False
            self._next_refresh = time.monotonic() + REFRESH_SECONDS
            while True:
                try:
                    changes = self.store.changes_since(self._position)
                except Gone:
                    self._reload()
                    return
                for change in changes:
                    if change.resource == "namespaces":
                        if change.type == "DELETED":
                            self._terminating.pop(change.name, None)
                        else:
                            self._terminating[change.name] = change.deleting
                if changes:
                    self._position = changes[-1].rv
                if len(changes) < 10_000:
                    return

    def note(self, ns: dict[str, Any], gone: bool = False) -> None:
        """The server's own write of a namespace (created, marked terminating, or ``gone``)."""
        name = (ns.get("metadata") or {}).get("name") or ""
        if gone:
            self._terminating.pop(name, None)
        else:
            self._terminating[name] = terminating(ns)

    def admit_create(self, t: Target, data: dict[str, Any]) -> None:
        """NamespaceLifecycle for a create of ``data`` at ``t``: 404 when its namespace does not exist, 403 when
        it is being deleted."""
        if not t.resource.namespaced or not t.namespace:
            return
        self._refresh()
        if self._terminating.get(t.namespace) is False:
            return  # the common case: a known, active namespace
        try:
            ns = self.store.get("namespaces", "", t.namespace)
        except NotFound:
            self._terminating.pop(t.namespace, None)
            raise ApiError(404, f'namespaces "{t.namespace}" not found',
                           details={"name": t.namespace, "kind": "namespaces"}) from None
        self.note(ns)
        if not terminating(ns):
            return
        meta = _dict(data.get("metadata"))
        name = t.name or meta.get("name") or meta.get("generateName") or "Unknown"
        why = f"unable to create new content in namespace {t.namespace} because it is being terminated"
        raise ApiError(403, f'{t.resource.group_resource} "{name}" is forbidden: {why}',
                       details={"name": name, "group": t.resource.group, "kind": t.resource.name,
                                "causes": [{"reason": TERMINATING_CAUSE, "field": "metadata.namespace",
                                            "message": f"namespace {t.namespace} is being terminated"}]})
