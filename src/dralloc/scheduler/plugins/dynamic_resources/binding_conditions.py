"""Device binding conditions (KEP-5007, beta in 1.36): a device may declare conditions that must become True
in the claim's ``status.devices`` (set by its driver or a controller, say once a fabric attached it to the
node) before a pod using it is bound, and failure conditions that abort the binding.

kube-scheduler copies both lists into the allocation result and stamps ``allocation.allocationTimestamp``;
its PreBind (DynamicResources) then waits for every binding condition of every allocated device, failing
the binding when a failure condition turns True or when ``BINDING_TIMEOUT_SECONDS`` have passed since the
allocation. A later attempt's Filter takes such a claim for unavailable on every node, and PostFilter
deallocates it so that other devices can be tried.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from dralloc.api.resource_v1 import AllocatedDeviceStatus, DeviceRequestAllocationResult, ResourceClaim
from dralloc.validation.field import go_quote

BINDING_TIMEOUT_SECONDS = 600  # DynamicResources' BindingTimeoutDefaultSeconds


class BindingFailed(Exception):
    """A failure condition is True, or the binding timed out: the message is kube-scheduler's."""


def _results(claim: ResourceClaim) -> list[DeviceRequestAllocationResult]:
    allocation = claim.status.allocation if claim.status is not None else None
    return list(allocation.devices.results or ()) if allocation is not None and allocation.devices else []


def has_binding_conditions(claim: ResourceClaim) -> bool:
    return any(r.binding_conditions for r in _results(claim))


def _device_status(claim: ResourceClaim, result: DeviceRequestAllocationResult) -> AllocatedDeviceStatus | None:
    for status in (claim.status.devices or ()) if claim.status is not None else ():
        if (status.driver, status.pool, status.device) == (result.driver, result.pool, result.device):
            return status
    return None


def is_ready(claim: ResourceClaim) -> bool:
    """``isClaimReadyForBinding``: whether every binding condition of the allocated devices is True; raises
    :class:`BindingFailed` when a failure condition is. An unallocated claim is not ready."""
    if claim.status is None or claim.status.allocation is None:
        return False
    ready = True
    for result in _results(claim):
        if not result.binding_conditions:
            continue
        status = _device_status(claim, result)
        if status is None:
            return False
        conditions = {c.type: c for c in status.conditions or ()}
        for name in result.binding_failure_conditions or ():
            failed = conditions.get(name)
            if failed is not None and failed.status == "True":
                raise BindingFailed(f"claim {claim.metadata.name} binding failed: reason={failed.reason or ''}, "
                                    f"message={go_quote(failed.message or '')}")
        if any(conditions.get(name) is None or conditions[name].status != "True"
               for name in result.binding_conditions):
            ready = False
    return ready


def timed_out(claim: ResourceClaim, now: datetime) -> bool:
    """``isClaimTimeout``: the allocation has devices with binding conditions and is older than the timeout."""
    allocation = claim.status.allocation if claim.status is not None else None
    if allocation is None or not allocation.allocation_timestamp or not has_binding_conditions(claim):
        return False
    try:
        stamped = datetime.fromisoformat(allocation.allocation_timestamp.replace("Z", "+00:00"))
    except ValueError:
        return False
    if stamped.tzinfo is None:
        stamped = stamped.replace(tzinfo=UTC)
    return stamped + timedelta(seconds=BINDING_TIMEOUT_SECONDS) < now


def wait_outcome(claim: ResourceClaim, now: datetime) -> bool:
    """One poll of PreBind's wait for ``claim``: True when ready, False to keep waiting; raises
    :class:`BindingFailed` on a failure condition or the timeout (``claim <name> binding timeout``)."""
    if is_ready(claim):
        return True
    if timed_out(claim, now):
        raise BindingFailed(f"claim {claim.metadata.name} binding timeout")
    return False


def unavailable(claim: ResourceClaim, now: datetime | None) -> bool:
    """Filter's check of an allocated claim: a failure condition is True, or it is not ready and timed out
    (``now`` None: no clock, as in a simulation of a dump, so no timeout)."""
    try:
        ready = is_ready(claim)
    except BindingFailed:
        return True
    return not ready and now is not None and timed_out(claim, now)

