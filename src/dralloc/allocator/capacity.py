"""Consumable capacity: how much of each device capacity a request consumes, and whether it fits.

For every capacity of the device: a named request amount is rounded by the request policy (validRange:
below min → min; with step → ``min + step*ceil((req-min)/step)`` on whole units, in BinarySI; validValues:
the first value ≥ the request); an unnamed capacity consumes ``requestPolicy.default``, else the full value.
The amount then must satisfy the policy (equal to the default is always fine; ≤ max; a multiple of step
above min; one of the valid values). A request naming a capacity the device lacks skips the device.
"""

from __future__ import annotations

import math
from typing import Any

from dralloc.allocator.numbers import binary_si, to_num
from dralloc.allocator.pools import CapacityInfo, DeviceInfo

# Result of consumption(): None = the request names an unknown capacity (device skipped),
# otherwise (policy_ok, {name: (Quantity, number)}).


def _amount(requested: Any, cap: CapacityInfo) -> tuple[Any, Any]:
    if requested is None:
        if cap.default is not None:
            return cap.default, cap.default_num
        return cap.quantity, cap.value
    if cap.policy is None:
        return requested, to_num(requested)
    if cap.has_range and cap.range_min is not None:
        req_num = to_num(requested)
        min_num = to_num(cap.range_min)
        if req_num < min_num:
            return cap.range_min, min_num
        if cap.range_step is None:
            return requested, req_num
        req_i = math.ceil(req_num)
        step = math.ceil(to_num(cap.range_step))
        lo = math.ceil(min_num)
        added = req_i - lo
        n = int(added / step) if step else 0  # Go integer division truncates toward zero
        if step and added - n * step != 0:
            n += 1
        val = lo + step * n
        return binary_si(val), val
    if cap.valid_values is not None:
        req_num = to_num(requested)
        for q, num in cap.valid_values:
            if req_num <= num:
                return q, num
        return requested, req_num
    return requested, to_num(requested)


def _violates(num: Any, cap: CapacityInfo) -> bool:
    if cap.policy is None:
        return False
    if cap.default is not None and num == cap.default_num:
        return False
    if cap.has_range:
        if cap.range_max is not None and num > to_num(cap.range_max):
            return True
        if cap.range_step is not None:
            step = math.ceil(to_num(cap.range_step))
            lo = math.ceil(to_num(cap.range_min)) if cap.range_min is not None else 0
            added = math.ceil(num) - lo
            if step and math.fmod(added, step) != 0:
                return True
        return False
    if cap.valid_values:
        return not any(num == v for _, v in cap.valid_values)
    return False


def requests_key(requests: dict[str, Any] | None) -> Any:
    """A hashable key for a request's ``capacity.requests`` (by canonical text, so output stays equal)."""
    if requests is None:
        return None
    return tuple(sorted((name, str(q)) for name, q in requests.items()))


def consumption(key: Any, requests: dict[str, Any] | None,
                info: DeviceInfo) -> tuple[bool, dict[str, tuple[Any, Any]]] | None:
    """What a request (its ``capacity.requests``, keyed by :func:`requests_key`) consumes; cached per device."""
    cache = info.capacity_cache
    hit = cache.get(key, cache)
    if hit is not cache:
        return hit  # type: ignore[no-any-return]  # the cache's values are this function's results
    caps = info.capacity
    result: tuple[bool, dict[str, tuple[Any, Any]]] | None
    if requests and any(name not in caps for name in requests):
        result = None
    else:
        ok = True
        amounts: dict[str, tuple[Any, Any]] = {}
        for name, cap in caps.items():
            q, num = _amount(requests.get(name) if requests else None, cap)
            if _violates(num, cap):
                ok = False
            amounts[name] = (q, num)
        result = (ok, amounts)
    cache[key] = result
    return result


def fits(amounts: dict[str, tuple[Any, Any]], info: DeviceInfo, allocated: dict[str, Any] | None,
         allocating: dict[str, Any] | None) -> bool:
    """Already consumed + this request + consumed earlier in the search ≤ capacity, for every capacity."""
    caps = info.capacity
    for name, (_, num) in amounts.items():
        total = num
        if allocated:
            total += allocated.get(name, 0)
        if allocating:
            total += allocating.get(name, 0)
        if total > caps[name].value:
            return False
    return True
