"""ResourceQuotas: their strategy (stored as sent, validated, created with an empty status that the resourcequota
controller, server/controllers/resource_quota.py, fills in), what objects use of a quota (pkg/quota/v1/evaluator),
and the ResourceQuota admission (plugin/pkg/admission/resourcequota) of every namespaced create.

What is counted:

* pods that are neither Succeeded nor Failed: ``pods`` and ``count/pods``; their requests (``requests.<r>``,
  and ``cpu``, ``memory``, ``ephemeral-storage``) and limits (``limits.<r>``): the containers' summed, at least
  each init container's. A quota on cpu or memory requests or limits requires every container to state them
  (``failed quota: <quota>: must specify limits.cpu for: main``);
* ResourceClaims: ``count/resourceclaims.resource.k8s.io`` and, per device class, ``<class>.deviceclass.
  resource.k8s.io/devices`` (a request's count; a request of all devices counts 32, the most an allocation
  holds; of subrequests, the largest);
* every other object: ``count/<resource>[.<group>]``, and the legacy names ``services``, ``configmaps``,
  ``secrets``, ``replicationcontrollers``, ``resourcequotas``, ``persistentvolumeclaims``,
  ``services.nodeports`` and ``services.loadbalancers``.

A quota's scopes are honoured for ``BestEffort``, ``NotBestEffort``, ``Terminating`` and ``NotTerminating``
(pods only); a quota with other scopes or a scope selector is not enforced here.

Admission: a create whose usage would take a quota of its namespace over ``status.hard`` is refused with
upstream's 403 (``exceeded quota: compute, requested: requests.cpu=2, used: requests.cpu=1, limited:
requests.cpu=2``); a quota whose status the controller has not filled in yet refuses it too (``status unknown
for quota``). An admitted create adds its usage to the quotas' ``status.used`` at once, as upstream, so that
concurrent creates cannot both take the last of it; the controller recounts from the objects.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import partial
from typing import Any

import msgspec

from dralloc.api.core_v1_limits import ResourceQuota
from dralloc.api.quantity import Quantity, quantity_dec_hook
from dralloc.errors import InputError
from dralloc.server.http.errors import ApiError
from dralloc.server.registry.quota_charges import Charge, QuotaCharges, Usage
from dralloc.server.registry.strategy import CoreStrategy
from dralloc.server.types import Obj
from dralloc.store import SQLStore
from dralloc.store.cache import cached
from dralloc.validation.field import FieldError
from dralloc.validation.limit_range import resource_quota_errors
from dralloc.validation.meta import name_is_dns_subdomain, validate_object_meta

LEGACY_COUNTS = {"services": "services", "configmaps": "configmaps", "secrets": "secrets",
                 "replicationcontrollers": "replicationcontrollers", "resourcequotas": "resourcequotas",
                 "persistentvolumeclaims": "persistentvolumeclaims", "pods": "pods"}
VALIDATION_SET = ("cpu", "memory", "requests.cpu", "requests.memory", "limits.cpu", "limits.memory")
POD_SCOPES = {"BestEffort", "NotBestEffort", "Terminating", "NotTerminating"}
DEVICES_SUFFIX = ".deviceclass.resource.k8s.io/devices"
ALL_DEVICES = 32  # resourceapi.AllocationResultsMaxSize
ZERO, ONE = Quantity(0), Quantity(1)


def decode_quota(obj: Obj) -> ResourceQuota | None:
    try:
        return msgspec.convert(obj, ResourceQuota, dec_hook=quantity_dec_hook)
    except (msgspec.ValidationError, InputError, ValueError):
        return None


class ResourceQuotaStrategy(CoreStrategy):
    def prepare_for_create(self, stored: Obj) -> None:
        stored.pop("status", None)  # (the controller's)

    def create_errors(self, typed: Any, stored: Obj | None, namespaced: bool) -> list[FieldError]:
        errors = validate_object_meta(typed.metadata, True, name_is_dns_subdomain, require_namespace=True)
        return errors + resource_quota_errors(typed)

    def update_errors(self, merged: Obj, old: Obj, sub: str, typed_meta: Any) -> list[FieldError]:
        errors = super().update_errors(merged, old, sub, typed_meta)
        typed = decode_quota(merged)
        return errors + (resource_quota_errors(typed) if typed is not None else [])


STRATEGY = ResourceQuotaStrategy()


# --- usage ----------------------------------------------------------------------------------------------


def _quantity(value: Any) -> Quantity | None:
    try:
        return Quantity(str(value))
    except (InputError, ValueError, TypeError):
        return None


def _resources(container: Any, part: str) -> Usage:
    listed = ((container or {}).get("resources") or {}).get(part) if isinstance(container, dict) else None
    out: Usage = {}
    for name, value in listed.items() if isinstance(listed, dict) else ():
        parsed = _quantity(value)
        if parsed is not None:
            out[str(name)] = parsed
    return out


def _pod_totals(spec: Obj, part: str) -> Usage:
    total: Usage = {}
    for container in spec.get("containers") or []:
        for name, value in _resources(container, part).items():
            total[name] = total[name] + value if name in total else value
    for container in spec.get("initContainers") or []:
        for name, value in _resources(container, part).items():
            if name not in total or value > total[name]:
                total[name] = value
    return total


def counts_for_quota(pod: Obj) -> bool:
    """QuotaV1Pod: a pod that has not finished."""
    return (pod.get("status") or {}).get("phase") not in ("Succeeded", "Failed")


def pod_usage(pod: Obj) -> Usage:
    spec = pod.get("spec") or {}
    usage: Usage = {"pods": ONE, "count/pods": ONE}
    for name, value in _pod_totals(spec, "requests").items():
        usage[f"requests.{name}"] = value
        if name in ("cpu", "memory", "ephemeral-storage"):
            usage[name] = value
    for name, value in _pod_totals(spec, "limits").items():
        usage[f"limits.{name}"] = value
    return usage


def claim_usage(claim: Obj) -> Usage:
    usage: Usage = {"count/resourceclaims.resource.k8s.io": ONE}
    requests = (((claim.get("spec") or {}).get("devices") or {}).get("requests")) or []
    for request in requests if isinstance(requests, list) else []:
        if not isinstance(request, dict):
            continue
        options = [request["exactly"]] if isinstance(request.get("exactly"), dict) else \
            [s for s in request.get("firstAvailable") or [] if isinstance(s, dict)]
        counted: dict[str, int] = {}
        for option in options:
            mode = option.get("allocationMode") or "ExactCount"
            number = int(option.get("count") or 1) if mode == "ExactCount" else ALL_DEVICES if mode == "All" else 0
            key = f"{option.get('deviceClassName')}{DEVICES_SUFFIX}"
            counted[key] = max(counted.get(key, 0), number)
        for key, number in counted.items():
            usage[key] = usage.get(key, ZERO) + Quantity(number)
    return usage


def object_usage(resource: str, group: str, obj: Obj) -> Usage:
    """What one object of ``resource`` (of API group ``group``) uses of a quota."""
    if resource == "pods":
        return pod_usage(obj) if counts_for_quota(obj) else {}
    if resource == "resourceclaims" and group == "resource.k8s.io":
        return claim_usage(obj)
    usage: Usage = {f"count/{resource}.{group}" if group else f"count/{resource}": ONE}
    if not group and resource in LEGACY_COUNTS:
        usage[LEGACY_COUNTS[resource]] = ONE
    if resource == "services" and not group:
        spec = obj.get("spec") or {}
        if spec.get("type") == "LoadBalancer":
            usage["services.loadbalancers"] = ONE
        if spec.get("type") in ("NodePort", "LoadBalancer"):
            usage["services.nodeports"] = Quantity(len(spec.get("ports") or []))
    return usage


def _best_effort(pod: Obj) -> bool:
    spec = pod.get("spec") or {}
    return not any(_resources(c, part) for part in ("requests", "limits")
                   for c in [*(spec.get("containers") or []), *(spec.get("initContainers") or [])])


def in_scope(quota: ResourceQuota, resource: str, obj: Obj) -> bool:
    """Whether the quota's scopes take in the object (quotas with scopes count pods only)."""
    scopes = set(quota.spec.scopes or [])
    if not scopes:
        return True
    if resource != "pods":
        return False
    spec = obj.get("spec") or {}
    checks = {"BestEffort": _best_effort(obj), "NotBestEffort": not _best_effort(obj),
              "Terminating": spec.get("activeDeadlineSeconds") is not None,
              "NotTerminating": spec.get("activeDeadlineSeconds") is None}
    return all(checks.get(scope, False) for scope in scopes)


def enforced(quota: ResourceQuota) -> bool:
    """Whether dralloc enforces this quota (not with scopes it does not know, nor a scope selector)."""
    return quota.spec.scope_selector is None and set(quota.spec.scopes or []) <= POD_SCOPES


def namespace_usage(quota: ResourceQuota, objects: Iterable[tuple[str, str, Obj]]) -> Usage:
    """status.used of one quota from the namespace's objects (resource, group, object)."""
    hard = quota.spec.hard or {}
    used: Usage = {name: ZERO for name in hard}
    for resource, group, obj in objects:
        if not in_scope(quota, resource, obj):
            continue
        for name, value in object_usage(resource, group, obj).items():
            if name in used:
                used[name] = used[name] + value
    return used


# --- admission --------------------------------------------------------------------------------------------


def _quotas(objects: dict[tuple[str, str], Obj]) -> dict[str, list[tuple[Obj, ResourceQuota]]]:
    out: dict[str, list[tuple[Obj, ResourceQuota]]] = {}
    for (namespace, _), obj in sorted(objects.items()):
        typed = decode_quota(obj)
        if typed is not None and enforced(typed):
            out.setdefault(namespace, []).append((obj, typed))
    return out


def quotas_of(store: SQLStore, namespace: str) -> list[tuple[Obj, ResourceQuota]]:
    return cached(store, "resourcequotas").derived(_quotas).get(namespace, [])


def _pretty(usage: Usage, names: Iterable[str]) -> str:
    return ",".join(f"{name}={usage.get(name, ZERO)}" for name in sorted(names))


def _missing_constraints(pod: Obj, required: set[str]) -> str:
    """The pod evaluator's Constraints: cpu and memory quotas need every container to state them."""
    needed = required.intersection(VALIDATION_SET)
    if not needed:
        return ""
    missing: dict[str, set[str]] = {}
    spec = pod.get("spec") or {}
    for container in [*(spec.get("containers") or []), *(spec.get("initContainers") or [])]:
        if not isinstance(container, dict):
            continue
        stated = {f"limits.{name}" for name in _resources(container, "limits")}
        for name in _resources(container, "requests"):
            stated |= {f"requests.{name}", name}
        for name in needed - stated:
            missing.setdefault(name, set()).add(str(container.get("name")))
    return "; ".join(f"{name} for: {','.join(sorted(missing[name]))}" for name in sorted(missing))


def admit_create(store: SQLStore, charges: QuotaCharges, resource: str, group: str, namespace: str, obj: Obj,
                 dry: bool) -> list[Charge]:
    """The ResourceQuota admission of a create (a 403 when a quota refuses it as last seen); unless ``dry``,
    the charges of its usage to the quotas' ``status.used`` (see ``quota_charges``), queued before the create's
    own write, which calls their ``settled()``."""
    quotas = quotas_of(store, namespace) if namespace else []
    if not quotas:
        return []
    usage = object_usage(resource, group, obj)
    name = (obj.get("metadata") or {}).get("name") or ""
    qualified = f"{resource}.{group}" if group else resource
    charged: list[tuple[str, Usage]] = []
    for _stored, quota in quotas:
        if not in_scope(quota, resource, obj):
            continue
        hard_spec = set(quota.spec.hard or {})
        requested = {k: v for k, v in usage.items() if k in hard_spec}
        if resource == "pods" and usage:
            missing = _missing_constraints(obj, hard_spec)
            if missing:
                raise _forbidden(qualified, name, f"failed quota: {quota.metadata.name}: must specify {missing}")
        if not requested:
            continue
        status = quota.status
        hard = (status.hard if status is not None else None) or {}
        used = (status.used if status is not None else None) or {}
        unknown = [k for k in requested if k not in hard or k not in used]
        if unknown:
            raise _forbidden(qualified, name, f"status unknown for quota: {quota.metadata.name}, resources: "
                                             f"{','.join(sorted(unknown))}")
        _check(qualified, name, str(quota.metadata.name), requested, used, hard)
        charged.append((str(quota.metadata.name), requested))
    if dry:
        return []
    return [charges.charge(store, namespace, quota_name, requested, partial(_check, qualified, name, quota_name))
            for quota_name, requested in charged]


def _check(qualified: str, name: str, quota_name: str, requested: Usage, used: Usage, hard: Usage) -> None:
    exceeded = [k for k, v in requested.items() if k in hard and (used.get(k) or ZERO) + v > hard[k]]
    if exceeded:
        raise _forbidden(qualified, name, f"exceeded quota: {quota_name}, requested: "
                                         f"{_pretty(requested, exceeded)}, used: {_pretty(used, exceeded)}, "
                                         f"limited: {_pretty(hard, exceeded)}")


def _forbidden(qualified: str, name: str, why: str) -> ApiError:
    resource, _, group = qualified.partition(".")
    return ApiError(403, f'{qualified} "{name}" is forbidden: {why}',
                    details={"name": name, "group": group, "kind": resource})


def _column(quota: Obj, limits: bool) -> str:
    """REQUEST / LIMIT of kubectl get quota: ``<resource>: <used>/<hard>`` of each hard limit, by name, the
    ``limits.*`` ones in LIMIT."""
    status = quota.get("status") or {}
    shown = []
    for name in sorted((quota.get("spec") or {}).get("hard") or {}):
        if (name.split(".")[0] == "limits" and "." in name) == limits:
            used = _quantity((status.get("used") or {}).get(name, "0")) or ZERO
            hard = _quantity((status.get("hard") or {}).get(name, "0")) or ZERO
            shown.append(f"{name}: {used}/{hard}")
    return ", ".join(shown)


COLUMNS = {"=quotaRequest": lambda quota: _column(quota, False), "=quotaLimit": lambda quota: _column(quota, True)}
