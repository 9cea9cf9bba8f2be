"""A ResourceClaim's status: reservations, allocated devices' status and the allocation result."""

from __future__ import annotations

import ipaddress

from dralloc.api.codec import to_dict
from dralloc.api.resource_v1 import (
    AllocatedDeviceStatus,
    AllocationResult,
    DeviceAllocationConfiguration,
    DeviceRequestAllocationResult,
    ResourceClaimConsumerReference,
    ResourceClaimStatus,
)
from dralloc.validation import field as f
from dralloc.validation.meta import IMMUTABLE, validate_conditions, validate_node_selector
from dralloc.validation.resource.claim import RequestNames, validate_request_ref, validate_request_refs
from dralloc.validation.resource.common import (
    validate_binding_parameters,
    validate_device_configuration,
    validate_raw_extension,
    validate_skip_node_operations,
    validate_toleration,
)
from dralloc.validation.resource.limits import (
    ALLOCATION_RESULTS_MAX,
    CONFIG_MAX,
    CONFIG_SOURCES,
    DEVICE_STATUS_DATA_MAX,
    DEVICE_STATUS_MAX_CONDITIONS,
    HARDWARE_ADDRESS_MAX,
    INTERFACE_NAME_MAX,
    NETWORK_MAX_IPS,
    RESERVED_FOR_MAX,
)
from dralloc.validation.resource.lists import E, identity, validate_set, validate_slice
from dralloc.validation.resource.names import (
    validate_dns_label,
    validate_driver_name,
    validate_pool_name,
    validate_uid,
)


def _shared_device_id(driver: str, pool: str, device: str, share_id: str | None) -> str:
    base = f"{driver}/{pool}/{device}"
    return f"{base}/{share_id}" if share_id else base


def validate_claim_status(status: ResourceClaimStatus, old_status: ResourceClaimStatus | None, deleting: bool, names: RequestNames,
                          path: str = "status") -> E:
    old_alloc = old_status.allocation if old_status is not None else None
    errs: E = []

    def ref(r: ResourceClaimConsumerReference, p: str) -> E:
        out: E = []
        if not r.resource:
            out.append(f.required(f.child(p, "resource")))
        if not r.name:
            out.append(f.required(f.child(p, "name")))
        if not r.uid:
            out.append(f.required(f.child(p, "uid")))
        return out

    errs.extend(validate_set(status.reserved_for, RESERVED_FOR_MAX, ref, lambda r: r.uid,
                             f.child(path, "reservedFor")))
    allocated: set[str] = set()
    if status.allocation is not None and status.allocation.devices is not None:
        for r in status.allocation.devices.results or ():
            allocated.add(_shared_device_id(r.driver, r.pool, r.device, r.share_id))
    errs.extend(validate_set(status.devices, -1, lambda d, p: _device_status(d, p, allocated),
                             lambda d: _shared_device_id(d.driver, d.pool, d.device, d.share_id),
                             f.child(path, "devices")))
    if status.reserved_for:
        if status.allocation is None:
            errs.append(f.forbidden(f.child(path, "reservedFor"), "may not be specified when `allocated` is not set"))
        elif deleting and old_status is not None:
            old_uids = {(r.api_group, r.resource, r.name, r.uid) for r in old_status.reserved_for or ()}
            if any((r.api_group, r.resource, r.name, r.uid) not in old_uids for r in status.reserved_for):
                errs.append(f.forbidden(f.child(path, "reservedFor"), "new entries may not be added while "
                                        "`deallocationRequested` or `deletionTimestamp` are set"))
    if old_alloc is not None and status.allocation is not None:
        if old_alloc != status.allocation:
            errs.append(f.invalid(f.child(path, "allocation"), to_dict(status.allocation), IMMUTABLE))
    elif status.allocation is not None:
        errs.extend(validate_allocation_result(status.allocation, f.child(path, "allocation"), names))
    return errs


def _device_status(d: AllocatedDeviceStatus, path: str, allocated: set[str]) -> E:
    errs = validate_driver_name(d.driver, f.child(path, "driver"))
    errs.extend(validate_pool_name(d.pool, f.child(path, "pool")))
    errs.extend(validate_dns_label(d.device, f.child(path, "device")))
    if d.share_id is not None:
        errs.extend(validate_uid(d.share_id, f.child(path, "shareID")))
    sid = _shared_device_id(d.driver, d.pool, d.device, d.share_id)
    if sid not in allocated:
        errs.append(f.invalid(path, sid, "must be an allocated device in the claim"))
    conditions = d.conditions or []
    if len(conditions) > DEVICE_STATUS_MAX_CONDITIONS:
        errs.append(f.too_many(f.child(path, "conditions"), len(conditions), DEVICE_STATUS_MAX_CONDITIONS))
    errs.extend(validate_conditions(conditions, f.child(path, "conditions")))
    if d.data is not None:
        errs.extend(validate_raw_extension(d.data, f.child(path, "data"), False, DEVICE_STATUS_DATA_MAX))
    nd = d.network_data
    if nd is not None:
        npath = f.child(path, "networkData")
        if len((nd.interface_name or "").encode()) > INTERFACE_NAME_MAX:
            errs.append(f.too_long(f.child(npath, "interfaceName"), INTERFACE_NAME_MAX))
        if len((nd.hardware_address or "").encode()) > HARDWARE_ADDRESS_MAX:
            errs.append(f.too_long(f.child(npath, "hardwareAddress"), HARDWARE_ADDRESS_MAX))
        errs.extend(validate_set(nd.ips, NETWORK_MAX_IPS, _interface_address, identity, f.child(npath, "ips")))
    return errs


def _interface_address(value: str, path: str) -> E:
    try:
        iface = ipaddress.ip_interface(value)
    except ValueError:
        return [f.invalid(path, value, "must be a valid address in CIDR form, (e.g. 10.9.8.7/24 or 2001:db8::1/64)")]
    if "/" not in value:
        return [f.invalid(path, value, "must be a valid address in CIDR form, (e.g. 10.9.8.7/24 or 2001:db8::1/64)")]
    if str(iface) != value and iface.version == 4:
        return [f.invalid(path, value, f"must be in canonical form (\"{iface}\")")]
    return []


def validate_allocation_result(alloc: AllocationResult, path: str, names: RequestNames) -> E:
    errs: E = []
    devices = alloc.devices
    dpath = f.child(path, "devices")
    if devices is not None:
        errs.extend(validate_slice(devices.results, ALLOCATION_RESULTS_MAX,
                                   lambda r, p: _allocation_result(r, p, names), f.child(dpath, "results")))
        errs.extend(validate_slice(devices.config, 2 * CONFIG_MAX,
                                   lambda c, p: _allocation_config(c, p, names), f.child(dpath, "config")))
    if alloc.node_selector is not None:
        errs.extend(validate_node_selector(alloc.node_selector, f.child(path, "nodeSelector")))
    return errs


def _allocation_result(r: DeviceRequestAllocationResult, path: str, names: RequestNames) -> E:
    errs = validate_request_ref(r.request, f.child(path, "request"), names)
    errs.extend(validate_driver_name(r.driver, f.child(path, "driver")))
    errs.extend(validate_pool_name(r.pool, f.child(path, "pool")))
    errs.extend(validate_dns_label(r.device, f.child(path, "device")))
    errs.extend(validate_binding_parameters(r.binding_conditions, r.binding_failure_conditions, path))
    for i, t in enumerate(r.tolerations or ()):
        errs.extend(validate_toleration(t, f.index(f.child(path, "tolerations"), i)))
    if r.share_id is not None:
        errs.extend(validate_uid(r.share_id, f.child(path, "shareID")))
    errs.extend(validate_skip_node_operations(r.skip_node_operations, f.child(path, "skipNodeOperations")))
    return errs


def _allocation_config(c: DeviceAllocationConfiguration, path: str, names: RequestNames) -> E:
    errs: E = []
    spath = f.child(path, "source")
    if not c.source:
        errs.append(f.required(spath))
    elif c.source not in CONFIG_SOURCES:
        errs.append(f.not_supported(spath, c.source, CONFIG_SOURCES))
    errs.extend(validate_request_refs(c.requests, f.child(path, "requests"), names))
    errs.extend(validate_device_configuration(c, path, False))
    return errs
