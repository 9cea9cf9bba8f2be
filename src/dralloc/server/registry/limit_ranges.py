"""LimitRanges: their strategy (stored as sent, with decoding's defaults of a Container limit: ``default`` from
``max``, ``defaultRequest`` from ``default`` or ``min``; validated as kube-apiserver validates them) and the
LimitRanger admission of pods (plugin/pkg/admission/limitranger), which changes what the scheduler sees:

* on create, each container (and init container) without a request or a limit of a resource gets the
  ``defaultRequest`` / ``default`` of its namespace's Container LimitRanges (the first that has one, by name),
  and the pod the ``kubernetes.io/limit-ranger`` annotation saying what was set;
* then the pod is refused (403) when a container is outside a Container item's ``min`` / ``max`` /
  ``maxLimitRequestRatio``, or the pod's summed requests and limits outside a Pod item's, with upstream's
  texts (``maximum cpu usage per Container is 1, but limit is 2``).

Pod updates are not looked at (their containers' resources do not change), as upstream.
"""

from __future__ import annotations

from typing import Any

import msgspec

from dralloc.api.core_v1_limits import LimitRange
from dralloc.api.quantity import Quantity, quantity_dec_hook
from dralloc.errors import InputError
from dralloc.server.http.errors import ApiError
from dralloc.server.registry.strategy import CoreStrategy
from dralloc.server.types import Obj
from dralloc.store import SQLStore
from dralloc.store.cache import cached
from dralloc.validation.field import FieldError
from dralloc.validation.limit_range import MAX_MILLI, limit_range_errors
from dralloc.validation.meta import name_is_dns_subdomain, validate_object_meta

ANNOTATION = "kubernetes.io/limit-ranger"
CONTAINER, POD = "Container", "Pod"


def default_limit_range(obj: Obj) -> None:
    """SetDefaults_LimitRangeItem of every Container item, in place."""
    spec = obj.get("spec")
    if not isinstance(spec, dict) or not isinstance(spec.get("limits"), list):
        return
    spec["limits"] = items = [dict(i) if isinstance(i, dict) else i for i in spec["limits"]]
    for item in items:
        if not isinstance(item, dict) or item.get("type") != CONTAINER:
            continue
        default = item["default"] = dict(item.get("default") or {})
        request = item["defaultRequest"] = dict(item.get("defaultRequest") or {})
        for source, target in ((item.get("max"), default), (default, request), (item.get("min"), request)):
            for name, value in (source or {}).items():
                target.setdefault(name, value)


class LimitRangeStrategy(CoreStrategy):
    def decode_defaults(self, obj: Obj, sub: str) -> None:
        default_limit_range(obj)  # (decoding's: the writer owns them)

    def create_errors(self, typed: Any, stored: Obj | None, namespaced: bool) -> list[FieldError]:
        errors = validate_object_meta(typed.metadata, True, name_is_dns_subdomain, require_namespace=True)
        return errors + limit_range_errors(typed)

    def update_errors(self, merged: Obj, old: Obj, sub: str, typed_meta: Any) -> list[FieldError]:
        errors = super().update_errors(merged, old, sub, typed_meta)
        typed = _typed(merged)
        return errors + (limit_range_errors(typed) if typed is not None else [])


STRATEGY = LimitRangeStrategy()


def _typed(obj: Obj) -> LimitRange | None:
    try:
        return msgspec.convert(obj, LimitRange, dec_hook=quantity_dec_hook)
    except (msgspec.ValidationError, InputError, ValueError):
        return None


def _ranges(objects: dict[tuple[str, str], Obj]) -> dict[str, list[LimitRange]]:
    """Every namespace's LimitRanges, decoded, by name."""
    out: dict[str, list[LimitRange]] = {}
    for (namespace, _), obj in sorted(objects.items()):
        typed = _typed(obj)
        if typed is not None:
            out.setdefault(namespace, []).append(typed)
    return out


def ranges_of(store: SQLStore, namespace: str) -> list[LimitRange]:
    return cached(store, "limitranges").derived(_ranges).get(namespace, [])


def _containers(spec: Obj) -> list[tuple[str, Obj]]:
    """(``container`` / ``init container``, the container) of a pod spec, containers first."""
    out = []
    for kind, label in (("containers", "container"), ("initContainers", "init container")):
        listed = spec.get(kind)
        for container in listed if isinstance(listed, list) else []:
            if isinstance(container, dict):
                out.append((label, container))
    return out


def admit_pod(store: SQLStore, pod: Obj, namespace: str) -> Obj:
    """The pod with its namespace's default requests and limits (a new dict when it changes)."""
    ranges = ranges_of(store, namespace)
    spec = pod.get("spec")
    if not ranges or not isinstance(spec, dict) or not isinstance(pod.get("metadata"), dict):
        return pod
    defaults: dict[str, dict[str, str]] = {"requests": {}, "limits": {}}
    for limit_range in ranges:  # (defaultContainerResourceRequirements: a later range's value wins)
        for item in limit_range.spec.limits:
            if item.type == CONTAINER:
                defaults["requests"].update({k: str(v) for k, v in (item.default_request or {}).items()})
                defaults["limits"].update({k: str(v) for k, v in (item.default or {}).items()})
    if not defaults["requests"] and not defaults["limits"]:
        return pod
    spec = dict(spec)
    set_by: list[str] = []
    for kind in ("containers", "initContainers"):
        if isinstance(spec.get(kind), list):
            spec[kind] = [dict(c) if isinstance(c, dict) else c for c in spec[kind]]
    for label, container in _containers(spec):
        resources = container.get("resources")
        if resources is not None and not isinstance(resources, dict):
            return pod  # the decoder's 400
        resources = dict(resources or {})
        limits = dict(resources.get("limits") or {})
        requests = dict(resources.get("requests") or {})
        for name, value in limits.items():  # (decoding's default: a limit without request is also the request)
            requests.setdefault(name, value)
        added: dict[str, list[str]] = {"requests": [], "limits": []}
        for part, current in (("limits", limits), ("requests", requests)):
            for name, value in defaults[part].items():
                if name not in current:
                    current[name] = value
                    added[part].append(name)
        resources["limits"], resources["requests"] = limits, requests
        container["resources"] = {k: v for k, v in resources.items() if v or k not in ("limits", "requests")}
        name = container.get("name")
        if added["requests"]:
            set_by.append(f"{', '.join(sorted(added['requests']))} request for {label} {name}")
        if added["limits"]:
            set_by.append(f"{', '.join(sorted(added['limits']))} limit for {label} {name}")
    pod = {**pod, "spec": spec}
    if set_by:
        meta = dict(pod["metadata"])
        meta["annotations"] = {**(meta.get("annotations") or {}), ANNOTATION: "LimitRanger plugin set: "
                               + "; ".join(set_by)}
        pod["metadata"] = meta
    return pod


def _quantity(value: Any) -> Quantity | None:
    try:
        return Quantity(str(value))
    except (InputError, ValueError, TypeError):
        return None


def _observed(request: Quantity | None, limit: Quantity | None, enforced: Quantity) -> tuple[int, int, int]:
    """requestLimitEnforcedValues: milli-units while they all fit, else units."""
    values = [q for q in (request, limit, enforced) if q is not None]
    milli = all(q.value() < MAX_MILLI for q in values)

    def of(q: Quantity | None) -> int:
        return 0 if q is None else (q.milli_value() if milli else q.value())

    return of(request), of(limit), of(enforced)


def _bound_errors(kind: str, item: Any, requests: dict[str, Quantity], limits: dict[str, Quantity]) -> list[str]:
    errors: list[str] = []
    for name, enforced in sorted((item.min or {}).items()):
        request, limit = requests.get(name), limits.get(name)
        observed_request, observed_limit, value = _observed(request, limit, enforced)
        if request is None:
            errors.append(f"minimum {name} usage per {kind} is {enforced}.  No request is specified")
        elif observed_request < value:
            errors.append(f"minimum {name} usage per {kind} is {enforced}, but request is {request}")
        elif limit is not None and observed_limit < value:
            errors.append(f"minimum {name} usage per {kind} is {enforced}, but limit is {limit}")
    for name, enforced in sorted((item.max or {}).items()):
        request, limit = requests.get(name), limits.get(name)
        observed_request, observed_limit, value = _observed(request, limit, enforced)
        if limit is None:
            errors.append(f"maximum {name} usage per {kind} is {enforced}.  No limit is specified")
        elif observed_limit > value:
            errors.append(f"maximum {name} usage per {kind} is {enforced}, but limit is {limit}")
        elif request is not None and observed_request > value:
            errors.append(f"maximum {name} usage per {kind} is {enforced}, but request is {request}")
    for name, enforced in sorted((item.max_limit_request_ratio or {}).items()):
        request, limit = requests.get(name), limits.get(name)
        observed_request, observed_limit, _ = _observed(request, limit, enforced)
        if request is None or observed_request == 0:
            errors.append(f"{name} max limit to request ratio per {kind} is {enforced}, but no request is "
                          f"specified or request is 0")
        elif limit is None or observed_limit == 0:
            errors.append(f"{name} max limit to request ratio per {kind} is {enforced}, but no limit is "
                          f"specified or limit is 0")
        else:
            ratio = observed_limit / observed_request
            allowed = float(enforced.value())
            shown = ratio
            if enforced.value() <= MAX_MILLI:
                ratio, allowed = ratio * 1000, float(enforced.milli_value())
            if ratio > allowed:
                errors.append(f"{name} max limit to request ratio per {kind} is {enforced}, but provided ratio is "
                              f"{shown:f}")
    return errors


def _resources(container: Obj, part: str) -> dict[str, Quantity]:
    listed = (container.get("resources") or {}).get(part) or {}
    out = {}
    for name, value in listed.items() if isinstance(listed, dict) else ():
        parsed = _quantity(value)
        if parsed is not None:
            out[name] = parsed
    return out


def _pod_totals(spec: Obj, part: str) -> dict[str, Quantity]:
    """The pod's requests or limits: its containers' summed, at least each init container's."""
    total: dict[str, Quantity] = {}
    for label, container in _containers(spec):
        if label == "container":
            for name, value in _resources(container, part).items():
                total[name] = total.get(name, Quantity(0)) + value
    for label, container in _containers(spec):
        if label == "init container":
            for name, value in _resources(container, part).items():
                if name not in total or value > total[name]:
                    total[name] = value
    return total


def check_pod(store: SQLStore, namespace: str, pod: Obj) -> None:
    """PodValidateLimitFunc over the namespace's LimitRanges: a 403 listing every bound the pod is outside."""
    spec = pod.get("spec") or {}
    errors: list[str] = []
    for limit_range in ranges_of(store, namespace):
        for item in limit_range.spec.limits:
            if item.type == CONTAINER:
                for _, container in _containers(spec):
                    errors += _bound_errors(CONTAINER, item, _resources(container, "requests"),
                                            _resources(container, "limits"))
            elif item.type == POD:
                errors += _bound_errors(POD, item, _pod_totals(spec, "requests"), _pod_totals(spec, "limits"))
    if errors:
        name = (pod.get("metadata") or {}).get("name") or ""
        why = errors[0] if len(errors) == 1 else f"[{', '.join(errors)}]"
        raise ApiError(403, f'pods "{name}" is forbidden: {why}', details={"name": name, "kind": "pods"})
