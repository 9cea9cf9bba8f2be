"""Names and formats of resource.k8s.io objects (drivers, pools, qualified names, UIDs), and CEL selectors."""

from __future__ import annotations

from functools import lru_cache

from dralloc.api.resource_v1 import DeviceSelector
from dralloc.cel import CELCompileError, compile_selector
from dralloc.cel.plan import PROGRAM_ERROR_PREFIX
from dralloc.validation import field as f
from dralloc.validation.formats import (
    are_dns1123_subdomains,
    is_c_identifier,
    is_dns1123_label,
    is_dns1123_subdomain,
    is_label_value,
    uuid_problem,
)
from dralloc.validation.resource.limits import (
    CEL_MAX_COST,
    CEL_MAX_LENGTH,
    DEVICE_MAX_ID,
    DRIVER_NAME_MAX,
    POOL_NAME_MAX,
    SELECTORS_MAX,
)
from dralloc.validation.resource.lists import E, errors_at, validate_slice


def validate_driver_name(name: str | None, path: str) -> E:
    """A driver's name repeats on every slice, class config and claim of it: its errors are worked out once
    per name."""
    return errors_at(_driver_name_errors, name or "", path)


def _driver_name_errors(name: str, path: str) -> E:
    if not name:
        return [f.required(path)]
    errs: E = []
    if len(name) > DRIVER_NAME_MAX:
        errs.append(f.too_long(path, DRIVER_NAME_MAX))
    errs.extend(f.invalid(path, name, m) for m in is_dns1123_subdomain(name.lower()))
    return errs


@lru_cache(maxsize=4096)
def _dns_label_problems(name: str) -> tuple[str, ...]:
    """A name's DNS-label problems depend on the name alone, and a driver's names repeat on every node
    (``gpu-0`` ... ``gpu-7``): each is checked once."""
    return tuple(is_dns1123_label(name))


def is_dns_label(name: str) -> bool:
    return not _dns_label_problems(name)


def validate_dns_label(name: str | None, path: str) -> E:
    name = name or ""
    return [f.invalid(path, name, m) for m in _dns_label_problems(name)]


def validate_dns_subdomain(name: str | None, path: str) -> E:
    name = name or ""
    return [f.invalid(path, name, m) for m in is_dns1123_subdomain(name)]


def validate_pool_name(name: str | None, path: str) -> E:
    name = name or ""
    if are_dns1123_subdomains(name, POOL_NAME_MAX):
        return []  # (the common answer, in one match: every part is a subdomain, none of them too long)
    if not name:
        return [f.required(path)]
    errs: E = []
    if len(name) > POOL_NAME_MAX:
        errs.append(f.too_long(path, POOL_NAME_MAX))
    for part in name.split("/"):
        errs.extend(validate_dns_subdomain(part, path))
    return errs


def validate_node_name(name: str, path: str) -> E:
    return [f.invalid(path, name, m) for m in is_dns1123_subdomain(name)]


def validate_device_class_name(name: str | None, path: str) -> E:
    if not name:
        return [f.required(path)]
    return validate_dns_subdomain(name, path)


def _c_identifier(ident: str, path: str) -> E:
    errs: E = []
    if len(ident) > DEVICE_MAX_ID:
        errs.append(f.too_long(path, DEVICE_MAX_ID))
    errs.extend(f.invalid(path, ident, m) for m in is_c_identifier(ident))
    return errs


def validate_qualified_name(name: str, path: str) -> E:
    parts = name.split("/")
    if len(parts) == 1:
        return _c_identifier(parts[0], path)
    if len(parts) == 2:
        errs: E = []
        if not parts[0]:
            errs.append(f.invalid(path, "", "the domain must not be empty"))
        else:
            errs.extend(validate_driver_name(parts[0], path))
        if not parts[1]:
            errs.append(f.invalid(path, "", "the name must not be empty"))
        else:
            errs.extend(_c_identifier(parts[1], path))
        return errs
    return [f.invalid(path, name, "must not contain more than one slash")]


def validate_fully_qualified_name(name: str, path: str) -> E:
    errs = validate_qualified_name(name, path)
    if "/" not in name:
        errs.append(f.invalid(path, name, "a fully qualified name must be a domain and a name separated by a slash"))
    return errs


def validate_uid(uid: str, path: str) -> E:
    problem = uuid_problem(uid)
    if problem:
        return [f.invalid(path, uid, f"error validating uid: {problem}")]
    if len(uid) != 36 or uid != uid.lower():
        return [f.invalid(path, uid, "uid must be in RFC 4122 normalized form, "
                          "`xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx` with lowercase hexadecimal characters")]
    return []


def validate_label_value(value: str, path: str) -> E:
    return [f.invalid(path, value, m) for m in is_label_value(value)]


# --- CEL ------------------------------------------------------------------------------------------

def validate_cel_expression(expression: str, path: str, stored: bool) -> E:
    if stored:
        return []  # stored expressions were valid when written; upstream does not recompile them
    if len(expression.encode("utf-8")) > CEL_MAX_LENGTH:
        return [f.too_long(path, CEL_MAX_LENGTH)]
    try:
        selector = compile_selector(expression)  # the same checker the allocator and `dralloc cel` use
    except CELCompileError as exc:
        if exc.prefix == PROGRAM_ERROR_PREFIX:  # upstream classes a failed program instantiation as internal
            return [f.internal(path, exc.detail)]
        return [f.invalid(path, expression, exc.detail)]
    if selector.max_cost > CEL_MAX_COST:
        return [f.forbidden(path, "too complex, exceeds cost limit")]
    return []


def validate_selectors(selectors: list[DeviceSelector] | None, path: str, stored: bool) -> E:
    def one(sel: DeviceSelector, p: str) -> E:
        if sel.cel is None:
            return [f.required(f.child(p, "cel"))]
        return validate_cel_expression(sel.cel.expression, f.child(f.child(p, "cel"), "expression"), stored)

    return validate_slice(selectors, SELECTORS_MAX, one, path)
