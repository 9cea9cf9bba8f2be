"""A ResourceSlice's spec: driver, pool, node selection, shared counters and the partition type attribute;
each device is checked by ``device``."""

from __future__ import annotations

from collections.abc import Iterable
from operator import attrgetter

from dralloc.api.codec import to_dict
from dralloc.api.resource_v1 import Device, ResourceSliceSpec
from dralloc.validation import field as f
from dralloc.validation.meta import IMMUTABLE, validate_node_selector
from dralloc.validation.resource import device as device_rules
from dralloc.validation.resource.common import validate_skip_node_operations
from dralloc.validation.resource.device import plain_new_device, validate_counter_set, validate_device
from dralloc.validation.resource.limits import (
    SLICE_MAX_COUNTER_SETS,
    SLICE_MAX_DEVICES,
    SLICE_MAX_DEVICES_ADVANCED,
)
from dralloc.validation.resource.lists import E, validate_set
from dralloc.validation.resource.names import (
    validate_driver_name,
    validate_fully_qualified_name,
    validate_node_name,
    validate_pool_name,
)

_device_name = attrgetter("name")  # (a C call per device, where a function of ours was a Python frame)


def _has_list_attributes(devices: Iterable[Device]) -> bool:
    for d in devices:
        for a in (d.attributes or {}).values():
            if a.ints is not None or a.bools is not None or a.strings is not None or a.versions is not None:
                return True
    return False


def validate_slice_spec(spec: ResourceSliceSpec, old_spec: ResourceSliceSpec | None, path: str = "spec") -> E:
    errs = validate_driver_name(spec.driver, f.child(path, "driver"))
    pool = spec.pool
    ppath = f.child(path, "pool")
    errs.extend(validate_pool_name(pool.name, f.child(ppath, "name")))
    if pool.resource_slice_count <= 0:
        errs.append(f.invalid(f.child(ppath, "resourceSliceCount"), pool.resource_slice_count,
                              "must be greater than zero"))
    if pool.generation < 0:
        errs.append(f.invalid(f.child(ppath, "generation"), pool.generation, "must be greater than or equal to zero"))
    if old_spec is not None:
        if pool.name != old_spec.pool.name:
            errs.append(f.invalid(f.child(ppath, "name"), pool.name, IMMUTABLE))
        if spec.driver != old_spec.driver:
            errs.append(f.invalid(f.child(path, "driver"), spec.driver, IMMUTABLE))
        if spec.node_name != old_spec.node_name:
            errs.append(f.invalid(f.child(path, "nodeName"), spec.node_name, IMMUTABLE))

    set_fields: list[str] = []
    if spec.node_name is not None:
        if spec.node_name:
            set_fields.append("`nodeName`")
            errs.extend(validate_node_name(spec.node_name, f.child(path, "nodeName")))
        else:
            errs.append(f.invalid(f.child(path, "nodeName"), "", "must be either unset or set to a non-empty string"))
    if spec.node_selector is not None:
        set_fields.append("`nodeSelector`")
        nspath = f.child(path, "nodeSelector")
        errs.extend(validate_node_selector(spec.node_selector, nspath))
        if len(spec.node_selector.node_selector_terms or []) != 1:
            errs.append(f.invalid(f.child(nspath, "nodeSelectorTerms"),
                                  [to_dict(t) for t in spec.node_selector.node_selector_terms or []],
                                  "must have exactly one node selector term"))
    for attr, json_name in (("all_nodes", "allNodes"), ("per_device_node_selection", "perDeviceNodeSelection")):
        value = getattr(spec, attr)
        if value is not None:
            if value:
                set_fields.append(f"`{json_name}`")
            else:
                errs.append(f.invalid(f.child(path, json_name), False, "must be either unset or set to true"))
    if not set_fields:
        errs.append(f.required(path, "exactly one of `nodeName`, `nodeSelector`, `allNodes`, "
                                     "`perDeviceNodeSelection` is required"))
    elif len(set_fields) > 1:
        errs.append(f.invalid(path, "{" + ", ".join(set_fields) + "}", "exactly one of `nodeName`, `nodeSelector`, "
                              "`allNodes`, `perDeviceNodeSelection` is required, but multiple fields are set"))

    if spec.shared_counters is not None and spec.devices is not None:
        errs.append(f.invalid(path, "", "only one of `sharedCounters` or `devices` is allowed"))

    devices = spec.devices or []
    # Which limit applies matters only to a slice with more devices than the smaller one allows (the walk over
    # every attribute is skipped for the others).
    max_devices = SLICE_MAX_DEVICES
    if len(devices) > min(SLICE_MAX_DEVICES, SLICE_MAX_DEVICES_ADVANCED) and (
            any(d.taints or d.consumes_counters for d in devices) or _has_list_attributes(devices)):
        max_devices = SLICE_MAX_DEVICES_ADVANCED
    old_devices = {d.name: d for d in (old_spec.devices or [])} if old_spec is not None else {}
    # A new slice's devices are all plain, mostly: then none is checked on its own.
    all_plain = old_spec is None and not spec.per_device_node_selection and device_rules.plain_new_devices(devices)
    errs.extend(validate_set(
        spec.devices, max_devices,
        lambda d, p: validate_device(d, old_devices.get(d.name), p, spec.per_device_node_selection),
        _device_name, f.child(path, "devices"),
        plain_new_device(spec.per_device_node_selection) if old_spec is None else None, all_plain))
    if spec.shared_counters:  # (the optional parts looked at, and their paths made, only when present)
        errs.extend(validate_set(spec.shared_counters, SLICE_MAX_COUNTER_SETS, validate_counter_set,
                                 lambda c: c.name, f.child(path, "sharedCounters")))
    if spec.partition_type_attribute is not None:
        errs.extend(_partition_type_attribute(spec, spec.partition_type_attribute, path))
    if spec.skip_node_operations:
        errs.extend(validate_skip_node_operations(spec.skip_node_operations, f.child(path, "skipNodeOperations")))
    return errs


def _partition_type_attribute(spec: ResourceSliceSpec, name: str, path: str) -> E:
    apath = f.child(path, "partitionTypeAttribute")
    consuming = [(i, d) for i, d in enumerate(spec.devices or []) if d.consumes_counters]
    if not consuming:
        return [f.invalid(apath, name, "may only be set on a slice which declares devices that consume counters")]
    format_errs = validate_fully_qualified_name(name, apath)
    if format_errs:
        return format_errs
    bare = name[len(spec.driver) + 1:] if name.startswith(spec.driver + "/") else ""
    errs: E = []
    for i, d in consuming:
        attrs = d.attributes or {}
        p = f.key(f.child(f.index(f.child(path, "devices"), i), "attributes"), name)
        attr = attrs.get(name) or (attrs.get(bare) if bare else None)
        if attr is None:
            errs.append(f.required(p, "device consumes counters and `partitionTypeAttribute` names this "
                                      "attribute, so it must be set"))
        elif attr.string is None:
            errs.append(f.invalid(p, to_dict(attr), "must be a string value because `partitionTypeAttribute` "
                                                    "names this attribute"))
    return errs
