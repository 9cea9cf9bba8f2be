"""NamespaceLifecycle, kube-apiserver's admission plugin for namespaced creates: a create in a namespace that
does not exist is refused (404), in a namespace being deleted too (403); updates and deletes are not checked.

:class:`NamespaceCache` answers "does this namespace exist, is it terminating" for every namespaced create
without reading the store: from the store's cache of namespaces (:mod:`dralloc.store.cache`), which has this
server's own writes (the API's and the namespace controller's) at once and other replicas' within a second.
A namespace the cache does not know, or knows as terminating, is looked up in the store before a create is
refused, as the admission plugin looks up a namespace its informer has not seen yet.
"""

from __future__ import annotations

from typing import Any

from dralloc.server.http.errors import ApiError
from dralloc.server.http.routing import Target
from dralloc.server.registry.namespaces import TERMINATING_CAUSE, terminating
from dralloc.server.types import Obj
from dralloc.store import NotFound, SQLStore
from dralloc.store.cache import cached


def _dict(value: Any) -> Obj:
    return dict(value) if isinstance(value, dict) else {}


def _terminating_by_name(objects: dict[tuple[str, str], Obj]) -> dict[str, bool]:
    return {name: terminating(ns) for (_, name), ns in objects.items()}


class NamespaceCache:
    """Which namespaces exist and which are terminating (see the module docstring). Owned by the ApiServer."""

    def __init__(self, store: SQLStore) -> None:
        self.store = store
        self._namespaces = cached(store, "namespaces")

    def admit_create(self, t: Target, data: dict[str, Any]) -> None:
        """NamespaceLifecycle for a create of ``data`` at ``t``: 404 when its namespace does not exist, 403 when
        it is being deleted."""
        if not t.resource.namespaced or not t.namespace:
            return
        if self._namespaces.derived(_terminating_by_name).get(t.namespace) is False:
            return  # the common case: a known, active namespace
        try:
            ns = self.store.get("namespaces", "", t.namespace)
        except NotFound:
            raise ApiError(404, f'namespaces "{t.namespace}" not found',
                           details={"name": t.namespace, "kind": "namespaces"}) from None
        if not terminating(ns):
            return
        meta = _dict(data.get("metadata"))
        name = t.name or meta.get("name") or meta.get("generateName") or "Unknown"
        why = f"unable to create new content in namespace {t.namespace} because it is being terminated"
        raise ApiError(403, f'{t.resource.group_resource} "{name}" is forbidden: {why}',
                       details={"name": name, "group": t.resource.group, "kind": t.resource.name,
                                "causes": [{"reason": TERMINATING_CAUSE, "field": "metadata.namespace",
                                            "message": f"namespace {t.namespace} is being terminated"}]})
