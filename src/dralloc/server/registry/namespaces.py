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
- NamespaceLifecycle (``registry/namespace_lifecycle.py``): a create in a namespace that does not exist is
  refused (404), in a namespace being deleted too (403).
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import Any

from dralloc.server.clock import now
from dralloc.server.http.errors import ApiError
from dralloc.server.registry import service_accounts as accounts
from dralloc.server.registry.strategy import CoreStrategy, Server, managed_field_errors, mark_deleting
from dralloc.server.types import Obj
from dralloc.server.uids import new_uid
from dralloc.server.views import ObjectView
from dralloc.store import Conflict, NotFound, Outcome, SQLStore
from dralloc.validation.field import FieldError
from dralloc.validation.meta import finalizers_added_while_deleting
from dralloc.validation.namespace import spec_finalizer_errors, status_errors

SYSTEM_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")
IMMORTAL_NAMESPACES = frozenset(("default", "kube-system", "kube-public"))
FINALIZER = "kubernetes"  # spec.finalizers: the namespace controller removes it once the content is gone
NAME_LABEL = "kubernetes.io/metadata.name"
TERMINATING_CAUSE = "NamespaceTerminating"
SYSTEM_NAMESPACES_EVERY = 60.0  # seconds between two passes of the system namespaces controller
# kube-apiserver's answer to a second delete while the namespace controller is still at work.
PURGING = ("The system is ensuring all content is removed from this namespace.  Upon completion, this namespace "
           "will automatically be purged by the system.")


# --- what a create and an update prepare -----------------------------------------------------------


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


def terminating(ns: dict[str, Any]) -> bool:
    view = ObjectView(ns)
    return view.deletion_timestamp is not None or view.status.get("phase") == "Terminating"


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


async def _make_default_account(server: Server, namespace: str) -> None:
    """A new namespace's default service account at once (kube-controller-manager's would come a moment later,
    and kube-apiserver waits for it): a pod created next runs as it."""
    try:
        await server.store.create_async("serviceaccounts", namespace, accounts.DEFAULT,
                                        accounts.default_account(namespace))
    except Conflict:
        pass


# --- the strategy -----------------------------------------------------------------------------------


class NamespaceStrategy(CoreStrategy):
    def decode_defaults(self, obj: Obj, sub: str) -> None:
        with_name_label(obj)  # SetDefaults_Namespace: the writer owns the label

    def prepare_for_create(self, stored: Obj) -> None:
        prepare_create(stored)

    def after_create(self, server: Server, created: Obj) -> Awaitable[None]:
        return _make_default_account(server, created["metadata"]["name"])

    def prepare_for_update(self, merged: Obj, old: Obj, sub: str) -> None:
        prepare_update(merged, old, sub)

    def update_errors(self, merged: Obj, old: Obj, sub: str, typed_meta: Any) -> list[FieldError]:
        errors = finalizers_added_while_deleting(merged["metadata"], old["metadata"])
        if sub == "finalize":
            errors += spec_finalizer_errors(merged.get("spec"), indexed=True)
        elif sub == "status":
            errors += status_errors(merged)
        return errors + managed_field_errors(merged)

    def deletion_held(self, obj: Obj) -> bool:
        return bool(ObjectView(obj).spec.get("finalizers"))  # the namespace controller is still at work

    def check_delete(self, name: str) -> None:
        check_delete(name)

    def mark_deleted(self, old: Obj, options: Obj, query: Any, collection: bool) -> Outcome | None:
        # a deletecollection goes through the generic store's delete, as kube-apiserver's namespace storage
        return mark_deleting(old) if collection else mark_terminating(old)

    def delete_answers_with_object(self, result: Obj, dry: bool) -> bool:
        return True  # marked Terminating: 200 with the object, as upstream


STRATEGY = NamespaceStrategy()
