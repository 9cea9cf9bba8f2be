"""core/v1 LimitRange and ResourceQuota rules of kube-apiserver (pkg/apis/core/validation: ValidateLimitRange,
ValidateResourceQuota), on the decoded objects (quantities parsed). Resource names are gone through in sorted
order (upstream's follow Go's map order, which varies)."""

from __future__ import annotations

from dralloc.api.core_v1_limits import LimitRange, LimitRangeItem, ResourceList, ResourceQuota
from dralloc.api.quantity import Quantity
from dralloc.validation import field as f
from dralloc.validation.formats import is_qualified_name
from dralloc.validation.quantities import container_resource_name_errors, quantity_errors

LIMIT_TYPES = ("Pod", "Container", "PersistentVolumeClaim")
MAX_MILLI = (1 << 63) // 1000  # resource.MaxMilliValue
QUOTA_SCOPES = ["BestEffort", "CrossNamespacePodAffinity", "NotBestEffort", "NotTerminating", "PriorityClass",
                "Terminating", "VolumeAttributesClass"]


def _type_errors(value: str, path: str) -> list[f.FieldError]:
    """validateLimitRangeTypeName."""
    errs = [f.invalid(path, value, m) for m in is_qualified_name(value)]
    if not errs and "/" not in value and value not in LIMIT_TYPES:
        errs.append(f.invalid(path, value, "must be a standard limit type or fully qualified"))
    return errs


def _resource_name_errors(limit_type: str, name: str, path: str) -> list[f.FieldError]:
    if limit_type in ("Pod", "Container"):
        return container_resource_name_errors(name, path)
    return [f.invalid(path, name, m) for m in is_qualified_name(name)]


def _item_errors(limit: LimitRangeItem, path: str) -> list[f.FieldError]:
    errs: list[f.FieldError] = []
    lists: dict[str, ResourceList] = {"max": limit.max or {}, "min": limit.min or {}, "default": limit.default or {},
                                      "defaultRequest": limit.default_request or {}}
    if limit.type != "Pod":
        lists["maxLimitRequestRatio"] = limit.max_limit_request_ratio or {}
    keys: set[str] = set()
    for part, resources in lists.items():
        for name in sorted(resources):
            errs += _resource_name_errors(limit.type, name, f.key(f.child(path, part), name))
            keys.add(name)
    if limit.type == "Pod":
        if limit.default:
            errs.append(f.forbidden(f.child(path, "default"), "may not be specified when `type` is 'Pod'"))
        if limit.default_request:
            errs.append(f.forbidden(f.child(path, "defaultRequest"), "may not be specified when `type` is 'Pod'"))
    for name in sorted(keys):
        low, high = lists["min"].get(name), lists["max"].get(name)
        default, request = lists["default"].get(name), lists["defaultRequest"].get(name)
        ratio = lists.get("maxLimitRequestRatio", {}).get(name)

        def at(part: str, name: str = name) -> str:
            return f.key(f.child(path, part), name)

        if low is not None and high is not None and low > high:
            errs.append(f.invalid(at("min"), str(low), f"min value {low} is greater than max value {high}"))
        if request is not None and low is not None and low > request:
            errs.append(f.invalid(at("defaultRequest"), str(request),
                                  f"min value {low} is greater than default request value {request}"))
        if request is not None and high is not None and request > high:
            errs.append(f.invalid(at("defaultRequest"), str(request),
                                  f"default request value {request} is greater than max value {high}"))
        if request is not None and default is not None and request > default:
            errs.append(f.invalid(at("defaultRequest"), str(request),
                                  f"default request value {request} is greater than default limit value {default}"))
        if default is not None and low is not None and low > default:
            errs.append(f.invalid(at("default"), str(low), f"min value {low} is greater than default value {default}"))
        if default is not None and high is not None and default > high:
            errs.append(f.invalid(at("default"), str(high),
                                  f"default value {default} is greater than max value {high}"))
        if ratio is not None and ratio < Quantity(1):
            errs.append(f.invalid(at("maxLimitRequestRatio"), str(ratio), f"ratio {ratio} is less than 1"))
        if ratio is not None and low is not None and high is not None and not low.is_zero():
            errs += _ratio_bound_errors(ratio, low, high, at("maxLimitRequestRatio"))
    return errs


def _ratio_bound_errors(ratio: Quantity, low: Quantity, high: Quantity, path: str) -> list[f.FieldError]:
    ratio_value, low_value, high_value = float(ratio.value()), low.value(), high.value()
    if ratio.value() < MAX_MILLI and low_value < MAX_MILLI and high_value < MAX_MILLI:
        ratio_value, low_value, high_value = ratio.milli_value() / 1000, low.milli_value(), high.milli_value()
    bound = high_value / low_value
    if ratio_value > bound:
        return [f.invalid(path, str(ratio), f"ratio {ratio} is greater than max/min = {bound:f}")]
    return []


def limit_range_errors(limit_range: LimitRange) -> list[f.FieldError]:
    """ValidateLimitRange's rules of the spec (the metadata's are the caller's)."""
    errs: list[f.FieldError] = []
    seen: set[str] = set()
    for i, limit in enumerate(limit_range.spec.limits):
        path = f.index("spec.limits", i)
        errs += _type_errors(limit.type, f.child(path, "type"))
        if limit.type in seen:
            errs.append(f.duplicate(f.child(path, "type"), limit.type))
        seen.add(limit.type)
        errs += _item_errors(limit, path)
    return errs


def resource_quota_errors(quota: ResourceQuota) -> list[f.FieldError]:
    """ValidateResourceQuota's rules of the spec: each hard limit a resource name and quantity, known scopes."""
    errs: list[f.FieldError] = []
    for name, value in sorted((quota.spec.hard or {}).items()):
        path = f.key("spec.hard", name)
        errs += [f.invalid(path, name, m) for m in is_qualified_name(name)]
        errs += quantity_errors(name, value, path)
    for i, scope in enumerate(quota.spec.scopes or []):
        if scope not in QUOTA_SCOPES:
            errs.append(f.not_supported(f.index("spec.scopes", i), scope, QUOTA_SCOPES))
    return errs
