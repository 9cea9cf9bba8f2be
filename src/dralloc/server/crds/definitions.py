"""The strategy of apiextensions.k8s.io/v1 CustomResourceDefinitions, as kube-apiserver's CRD registry and its
naming, establishing and finalizing controllers together leave a CRD: stored as sent with upstream's defaults
(``singular``, ``listKind``, conversion ``None``), validated with upstream's rules, named and established by
the controllers of ``naming`` before its create or update is answered (so that ``kubectl wait --for
condition=established`` returns as soon as it is created, unless its names conflict with another CRD's), and
its custom resources deleted with it (the ``customresourcecleanup.apiextensions.k8s.io`` finalizer holds the
CRD until they are gone; then its names are free)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Collection
from typing import Any

import msgspec

from dralloc.api import apiextensions_v1
from dralloc.errors import InputError
from dralloc.server.crds import naming
from dralloc.server.registry.strategy import Server, Strategy, managed_field_errors, mark_deleting
from dralloc.server.types import Obj
from dralloc.store import NotFound, Outcome
from dralloc.validation import field as f
from dralloc.validation.crd import validate_crd, validate_crd_update
from dralloc.validation.meta import finalizers_added_while_deleting
from dralloc.validation.schema_shape import shape_error

RESOURCE = "customresourcedefinitions"
CLEANUP_FINALIZER = "customresourcecleanup.apiextensions.k8s.io"
log = logging.getLogger(__name__)


def decode(data: Obj) -> apiextensions_v1.CustomResourceDefinition:
    """The typed CRD; an InputError as Go's decoder words a value of the wrong type."""
    try:
        crd = apiextensions_v1.decode(data)
    except msgspec.ValidationError as exc:
        raise InputError(f"json: cannot unmarshal into Go value of type CustomResourceDefinition: {exc}") from None
    for version in crd.spec.versions or ():
        problem = shape_error(version.schema.open_apiv3_schema) if version.schema is not None else None
        if problem is not None:
            raise InputError(problem)
    return crd


def default(crd: Obj) -> None:
    """kube-apiserver's defaults of a v1 CRD: the singular name and list kind from the kind, conversion None."""
    spec = crd.get("spec")
    if not isinstance(spec, dict):
        return
    names = spec.get("names")
    if isinstance(names, dict) and isinstance(names.get("kind"), str) and names["kind"]:
        if not names.get("singular"):
            names["singular"] = names["kind"].lower()
        if not names.get("listKind"):
            names["listKind"] = names["kind"] + "List"
    if spec.get("conversion") is None:
        spec["conversion"] = {"strategy": "None"}
    for version in spec.get("versions") or ():
        if isinstance(version, dict):
            version.setdefault("served", False)
            version.setdefault("storage", False)


def storage_version(crd: Obj) -> str | None:
    versions = (crd.get("spec") or {}).get("versions") or []
    return next((v.get("name") for v in versions if isinstance(v, dict) and v.get("storage")), None)


def is_established(crd: Obj) -> bool:
    found = naming.condition(crd, "Established")
    return found is not None and found.get("status") == "True"


class DefinitionStrategy(Strategy):
    stored_as_sent = True
    tracks_generation = True

    def __init__(self, built_in_groups: Callable[[], Collection[str]] = frozenset) -> None:
        # the groups the server serves itself: a CRD of one is never served, so the objects stored under its
        # plural are the built-in resource's, which its deletion leaves alone
        self.built_in_groups = built_in_groups

    def decode(self, data: Obj) -> Any:
        return decode(data)

    def decode_defaults(self, obj: Obj, sub: str) -> None:
        default(obj)  # (decoding's: the writer owns the defaults)

    def prepare_for_create(self, stored: Obj) -> None:
        meta = stored["metadata"]
        if CLEANUP_FINALIZER not in (meta.get("finalizers") or []):
            meta["finalizers"] = [*(meta.get("finalizers") or []), CLEANUP_FINALIZER]
        stored.pop("status", None)

    def with_system_fields(self, created: Obj) -> Obj:
        """The status a CRD is created with, as kube-apiserver's strategy leaves it: no names accepted yet, its
        storage version stored; the naming and establishing controllers (``naming``) follow at once."""
        stored_version = storage_version(created)
        return {**created, "status": {"acceptedNames": {"plural": "", "kind": ""},
                                      "storedVersions": [stored_version] if stored_version else []}}

    def after_create(self, server: Server, created: Obj) -> Awaitable[None]:
        return asyncio.to_thread(naming.reconcile, server.store, naming.group_of(created),
                                 str(created["metadata"]["name"]))

    def after_update(self, server: Server, written: Obj, sub: str) -> Awaitable[None]:
        return asyncio.to_thread(naming.reconcile, server.store, naming.group_of(written),
                                 str(written["metadata"]["name"]))

    def create_errors(self, typed: Any, stored: Obj | None, namespaced: bool) -> list[f.FieldError]:
        return validate_crd(decode(stored or {}))

    def prepare_for_update(self, merged: Obj, old: Obj, sub: str) -> None:
        if sub == "status":
            return
        status = dict(merged.get("status") or old.get("status") or {})
        stored_versions = list(status.get("storedVersions") or [])
        stored_version = storage_version(merged)
        if stored_version and stored_version not in stored_versions:
            stored_versions.append(stored_version)
        status["storedVersions"] = stored_versions
        merged["status"] = status

    def update_errors(self, merged: Obj, old: Obj, sub: str, typed_meta: Any) -> list[f.FieldError]:
        errors = finalizers_added_while_deleting(merged["metadata"], old["metadata"])
        errors += managed_field_errors(merged)
        return validate_crd_update(decode(merged), decode(old), is_established(old)) + errors

    def mark_deleted(self, old: Obj, options: Obj, query: Any, collection: bool) -> Outcome | None:
        marked = mark_deleting(old)
        if marked is None or (old.get("metadata") or {}).get("deletionTimestamp"):
            return marked
        obj = marked.object
        status = dict(obj.get("status") or {})
        naming.set_condition(status, "Terminating", "True", "InstanceDeletionInProgress",
                             "CustomResource deletion is in progress")
        return Outcome({**obj, "status": status}, "MODIFIED")

    def after_delete(self, server: Server, result: Obj, collection: bool) -> None:
        meta = result.get("metadata") or {}
        name = str(meta.get("name", ""))
        if meta.get("deletionTimestamp") and CLEANUP_FINALIZER in (meta.get("finalizers") or []):
            server.background(asyncio.to_thread(finalize, server, name, self.built_in_groups()))
        elif not meta.get("deletionTimestamp") or not meta.get("finalizers"):  # gone: its names are free
            server.background(asyncio.to_thread(naming.reconcile, server.store, naming.group_of(result), name))


def resume_cleanups(server: Server, built_in_groups: Collection[str] = ()) -> None:
    """On startup: finish deleting the CRDs whose deletion a stopped server had begun, and name the CRDs it
    had not named."""
    crds, _ = server.store.list(RESOURCE)
    for group in naming.unsettled_groups(crds):
        for crd in crds:
            if naming.group_of(crd) == group:
                naming.reconcile(server.store, group, str(crd["metadata"]["name"]))
    for crd in crds:
        meta = crd.get("metadata") or {}
        if meta.get("deletionTimestamp") and CLEANUP_FINALIZER in (meta.get("finalizers") or []):
            server.background(asyncio.to_thread(finalize, server, str(meta.get("name", "")), built_in_groups))


def finalize(server: Server, name: str, built_in_groups: Collection[str] = ()) -> None:
    """As kube-apiserver's CRD finalizer: delete every custom resource of the CRD (none for a CRD of a built-in
    group, never served), then remove its finalizer (the CRD goes once no other finalizer holds it)."""
    store = server.store
    try:
        crd = store.get(RESOURCE, "", name)
    except NotFound:
        return
    spec = crd.get("spec") or {}
    group, plural = spec.get("group"), (spec.get("names") or {}).get("plural")
    objs, _ = store.list(str(plural)) if group not in built_in_groups else ([], "")
    for obj in objs:
        api_version = str(obj.get("apiVersion", ""))
        if api_version.split("/")[0] != group:
            continue
        meta = obj.get("metadata") or {}
        try:
            store.delete(str(plural), meta.get("namespace") or "", meta.get("name", ""))
        except NotFound:
            continue

    def build(old: Obj, rv: str) -> Obj | Outcome:
        meta = dict(old.get("metadata") or {})
        meta["finalizers"] = [x for x in meta.get("finalizers") or [] if x != CLEANUP_FINALIZER]
        if not meta["finalizers"]:
            meta.pop("finalizers")
        status = dict(old.get("status") or {})
        naming.set_condition(status, "Terminating", "True", "InstanceDeletionCompleted",
                             f"removed all instances of {spec.get('names', {}).get('kind', '')}")
        meta["resourceVersion"] = rv
        new = {**old, "metadata": meta, "status": status}
        return Outcome(new, "DELETED") if not meta.get("finalizers") else new

    try:
        store.update(RESOURCE, "", name, build)
    except NotFound:
        return
    naming.reconcile(store, str(group), name)  # (once gone, its names are free)

