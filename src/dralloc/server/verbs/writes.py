"""create, update and patch: decode, merge with the stored object, validate with kube-apiserver's rules, and
hand the write to the store's committer thread (the fsync must not block the event loop)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import msgspec
from starlette.requests import Request
from starlette.responses import Response

from dralloc.api import strict
from dralloc.server.admission.policies import Scope, add_warnings, attributes, warnings_of
from dralloc.server.apply.json_patch import json_patch, merge_patch
from dralloc.server.apply.managed_fields import apply, record_update, undeclared_fields_error
from dralloc.server.apply.strategic_merge import strategic_merge_patch
from dralloc.server.clock import now
from dralloc.server.context import ApiContext
from dralloc.server.http.bodies import check_limits, parse, read_body
from dralloc.server.http.errors import ApiError, already_exists, bad_request, conflict, invalid, not_found
from dralloc.server.http.options import check_write_options, field_manager, query_flag
from dralloc.server.http.responses import JSON, respond
from dralloc.server.http.routing import Target
from dralloc.server.json_copy import json_copy
from dralloc.server.names import generated_name
from dralloc.server.registry import events, quota
from dralloc.server.registry.quota_charges import Charge
from dralloc.server.registry.strategy import Strategy
from dralloc.server.types import Obj
from dralloc.server.uids import new_uid
from dralloc.server.verbs.create_rules import (
    NAME_GENERATION_ATTEMPTS,
    RESOURCE_VERSION_ON_CREATE,
    generate_name_conflict,
    resource_version_set,
    without_duplicate_owners,
)
from dralloc.server.verbs.objects import (
    check_valid,
    dry_run,
    field_problems,
    field_validation,
    object_body,
    stored_form,
    type_meta_checked,
    typed,
    zeros_settled,
)
from dralloc.server.views import ObjectView
from dralloc.store import Conflict, NotFound, Outcome


def raw_object(data: dict[str, Any], t: Target, meta: Any, plain: bool = False) -> dict[str, Any]:
    """A core object as the client sent it, with its kind, apiVersion, name and namespace, without the fields
    its schema lacks (kube-apiserver's decoding drops them). ``plain``: ``data`` has none, only JSON's types
    and is the caller's to change (see ``objects.Body``): used as it is, not copied."""
    obj = dict(data) if plain else json_copy(data)
    obj["kind"], obj["apiVersion"] = t.resource.kind, t.api_version
    if not plain:
        strict.drop_unknown_fields(obj)  # (by the URL's kind's schema)
    metadata = dict(obj.get("metadata") or {})
    if meta.name:
        metadata["name"] = meta.name
    if t.resource.namespaced:
        metadata["namespace"] = t.namespace
    else:
        metadata.pop("namespace", None)
    obj["metadata"] = metadata
    return obj


def check_name(meta: Any, t: Target) -> None:
    """The name and namespace of an object written to ``t`` (kube-apiserver's checks of an update or a patch
    result): the namespace the URL's, if given; the name present and the URL's."""
    if t.resource.namespaced and meta.namespace and meta.namespace != t.namespace:
        raise bad_request("the namespace of the provided object does not match the namespace sent on the request")
    if not meta.name:
        raise bad_request(f"the name of the object ({t.name} based on URL) was undeterminable: name must be "
                          f"provided")
    if meta.name != t.name:
        raise bad_request(f"the name of the object ({meta.name}) does not match the name on the URL ({t.name})")


def new_metadata(meta: dict[str, Any], t: Target, rv: str) -> dict[str, Any]:
    meta = dict(meta)
    meta["uid"] = new_uid()
    meta["creationTimestamp"] = now()
    meta["resourceVersion"] = rv
    if t.resource.strategy.tracks_generation:
        meta["generation"] = 1
    if t.resource.namespaced:
        meta["namespace"] = t.namespace
    if not _CLEARED_ON_CREATE.isdisjoint(meta):  # (rarely sent)
        for k in ("deletionTimestamp", "deletionGracePeriodSeconds", "selfLink"):
            meta.pop(k, None)
    return meta


_CLEARED_ON_CREATE = frozenset(("deletionTimestamp", "deletionGracePeriodSeconds", "selfLink"))


def prepare_create(data: Any, t: Target, plain: bool = False, record: Callable[[Obj], None] | None = None,
                   admit: Callable[[Obj], Obj] | None = None, known: bool = False) -> tuple[dict[str, Any], str]:
    """A create's object as it is stored, and its name. A stored-as-sent kind's object goes through
    kube-apiserver's create steps in their order: decoded (with its defaults), ``record`` (the writer's
    managedFields entry, on the object as decoded), ``admit`` (mutating admission), prepared, validated. A
    typed kind was admitted before it is decoded: ``record`` is its caller's."""
    obj = typed(data, t)
    meta = obj.metadata
    if t.resource.namespaced:
        if meta.namespace and meta.namespace != t.namespace:
            raise bad_request("the namespace of the provided object does not match the namespace sent on "
                              "the request")
        meta = msgspec.structs.replace(meta, namespace=t.namespace)
    elif meta.namespace:  # kube-apiserver clears the namespace of a cluster-scoped object rather than refuse it
        meta = msgspec.structs.replace(meta, namespace=None)
    if not meta.name and meta.generate_name:
        meta = msgspec.structs.replace(meta, name=generated_name(meta.generate_name))
    obj = msgspec.structs.replace(obj, metadata=meta)
    strategy = t.resource.strategy
    if strategy.stored_as_sent:  # core objects are stored as sent
        stored = raw_object(data, t, meta, plain)
        if known:  # (its decoding found no field the schema lacks: none to look for again)
            strategy.decode_known_defaults(stored)
        else:
            strategy.decode_defaults(stored, "")
        if record is not None:
            record(stored)
        if admit is not None:
            stored = admit(stored)
        strategy.prepare_for_create(stored)
        check_valid(t, meta.name or "", strategy.create_errors(obj, stored, t.resource.namespaced))
        return stored, meta.name or ""
    if hasattr(obj, "status") and t.resource.status:
        obj = msgspec.structs.replace(obj, status=None)  # status is written through /status only
    check_valid(t, meta.name or "", strategy.create_errors(obj, None, t.resource.namespaced))
    return stored_form(obj), meta.name or ""


async def create(api: ApiContext, request: Request, t: Target) -> Response:
    check_write_options("create", request.query_params)
    raw, ctype = await read_body(request)
    data, warnings, plain, known = object_body(raw, ctype, request, t)
    data, dropped = without_duplicate_owners(data)
    with decoding_first(t, data):
        api.namespaces.admit_create(t, data)
    warnings = [*warnings, *dropped]
    with events.errors_of(t):
        # (admission adds only fields of the schema, in new dicts: a plain body stays plain)
        result, encoded = await insert_new(api, stored_view(t), created_form(data, t), dry_run(request),
                                           manager_of(request), view=t, plain=plain, scope=request.scope,
                                           known=known)
    admitted = warnings_of(request.scope)
    return respond_created(request, t, result, encoded, [*warnings, *admitted] if admitted else warnings)


def respond_created(request: Request, t: Target, result: Obj, encoded: bytes | None, warnings: list[str]) -> Response:
    """201 with the created object; its JSON as the store wrote it when the URL shows the object as stored."""
    shown = t.present(result)
    strategy = t.resource.strategy
    if type(strategy).create_warnings is not Strategy.create_warnings:  # (a call on every create costs)
        warnings = [*warnings, *strategy.create_warnings(result)]
    return respond(request, shown, 201, warnings=warnings, encoded=encoded if shown is result else None)


class decoding_first:  # lower case: used as a function, ``with decoding_first(t, data):``
    """Admission that reads a create's JSON body before dralloc decodes it. kube-apiserver decodes the body
    before any admission plugin sees it, so a body that does not decode is the decoder's 400 whatever admission
    would say (a namespace missing or being deleted) or trip over (a wrongly typed field). The decoding is
    repeated only when admission refuses or fails, not on every create. (A class rather than a generator-based
    context manager: every create goes through two.)"""

    __slots__ = ("_target", "_data")

    def __init__(self, t: Target, data: Obj) -> None:
        self._target = t
        self._data = data

    def __enter__(self) -> None:
        return None

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: Any) -> None:
        if isinstance(exc, (ApiError, TypeError, AttributeError, ValueError, KeyError)):
            typed(self._data, self._target)  # the decoder's 400, if the body does not decode (else: re-raised)


def stored_view(t: Target) -> Target:
    """Where the URL's objects are stored: a view's (an events.k8s.io Event is a core/v1 Event, converted both
    ways)."""
    stored_as = t.resource.stored_as
    return t if stored_as is None else Target(stored_as, stored_as.versions[0], t.namespace, t.name, t.sub)


def created_form(data: Obj, t: Target) -> Obj:
    """A create's object in its stored form; a view's object checked with the view's own rules."""
    if t.resource.stored_as is None:
        return data
    strategy = t.resource.strategy
    stored = strategy.to_storage(data)
    typed(stored, stored_view(t))  # the JSON types first, as decoding comes before validation (series.count: "x")
    meta: Obj = stored["metadata"] if isinstance(stored.get("metadata"), dict) else {}
    check_valid(t, meta.get("name") or "", strategy.view_create_errors({**stored, "metadata": {
        **meta, "namespace": t.namespace}}))
    return stored


def _record(old: Obj | None, new: Obj, manager: str, view: Target, sub: str = "") -> None:
    """record_update as the client saw the objects (a view's fields in its version)."""
    if view.resource.stored_as is None:
        record_update(old, new, manager, view.api_version, sub, schema=view.resource.strategy.apply_schema(new))
        return
    to_view = view.resource.strategy.to_view
    shown = to_view({**new, "metadata": dict(new.get("metadata") or {})})
    record_update(to_view(old) if old is not None else None, shown, manager, view.api_version, sub)
    if "managedFields" in shown["metadata"]:
        new.setdefault("metadata", {})["managedFields"] = shown["metadata"]["managedFields"]
    else:
        new.setdefault("metadata", {}).pop("managedFields", None)


async def insert_new(api: ApiContext, t: Target, data: Obj, dry: bool, manager: str | None,
                     view: Target | None = None, plain: bool = False,
                     scope: Scope | None = None, known: bool = False) -> tuple[Obj, bytes | None]:
    """Create ``data`` (validated, defaulted; ``manager``: record an Update entry, None when ``data`` carries
    its apply entry; ``plain``: see ``objects.Body``), with kube-apiserver's create rules: no resourceVersion,
    and a generated name tried again when it is taken. The object created, and its JSON as stored (None for a
    dry run); ``scope``: a client's request, whose create ValidatingAdmissionPolicies admit (their warnings go to
    its answer)."""
    strategy = t.resource.strategy
    attempts = NAME_GENERATION_ATTEMPTS if not ObjectView(data).name else 1
    shown = view or t
    record: Callable[[Obj], None] | None = None
    if manager is not None:
        def record(decoded: Obj) -> None:
            _record(None, decoded, manager, shown)
    admit: Callable[[Obj], Obj] | None = None
    if strategy.stored_as_sent:
        def admit(decoded: Obj) -> Obj:
            return strategy.admit(api.store, decoded, t.namespace)
        admitted = data
    else:
        # a typed kind is admitted before it is decoded; its writer owns the object as it was before
        with decoding_first(t, data):
            if type(strategy).decode_defaults is not Strategy.decode_defaults:
                # (on a copy: the model decoded from the body as sent, kept for typed(), stays the body's)
                data = json_copy(data)
                strategy.decode_defaults(data, "")
            admitted = strategy.admit(api.store, data, t.namespace)  # mutating admission, before validation
    for attempt in range(attempts):
        # (a generated name may be tried again, from the object as it was: then it is copied, not changed)
        stored, name = prepare_create(admitted, t, plain and attempts == 1, record, admit, known)
        check_valid(t, name, strategy.create_admission_errors(api.store, t.namespace, name, stored))
        if (admission := api.policies.snapshot(t.namespace)) is not None:  # ValidatingAdmissionPolicy
            add_warnings(scope, admission.admit(attributes(t, "CREATE", stored, None, dry, scope)))
        charges = quota.admit_create(api.store, api.quota_charges, t.resource.name, t.resource.group,
                                     t.namespace, stored, dry)  # (last)
        if record is not None and not strategy.stored_as_sent:
            record(stored if admitted is data else _typed_as_decoded(data, t, stored))
        if not dry and resource_version_set(stored):
            raise bad_request(RESOURCE_VERSION_ON_CREATE)
        try:
            # The committer thread writes (and fsyncs) while the loop goes on parsing the next requests.
            result, encoded = await insert(api, t, name, stored, dry, charges)
        except ApiError as exc:
            if exc.code != 409 or attempts == 1:
                raise
            if attempt < attempts - 1:
                continue  # a new generated name
            raise generate_name_conflict(t.resource, name) from None
        if not dry and (follow_up := strategy.after_create(api, result)) is not None:
            await follow_up
        return result, encoded
    raise AssertionError("unreachable")


def _typed_as_decoded(data: Obj, t: Target, stored: Obj) -> Obj:
    """A typed object as decoded before admission changed it (what its writer owns), with the stored object's
    metadata (the managedFields recorded on it go to the stored object)."""
    decoded = stored_form(typed(data, t))
    decoded["metadata"] = stored["metadata"]
    return decoded


async def insert(api: ApiContext, t: Target, name: str, stored: Obj, dry: bool,
                 charges: Sequence[Charge] = ()) -> tuple[Obj, bytes | None]:
    """Store a create's object (``charges``: its quota charges, queued before it: a refused one refuses it)."""
    try:
        if dry:
            existing = api.store.get(t.resource.name, t.namespace, name)
        else:
            return await api.store.create_async_encoded(t.resource.name, t.namespace, name,
                                                        creation(stored, t, charges))
    except NotFound:
        dry_created = {**stored, "metadata": new_metadata(stored["metadata"], t, "")}
        return t.resource.strategy.with_system_fields(dry_created), None
    except Conflict:
        try:
            existing = api.store.get(t.resource.name, t.namespace, name)
        except NotFound:
            existing = {}
    error = already_exists(t.resource, name)
    if ObjectView(existing).deletion_timestamp:
        error.message = f"object is being deleted: {error.message}"
    raise error


def creation(stored: dict[str, Any], t: Target, charges: Sequence[Charge] = ()) -> Callable[[Any, str], dict[str, Any]]:
    """The store's ``build`` of a create: the object with its new metadata at the version it is written at
    (refused there if a quota charge of it was)."""
    finish = t.resource.strategy.with_system_fields
    if not charges:
        return lambda _old, rv: finish({**stored, "metadata": new_metadata(stored["metadata"], t, rv)})

    def build(_old: Any, rv: str) -> dict[str, Any]:
        for charge in charges:
            charge.settled()
        return finish({**stored, "metadata": new_metadata(stored["metadata"], t, rv)})

    return build


def merge_update(t: Target, old: Obj, new_obj: Any, new_data: Obj,
                 record: Callable[[Obj, Obj], None] | None = None) -> tuple[Obj, list[Any]]:
    """The stored form of an update of ``old`` by ``new_obj`` (typed; ``new_data`` as sent), and its
    validation errors. ``record(old, merged)`` records the writer's managedFields entry on the object as
    decoded, before the update's admission and preparation, as kube-apiserver's update handler does."""
    strategy = t.resource.strategy
    new = raw_object(new_data, t, new_obj.metadata) if strategy.stored_as_sent else stored_form(new_obj)
    old_meta = old["metadata"]
    meta = dict(new.get("metadata") or {})
    for key in ("deletionTimestamp", "deletionGracePeriodSeconds"):  # set by DELETE only
        if key in old_meta:
            meta[key] = old_meta[key]
        else:
            meta.pop(key, None)
    if "managedFields" not in meta and "managedFields" in old_meta:
        meta["managedFields"] = old_meta["managedFields"]
    meta["uid"] = old_meta.get("uid")
    meta["creationTimestamp"] = old_meta.get("creationTimestamp")
    if t.resource.namespaced:
        meta["namespace"] = t.namespace
    else:
        meta.pop("namespace", None)
    if t.sub == "status":
        merged = strategy.merge_status(new, meta, old)
    else:
        merged = {**new, "metadata": meta}
        if t.resource.status:  # the main endpoint keeps the stored status
            if "status" in old:
                merged["status"] = old["status"]
            else:
                merged.pop("status", None)
    if strategy.tracks_generation:
        gen = old_meta.get("generation", 1)
        merged["metadata"]["generation"] = gen + 1 if merged.get("spec") != old.get("spec") else gen
    strategy.decode_defaults(merged, t.sub)
    if record is not None:
        record(old, merged)
    strategy.prepare_for_update(merged, old, t.sub)
    return merged, strategy.update_errors(merged, old, t.sub, new_obj.metadata)


async def update(api: ApiContext, request: Request, t: Target) -> Response:
    check_write_options("update", request.query_params)
    raw, ctype = await read_body(request)
    data, warnings, _, _ = object_body(raw, ctype, request, t)
    data, dropped = without_duplicate_owners(data)
    warnings = [*warnings, *dropped]
    stored_t = stored_view(t)
    if stored_t is not t:
        data = t.resource.strategy.to_storage(data)
    obj = typed(data, stored_t)
    check_name(obj.metadata, t)
    with events.errors_of(t):
        result = await apply_update(api, request, stored_t, obj, data, obj.metadata.resource_version,
                                    manager_of(request), view=t)
    return respond(request, t.present(result),
                   warnings=[*warnings, *warnings_of(request.scope), *strategy_warnings(t, result)])


def strategy_warnings(t: Target, result: Obj) -> list[str]:
    """What the kind's update strategy warns of in the object written (a pod status: IP addresses that are
    not in their standard form)."""
    return t.resource.strategy.update_warnings(result, t.sub)


def manager_of(request: Request) -> str:
    return field_manager(request.query_params, request.headers.get("user-agent", ""))


async def apply_update(api: ApiContext, request: Request, t: Target, obj: Any, data: Obj,
                       expect_rv: str | None, manager: str | None, view: Target | None = None) -> Obj:
    """Write ``obj`` over the stored object; ``manager`` (None for server-side apply, which records its own
    ownership) takes over the fields it changed. ValidatingAdmissionPolicies admit it (their warnings go to
    the request's answer)."""
    dry = dry_run(request)
    errors_box: list[Any] = []
    policy_warnings: list[str] = []
    strategy = t.resource.strategy
    view_strategy = view.resource.strategy if view is not None and view is not t else None

    record: Callable[[Obj, Obj], None] | None = None
    if manager is not None:
        def record(old: Obj, decoded: Obj) -> None:
            _record(old, decoded, manager, view or t, t.sub)

    def build(old: dict[str, Any], rv: str) -> dict[str, Any] | Outcome:
        merged, errors = merge_update(t, old, obj, data, record)
        if not errors:
            errors = strategy.update_admission_errors(api.store, t.namespace, merged, old, t.sub)
        if view_strategy is not None and not errors:
            errors = view_strategy.update_admission_errors(api.store, t.namespace, merged, old, t.sub)
        if errors:
            errors_box.extend(errors)
            raise _Invalid()
        if admission is not None:
            policy_warnings[:] = admission.admit(attributes(t, "UPDATE", merged, old, dry, request.scope))
        merged["metadata"]["resourceVersion"] = old["metadata"].get("resourceVersion")
        if merged == old:
            return old
        merged["metadata"]["resourceVersion"] = rv
        if merged["metadata"].get("deletionTimestamp") and not merged["metadata"].get("finalizers") \
                and not strategy.deletion_held(merged):
            return Outcome(merged, "DELETED")  # the last finalizer went: the deletion completes
        return merged

    strategy.admit_update(api.store, data, t.name)
    # ValidatingAdmissionPolicy: what it reads, read now (the update is admitted inside the store's transaction)
    admission = api.policies.snapshot(t.namespace)
    try:
        if dry:
            old = api.store.get(t.resource.name, t.namespace, t.name)
            if expect_rv and old["metadata"].get("resourceVersion") != expect_rv:
                raise Conflict("modified")
            result = build(old, old["metadata"].get("resourceVersion", ""))
            written = result.object if isinstance(result, Outcome) else result
        else:
            written = await api.store.update_async(t.resource.name, t.namespace, t.name, build, expect_rv or None)
            if (follow_up := strategy.after_update(api, written, t.sub)) is not None:
                await follow_up
        add_warnings(request.scope, policy_warnings)
        return written
    except NotFound:
        raise not_found(t.resource, t.name) from None
    except Conflict:
        raise conflict(t.resource, t.name) from None
    except _Invalid:
        raise invalid(t.resource, t.name, errors_box) from None


async def patch(api: ApiContext, request: Request, t: Target) -> Response:
    """A merge, strategic merge, JSON or apply patch, applied to the object as stored when it is written: a
    write that lands between the read and the write makes the patch be applied again to the new object (as
    kube-apiserver's update retries), unless the patch names the resourceVersion it expects (then: 409)."""
    raw, ctype = await read_body(request)
    kinds = ("application/merge-patch+json", "application/strategic-merge-patch+json",
             "application/json-patch+json", "application/apply-patch+yaml")
    if ctype not in kinds:
        raise ApiError(415, f"the body of the request was in an unknown format - accepted media types "
                            f"include: {', '.join(kinds)}")
    check_write_options("patch", request.query_params, apply_patch=ctype == "application/apply-patch+yaml")
    patch_doc = parse(raw, ctype, t.resource.kind, t.version)
    mode = field_validation(request)
    for attempt in range(PATCH_ATTEMPTS):
        try:
            return await _patch_once(api, request, t, raw, ctype, patch_doc, mode)
        except _Raced:
            if attempt == PATCH_ATTEMPTS - 1:
                raise conflict(t.resource, t.name) from None
    raise AssertionError("unreachable")


# kube-apiserver's GuaranteedUpdate applies a patch again for as long as other writes win the race (each lost
# attempt means another write was committed, so the loop makes progress); its handlers' old bound of 5 turned
# six clients patching one object at once into 409s. This bound is only a guard against looping forever.
PATCH_ATTEMPTS = 100


class _Raced(Exception):
    """Another write changed (or created) the object between the patch's read and its write."""


async def _patch_once(api: ApiContext, request: Request, t: Target, raw: bytes, ctype: str, patch: Any,
                      mode: str) -> Response:
    try:
        current = t.present(api.store.get(t.resource.name, t.namespace, t.name))
    except NotFound:
        # Only an apply to the main resource creates the object; subresources never create on update.
        if ctype != "application/apply-patch+yaml" or t.sub:
            raise not_found(t.resource, t.name) from None
        current = None
    if ctype == "application/apply-patch+yaml":
        if not isinstance(patch, dict):
            raise bad_request("an applied configuration must be an object")
        type_meta_checked(patch, t)
        # As kube-apiserver, the field manager types the configuration before fieldValidation is looked at:
        # a field the schema lacks fails the apply even with fieldValidation=Ignore
        own = t.resource.strategy.unknown_fields(patch)  # (a custom resource: by its CRD's schema)
        unknown = own if own is not None else strict.unknown_field_paths(patch) if t.resource.group else []
        if unknown:
            raise undeclared_fields_error(patch, t.api_version, unknown)
        warnings = field_problems(raw, ctype, patch, mode, t)
        applied_name = (patch.get("metadata") or {}).get("name")
        if applied_name not in (None, t.name):
            raise bad_request(f"the name of the object ({applied_name}) does not match the name on the URL "
                              f"({t.name})")
        patch = {**patch, "metadata": {**(patch.get("metadata") or {}), "name": t.name}}
        force = bool(query_flag(request.query_params, "force"))
        merged = apply(current, patch, request.query_params["fieldManager"], force, t.api_version, t.sub,
                       t.resource.strategy.apply_schema(patch))
        if current is None:  # server-side apply of a new object creates it
            merged, dropped = without_duplicate_owners(merged, after_admission=True)
            warnings = [*warnings, *dropped]
            with decoding_first(t, merged):
                api.namespaces.admit_create(t, merged)
            try:
                with events.errors_of(t):
                    result, encoded = await insert_new(api, stored_view(t), created_form(merged, t),
                                                       dry_run(request), None, scope=request.scope)
            except ApiError as exc:
                if exc.code == 409 and exc.reason == "AlreadyExists":
                    raise _Raced() from None  # created meanwhile: apply to it
                raise
            return respond_created(request, t, result, encoded, [*warnings, *warnings_of(request.scope)])
    elif ctype == "application/json-patch+json":
        merged = zeros_settled(type_meta_checked(json_patch(current, patch), t), t)
        check_limits(merged, None, t.resource.kind, t.version)  # added values can nest below existing ones
        warnings = field_problems(None, JSON, merged, mode, t)
    else:
        if not isinstance(patch, dict):
            raise bad_request("a merge patch must be a JSON object")
        strategic = ctype == "application/strategic-merge-patch+json"  # every served kind has its Go struct
        merged = zeros_settled(type_meta_checked(strategic_merge_patch(current or {}, patch, t.resource.kind)
                                                 if strategic else merge_patch(current, patch), t), t)
        warnings = field_problems(raw, JSON, patch, mode, t)  # duplicates in the patch itself
        warnings += [w for w in field_problems(None, JSON, merged, mode, t) if w not in warnings]
    asked = (patch.get("metadata") or {}).get("resourceVersion") if isinstance(patch, dict) else None
    read = ((current or {}).get("metadata") or {}).get("resourceVersion")
    merged, dropped = without_duplicate_owners(merged, after_admission=True)
    warnings = [*warnings, *dropped]
    stored_t = stored_view(t)
    if stored_t is not t:
        merged = t.resource.strategy.to_storage(merged)
    obj = typed(merged, stored_t)
    check_name(obj.metadata, t)
    manager = None if ctype == "application/apply-patch+yaml" else manager_of(request)
    try:
        with events.errors_of(t):
            result = await apply_update(api, request, stored_t, obj, merged, asked or read, manager, view=t)
    except ApiError as exc:
        if exc.code == 409 and exc.reason == "Conflict" and not asked:
            raise _Raced() from None  # the object changed since it was read: patch it again
        raise
    return respond(request, t.present(result),
                   warnings=[*warnings, *warnings_of(request.scope), *strategy_warnings(t, result)])


class _Invalid(Exception):
    pass
