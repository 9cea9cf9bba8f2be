"""API defaulting, as kube-apiserver applies it on create (pkg/apis/resource/v1/defaults.go).

* ``exactly.allocationMode`` and each ``firstAvailable[].allocationMode`` default to ``ExactCount``;
* with ExactCount, ``count`` defaults to 1;
* a toleration's ``operator`` defaults to ``Equal``;
* a PriorityClass's ``preemptionPolicy`` defaults to ``PreemptLowerPriority`` (pkg/apis/scheduling/v1).

Objects are treated as immutable: the functions return new objects (the input is untouched) and return the
input itself when nothing needed defaulting, so callers can cheaply keep identity-keyed caches.
"""

from __future__ import annotations

from typing import Any, TypeVar

from msgspec.structs import replace

from dralloc.api.resource_v1 import (
    ALLOCATION_MODE_EXACT_COUNT,
    DeviceClaim,
    DeviceToleration,
    ResourceClaim,
    ResourceClaimSpec,
    ResourceClaimTemplate,
)
from dralloc.api.scheduling_v1 import PriorityClass

T = TypeVar("T")
PREEMPT_LOWER_PRIORITY = "PreemptLowerPriority"


def _default_tolerations(tolerations: list[DeviceToleration] | None) -> list[DeviceToleration] | None:
    if not tolerations or all(t.operator for t in tolerations):
        return tolerations
    return [t if t.operator else replace(t, operator="Equal") for t in tolerations]


def _default_exact(req: Any) -> Any:
    """Default an ExactDeviceRequest or a DeviceSubRequest (same field names)."""
    changes: dict[str, Any] = {}
    mode = req.allocation_mode or ALLOCATION_MODE_EXACT_COUNT
    if mode != req.allocation_mode:
        changes["allocation_mode"] = mode
    if mode == ALLOCATION_MODE_EXACT_COUNT and not req.count:
        changes["count"] = 1
    tolerations = _default_tolerations(req.tolerations)
    if tolerations is not req.tolerations:
        changes["tolerations"] = tolerations
    return replace(req, **changes) if changes else req


def default_claim_spec(spec: ResourceClaimSpec) -> ResourceClaimSpec:
    devices = spec.devices
    if devices is None or not devices.requests:
        return spec
    requests = []
    changed = False
    for request in devices.requests:
        new = request
        if request.exactly is not None:
            exact = _default_exact(request.exactly)
            if exact is not request.exactly:
                new = replace(new, exactly=exact)
        if request.first_available:
            subs = [_default_exact(s) for s in request.first_available]
            if any(a is not b for a, b in zip(subs, request.first_available)):
                new = replace(new, first_available=subs)
        changed |= new is not request
        requests.append(new)
    if not changed:
        return spec
    return replace(spec, devices=replace(devices, requests=requests))


def apply_defaults(obj: T) -> T:
    """Return ``obj`` with API defaults applied (ResourceClaim and ResourceClaimTemplate; others unchanged)."""
    if isinstance(obj, ResourceClaim):
        spec = default_claim_spec(obj.spec)
        return obj if spec is obj.spec else replace(obj, spec=spec)
    if isinstance(obj, ResourceClaimTemplate):
        spec = default_claim_spec(obj.spec.spec)
        if spec is obj.spec.spec:
            return obj
        return replace(obj, spec=replace(obj.spec, spec=spec))
    if isinstance(obj, PriorityClass) and obj.preemption_policy is None:
        return replace(obj, preemption_policy=PREEMPT_LOWER_PRIORITY)
    return obj


__all__ = ["apply_defaults", "default_claim_spec", "DeviceClaim"]
