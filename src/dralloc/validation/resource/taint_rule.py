"""A DeviceTaintRule's spec and status."""

from __future__ import annotations

from dralloc.api.resource_v1 import DeviceTaintRuleSpec, DeviceTaintRuleStatus
from dralloc.validation import field as f
from dralloc.validation.meta import validate_conditions
from dralloc.validation.resource.common import validate_taint
from dralloc.validation.resource.limits import TAINT_RULE_MAX_CONDITIONS
from dralloc.validation.resource.lists import E
from dralloc.validation.resource.names import validate_dns_label, validate_driver_name, validate_pool_name


def validate_taint_rule_spec(spec: DeviceTaintRuleSpec, old_spec: DeviceTaintRuleSpec | None, path: str = "spec") -> E:
    errs: E = []
    sel = spec.device_selector
    spath = f.child(path, "deviceSelector")
    if sel is not None:
        if sel.driver is not None:
            errs.extend(validate_driver_name(sel.driver, f.child(spath, "driver")))
        if sel.pool is not None:
            errs.extend(validate_pool_name(sel.pool, f.child(spath, "pool")))
        if sel.device is not None:
            errs.extend(validate_dns_label(sel.device, f.child(spath, "device")))
    errs.extend(validate_taint(spec.taint, old_spec.taint if old_spec is not None else None, f.child(path, "taint")))
    return errs


def validate_taint_rule_status(status: DeviceTaintRuleStatus | None, path: str = "status") -> E:
    conditions = (status.conditions if status is not None else None) or []
    errs = validate_conditions(conditions, f.child(path, "conditions"))
    if len(conditions) > TAINT_RULE_MAX_CONDITIONS:
        errs.append(f.too_many(f.child(path, "conditions"), len(conditions), TAINT_RULE_MAX_CONDITIONS))
    return errs
