"""kube-apiserver's validation of resource.k8s.io objects (pkg/apis/resource/validation), rule by rule.

Every function returns the complete list of field errors of its part, in upstream's order, so one call
reports everything wrong with an object. Maps are walked in sorted key order (upstream walks Go maps in
random order; sorting keeps our output deterministic).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Hashable, Iterable
from typing import Any, TypeVar

from dralloc.api.quantity import Quantity
from dralloc.cel import CELCompileError, compile_selector
from dralloc.cel.plan import PROGRAM_ERROR_PREFIX
from dralloc.validation import field as f
from dralloc.validation.formats import (
    is_c_identifier,
    is_dns1123_label,
    is_dns1123_subdomain,
    is_extended_resource_name,
    is_label_value,
    is_node_allocatable_resource_name,
    is_semver,
    uuid_problem,
)
from dralloc.validation.meta import (
    IMMUTABLE,
    validate_conditions,
    validate_label_name,
    validate_node_selector,
)

E = list[f.FieldError]
T = TypeVar("T")

# Limits (k8s.io/api/resource/v1 constants).
DRIVER_NAME_MAX = 63
POOL_NAME_MAX = 253
DEVICE_MAX_DOMAIN = 63
DEVICE_MAX_ID = 32
ATTRIBUTE_KEY_MAX = DEVICE_MAX_DOMAIN + 1 + DEVICE_MAX_ID
ATTRIBUTE_VALUE_MAX = 64
SLICE_MAX_DEVICES = 128
SLICE_MAX_DEVICES_ADVANCED = 64
SLICE_MAX_COUNTER_SETS = 8
SLICE_MAX_COUNTERS_PER_SET = 32
SLICE_MAX_CONSUMPTIONS_PER_DEVICE = 2
SLICE_MAX_COUNTERS_PER_CONSUMPTION = 32
MAX_ATTRIBUTES_AND_CAPACITIES = 32
MAX_ATTRIBUTE_VALUES = 48
TAINTS_MAX = 16
REQUESTS_MAX = 32
CONSTRAINTS_MAX = 32
CONFIG_MAX = 32
SELECTORS_MAX = 32
FIRST_AVAILABLE_MAX = 8
DERIVED_ATTRIBUTES_MAX = 32
BINDING_CONDITIONS_MAX = 4
VALID_VALUES_MAX = 10
CEL_MAX_LENGTH = 10 * 1024
CEL_MAX_COST = 1_000_000
OPAQUE_PARAMETERS_MAX = 10 * 1024
RESERVED_FOR_MAX = 256
ALLOCATION_RESULTS_MAX = 32
DEVICE_STATUS_MAX_CONDITIONS = 8
DEVICE_STATUS_DATA_MAX = 10 * 1024
INTERFACE_NAME_MAX = 256
HARDWARE_ADDRESS_MAX = 128
NETWORK_MAX_IPS = 16
TAINT_RULE_MAX_CONDITIONS = 8
COMPATIBILITY_GROUPS_MAX = 2
MAX_INT64 = (1 << 63) - 1

TAINT_EFFECTS = ["NoExecute", "NoSchedule", "None"]  # sorted, as upstream lists them
TOLERATION_OPERATORS = ["Equal", "Exists"]
ALLOCATION_MODES = ["All", "ExactCount"]
CONFIG_SOURCES = ["FromClaim", "FromClass"]
SKIP_NODE_OPERATIONS = ["*", "NodePrepareResources", "NodeUnprepareResources"]
REQUEST_REF_DETAIL = "must be the name of a request in the claim or the name of a request and a subrequest separated by '/'"


# --- generic list and map helpers (upstream's validateSlice / validateSet / validateMap) --------------

def validate_slice(items: list[T] | None, max_size: int, item_fn: Callable[[T, str], E], path: str) -> E:
    items = items or []
    if 0 <= max_size < len(items):
        return [f.too_many(path, len(items), max_size)]  # short-circuits: no per-item errors
    errs: E = []
    for i, item in enumerate(items):
        errs.extend(item_fn(item, f.index(path, i)))
    return errs


def validate_set(items: list[T] | None, max_size: int, item_fn: Callable[[T, str], E],
                 key_fn: Callable[[T], Hashable], path: str) -> E:
    items = items or []
    if 0 <= max_size < len(items):
        return [f.too_many(path, len(items), max_size)]
    errs: E = []
    for i, item in enumerate(items):
        errs.extend(item_fn(item, f.index(path, i)))
    seen: set[Hashable] = set()
    for i, item in enumerate(items):
        k = key_fn(item)
        if k in seen:
            errs.append(f.duplicate(f.index(path, i), k))
        else:
            seen.add(k)
    return errs


def _truncate(text: str, limit: int) -> str:
    limit = max(limit, 16)
    if len(text) <= limit:
        return text
    remaining = limit - 3
    return text[: (remaining + 1) // 2] + "..." + text[len(text) - remaining // 2:]


_KEY_PROBLEMS: dict[tuple[Any, str], E] = {}
_PLACEHOLDER = "\0"


def _key_errors(key_fn: Callable[[str, str], E], k: str, path: str) -> E:
    """Key checks depend only on the key: compute them once per distinct key, then re-path them."""
    cached = _KEY_PROBLEMS.get((key_fn, k))
    if cached is None:
        if len(_KEY_PROBLEMS) > 100_000:
            _KEY_PROBLEMS.clear()
        cached = _KEY_PROBLEMS[(key_fn, k)] = key_fn(k, _PLACEHOLDER)
    if not cached:
        return cached
    return [f.FieldError(e.type, path, e.bad_value, e.detail) for e in cached]


def validate_map(m: dict[str, T] | None, max_size: int, key_len: int, key_fn: Callable[[str, str], E],
                 item_fn: Callable[[T, str], E], path: str) -> E:
    if not m:
        return []
    if 0 <= max_size < len(m):
        return [f.too_many(path, len(m), max_size)]
    errs: E = []
    for k in sorted(m):
        key_errs = _key_errors(key_fn, k, path)  # upstream reports key errors at the map's own path
        if key_errs:
            errs.extend(key_errs)
        item_errs = item_fn(m[k], f"{path}[{k if len(k) <= key_len else _truncate(k, key_len)}]")
        if item_errs:
            errs.extend(item_errs)
    return errs


def _ok(_: Any, __: str) -> E:
    return []


def _ident(x: T) -> T:
    return x


# --- names and formats ---------------------------------------------------------------------------

def validate_driver_name(name: str | None, path: str) -> E:
    name = name or ""
    if not name:
        return [f.required(path)]
    errs: E = []
    if len(name) > DRIVER_NAME_MAX:
        errs.append(f.too_long(path, DRIVER_NAME_MAX))
    errs.extend(f.invalid(path, name, m) for m in is_dns1123_subdomain(name.lower()))
    return errs


def validate_dns_label(name: str | None, path: str) -> E:
    name = name or ""
    return [f.invalid(path, name, m) for m in is_dns1123_label(name)]


def validate_dns_subdomain(name: str | None, path: str) -> E:
    name = name or ""
    return [f.invalid(path, name, m) for m in is_dns1123_subdomain(name)]


def validate_pool_name(name: str | None, path: str) -> E:
    name = name or ""
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


def _label_value(value: str, path: str) -> E:
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


def _selectors(selectors: list[Any] | None, path: str, stored: bool) -> E:
    def one(sel: Any, p: str) -> E:
        if sel.cel is None:
            return [f.required(f.child(p, "cel"))]
        return validate_cel_expression(sel.cel.expression, f.child(f.child(p, "cel"), "expression"), stored)

    return validate_slice(selectors, SELECTORS_MAX, one, path)


# --- ResourceClaim --------------------------------------------------------------------------------

class RequestNames:
    """The request and subrequest names of a claim, for checking references (`req` or `req/sub`)."""

    def __init__(self, device_claim: Any) -> None:
        self.names: dict[str, set[str] | None] = {}
        for r in (device_claim.requests if device_claim is not None else None) or ():
            if r.first_available:
                self.names[r.name] = {s.name for s in r.first_available}
            else:
                self.names[r.name] = None

    def has(self, ref: str) -> bool:
        parts = ref.split("/")
        if len(parts) > 2 or parts[0] not in self.names:
            return False
        if len(parts) == 1:
            return True
        subs = self.names[parts[0]]
        return subs is not None and parts[1] in subs


def _request_ref(ref: str, path: str, names: RequestNames) -> E:
    parts = ref.split("/")
    if len(parts) > 2:
        return [f.invalid(path, ref, REQUEST_REF_DETAIL)]
    errs: E = []
    for part in parts:
        errs.extend(validate_dns_label(part, path))
    if not names.has(ref):
        errs.append(f.invalid(path, ref, REQUEST_REF_DETAIL))
    return errs


def _request_refs(refs: list[str] | None, path: str, names: RequestNames) -> E:
    return validate_set(refs, REQUESTS_MAX, lambda r, p: _request_ref(r, p, names), _ident, path)


def validate_claim_spec(spec: Any, path: str, stored: bool = False) -> E:
    devices = spec.devices
    dpath = f.child(path, "devices")
    if devices is None:
        return []
    names = RequestNames(devices)
    constraint_attrs = _constraint_attributes(devices.constraints)
    errs: E = []
    errs.extend(validate_set(devices.requests, REQUESTS_MAX,
                             lambda r, p: _device_request(r, p, stored, constraint_attrs),
                             lambda r: r.name, f.child(dpath, "requests")))
    errs.extend(validate_slice(devices.constraints, CONSTRAINTS_MAX,
                               lambda c, p: _constraint(c, p, names), f.child(dpath, "constraints")))
    errs.extend(validate_slice(devices.config, CONFIG_MAX,
                               lambda c, p: _request_refs(c.requests, f.child(p, "requests"), names)
                               + _device_configuration(c, p, stored),
                               f.child(dpath, "config")))
    return errs


def _constraint_attributes(constraints: list[Any] | None) -> dict[str, set[str]]:
    attrs: dict[str, set[str]] = {}
    for c in constraints or ():
        name = c.match_attribute if c.match_attribute is not None else c.distinct_attribute
        if name is None:
            continue
        for target in c.requests or [""]:
            attrs.setdefault(target, set()).add(name)
    return attrs


def _device_request(request: Any, path: str, stored: bool, constraint_attrs: dict[str, set[str]]) -> E:
    errs = validate_dns_label(request.name, f.child(path, "name"))
    has_first = bool(request.first_available)
    has_exact = request.exactly is not None
    if not has_first and not has_exact:
        errs.append(f.required(path, "exactly one of `exactly` or `firstAvailable` is required"))
    elif has_first and has_exact:
        errs.append(f.invalid(path, None, "exactly one of `exactly` or `firstAvailable` is required, "
                                          "but multiple fields are set"))
    elif has_first:
        errs.extend(validate_set(
            request.first_available, FIRST_AVAILABLE_MAX,
            lambda s, p: _exact_request(s, p, stored, constraint_attrs, f"{request.name}/{s.name}", sub=True),
            lambda s: s.name, f.child(path, "firstAvailable")))
    else:
        errs.extend(_exact_request(request.exactly, f.child(path, "exactly"), stored, constraint_attrs,
                                   request.name, sub=False))
    return errs


def _exact_request(req: Any, path: str, stored: bool, constraint_attrs: dict[str, set[str]], ref: str,
                   sub: bool) -> E:
    errs: E = []
    if sub:
        errs.extend(validate_dns_label(req.name, f.child(path, "name")))
    errs.extend(validate_device_class_name(req.device_class_name, f.child(path, "deviceClassName")))
    errs.extend(_selectors(req.selectors, f.child(path, "selectors"), stored))
    errs.extend(_derived_attributes(req.derived_attributes, f.child(path, "derivedAttributes"), stored,
                                    constraint_attrs, ref))
    errs.extend(_allocation_mode(req.allocation_mode, req.count, f.child(path, "allocationMode"),
                                 f.child(path, "count")))
    # The API documents at most 16 tolerations, but kube-apiserver (1.36) enforces no limit on a request's.
    tpath = f.child(path, "tolerations")
    for i, t in enumerate(req.tolerations or ()):
        errs.extend(validate_toleration(t, f.index(tpath, i)))
    if req.capacity is not None and req.capacity.requests:
        cpath = f.child(f.child(path, "capacity"), "requests")
        errs.extend(validate_map(req.capacity.requests, -1, ATTRIBUTE_KEY_MAX, validate_qualified_name, _ok, cpath))
    return errs


def _derived_attributes(attrs: list[Any] | None, path: str, stored: bool, constraint_attrs: dict[str, set[str]],
                        ref: str) -> E:
    def used(name: str) -> bool:
        if name in constraint_attrs.get("", ()) or name in constraint_attrs.get(ref, ()):
            return True
        parent, sep, _ = ref.partition("/")
        return bool(sep) and name in constraint_attrs.get(parent, ())

    def one(attr: Any, p: str) -> E:
        errs: E = []
        if attr.name:
            errs.extend(validate_fully_qualified_name(attr.name, f.child(p, "name")))
            if not used(attr.name):
                errs.append(f.invalid(f.child(p, "name"), attr.name, "must be referenced by at least one "
                                      "matchAttribute or distinctAttribute constraint targeting this request"))
        else:
            errs.append(f.required(f.child(p, "name")))
        expression = attr.cel.expression if attr.cel is not None else ""
        if expression:
            errs.extend(validate_cel_expression(expression, f.child(f.child(p, "cel"), "expression"), stored))
        return errs

    return validate_set(attrs, DERIVED_ATTRIBUTES_MAX, one, lambda a: a.name, path)


def _allocation_mode(mode: str | None, count: int | None, mode_path: str, count_path: str) -> E:
    count = count or 0
    if mode == "All":
        if count != 0:
            return [f.invalid(count_path, count, "must not be specified when allocationMode is 'All'")]
    elif mode == "ExactCount" or mode is None:
        # None happens only when validating without defaulting; the default is ExactCount with count 1.
        if mode == "ExactCount" and count <= 0:
            return [f.invalid(count_path, count, "must be greater than zero")]
        if mode is None and count < 0:
            return [f.invalid(count_path, count, "must be greater than zero")]
    else:
        return [f.not_supported(mode_path, mode, ALLOCATION_MODES)]
    return []


def _constraint(c: Any, path: str, names: RequestNames) -> E:
    errs = _request_refs(c.requests, f.child(path, "requests"), names)
    if c.match_attribute is not None and c.distinct_attribute is not None:
        errs.append(f.invalid(path, "{`matchAttribute`, `distinctAttribute`}",
                              "exactly one of `matchAttribute` or `distinctAttribute` is required, "
                              "but multiple fields are set"))
    elif c.match_attribute is not None:
        errs.extend(validate_fully_qualified_name(c.match_attribute, f.child(path, "matchAttribute")))
    elif c.distinct_attribute is not None:
        errs.extend(validate_fully_qualified_name(c.distinct_attribute, f.child(path, "distinctAttribute")))
    else:
        errs.append(f.required(path, 'exactly one of "matchAttribute" or "distinctAttribute" is required, '
                                     "but multiple fields are set"))
    return errs


def _device_configuration(config: Any, path: str, stored: bool) -> E:
    if config.opaque is None:
        return [f.required(f.child(path, "opaque"))]
    opath = f.child(path, "opaque")
    errs = validate_driver_name(config.opaque.driver, f.child(opath, "driver"))
    errs.extend(validate_raw_extension(config.opaque.parameters, f.child(opath, "parameters"), stored,
                                       OPAQUE_PARAMETERS_MAX))
    return errs


def validate_raw_extension(value: Any, path: str, stored: bool, limit: int) -> E:
    """A RawExtension must be a JSON object of at most ``limit`` bytes (limit only for new data)."""
    if value is None:
        return [f.required(path)]
    size = len(json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode("utf-8"))
    if not stored and size > limit:
        return [f.too_long(path, limit)]
    if not isinstance(value, dict):
        return [f.invalid(path, "<value omitted>", "must be a valid JSON object")]
    return []


def validate_toleration(t: Any, path: str) -> E:
    errs: E = []
    if t.key:
        errs.extend(validate_label_name(t.key, f.child(path, "key")))
    op = t.operator or ""
    value = t.value or ""
    if op == "Exists":
        if value:
            errs.append(f.invalid(f.child(path, "value"), value, "must be empty for operator `Exists`"))
    elif op == "Equal":
        errs.extend(_label_value(value, f.child(path, "value")))
    elif op == "":
        errs.append(f.required(f.child(path, "operator")))
    else:
        errs.append(f.not_supported(f.child(path, "operator"), op, TOLERATION_OPERATORS))
    if t.effect and t.effect not in TAINT_EFFECTS:
        errs.append(f.not_supported(f.child(path, "effect"), t.effect, TAINT_EFFECTS))
    return errs


def validate_taint(taint: Any, old: Any | None, path: str) -> E:
    errs = validate_label_name(taint.key, f.child(path, "key"))
    if taint.value:
        errs.extend(_label_value(taint.value, f.child(path, "value")))
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


# --- ResourceClaim status -------------------------------------------------------------------------

def _shared_device_id(driver: str, pool: str, device: str, share_id: str | None) -> str:
    base = f"{driver}/{pool}/{device}"
    return f"{base}/{share_id}" if share_id else base


def validate_claim_status(status: Any, old_status: Any | None, deleting: bool, names: RequestNames,
                          path: str = "status") -> E:
    old_alloc = old_status.allocation if old_status is not None else None
    errs: E = []

    def ref(r: Any, p: str) -> E:
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
            from dralloc.api.codec import to_dict

            errs.append(f.invalid(f.child(path, "allocation"), to_dict(status.allocation), IMMUTABLE))
    elif status.allocation is not None:
        errs.extend(validate_allocation_result(status.allocation, f.child(path, "allocation"), names))
    return errs


def _device_status(d: Any, path: str, allocated: set[str]) -> E:
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
        errs.extend(validate_set(nd.ips, NETWORK_MAX_IPS, _interface_address, _ident, f.child(npath, "ips")))
    return errs


def _interface_address(value: str, path: str) -> E:
    import ipaddress

    try:
        iface = ipaddress.ip_interface(value)
    except ValueError:
        return [f.invalid(path, value, "must be a valid address in CIDR form, (e.g. 10.9.8.7/24 or 2001:db8::1/64)")]
    if "/" not in value:
        return [f.invalid(path, value, "must be a valid address in CIDR form, (e.g. 10.9.8.7/24 or 2001:db8::1/64)")]
    if str(iface) != value and iface.version == 4:
        return [f.invalid(path, value, f"must be in canonical form (\"{iface}\")")]
    return []


def validate_allocation_result(alloc: Any, path: str, names: RequestNames) -> E:
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


def _allocation_result(r: Any, path: str, names: RequestNames) -> E:
    errs = _request_ref(r.request, f.child(path, "request"), names)
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


def _allocation_config(c: Any, path: str, names: RequestNames) -> E:
    errs: E = []
    spath = f.child(path, "source")
    if not c.source:
        errs.append(f.required(spath))
    elif c.source not in CONFIG_SOURCES:
        errs.append(f.not_supported(spath, c.source, CONFIG_SOURCES))
    errs.extend(_request_refs(c.requests, f.child(path, "requests"), names))
    errs.extend(_device_configuration(c, path, False))
    return errs


# --- DeviceClass ----------------------------------------------------------------------------------

def validate_device_class_spec(spec: Any, old_spec: Any | None, path: str = "spec") -> E:
    stored = old_spec is not None and spec.selectors == old_spec.selectors
    errs = _selectors(spec.selectors, f.child(path, "selectors"), stored)
    stored = old_spec is not None and spec.config == old_spec.config
    errs.extend(validate_slice(spec.config, CONFIG_MAX, lambda c, p: _device_configuration(c, p, stored),
                               f.child(path, "config")))
    name = spec.extended_resource_name
    if name is not None and not is_extended_resource_name(name):
        errs.append(f.invalid(f.child(path, "extendedResourceName"), name, "must be a valid extended resource name"))
    return errs


# --- ResourceSlice --------------------------------------------------------------------------------

def _has_list_attributes(devices: Iterable[Any]) -> bool:
    for d in devices:
        for a in (d.attributes or {}).values():
            if a.ints is not None or a.bools is not None or a.strings is not None or a.versions is not None:
                return True
    return False


def validate_slice_spec(spec: Any, old_spec: Any | None, path: str = "spec") -> E:
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
            from dralloc.api.codec import to_dict

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
    advanced = any(d.taints or d.consumes_counters for d in devices) or _has_list_attributes(devices)
    max_devices = SLICE_MAX_DEVICES_ADVANCED if advanced else SLICE_MAX_DEVICES
    old_devices = {d.name: d for d in (old_spec.devices or [])} if old_spec is not None else {}
    errs.extend(validate_set(
        spec.devices, max_devices,
        lambda d, p: validate_device(d, old_devices.get(d.name), p, spec.per_device_node_selection),
        lambda d: d.name, f.child(path, "devices")))
    errs.extend(validate_set(spec.shared_counters, SLICE_MAX_COUNTER_SETS, _counter_set, lambda c: c.name,
                             f.child(path, "sharedCounters")))
    if spec.partition_type_attribute is not None:
        errs.extend(_partition_type_attribute(spec, path))
    errs.extend(validate_skip_node_operations(spec.skip_node_operations, f.child(path, "skipNodeOperations")))
    return errs


def _partition_type_attribute(spec: Any, path: str) -> E:
    name = spec.partition_type_attribute
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
            from dralloc.api.codec import to_dict

            errs.append(f.invalid(p, to_dict(attr), "must be a string value because `partitionTypeAttribute` "
                                                    "names this attribute"))
    return errs


def _counter_name(name: str, path: str) -> E:
    return validate_dns_label(name, path)


def _named_counters(name: str, name_field: str, counters: dict[str, Any] | None, limit: int, path: str) -> E:
    """A counter set, or a device's consumption of one: a DNS-label name and a non-empty counter map."""
    errs: E = []
    if not name:
        errs.append(f.required(f.child(path, name_field)))
    else:
        errs.extend(_counter_name(name, f.child(path, name_field)))
    if not counters:
        errs.append(f.required(f.child(path, "counters")))
    else:
        errs.extend(validate_map(counters, limit, 63, _counter_name, _ok, f.child(path, "counters")))
    return errs


def _counter_set(cs: Any, path: str) -> E:
    return _named_counters(cs.name, "name", cs.counters, SLICE_MAX_COUNTERS_PER_SET, path)


def _counter_consumption(cc: Any, path: str) -> E:
    errs = _named_counters(cc.counter_set, "counterSet", cc.counters, SLICE_MAX_COUNTERS_PER_CONSUMPTION, path)
    errs.extend(validate_set(cc.compatibility_groups, COMPATIBILITY_GROUPS_MAX, validate_dns_label, _ident,
                             f.child(path, "compatibilityGroups")))
    return errs


def _attribute_values(device: Any) -> int:
    n = 0
    for a in (device.attributes or {}).values():
        lists = len(a.bools or ()) + len(a.ints or ()) + len(a.strings or ()) + len(a.versions or ())
        n += lists if lists else 1
    return n


def validate_device(device: Any, old: Any | None, path: str, per_device_node_selection: bool | None) -> E:
    errs = validate_dns_label(device.name, f.child(path, "name"))
    n = len(device.attributes or {}) + len(device.capacity or {})
    if n > MAX_ATTRIBUTES_AND_CAPACITIES:
        errs.append(f.invalid(path, n, "the total number of attributes and capacities must not exceed "
                                       f"{MAX_ATTRIBUTES_AND_CAPACITIES}"))
    values = _attribute_values(device)
    if values > MAX_ATTRIBUTE_VALUES:
        errs.append(f.invalid(path, values, f"the total number of attribute values must not exceed {MAX_ATTRIBUTE_VALUES}"))
    errs.extend(validate_map(device.attributes, -1, ATTRIBUTE_KEY_MAX, validate_qualified_name, _attribute,
                             f.child(path, "attributes")))
    if old is None or old.capacity != device.capacity:
        capacity_fn = _multi_capacity if device.allow_multiple_allocations else _single_capacity
        errs.extend(validate_map(device.capacity, -1, ATTRIBUTE_KEY_MAX, validate_qualified_name, capacity_fn,
                                 f.child(path, "capacity")))
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


def _attribute(a: Any, path: str) -> E:
    # Fast path for the common single scalar value; the full check below gives the same answer.
    if a.ints is None and a.bools is None and a.strings is None and a.versions is None:
        st, ver, i, b = a.string, a.version, a.int_, a.bool_
        if st is not None:
            if ver is None and i is None and b is None and (
                    len(st) <= ATTRIBUTE_VALUE_MAX // 4 or len(st.encode("utf-8")) <= ATTRIBUTE_VALUE_MAX):
                return []
        elif ver is not None:
            if i is None and b is None and len(ver) <= ATTRIBUTE_VALUE_MAX and is_semver(ver):
                return []
        elif (i is None) != (b is None):
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
    for name, items in (("bools", a.bools), ("ints", a.ints), ("strings", a.strings), ("versions", a.versions)):
        if items is None:
            continue
        n += 1
        lpath = f.child(path, name)
        if not items:
            errs.append(f.invalid(lpath, [], "must not be empty if specified"))
        if name == "strings":
            for i, s in enumerate(items):
                errs.extend(_string_value(s, f.index(lpath, i)))
        elif name == "versions":
            for i, s in enumerate(items):
                errs.extend(_version_value(s, f.index(lpath, i)))
    if n == 0:
        errs.append(f.invalid(path, "", "exactly one value must be specified"))
    elif n > 1:
        from dralloc.api.codec import to_dict

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


def _single_capacity(c: Any, path: str) -> E:
    if c.request_policy is not None:
        return [f.forbidden(f.child(path, "requestPolicy"), "allowMultipleAllocations must be true")]
    return []


def _multi_capacity(c: Any, path: str) -> E:
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


def _valid_range(default: Quantity, capacity: Quantity, rng: Any, path: str) -> E:
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


def _capacity_key(key: str | None, capacity: dict[str, Any], path: str) -> E:
    """A mapping's capacityKey must be non-empty and name one of the device's capacities."""
    if key is None:
        return []
    if not key:
        return [f.invalid(path, "", "capacityKey must not be an empty string")]
    if key not in capacity:
        return [f.FieldError(f.NOT_FOUND, path, key, "")]
    return []


def _node_allocatable_mappings(device: Any, path: str) -> E:
    """Kubernetes 1.36 `nodeAllocatableResourceMappings` (alpha)."""
    errs: E = []
    capacity = device.capacity or {}
    for name in sorted(device.node_allocatable_resource_mappings or {}):
        mapping = device.node_allocatable_resource_mappings[name]
        kpath = f.key(path, name)
        if not is_node_allocatable_resource_name(name):
            errs.append(f.invalid(kpath, name, "must be a node allocatable resource name"))
        errs.extend(_capacity_key(mapping.capacity_key, capacity, f.child(kpath, "capacityKey")))
        m = mapping.allocation_multiplier
        if m is not None and m.sign() <= 0:
            errs.append(f.invalid(f.child(kpath, "allocationMultiplier"), str(m), "must be positive"))
    return errs


def _node_allocatable_resources(device: Any, path: str) -> E:
    """Kubernetes 1.37 `nodeAllocatableResources` (mapping and/or overhead)."""
    errs: E = []
    capacity = device.capacity or {}
    for name in sorted(device.node_allocatable_resources or {}):
        res = device.node_allocatable_resources[name]
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


# --- DeviceTaintRule ------------------------------------------------------------------------------

def validate_taint_rule_spec(spec: Any, old_spec: Any | None, path: str = "spec") -> E:
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


def validate_taint_rule_status(status: Any, path: str = "status") -> E:
    conditions = (status.conditions if status is not None else None) or []
    errs = validate_conditions(conditions, f.child(path, "conditions"))
    if len(conditions) > TAINT_RULE_MAX_CONDITIONS:
        errs.append(f.too_many(f.child(path, "conditions"), len(conditions), TAINT_RULE_MAX_CONDITIONS))
    return errs
