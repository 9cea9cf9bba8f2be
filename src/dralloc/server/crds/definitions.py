"""The strategy of apiextensions.k8s.io/v1 CustomResourceDefinitions, as kube-apiserver's CRD registry and its
naming, establishing and finalizing controllers together leave a CRD: stored as sent with upstream's defaults
(``singular``, ``listKind``, conversion ``None``), validated with upstream's rules, its status set at once
(``NamesAccepted`` and ``Established`` true, ``acceptedNames``, ``storedVersions``) so that ``kubectl wait
--for condition=established`` returns as soon as it is created, and its custom resources deleted with it (the
``customresourcecleanup.apiextensions.k8s.io`` finalizer holds the CRD until they are gone)."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import msgspec

from dralloc.api import apiextensions_v1
from dralloc.errors import InputError
from dralloc.server.clock import now
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


def condition(crd: Obj, kind: str) -> dict[str, Any] | None:
    for c in (crd.get("status") or {}).get("conditions") or ():
        if isinstance(c, dict) and c.get("type") == kind:
            return c
    return None


def is_established(crd: Obj) -> bool:
    found = condition(crd, "Established")
    return found is not None and found.get("status") == "True"


def _set_condition(status: dict[str, Any], kind: str, value: str, reason: str, message: str) -> None:
    conditions = [c for c in status.get("conditions") or () if isinstance(c, dict)]
    for c in conditions:
        if c.get("type") == kind:
            if (c.get("status"), c.get("reason"), c.get("message")) != (value, reason, message):
                c.update(status=value, reason=reason, message=message, lastTransitionTime=now())
            status["conditions"] = conditions
            return
    conditions.append({"type": kind, "status": value, "lastTransitionTime": now(), "reason": reason,
                       "message": message})
    status["conditions"] = conditions


class DefinitionStrategy(Strategy):
    stored_as_sent = True
    tracks_generation = True

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
        """What kube-apiserver's naming and establishing controllers write within milliseconds of the create
        (after the creator's field ownership is recorded: the status is theirs)."""
        stored = {**created}
        names = (stored.get("spec") or {}).get("names")
        status: dict[str, Any] = {"acceptedNames": names if isinstance(names, dict) else {}}
        _set_condition(status, "NamesAccepted", "True", "NoConflicts", "no conflicts found")
        _set_condition(status, "Established", "True", "InitialNamesAccepted", "the initial names have been accepted")
        stored_version = storage_version(stored)
        status["storedVersions"] = [stored_version] if stored_version else []
        stored["status"] = status
        return stored

    def create_errors(self, typed: Any, stored: Obj | None, namespaced: bool) -> list[f.FieldError]:
        return validate_crd(decode(stored or {}))

    def prepare_for_update(self, merged: Obj, old: Obj, sub: str) -> None:
        if sub == "status":
            return
        status = dict(merged.get("status") or old.get("status") or {})
        names = (merged.get("spec") or {}).get("names")
        if isinstance(names, dict):
            status["acceptedNames"] = names
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
        _set_condition(status, "Terminating", "True", "InstanceDeletionInProgress",
                       "CustomResource deletion is in progress")
        return Outcome({**obj, "status": status}, "MODIFIED")

    def after_delete(self, server: Server, result: Obj, collection: bool) -> None:
        meta = result.get("metadata") or {}
        if meta.get("deletionTimestamp") and CLEANUP_FINALIZER in (meta.get("finalizers") or []):
            server.background(asyncio.to_thread(finalize, server, str(meta.get("name", ""))))


def resume_cleanups(server: Server) -> None:
    """On startup: finish deleting the CRDs whose deletion a stopped server had begun."""
    crds, _ = server.store.list(RESOURCE)
    for crd in crds:
        meta = crd.get("metadata") or {}
        if meta.get("deletionTimestamp") and CLEANUP_FINALIZER in (meta.get("finalizers") or []):
            server.background(asyncio.to_thread(finalize, server, str(meta.get("name", ""))))


def finalize(server: Server, name: str) -> None:
    """As kube-apiserver's CRD finalizer: delete every custom resource of the CRD, then remove its finalizer
    (the CRD goes once no other finalizer holds it)."""
    store = server.store
    try:
        crd = store.get(RESOURCE, "", name)
    except NotFound:
        return
    spec = crd.get("spec") or {}
    group, plural = spec.get("group"), (spec.get("names") or {}).get("plural")
    objs, _ = store.list(str(plural))
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
        _set_condition(status, "Terminating", "True", "InstanceDeletionCompleted",
                       f"removed all instances of {spec.get('names', {}).get('kind', '')}")
        meta["resourceVersion"] = rv
        new = {**old, "metadata": meta, "status": status}
        return Outcome(new, "DELETED") if not meta.get("finalizers") else new

    try:
        store.update(RESOURCE, "", name, build)
    except NotFound:
        return


STRATEGY = DefinitionStrategy()
