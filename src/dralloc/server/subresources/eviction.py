"""POST pods/{name}/eviction (policy/v1 Eviction): ``kubectl drain``'s way to delete a pod, as kube-apiserver's
eviction subresource answers it (pkg/registry/core/pod/storage/eviction.go).

In upstream's order: the name in the body must be the URL's; the pod must exist. A pod that is Pending,
Succeeded, Failed or already terminating is deleted without looking at disruption budgets (a Pending one on the
condition that it is still the version just read: a write in between gets a conflict, and the eviction is
tried again, as upstream retries). Otherwise the PodDisruptionBudgets of its namespace whose selector matches
its labels decide:

* none: the pod is deleted; more than one: a 500 Status, ``This pod has more than one PodDisruptionBudget,
  which the eviction subresource does not support.``;
* a pod that is not Ready is deleted without using up a disruption when the budget's
  ``unhealthyPodEvictionPolicy`` is AlwaysAllow, or (IfHealthyBudget, the default) when the budget has
  its desired healthy pods (on the condition that it is still the version read, else a 429);
* otherwise one of the budget's ``disruptionsAllowed`` is taken and the eviction recorded in its
  ``disruptedPods`` (the disruption controller keeps neither counting that pod as healthy), in a write
  that conflicts with any other: a budget its controller has not seen at its current generation, or with
  no disruption allowed, answers 429 TooManyRequests ``Cannot evict pod as it would violate the pod's
  disruption budget.`` with a ``DisruptionBudget`` cause, which ``kubectl drain`` waits on and retries.

A pod evicted gets the ``DisruptionTarget`` condition (``EvictionByEvictionAPI``), then is deleted as a
DELETE with the Eviction's options would delete it; the answer is a ``Status`` of Success with code 201.
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from dralloc.api.codec import decode
from dralloc.api.policy_v1 import PodDisruptionBudget
from dralloc.scheduler.labels import from_model
from dralloc.server.clock import now
from dralloc.server.context import ApiContext
from dralloc.server.http.bodies import YAML_TYPES, parse, read_body
from dralloc.server.http.errors import ApiError, bad_request, not_found
from dralloc.server.http.responses import JSON, respond
from dralloc.server.http.routing import Target
from dralloc.server.protobuf import decoder as protobuf
from dralloc.server.registry.disruption_budgets import allowed_condition
from dralloc.server.verbs.deletes import remove
from dralloc.server.verbs.objects import dry_run, dry_run_list
from dralloc.server.views import ObjectView
from dralloc.store import Conflict, NotFound, SQLStore

EVICTION_VERSIONS = ("policy/v1", "policy/v1beta1")
BUDGET_VIOLATED = "Cannot evict pod as it would violate the pod's disruption budget."
DISRUPTION_BUDGET_CAUSE = "DisruptionBudget"  # policyv1.DisruptionBudgetCause
MAX_DISRUPTED_PODS = 2000  # the versions kube-apiserver accepts for the body
CONFLICT_RETRIES = 20  # upstream's EvictionsRetry steps (without its half-second waits: the store is local)


async def eviction_body(request: Request) -> dict[str, Any]:
    """The Eviction a request sends (JSON, YAML or protobuf)."""
    raw, ctype = await read_body(request)
    if ctype == protobuf.CONTENT_TYPE:
        try:
            body = protobuf.decode(raw)
        except protobuf.ProtobufError as exc:
            raise bad_request(f"couldn't decode the request body as protobuf: {exc}") from None
    else:
        body = parse(raw, ctype if ctype in YAML_TYPES else JSON, "Eviction", "v1")
    if not isinstance(body, dict):
        raise bad_request("the request body must be a JSON object")
    api_version, kind = body.get("apiVersion"), body.get("kind")
    if kind not in (None, "Eviction") or api_version not in (None, *EVICTION_VERSIONS):
        raise bad_request(f'the body of an eviction must be a policy/v1 Eviction, not {api_version or "?"}/'
                          f'{kind or "?"}')
    if not isinstance(body.get("metadata") or {}, dict) or not isinstance(body.get("deleteOptions") or {}, dict):
        raise bad_request("Eviction.metadata and Eviction.deleteOptions must be objects")
    return body


def _options(eviction: dict[str, Any], request: Request) -> dict[str, Any]:
    """The Eviction's delete options with the request's dryRun (upstream's propagateDryRun)."""
    options = dict(eviction.get("deleteOptions") or {})
    query_dry = request.query_params.getlist("dryRun")
    body_dry = dry_run_list(options)
    if query_dry and body_dry and list(query_dry) != list(body_dry):
        # (kube-apiserver answers this one with a 500; it is the client's input, so here a 400)
        raise bad_request(f"Non-matching dry-run options in request and content: {query_dry} and {body_dry}")
    if query_dry and not body_dry:
        options["dryRun"] = list(query_dry)
    return options


async def create_eviction(api: ApiContext, request: Request, t: Target) -> Response:
    eviction = await eviction_body(request)
    if (eviction.get("metadata") or {}).get("name") != t.name:
        raise bad_request("name in URL does not match name in Eviction object")
    options = _options(eviction, request)
    dry = dry_run(request, options)
    pod_target = Target(t.resource, t.version, t.namespace, t.name, "")
    pinned = _has_resource_version(options)
    success = respond(request, {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success",
                                "code": 201}, 201)
    pod: dict[str, Any] = {}
    for attempt in range(CONFLICT_RETRIES):
        pod = _pod(api, t)
        if not _can_ignore_budgets(pod):
            break
        attempt_options = options
        if _pending(pod) and not pinned:
            # Not racing a pod that turns ready meanwhile: the delete holds only for the version just read.
            attempt_options = _at_version(options, pod)
        try:
            await _evict(api, pod_target, attempt_options, dry)
        except ApiError as exc:
            if exc.code == 409 and not pinned and attempt < CONFLICT_RETRIES - 1:
                continue
            raise
        return success
    budgets = budgets_of(api.store, pod)
    if len(budgets) > 1:
        return respond(request, {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                                 "message": "This pod has more than one PodDisruptionBudget, which the eviction "
                                            "subresource does not support.", "code": 500}, 500)
    at_version = False
    if budgets:
        budget = budgets[0]
        at_version = not _ready(pod) and _unhealthy_evictable(budget)
        if not at_version:
            _take_disruption(api, budget, ObjectView(pod).name, dry)
    try:
        await _evict(api, pod_target, _at_version(options, pod) if at_version else options, dry)
    except ApiError as exc:
        if exc.code == 409 and at_version and not pinned:
            raise too_many_requests(ObjectView(budgets[0]).name) from None
        raise
    return success


def _pod(api: ApiContext, t: Target) -> dict[str, Any]:
    try:
        return api.store.get("pods", t.namespace, t.name)
    except NotFound:
        raise not_found(t.resource, t.name) from None


def _at_version(options: dict[str, Any], pod: dict[str, Any]) -> dict[str, Any]:
    pre = dict(options.get("preconditions") or {})
    pre["resourceVersion"] = ObjectView(pod).metadata.get("resourceVersion")
    return {**options, "preconditions": pre}


def _can_ignore_budgets(pod: dict[str, Any]) -> bool:
    """canIgnorePDB: the pod is Pending, has finished, or is already being deleted."""
    view = ObjectView(pod)
    return view.status.get("phase", "Pending") in ("Pending", "Succeeded", "Failed") or bool(view.deletion_timestamp)


def _ready(pod: dict[str, Any]) -> bool:
    return any(isinstance(c, dict) and c.get("type") == "Ready" and c.get("status") == "True"
               for c in ObjectView(pod).status.get("conditions") or [])


def budgets_of(store: SQLStore, pod: dict[str, Any]) -> list[dict[str, Any]]:
    """The budgets of the pod's namespace whose selector matches its labels (an unset one matches nothing)."""
    view = ObjectView(pod)
    listed, _ = store.list("poddisruptionbudgets", view.namespace)
    labels = view.metadata.get("labels") or {}
    out = []
    for budget in listed:
        typed = decode(budget)
        if isinstance(typed, PodDisruptionBudget) and from_model(typed.spec.selector).matches(labels):
            out.append(budget)
    return out


def _unhealthy_evictable(budget: dict[str, Any]) -> bool:
    """A pod that is not Ready may go without using up a disruption: the budget always allows it, or (the
    default IfHealthyBudget) the budget has its desired healthy pods."""
    if (budget.get("spec") or {}).get("unhealthyPodEvictionPolicy") == "AlwaysAllow":
        return True
    status = budget.get("status") or {}
    desired = int(status.get("desiredHealthy") or 0)
    return int(status.get("currentHealthy") or 0) >= desired and desired > 0


def too_many_requests(budget: str, why: str = "", retry_after: int = 10) -> ApiError:
    """The 429 of a budget that does not allow the eviction (now, or not yet: ``why``)."""
    details: dict[str, Any] = {"causes": [{"reason": DISRUPTION_BUDGET_CAUSE, "message": why or
                                           f"The disruption budget {budget} is still being processed by the server."}]}
    headers = {}
    if retry_after:
        details["retryAfterSeconds"] = retry_after
        headers["Retry-After"] = str(retry_after)
    return ApiError(429, BUDGET_VIOLATED, details=details, headers=headers)


def _forbidden_budget(name: str, why: str) -> ApiError:
    return ApiError(403, f'poddisruptionbudgets.policy "{name}" is forbidden: {why}',
                    details={"name": name, "group": "policy", "kind": "poddisruptionbudgets"})


def _take_disruption(api: ApiContext, budget: dict[str, Any], pod_name: str, dry: bool) -> None:
    """checkAndDecrement, against the stored budget (a write that conflicts with any other in between)."""
    for _ in range(CONFLICT_RETRIES):
        name = ObjectView(budget).name
        meta = budget.get("metadata") or {}
        status = dict(budget.get("status") or {})
        if int(status.get("observedGeneration") or 0) < int(meta.get("generation") or 0):
            raise too_many_requests(name)
        allowed = int(status.get("disruptionsAllowed") or 0)
        if allowed < 0:
            raise _forbidden_budget(name, "pdb disruptions allowed is negative")
        if len(status.get("disruptedPods") or {}) > MAX_DISRUPTED_PODS:
            raise _forbidden_budget(name, "DisruptedPods map too big - too many evictions not confirmed by PDB "
                                          "controller")
        if allowed == 0:
            raise too_many_requests(name, f"The disruption budget {name} needs {status.get('desiredHealthy', 0)} "
                                          f"healthy pods and has {status.get('currentHealthy', 0)} currently", 0)
        status["disruptionsAllowed"] = allowed - 1
        if allowed == 1:
            allowed_condition(status)
        if dry:
            return
        status["disruptedPods"] = {**(status.get("disruptedPods") or {}), pod_name: now()}
        version = meta.get("resourceVersion")

        def build(old: dict[str, Any], rv: str, status: dict[str, Any] = status) -> dict[str, Any]:
            return {**old, "metadata": {**old["metadata"], "resourceVersion": rv}, "status": status}

        try:
            api.store.update("poddisruptionbudgets", str(meta.get("namespace")), name, build, version)
            return
        except Conflict:
            try:
                budget = api.store.get("poddisruptionbudgets", str(meta.get("namespace")), name)
            except NotFound:
                return  # gone meanwhile: nothing left to honour
    raise ApiError(504, f"couldn't update PodDisruptionBudget \"{ObjectView(budget).name}\" due to conflicts",
                   details={"retryAfterSeconds": 10})


async def _evict(api: ApiContext, t: Target, options: dict[str, Any], dry: bool) -> None:
    """addConditionAndDeletePod: the DisruptionTarget condition (on the options' preconditions), then the
    delete (at the version that write made, when the options name one)."""
    if not dry:
        sent = options.get("preconditions")
        pre: dict[str, Any] = sent if isinstance(sent, dict) else {}

        def build(old: dict[str, Any], rv: str) -> dict[str, Any]:
            meta = old.get("metadata") or {}
            if pre.get("uid") and pre["uid"] != meta.get("uid"):
                raise _pod_conflict(t.name, f"the UID in the precondition ({pre['uid']}) does not match the UID in "
                                            f"record ({meta.get('uid')}). The object might have been deleted and "
                                            f"then recreated")
            if pre.get("resourceVersion") and pre["resourceVersion"] != meta.get("resourceVersion"):
                raise _pod_conflict(t.name, f"the ResourceVersion in the precondition ({pre['resourceVersion']}) "
                                            f"does not match the ResourceVersion in record "
                                            f"({meta.get('resourceVersion')}). The object might have been modified")
            status = dict(old.get("status") or {})
            conditions = list(status.get("conditions") or [])
            status["conditions"] = disruption_target(conditions)
            if status["conditions"] == conditions:
                return old  # (already marked: nothing to write)
            return {**old, "metadata": {**meta, "resourceVersion": rv}, "status": status}

        try:
            updated = await api.store.update_async("pods", t.namespace, t.name, build)
        except NotFound:
            raise not_found(t.resource, t.name) from None
        if pre.get("resourceVersion"):
            options = {**options, "preconditions": {**pre, "resourceVersion": ObjectView(updated).metadata.get(
                "resourceVersion")}}
    await remove(api, t, options, {}, dry)


def _pod_conflict(name: str, why: str) -> ApiError:
    """The conflict of the eviction's own precondition check, which names the resource "Pod" as upstream's."""
    return ApiError(409, f'Operation cannot be fulfilled on Pod "{name}": {why}', "Conflict",
                    details={"name": name, "group": "", "kind": "Pod"})


def disruption_target(conditions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """podutil.UpdatePodCondition with DisruptionTarget True (EvictionByEvictionAPI): its transition time kept
    when it was True already."""
    old = next((c for c in conditions if isinstance(c, dict) and c.get("type") == "DisruptionTarget"), None)
    stamp = old.get("lastTransitionTime") if old is not None and old.get("status") == "True" else now()
    condition = {"type": "DisruptionTarget", "status": "True", "lastProbeTime": None, "lastTransitionTime": stamp,
                 "reason": "EvictionByEvictionAPI", "message": "Eviction API: evicting"}
    if old is None:
        return [*conditions, condition]
    return [condition if c is old else c for c in conditions]


def _has_resource_version(options: dict[str, Any]) -> bool:
    pre = options.get("preconditions")
    return isinstance(pre, dict) and pre.get("resourceVersion") is not None


def _pending(pod: dict[str, Any]) -> bool:
    """A Pending pod not yet being deleted: the one case upstream deletes only at the version it read."""
    view = ObjectView(pod)
    return view.status.get("phase", "Pending") == "Pending" and not view.deletion_timestamp
