"""Parts that claims, classes and slices share: opaque configuration, tolerations, taints, binding
conditions and the node operations a device may skip."""

from __future__ import annotations

import json

from dralloc.api.resource_v1 import (
    DeviceAllocationConfiguration,
    DeviceClaimConfiguration,
    DeviceClassConfiguration,
    DeviceTaint,
    DeviceToleration,
)
from dralloc.validation import field as f
from dralloc.validation.meta import validate_label_name
from dralloc.validation.resource.limits import (
    BINDING_CONDITIONS_MAX,
    OPAQUE_PARAMETERS_MAX,
    SKIP_NODE_OPERATIONS,
    TAINT_EFFECTS,
    TOLERATION_OPERATORS,
)
from dralloc.validation.resource.lists import E, validate_slice
from dralloc.validation.resource.names import validate_driver_name, validate_label_value

# The configuration entries of a claim, a class and an allocation: each may carry opaque parameters.
DeviceConfigurationPart = DeviceClaimConfiguration | DeviceClassConfiguration | DeviceAllocationConfiguration


def validate_device_configuration(config: DeviceConfigurationPart, path: str, stored: bool) -> E:
    if config.opaque is None:
        return [f.required(f.child(path, "opaque"))]
    opath = f.child(path, "opaque")
    errs = validate_driver_name(config.opaque.driver, f.child(opath, "driver"))
    errs.extend(validate_raw_extension(config.opaque.parameters, f.child(opath, "parameters"), stored,
                                       OPAQUE_PARAMETERS_MAX))
    return errs


def validate_raw_extension(value: object, path: str, stored: bool, limit: int) -> E:
    """A RawExtension must be a JSON object of at most ``limit`` bytes (limit only for new data)."""
    if value is None:
        return [f.required(path)]
    size = len(json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode("utf-8"))
    if not stored and size > limit:
        return [f.too_long(path, limit)]
    if not isinstance(value, dict):
        return [f.invalid(path, "<value omitted>", "must be a valid JSON object")]
    return []


def validate_toleration(t: DeviceToleration, path: str) -> E:
    errs: E = []
    if t.key:
        errs.extend(validate_label_name(t.key, f.child(path, "key")))
    op = t.operator or ""
    value = t.value or ""
    if op == "Exists":
        if value:
            errs.append(f.invalid(f.child(path, "value"), value, "must be empty for operator `Exists`"))
    elif op == "Equal":
        errs.extend(validate_label_value(value, f.child(path, "value")))
    elif op == "":
        errs.append(f.required(f.child(path, "operator")))
    else:
        errs.append(f.not_supported(f.child(path, "operator"), op, TOLERATION_OPERATORS))
    if t.effect and t.effect not in TAINT_EFFECTS:
        errs.append(f.not_supported(f.child(path, "effect"), t.effect, TAINT_EFFECTS))
    return errs


def validate_taint(taint: DeviceTaint, old: DeviceTaint | None, path: str) -> E:
    errs = validate_label_name(taint.key, f.child(path, "key"))
    if taint.value:
        errs.extend(validate_label_value(taint.value, f.child(path, "value")))
    if old is None or old.effect != taint.effect:
        if not taint.effect:
            errs.append(f.required(f.child(path, "effect")))
        elif taint.effect not in TAINT_EFFECTS:
            errs.append(f.not_supported(f.child(path, "effect"), taint.effect, TAINT_EFFECTS))
    return errs


def validate_binding_parameters(conditions_in: list[str] | None, failures_in: list[str] | None, path: str) -> E:
    conditions = conditions_in or []
    failures = failures_in or []
    cpath, fpath = f.child(path, "bindingConditions"), f.child(path, "bindingFailureConditions")
    errs = validate_slice(conditions, BINDING_CONDITIONS_MAX, validate_label_name, cpath)
    errs.extend(validate_slice(failures, BINDING_CONDITIONS_MAX, validate_label_name, fpath))
    seen: set[str] = set()
    for i, c in enumerate(conditions):
        if c in seen:
            errs.append(f.duplicate(f.index(cpath, i), c))
        seen.add(c)
    seen_f: set[str] = set()
    cond_set = set(conditions)
    for i, c in enumerate(failures):
        if c in seen_f:
            errs.append(f.duplicate(f.index(fpath, i), c))
        seen_f.add(c)
        if c in cond_set:
            errs.append(f.invalid(f.index(fpath, i), c, "bindingFailureConditions must not overlap with bindingConditions"))
    if not conditions and failures:
        errs.append(f.invalid(cpath, conditions_in, "bindingConditions are required to use bindingFailureConditions"))
    if not failures and conditions:
        errs.append(f.invalid(fpath, failures_in, "bindingFailureConditions are required to use bindingConditions"))
    return errs


def validate_skip_node_operations(ops: list[str] | None, path: str) -> E:
    if not ops:
        return []
    errs: E = []
    seen: set[str] = set()
    for i, op in enumerate(ops):
        if op not in SKIP_NODE_OPERATIONS:
            errs.append(f.not_supported(f.index(path, i), op, SKIP_NODE_OPERATIONS))
        if op in seen:
            errs.append(f.duplicate(f.index(path, i), op))
        seen.add(op)
    if "NodePrepareResources" in seen and not ({"NodeUnprepareResources", "*"} & seen):
        errs.append(f.invalid(path, ops, "NodePrepareResources cannot be skipped unless NodeUnprepareResources "
                                         "is also skipped"))
    return errs
