"""One device of a ResourceSlice: attributes, capacity and its request policy, taints, counter consumption,
per-device node selection, binding conditions and node-allocatable resources."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from dralloc.api.codec import to_dict
from dralloc.api.quantity import Quantity
from dralloc.api.resource_v1 import (
    CapacityRequestPolicyRange,
    Counter,
    CounterSet,
    Device,
    DeviceAttribute,
    DeviceCapacity,
    DeviceCounterConsumption,
)
from dralloc.validation import field as f
from dralloc.validation.formats import is_node_allocatable_resource_name, is_semver
from dralloc.validation.meta import validate_node_selector
from dralloc.validation.resource.common import validate_binding_parameters, validate_taint
from dralloc.validation.resource.limits import (
    ATTRIBUTE_KEY_MAX,
    ATTRIBUTE_VALUE_MAX,
    COMPATIBILITY_GROUPS_MAX,
    MAX_ATTRIBUTE_VALUES,
    MAX_ATTRIBUTES_AND_CAPACITIES,
    MAX_INT64,
    SLICE_MAX_CONSUMPTIONS_PER_DEVICE,
    SLICE_MAX_COUNTERS_PER_CONSUMPTION,
    SLICE_MAX_COUNTERS_PER_SET,
    TAINTS_MAX,
    VALID_VALUES_MAX,
)
from dralloc.validation.resource.lists import (
    E,
    identity,
    names_known_good,
    no_errors,
    validate_map,
    validate_set,
    validate_slice,
)
from dralloc.validation.resource.names import (
    validate_dns_label,
    validate_node_name,
    validate_qualified_name,
)


def _counter_name(name: str, path: str) -> E:
    return validate_dns_label(name, path)


def _named_counters(name: str, name_field: str, counters: dict[str, Counter] | None, limit: int, path: str) -> E:
    """A counter set, or a device's consumption of one: a DNS-label name and a non-empty counter map."""
    errs: E = []
    if not name:
        errs.append(f.required(f.child(path, name_field)))
    else:
        errs.extend(_counter_name(name, f.child(path, name_field)))
    if not counters:
        errs.append(f.required(f.child(path, "counters")))
    else:
        errs.extend(validate_map(counters, limit, 63, _counter_name, no_errors, f.child(path, "counters")))
    return errs


def validate_counter_set(cs: CounterSet, path: str) -> E:
    return _named_counters(cs.name, "name", cs.counters, SLICE_MAX_COUNTERS_PER_SET, path)


def _counter_consumption(cc: DeviceCounterConsumption, path: str) -> E:
    errs = _named_counters(cc.counter_set, "counterSet", cc.counters, SLICE_MAX_COUNTERS_PER_CONSUMPTION, path)
    errs.extend(validate_set(cc.compatibility_groups, COMPATIBILITY_GROUPS_MAX, validate_dns_label, identity,
                             f.child(path, "compatibilityGroups")))
    return errs


def _attribute_values(device: Device) -> int:
    n = 0
    for a in (device.attributes or {}).values():
        if a.ints is None and a.bools is None and a.strings is None and a.versions is None:
            n += 1  # (the common single value, without four calls of len)
            continue
        lists = len(a.bools or ()) + len(a.ints or ()) + len(a.strings or ()) + len(a.versions or ())
        n += lists if lists else 1
    return n


def _plain_device(device: Device) -> bool:
    """A device of a name, attributes of single values and capacities without a request policy, that passes
    every check below (and has none of the optional parts): most devices of most slices. True only when
    :func:`validate_device` of a new device, without per-device node selection, finds nothing (its full
    checks give the same answer)."""
    return plain_new_devices((device,))


def plain_new_devices(devices: Iterable[Device]) -> bool:
    """Whether every device is plain (:func:`_plain_device`), checked for a whole slice at once: the devices'
    names and their attribute and capacity names as three sets (a driver repeats them on every node: each set
    is one comparison with the names found good before), each device's attribute values in one loop."""
    names: set[str] = set()
    attribute_names: set[str] = set()
    capacity_names: set[str] = set()
    for device in devices:
        attributes, capacity = device.attributes, device.capacity
        if not (device.taints is None and not device.consumes_counters and device.node_name is None
                and device.node_selector is None and device.all_nodes is None and device.binding_conditions is None
                and device.binding_failure_conditions is None and not device.node_allocatable_resource_mappings
                and not device.node_allocatable_resources
                and (len(attributes) if attributes else 0) + (len(capacity) if capacity else 0)
                <= MAX_ATTRIBUTES_AND_CAPACITIES):  # (so there are fewer attribute values than MAX_ATTRIBUTE_VALUES too)
            return False
        if attributes:
            if not _plain_attributes(attributes.values()):
                return False
            attribute_names.update(attributes)
        if capacity:
            for c in capacity.values():
                if c.request_policy is not None:  # (_no_request_policy)
                    return False
            capacity_names.update(capacity)
        names.add(device.name)
    return (names_known_good(validate_dns_label, names)
            and names_known_good(validate_qualified_name, attribute_names)
            and names_known_good(validate_qualified_name, capacity_names))


def plain_new_device(per_device_node_selection: bool | None) -> Callable[[Device], bool] | None:
    """The check of a new slice's devices that :func:`validate_device` need not see (None: it sees them all)."""
    return None if per_device_node_selection else _plain_device


def validate_device(device: Device, old: Device | None, path: str, per_device_node_selection: bool | None) -> E:
    if old is None and not per_device_node_selection and _plain_device(device):
        return []
    errs = validate_dns_label(device.name, f.child(path, "name"))
    n = len(device.attributes or {}) + len(device.capacity or {})
    if n > MAX_ATTRIBUTES_AND_CAPACITIES:
        errs.append(f.invalid(path, n, "the total number of attributes and capacities must not exceed "
                                       f"{MAX_ATTRIBUTES_AND_CAPACITIES}"))
    values = _attribute_values(device)
    if values > MAX_ATTRIBUTE_VALUES:
        errs.append(f.invalid(path, values, f"the total number of attribute values must not exceed {MAX_ATTRIBUTE_VALUES}"))
    errs.extend(validate_map(device.attributes, -1, ATTRIBUTE_KEY_MAX, validate_qualified_name, _attribute,
                             f.child(path, "attributes"), _plain_attribute))
    if old is None or old.capacity != device.capacity:
        capacity_fn = _multi_capacity if device.allow_multiple_allocations else _single_capacity
        errs.extend(validate_map(device.capacity, -1, ATTRIBUTE_KEY_MAX, validate_qualified_name, capacity_fn,
                                 f.child(path, "capacity"), _no_request_policy))
    # The optional parts below are skipped when absent: most devices have none of them.
    if device.taints and (old is None or old.taints != device.taints):
        errs.extend(validate_slice(device.taints, TAINTS_MAX, lambda t, p: validate_taint(t, None, p),
                                   f.child(path, "taints")))
    if device.consumes_counters:
        errs.extend(validate_set(device.consumes_counters, SLICE_MAX_CONSUMPTIONS_PER_DEVICE,
                                 _counter_consumption, lambda c: c.counter_set, f.child(path, "consumesCounters")))
    if per_device_node_selection:
        set_fields: list[str] = []
        if device.node_name is not None:
            if device.node_name:
                set_fields.append("`nodeName`")
                errs.extend(validate_node_name(device.node_name, f.child(path, "nodeName")))
            else:
                errs.append(f.invalid(f.child(path, "nodeName"), "", "must not be empty"))
        if device.node_selector is not None:
            set_fields.append("`nodeSelector`")
            errs.extend(validate_node_selector(device.node_selector, f.child(path, "nodeSelector")))
        if device.all_nodes is not None:
            if device.all_nodes:
                set_fields.append("`allNodes`")
            else:
                errs.append(f.invalid(f.child(path, "allNodes"), False, "must be either unset or set to true"))
        detail = ("exactly one of `nodeName`, `nodeSelector`, or `allNodes` is required when "
                  "`perDeviceNodeSelection` is set to true in the ResourceSlice spec")
        if not set_fields:
            errs.append(f.required(path, detail))
        elif len(set_fields) > 1:
            errs.append(f.invalid(path, "{" + ", ".join(set_fields) + "}", detail))
    elif device.node_name is not None or device.node_selector is not None or device.all_nodes is not None:
        errs.append(f.invalid(path, None, "`nodeName`, `nodeSelector` and `allNodes` can only be set if "
                                          "`perDeviceNodeSelection` is set to true in the ResourceSlice spec"))
    if device.binding_conditions is not None or device.binding_failure_conditions is not None:
        errs.extend(validate_binding_parameters(device.binding_conditions, device.binding_failure_conditions, path))
    if device.node_allocatable_resource_mappings:
        errs.extend(_node_allocatable_mappings(device, f.child(path, "nodeAllocatableResourceMappings")))
    if device.node_allocatable_resources:
        errs.extend(_node_allocatable_resources(device, f.child(path, "nodeAllocatableResources")))
    return errs


def _plain_attribute(a: DeviceAttribute) -> bool:
    """A single scalar value that is certainly valid: the common attribute, for which :func:`_attribute` finds
    nothing (its full check gives the same answer)."""
    return _plain_attributes((a,))


def _plain_attributes(attributes: Iterable[DeviceAttribute]) -> bool:
    """:func:`_plain_attribute` of every attribute, in one loop (a device's attributes: no call per value)."""
    for a in attributes:
        if a.ints is not None or a.bools is not None or a.strings is not None or a.versions is not None:
            return False
        st, ver, i, b = a.string, a.version, a.int_, a.bool_
        if st is not None:
            if not (ver is None and i is None and b is None and (
                    len(st) <= ATTRIBUTE_VALUE_MAX // 4 or len(st.encode("utf-8")) <= ATTRIBUTE_VALUE_MAX)):
                return False
        elif ver is not None:
            if not (i is None and b is None and len(ver) <= ATTRIBUTE_VALUE_MAX and is_semver(ver)):
                return False
        elif (i is None) == (b is None):
            return False
    return True


def _attribute(a: DeviceAttribute, path: str) -> E:
    if _plain_attribute(a):
        return []
    errs: E = []
    n = 0
    if a.bool_ is not None:
        n += 1
    if a.int_ is not None:
        n += 1
    if a.string is not None:
        n += 1
        errs.extend(_string_value(a.string, f.child(path, "string")))
    if a.version is not None:
        n += 1
        errs.extend(_version_value(a.version, f.child(path, "version")))
    lists: tuple[tuple[str, list[bool] | list[int] | list[str] | None, Callable[[str, str], E] | None], ...] = (
        ("bools", a.bools, None), ("ints", a.ints, None), ("strings", a.strings, _string_value),
        ("versions", a.versions, _version_value))
    for name, items, item_fn in lists:
        if items is None:
            continue
        n += 1
        lpath = f.child(path, name)
        if not items:
            errs.append(f.invalid(lpath, [], "must not be empty if specified"))
        if item_fn is not None:
            for i, value in enumerate(items):
                errs.extend(item_fn(str(value), f.index(lpath, i)))
    if n == 0:
        errs.append(f.invalid(path, "", "exactly one value must be specified"))
    elif n > 1:
        errs.append(f.invalid(path, to_dict(a), "exactly one value must be specified"))
    return errs


def _string_value(value: str, path: str) -> E:
    if len(value.encode("utf-8")) > ATTRIBUTE_VALUE_MAX:
        return [f.too_long(path, ATTRIBUTE_VALUE_MAX)]
    return []


def _version_value(value: str, path: str) -> E:
    errs: E = []
    if not is_semver(value):
        errs.append(f.invalid(path, value, "must be a string compatible with semver.org spec 2.0.0"))
    if len(value.encode("utf-8")) > ATTRIBUTE_VALUE_MAX:
        errs.append(f.too_long(path, ATTRIBUTE_VALUE_MAX))
    return errs


def _no_request_policy(c: DeviceCapacity) -> bool:
    """A capacity without a request policy, which both capacity checks below accept."""
    return c.request_policy is None


def _single_capacity(c: DeviceCapacity, path: str) -> E:
    if c.request_policy is not None:
        return [f.forbidden(f.child(path, "requestPolicy"), "allowMultipleAllocations must be true")]
    return []


def _multi_capacity(c: DeviceCapacity, path: str) -> E:
    if c.request_policy is None:
        return []
    policy = c.request_policy
    ppath = f.child(path, "requestPolicy")
    if policy.valid_values and policy.valid_range is not None:
        return [f.forbidden(ppath, 'exactly one policy can be specified, cannot specify "validValues" and '
                                   '"validRange" at the same time')]
    if policy.valid_values:
        if policy.default is None:
            return [f.required(f.child(ppath, "default"), "required when validValues is defined")]
        return _valid_values(policy.default, c.value, policy.valid_values, f.child(ppath, "validValues"))
    if policy.valid_range is not None:
        if policy.default is None:
            return [f.required(f.child(ppath, "default"), "required when validRange is defined")]
        return _valid_range(policy.default, c.value, policy.valid_range, f.child(ppath, "validRange"))
    return []


def _valid_values(default: Quantity, capacity: Quantity, values: list[Quantity], path: str) -> E:
    errs: E = []
    for i in range(len(values) - 1):
        if values[i] > values[i + 1]:
            errs.append(f.invalid(f.index(path, i + 1), str(values[i + 1]), "values must be sorted in ascending order"))
    found = False

    def one(option: Quantity, p: str) -> E:
        nonlocal found
        out: E = []
        if option > capacity:
            out.append(f.invalid(p, str(option), f"option is larger than capacity value: {capacity}"))
        if option == default:
            found = True
        return out

    # Duplicates are keyed by the integer value as a string, as upstream does without fractional ranges.
    errs.extend(validate_set(values, VALID_VALUES_MAX, one, lambda q: str(q.value()), path))
    if not found:
        errs.append(f.invalid(path, str(default), "default value is not valid according to the requestPolicy"))
    return errs


def _int64_range(q: Quantity, path: str) -> E:
    if q.sign() < 0:
        return [f.invalid(path, str(q), "must be greater than or equal to 0")]
    if q > MAX_INT64:
        return [f.invalid(path, str(q), f"must not be larger than {MAX_INT64}")]
    return []


def _valid_range(default: Quantity, capacity: Quantity, rng: CapacityRequestPolicyRange, path: str) -> E:
    if rng.min is None:
        return [f.required(f.child(path, "min"), "required when validRange is defined")]
    lo, hi, step = rng.min, rng.max, rng.step
    errs: E = []
    if lo > capacity:
        errs.append(f.invalid(f.child(path, "min"), str(lo), f"min is larger than capacity value: {capacity}"))
    if default < lo:
        errs.append(f.invalid(f.child(path, "default"), str(default), f"default is less than min: {lo}"))
    if hi is not None:
        if lo > hi:
            errs.append(f.invalid(f.child(path, "max"), str(lo), f"min is larger than max: {hi}"))
        if hi > capacity:
            errs.append(f.invalid(f.child(path, "max"), str(hi), f"max is larger than capacity value: {capacity}"))
        if default > hi:
            errs.append(f.invalid(f.child(path, "default"), str(default), f"default is more than max: {hi}"))
    if step is not None:
        spath = f.child(path, "step")
        if step.sign() <= 0:
            errs.append(f.invalid(spath, str(step), "must be greater than zero"))
        else:
            one_step = lo + step
            if one_step > capacity:
                errs.append(f.invalid(spath, str(step), f"one step {one_step} is larger than capacity value: {capacity}"))
            unsafe: E = []
            for q, name in ((default, "default"), (lo, "min"), (hi, "max"), (step, "step")):
                if q is not None:
                    unsafe.extend(_int64_range(q, f.child(path, name)))
            errs.extend(unsafe)
            if not unsafe:
                for value in (default, hi):
                    if value is None:
                        continue
                    if (value.value() - lo.value()) % step.value() != 0:
                        errs.append(f.invalid(spath, str(value),
                                              f"value is not a multiple of a given step ({step}) from ({lo})"))
    return errs


def _capacity_key(key: str | None, capacity: dict[str, DeviceCapacity], path: str) -> E:
    """A mapping's capacityKey must be non-empty and name one of the device's capacities."""
    if key is None:
        return []
    if not key:
        return [f.invalid(path, "", "capacityKey must not be an empty string")]
    if key not in capacity:
        return [f.FieldError(f.NOT_FOUND, path, key, "")]
    return []


def _node_allocatable_mappings(device: Device, path: str) -> E:
    """Kubernetes 1.36 `nodeAllocatableResourceMappings` (alpha)."""
    errs: E = []
    capacity = device.capacity or {}
    mappings = device.node_allocatable_resource_mappings or {}
    for name in sorted(mappings):
        mapping = mappings[name]
        kpath = f.key(path, name)
        if not is_node_allocatable_resource_name(name):
            errs.append(f.invalid(kpath, name, "must be a node allocatable resource name"))
        errs.extend(_capacity_key(mapping.capacity_key, capacity, f.child(kpath, "capacityKey")))
        m = mapping.allocation_multiplier
        if m is not None and m.sign() <= 0:
            errs.append(f.invalid(f.child(kpath, "allocationMultiplier"), str(m), "must be positive"))
    return errs


def _node_allocatable_resources(device: Device, path: str) -> E:
    """Kubernetes 1.37 `nodeAllocatableResources` (mapping and/or overhead)."""
    errs: E = []
    capacity = device.capacity or {}
    resources = device.node_allocatable_resources or {}
    for name in sorted(resources):
        res = resources[name]
        kpath = f.key(path, name)
        if not is_node_allocatable_resource_name(name):
            errs.append(f.invalid(kpath, name, "must be a node allocatable resource name"))
        if res.mapping is None and res.overhead is None:
            errs.append(f.required(kpath, "at least one of mapping or overhead must be set"))
        m = res.mapping
        if m is not None:
            mpath = f.child(kpath, "mapping")
            errs.extend(_capacity_key(m.capacity_key, capacity, f.child(mpath, "capacityKey")))
            if m.capacity_key is not None:
                if m.capacity_multiplier is None:
                    errs.append(f.required(f.child(mpath, "capacityMultiplier"),
                                           "capacityMultiplier is required when capacityKey is set"))
                elif m.capacity_multiplier.sign() <= 0:
                    errs.append(f.invalid(f.child(mpath, "capacityMultiplier"), str(m.capacity_multiplier),
                                          "must be positive"))
            if m.device_multiplier is not None and m.device_multiplier.sign() <= 0:
                errs.append(f.invalid(f.child(mpath, "deviceMultiplier"), str(m.device_multiplier), "must be positive"))
            if m.capacity_multiplier is not None and m.capacity_key is None:
                errs.append(f.required(f.child(mpath, "capacityKey"),
                                       "capacityKey is required when capacityMultiplier is set"))
        o = res.overhead
        if o is not None:
            opath = f.child(kpath, "overhead")
            if o.per_pod is None and o.per_container is None:
                errs.append(f.invalid(opath, "", "at least one of perPod or perContainer must be set"))
            else:
                if o.per_pod is not None and o.per_pod.sign() < 0:
                    errs.append(f.invalid(f.child(opath, "perPod"), str(o.per_pod), "must be non-negative"))
                if o.per_container is not None and o.per_container.sign() < 0:
                    errs.append(f.invalid(f.child(opath, "perContainer"), str(o.per_container), "must be non-negative"))
    return errs
