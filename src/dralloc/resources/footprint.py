"""What an allocated ResourceClaim consumes of its node's allocatable cpu, memory, ... (KEP-5517).

Two API shapes exist:

* Kubernetes 1.36, ``Device.nodeAllocatableResourceMappings[resource] = {capacityKey?, allocationMultiplier?}``:
  without ``capacityKey`` each allocated device counts ``allocationMultiplier`` (default 1); with it, the
  result's ``consumedCapacity[capacityKey]`` times the multiplier. An exclusively allocated device (no
  ``consumedCapacity``) consumes its whole capacity value — the natural reading of "exclusive", which the API
  text leaves open. Sums run over every result of the claim and every mapped resource.
* Kubernetes 1.37, ``Device.nodeAllocatableResources[resource] = {mapping?, overhead?}``: ``mapping`` with
  ``deviceMultiplier`` (per device) or ``capacityKey`` + ``capacityMultiplier``, counted once per claim;
  ``overhead`` = ``perPod + perContainer × containers`` charged to every pod that references the claim.

``consumedCapacity`` keys may omit the driver's domain; a capacity key is matched with and without
``<driver>/``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from fractions import Fraction
from typing import Any

from dralloc.api.quantity import Quantity
from dralloc.api.resource_v1 import Device, DeviceRequestAllocationResult, ResourceClaim, ResourceSlice
from dralloc.resources.resourcelist import ResourceList, _format_for


class DeviceIndex:
    """Devices of ResourceSlices by (driver, pool, device), for looking up allocation results.

    Built on the first lookup (most simulations never look a device up this way), one map of device names
    per pool, so a cluster of many small pools costs one entry per device and no key tuple each."""

    def __init__(self, slices: Iterable[ResourceSlice]) -> None:
        self._slices: list[ResourceSlice] | None = list(slices)
        self._pools: dict[tuple[str, str], dict[str, Device]] = {}

    def _build(self, slices: list[ResourceSlice]) -> None:
        for s in slices:
            spec = s.spec
            if spec.devices:
                devices = self._pools.setdefault((spec.driver, spec.pool.name), {})
                for d in spec.devices:
                    devices[d.name] = d

    def get(self, driver: str, pool: str, device: str) -> Device | None:
        if self._slices is not None:
            slices, self._slices = self._slices, None
            self._build(slices)
        devices = self._pools.get((driver, pool))
        return devices.get(device) if devices is not None else None


def _lookup(mapping: Mapping[str, Any] | None, key: str, driver: str) -> Any | None:
    if not mapping:
        return None
    if key in mapping:
        return mapping[key]
    prefix = driver + "/"
    if key.startswith(prefix):
        return mapping.get(key[len(prefix):])
    return mapping.get(prefix + key)


def _consumed(result: DeviceRequestAllocationResult, device: Device, key: str) -> Fraction:
    value = _lookup(result.consumed_capacity, key, result.driver)
    if value is None:
        capacity = _lookup(device.capacity, key, result.driver)
        if capacity is None:
            return Fraction(0)
        value = capacity.value
    fraction: Fraction = value.as_fraction()
    return fraction


def _fraction(q: Quantity | None, default: int = 1) -> Fraction:
    return q.as_fraction() if q is not None else Fraction(default)


def _add(acc: dict[str, Fraction], name: str, amount: Fraction) -> None:
    acc[name] = acc.get(name, Fraction(0)) + amount


def _to_list(acc: dict[str, Fraction]) -> ResourceList:
    return ResourceList({name: Quantity.from_fraction(v, _format_for(name)) for name, v in acc.items()})


def claim_footprint(claim: ResourceClaim, devices: DeviceIndex, containers: int = 1) -> ResourceList:
    """The node-allocatable resources a claim's allocation consumes, for one pod with ``containers``
    containers referencing it (only the 1.37 ``overhead`` depends on that)."""
    alloc = claim.status.allocation if claim.status is not None else None
    if alloc is None or alloc.devices is None:
        return ResourceList()
    acc: dict[str, Fraction] = {}
    overhead_devices: set[tuple[str, str, str]] = set()
    for r in alloc.devices.results or ():
        device = devices.get(r.driver, r.pool, r.device)
        if device is None:
            continue
        for name, m in (device.node_allocatable_resource_mappings or {}).items():
            if m.capacity_key:
                _add(acc, name, _consumed(r, device, m.capacity_key) * _fraction(m.allocation_multiplier))
            else:
                _add(acc, name, _fraction(m.allocation_multiplier))
        for name, res in (device.node_allocatable_resources or {}).items():
            mapping = res.mapping
            if mapping is not None:
                if mapping.capacity_key:
                    _add(acc, name, _consumed(r, device, mapping.capacity_key) * _fraction(mapping.capacity_multiplier))
                else:
                    _add(acc, name, _fraction(mapping.device_multiplier))
            o = res.overhead
            key = (r.driver, r.pool, r.device)
            if o is not None and key not in overhead_devices:
                # Overhead is per device and pod, not per share of a multi-allocatable device.
                _add(acc, name, _fraction(o.per_pod, 0) + _fraction(o.per_container, 0) * containers)
        if device.node_allocatable_resources:
            overhead_devices.add((r.driver, r.pool, r.device))
    return _to_list(acc)


def has_mapping(claim: ResourceClaim, devices: DeviceIndex) -> bool:
    """Whether any allocated device of the claim *is* node resources (a mapping, not only overhead);
    such claims cannot be shared between pods (KEP-5517)."""
    alloc = claim.status.allocation if claim.status is not None else None
    for r in (alloc.devices.results or ()) if alloc is not None and alloc.devices is not None else ():
        device = devices.get(r.driver, r.pool, r.device)
        if device is None:
            continue
        if device.node_allocatable_resource_mappings:
            return True
        if any(res.mapping is not None for res in (device.node_allocatable_resources or {}).values()):
            return True
    return False
