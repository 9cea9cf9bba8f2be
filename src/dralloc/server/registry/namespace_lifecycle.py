"""NamespaceLifecycle, kube-apiserver's admission plugin for namespaced creates: a create in a namespace that
does not exist is refused (404), in a namespace being deleted too (403); updates and deletes are not checked.

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

from dralloc.server.http.errors import ApiError
from dralloc.server.http.routing import Target
from dralloc.server.registry.namespaces import REFRESH_SECONDS, TERMINATING_CAUSE, terminating
from dralloc.server.types import Obj
from dralloc.store import Gone, NotFound, SQLStore


def _dict(value: Any) -> Obj:
    return dict(value) if isinstance(value, dict) else {}


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
