"""delete and deletecollection: preconditions, delete options, and finalizers (an object with finalizers is
only marked as being deleted, 202 Accepted, until their controllers remove them)."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from dralloc.server.admission.policies import Scope, add_warnings, attributes, warnings_of
from dralloc.server.context import ApiContext
from dralloc.server.http.bodies import YAML_TYPES, parse, read_body
from dralloc.server.http.errors import bad_request, conflict, not_found
from dralloc.server.http.options import check_delete_options, query_flag
from dralloc.server.http.responses import JSON, respond
from dralloc.server.http.routing import Target
from dralloc.server.protobuf import decoder as protobuf
from dralloc.server.types import Obj
from dralloc.server.verbs.objects import dry_run
from dralloc.server.verbs.reads import matchers
from dralloc.server.views import ObjectView
from dralloc.store import NotFound, Outcome


async def delete_options(request: Request, t: Target) -> dict[str, Any]:
    """The request's DeleteOptions (its body, JSON, YAML or protobuf; none: the defaults)."""
    raw, ctype = await read_body(request)
    if not raw.strip():
        return {}
    if ctype == protobuf.CONTENT_TYPE:  # kubectl drain's typed client deletes pods with a protobuf body
        try:
            options = protobuf.decode(raw)
        except protobuf.ProtobufError as exc:
            raise bad_request(f"couldn't decode the request body as protobuf: {exc}") from None
        if options.get("kind") != "DeleteOptions":
            raise bad_request(f"the request body must be DeleteOptions, not {options.get('kind')}")
        return options
    options = parse(raw, ctype if ctype in YAML_TYPES else JSON, "DeleteOptions", "v1")
    if not isinstance(options, dict):
        raise bad_request("DeleteOptions must be a JSON object")
    return options


async def delete(api: ApiContext, request: Request, t: Target) -> Response:
    options = await delete_options(request, t)
    dry = dry_run(request, options)
    result = await remove(api, t, options, request.query_params, dry, request.scope)
    if t.resource.strategy.delete_answers_with_object(result, dry):
        # (a terminating pod, a namespace marked Terminating)
        return respond(request, t.present(result), warnings=warnings_of(request.scope))
    # 202 Accepted: finalizers keep the object until their controllers remove them.
    pending = bool(ObjectView(result).finalizers)
    return respond(request, t.present(result), 202 if pending else 200, warnings=warnings_of(request.scope))


async def remove(api: ApiContext, t: Target, options: dict[str, Any], query: Any, dry: bool,
                 scope: Scope | None = None) -> dict[str, Any]:
    """Delete the object ``t`` names with ``options`` (and the delete options of ``query``, a URL's): the
    object removed, or as marked for its deletion (a pod's grace period, a namespace's finalization,
    finalizers); 404, 409 on a failed precondition, as kube-apiserver. ``scope``: a client's request, whose
    delete ValidatingAdmissionPolicies admit (their warnings go to its answer); an eviction's delete is not."""
    pre = options.get("preconditions") or {}
    if not isinstance(pre, dict) or any(not isinstance(v, (str, type(None))) for v in pre.values()):
        raise bad_request("DeleteOptions.preconditions must be an object of strings (uid, resourceVersion)")
    check_delete_options(options, query)
    policy = propagation_policy(options, query)
    strategy = t.resource.strategy
    strategy.check_delete(t.name)

    def check(old: dict[str, Any]) -> Outcome | None:
        old = with_collector_finalizers(old, policy)
        meta = old.get("metadata") or {}
        if pre.get("uid") and pre["uid"] != meta.get("uid"):
            raise _Precondition(f'Precondition failed: UID in precondition: {pre["uid"]}, UID in object meta: '
                                f'{meta.get("uid")}')
        if pre.get("resourceVersion") and pre["resourceVersion"] != meta.get("resourceVersion"):
            raise _Precondition(f'Precondition failed: ResourceVersion in precondition: '
                                f'{pre["resourceVersion"]}, ResourceVersion in object meta: '
                                f'{meta.get("resourceVersion")}')
        if admission is not None:
            policy_warnings[:] = admission.admit(attributes(t, "DELETE", None, old, dry, scope))
        return strategy.mark_deleted(old, options, query, collection=False)

    # ValidatingAdmissionPolicy: what it reads, read now (the delete is admitted inside the store's transaction)
    admission = api.policies.snapshot(t.namespace) if scope is not None else None
    policy_warnings: list[str] = []

    try:
        if dry:
            old = api.store.get(t.resource.name, t.namespace, t.name)
            marked = check(old)
            add_warnings(scope, policy_warnings)
            return marked.object if marked is not None else old
        result = await api.store.delete_async(t.resource.name, t.namespace, t.name, check=check)
    except NotFound:
        raise not_found(t.resource, t.name) from None
    except _Precondition as exc:
        raise conflict(t.resource, t.name, str(exc)) from None
    add_warnings(scope, policy_warnings)
    strategy.after_delete(api, result, collection=False)
    return result


async def deletecollection(api: ApiContext, request: Request, t: Target) -> Response:
    """Delete every matching object as its own delete would, with the request's DeleteOptions: a pod gets its
    grace period, the propagation policy its collector finalizers."""
    labels, fields = matchers(request, t)
    options = await delete_options(request, t)
    check_delete_options(options, request.query_params)
    dry = dry_run(request, options)
    policy = propagation_policy(options, request.query_params)
    strategy = t.resource.strategy

    def check(old: Obj) -> Outcome | None:
        old = with_collector_finalizers(old, policy)
        return strategy.mark_deleted(old, options, request.query_params, collection=True)

    objs, rv = api.store.list(t.resource.name, t.list_namespace)
    deleted = []
    for obj in objs:
        if not (labels(obj) and fields(obj)):
            continue
        meta = obj["metadata"]
        if dry:
            marked = check(obj)
            obj = marked.object if marked is not None else obj
        else:
            try:
                obj = api.store.delete(t.resource.name, meta.get("namespace") or "", meta["name"], check=check)
            except NotFound:
                continue
            strategy.after_delete(api, obj, collection=True)
        item = t.present(obj)
        item.pop("kind", None)
        item.pop("apiVersion", None)
        deleted.append(item)
    return respond(request, {"kind": t.resource.list_kind, "apiVersion": t.api_version,
                             "metadata": {"resourceVersion": str(api.store.current_rv())}, "items": deleted})


def propagation_policy(options: dict[str, Any], query: Any) -> str | None:
    """The delete's propagationPolicy (``orphanDependents: true`` is the old way of asking for Orphan)."""
    policy = options.get("propagationPolicy", query.get("propagationPolicy"))
    orphan = options["orphanDependents"] if "orphanDependents" in options else query_flag(query, "orphanDependents")
    if policy is None and orphan is True:
        return "Orphan"
    return str(policy) if policy is not None else None


def with_collector_finalizers(old: dict[str, Any], policy: str | None) -> dict[str, Any]:
    """As kube-apiserver before a delete: Orphan adds the ``orphan`` finalizer and Foreground the
    ``foregroundDeletion`` one (each dropping the other), Background drops both, for the garbage collector
    to act on; without a policy the object keeps what it has."""
    if policy is None:
        return old
    meta = old.get("metadata") or {}
    finalizers = [f for f in meta.get("finalizers") or [] if f not in ("orphan", "foregroundDeletion")]
    wanted = {"Orphan": "orphan", "Foreground": "foregroundDeletion"}.get(policy)
    if wanted is not None:
        finalizers.append(wanted)
    if finalizers == (meta.get("finalizers") or []):
        return old
    meta = {**meta, "finalizers": finalizers}
    if not finalizers:
        meta.pop("finalizers")
    return {**old, "metadata": meta}


class _Precondition(Exception):
    pass
