"""A ResourceClaim's spec (and a template's): requests and subrequests, constraints and configuration."""

from __future__ import annotations

from dralloc.api.resource_v1 import (
    DerivedAttribute,
    DeviceClaim,
    DeviceConstraint,
    DeviceRequest,
    DeviceSubRequest,
    ExactDeviceRequest,
    ResourceClaimSpec,
)
from dralloc.validation import field as f
from dralloc.validation.resource.common import validate_device_configuration, validate_toleration
from dralloc.validation.resource.limits import (
    ALLOCATION_MODES,
    ATTRIBUTE_KEY_MAX,
    CONFIG_MAX,
    CONSTRAINTS_MAX,
    DERIVED_ATTRIBUTES_MAX,
    FIRST_AVAILABLE_MAX,
    REQUEST_REF_DETAIL,
    REQUESTS_MAX,
)
from dralloc.validation.resource.lists import (
    E,
    identity,
    no_errors,
    validate_map,
    validate_set,
    validate_slice,
)
from dralloc.validation.resource.names import (
    validate_cel_expression,
    validate_device_class_name,
    validate_dns_label,
    validate_fully_qualified_name,
    validate_qualified_name,
    validate_selectors,
)


class RequestNames:
    """The request and subrequest names of a claim, for checking references (`req` or `req/sub`)."""

    def __init__(self, device_claim: DeviceClaim | None) -> None:
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


def validate_request_ref(ref: str, path: str, names: RequestNames) -> E:
    parts = ref.split("/")
    if len(parts) > 2:
        return [f.invalid(path, ref, REQUEST_REF_DETAIL)]
    errs: E = []
    for part in parts:
        errs.extend(validate_dns_label(part, path))
    if not names.has(ref):
        errs.append(f.invalid(path, ref, REQUEST_REF_DETAIL))
    return errs


def validate_request_refs(refs: list[str] | None, path: str, names: RequestNames) -> E:
    return validate_set(refs, REQUESTS_MAX, lambda r, p: validate_request_ref(r, p, names), identity, path)


def validate_claim_spec(spec: ResourceClaimSpec, path: str, stored: bool = False) -> E:
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
    if devices.constraints:
        errs.extend(validate_slice(devices.constraints, CONSTRAINTS_MAX,
                                   lambda c, p: _constraint(c, p, names), f.child(dpath, "constraints")))
    if devices.config:
        errs.extend(validate_slice(devices.config, CONFIG_MAX,
                                   lambda c, p: validate_request_refs(c.requests, f.child(p, "requests"), names)
                                   + validate_device_configuration(c, p, stored),
                                   f.child(dpath, "config")))
    return errs


def _constraint_attributes(constraints: list[DeviceConstraint] | None) -> dict[str, set[str]]:
    attrs: dict[str, set[str]] = {}
    for c in constraints or ():
        name = c.match_attribute if c.match_attribute is not None else c.distinct_attribute
        if name is None:
            continue
        for target in c.requests or [""]:
            attrs.setdefault(target, set()).add(name)
    return attrs


def _device_request(request: DeviceRequest, path: str, stored: bool, constraint_attrs: dict[str, set[str]]) -> E:
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
            lambda s, p: _exact_request(s, p, stored, constraint_attrs, f"{request.name}/{s.name}"),
            lambda s: s.name, f.child(path, "firstAvailable")))
    elif request.exactly is not None:
        errs.extend(_exact_request(request.exactly, f.child(path, "exactly"), stored, constraint_attrs, request.name))
    return errs


def _exact_request(req: ExactDeviceRequest | DeviceSubRequest, path: str, stored: bool,
                   constraint_attrs: dict[str, set[str]], ref: str) -> E:
    errs: E = []
    if isinstance(req, DeviceSubRequest):
        errs.extend(validate_dns_label(req.name, f.child(path, "name")))
    errs.extend(validate_device_class_name(req.device_class_name, f.child(path, "deviceClassName")))
    # (the optional lists looked at, and their paths made, only when the request has them)
    if req.selectors:
        errs.extend(validate_selectors(req.selectors, f.child(path, "selectors"), stored))
    if req.derived_attributes:
        errs.extend(_derived_attributes(req.derived_attributes, f.child(path, "derivedAttributes"), stored,
                                        constraint_attrs, ref))
    errs.extend(_allocation_mode(req.allocation_mode, req.count, path))
    # The API documents at most 16 tolerations, but kube-apiserver (1.36) enforces no limit on a request's.
    if req.tolerations:
        tpath = f.child(path, "tolerations")
        for i, t in enumerate(req.tolerations):
            errs.extend(validate_toleration(t, f.index(tpath, i)))
    if req.capacity is not None and req.capacity.requests:
        cpath = f.child(f.child(path, "capacity"), "requests")
        errs.extend(validate_map(req.capacity.requests, -1, ATTRIBUTE_KEY_MAX, validate_qualified_name, no_errors, cpath))
    return errs


def _derived_attributes(attrs: list[DerivedAttribute] | None, path: str, stored: bool, constraint_attrs: dict[str, set[str]],
                        ref: str) -> E:
    def used(name: str) -> bool:
        if name in constraint_attrs.get("", ()) or name in constraint_attrs.get(ref, ()):
            return True
        parent, sep, _ = ref.partition("/")
        return bool(sep) and name in constraint_attrs.get(parent, ())

    def one(attr: DerivedAttribute, p: str) -> E:
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


def _allocation_mode(mode: str | None, count: int | None, path: str) -> E:
    """``allocationMode`` and ``count`` of the request at ``path``."""
    count = count or 0
    if mode == "All":
        if count != 0:
            return [f.invalid(f.child(path, "count"), count, "must not be specified when allocationMode is 'All'")]
    elif mode == "ExactCount" or mode is None:
        # None happens only when validating without defaulting; the default is ExactCount with count 1.
        if mode == "ExactCount" and count <= 0:
            return [f.invalid(f.child(path, "count"), count, "must be greater than zero")]
        if mode is None and count < 0:
            return [f.invalid(f.child(path, "count"), count, "must be greater than zero")]
    else:
        return [f.not_supported(f.child(path, "allocationMode"), mode, ALLOCATION_MODES)]
    return []


def _constraint(c: DeviceConstraint, path: str, names: RequestNames) -> E:
    errs = validate_request_refs(c.requests, f.child(path, "requests"), names)
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
