"""Pending claims made ready for the search: validation, in upstream's order, with upstream's error texts.

Validation has a part that depends only on the claim and the device classes (defaulting, class lookup,
selector presence, counts, constraint kinds) — a :class:`ClaimPlan`, built once per claim object and reused
for every node — and a part that depends on the node (``allocationMode: All`` lists every matching device
of the node's pools, and fails on an incomplete or invalid pool), done per allocate call by
:func:`requests_for_node`. Errors keep upstream's order: claims in order, requests in order, then the
32-device limit, then the constraints.
"""

from __future__ import annotations

from typing import Any

from dralloc.allocator.capacity import consumption, fits, requests_key
from dralloc.allocator.constraints import DistinctAttribute, MatchAttribute
from dralloc.allocator.errors import ClaimError
from dralloc.allocator.pools import Candidate
from dralloc.allocator.views import NodeView
from dralloc.api.resource_v1 import DeviceClass, ResourceClaim

MAX_DEVICES_PER_CLAIM = 32  # resourceapi.AllocationResultsMaxSize


def claim_ref(claim: ResourceClaim) -> str:
    meta = claim.metadata
    if meta.namespace:
        return f"{meta.namespace}/{meta.name}"
    return meta.name or ""


class RequestSpec:
    """One request, or one subrequest of a firstAvailable request: what the claim and its class say."""

    __slots__ = (
        "admin",
        "all_mode",
        "base",
        "cap_key",
        "cap_requests",
        "class_exprs",
        "class_name",
        "cls",
        "count",
        "full",
        "name",
        "parent",
        "request_exprs",
        "ri",
        "sel_key",
        "si",
        "source",
        "tolerations",
    )

    cls: DeviceClass
    class_name: str
    class_exprs: tuple[str, ...]
    request_exprs: tuple[str, ...]
    sel_key: tuple[str, tuple[str, ...], tuple[str, ...]]
    admin: bool
    tolerations: Any
    cap_requests: Any
    cap_key: Any
    all_mode: bool
    count: int

    def __init__(self, ri: int, si: int, req: Any, parent: Any, request_name: str) -> None:
        self.ri, self.si = ri, si
        if parent is not None:
            self.name = req.name
            self.parent = parent.name
            self.base = parent.name
            self.full = f"{parent.name}/{req.name}"
        else:
            self.name = request_name
            self.parent = None
            self.base = request_name
            self.full = request_name
        self.source = req


class RequestData:
    """A :class:`RequestSpec` placed in one allocate call: claim index, node-dependent device lists."""

    __slots__ = (
        "admin",
        "all_devices",
        "all_mode",
        "base",
        "bounds",
        "cands",
        "cap_key",
        "cap_requests",
        "ci",
        "class_exprs",
        "class_name",
        "cls",
        "counter_keys",
        "feasible",
        "full",
        "match_idx",
        "name",
        "num",
        "parent",
        "prunable",
        "request_exprs",
        "ri",
        "sel_key",
        "si",
        "spec",
        "tolerations",
    )

    def __init__(self, spec: RequestSpec, ci: int) -> None:
        self.spec = spec
        self.ci, self.ri, self.si = ci, spec.ri, spec.si
        self.name, self.parent, self.base, self.full = spec.name, spec.parent, spec.base, spec.full
        self.cls, self.admin, self.tolerations = spec.cls, spec.admin, spec.tolerations
        self.cap_requests, self.cap_key = spec.cap_requests, spec.cap_key
        self.sel_key, self.class_name = spec.sel_key, spec.class_name
        self.class_exprs, self.request_exprs = spec.class_exprs, spec.request_exprs
        self.all_mode = spec.all_mode
        self.num = spec.count
        self.all_devices: list[Candidate] | None = None
        self.cands: list[tuple[Candidate, Any]] | None = None
        self.prunable = True
        self.counter_keys: list[tuple[Any, ...]] = []
        self.bounds: dict[Any, Any] = {}
        self.match_idx: list[int] | None = None
        self.feasible: Any = None  # search.py: static per-run acceptability of each candidate


class ClaimPlan:
    """The node-independent part of a claim's validation (see the module docstring).

    ``claim`` is the claim with API defaults applied. ``requests`` holds the requests validated before ``error`` (the first node-independent error of the
    claim, raised after the node-dependent checks of the requests before it); ``constraint_error`` is
    raised after the 32-device check.
    """

    __slots__ = (
        "claim",
        "constraint_error",
        "constraints",
        "error",
        "has_all",
        "min_exact",
        "ref",
        "requests",
        "source",
    )

    def __init__(self, claim: ResourceClaim, classes: dict[str, DeviceClass], *,
                 source: ResourceClaim | None = None) -> None:
        self.claim = claim  # with API defaults applied
        self.source = source if source is not None else claim  # the caller's object (the cache key)
        self.ref = ref = claim_ref(claim)
        self.requests: list[list[RequestSpec]] = []
        self.error: ClaimError | None = None
        self.constraint_error: ClaimError | None = None
        self.has_all = False
        self.min_exact = 0
        devices = claim.spec.devices
        try:
            for ri, request in enumerate((devices.requests if devices is not None else None) or []):
                options: list[RequestSpec] = []
                self.requests.append(options)  # kept partial on error: earlier All-mode checks still run
                if request.first_available:
                    for si, sub in enumerate(request.first_available):
                        options.append(_spec(ri, si, sub, request, ref, classes, sub.name))
                else:
                    options.append(_spec(ri, 0, request.exactly, None, ref, classes, request.name or ""))
        except ClaimError as exc:
            self.error = exc
        self.has_all = any(s.all_mode for options in self.requests for s in options)
        self.constraints: list[tuple[type, int, Any, str]] = []
        for i, c in enumerate((devices.constraints if devices is not None else None) or []):
            if c.match_attribute is not None:
                self.constraints.append((MatchAttribute, i, c.requests, c.match_attribute))
            elif c.distinct_attribute is not None:
                self.constraints.append((DistinctAttribute, i, c.requests, c.distinct_attribute))
            else:
                self.constraint_error = ClaimError(
                    f"claim {ref}, constraint #{i}: empty constraint (unsupported constraint type?)")
                break


def _class_not_found(name: str) -> str:
    return f'deviceclass.resource.k8s.io "{name}" not found'


def _spec(ri: int, si: int, req: Any, parent: Any, ref: str, classes: dict[str, DeviceClass],
          request_name: str) -> RequestSpec:
    spec = RequestSpec(ri, si, req, parent, request_name)
    if req is None:
        raise ClaimError(f"claim {ref}, request {spec.name}: missing device class name (unsupported request type?)")
    selectors = req.selectors or []
    for i, sel in enumerate(selectors):
        if sel.cel is None:
            raise ClaimError(f"claim {ref}, request {spec.name}, selector #{i}: CEL expression empty "
                             f"(unsupported selector type?)")
    if not req.device_class_name:
        raise ClaimError(f"claim {ref}, request {spec.name}: missing device class name (unsupported request type?)")
    cls = classes.get(req.device_class_name)
    if cls is None:
        raise ClaimError(f"claim {ref}, request {spec.name}: could not retrieve device class "
                         f"{req.device_class_name}: {_class_not_found(req.device_class_name)}")
    spec.cls = cls
    spec.class_name = cls.metadata.name or ""
    spec.class_exprs = tuple(s.cel.expression if s.cel is not None else "" for s in (cls.spec.selectors or ()))
    spec.request_exprs = tuple(s.cel.expression for s in selectors)
    spec.sel_key = (spec.class_name, spec.class_exprs, spec.request_exprs)
    spec.admin = bool(getattr(req, "admin_access", None)) if parent is None else False
    spec.tolerations = req.tolerations
    spec.cap_requests = req.capacity.requests if req.capacity is not None else None
    spec.cap_key = requests_key(spec.cap_requests)
    mode = req.allocation_mode or "ExactCount"
    if mode == "ExactCount":
        spec.all_mode = False
        spec.count = int(req.count or 0)
    elif mode == "All":
        spec.all_mode = True
        spec.count = 0
    else:
        raise ClaimError(f"claim {ref}, request {spec.name}: unsupported count mode {mode}")
    return spec


def requests_for_node(plan: ClaimPlan, ci: int, view: NodeView, selectors: Any,
                      aggregated: dict[str, dict[str, Any]]) -> list[list[RequestData]]:
    """The claim's requests for this node (All-mode device lists filled in); raises upstream's errors.

    Cached on the view per (plan, claim index) unless the claim has an All-mode request, whose device list
    depends on the allocated state. What the search stores on a RequestData is static for the view, or
    recomputed by every search that uses it.
    """
    key = (id(plan), ci)
    hit = view.request_cache.get(key)
    if hit is not None and hit[0] is plan:
        cached: list[list[RequestData]] = hit[1]
        return cached
    per_claim = _requests_for_node(plan, ci, view, selectors, aggregated)
    if not plan.has_all:
        if len(view.request_cache) >= 4096:
            view.request_cache.clear()
        view.request_cache[key] = (plan, per_claim)
    return per_claim


def _requests_for_node(plan: ClaimPlan, ci: int, view: NodeView, selectors: Any,
                       aggregated: dict[str, dict[str, Any]]) -> list[list[RequestData]]:
    per_claim: list[list[RequestData]] = []
    min_devices = 0
    for options in plan.requests:
        datas = []
        lo: int | None = None
        for spec in options:
            rd = RequestData(spec, ci)
            if spec.all_mode:
                _fill_all_devices(rd, plan.ref, view, selectors, aggregated)
            datas.append(rd)
            lo = rd.num if lo is None or rd.num < lo else lo
        per_claim.append(datas)
        min_devices += lo or 0
    if plan.error is not None:
        raise plan.error
    if min_devices > MAX_DEVICES_PER_CLAIM:
        raise ClaimError(f"claim {plan.ref}: number of requested devices {min_devices} exceeds the claim limit "
                         f"of {MAX_DEVICES_PER_CLAIM}")
    if plan.constraint_error is not None:
        raise plan.constraint_error
    return per_claim


def _fill_all_devices(rd: RequestData, ref: str, view: NodeView, selectors: Any,
                      aggregated: dict[str, dict[str, Any]]) -> None:
    devs: list[Candidate] = []
    by_pool = view.pool_candidates
    for pool in view.pools:
        if pool.incomplete:
            raise ClaimError(f"claim {ref}, request {rd.name}: asks for all devices, but resource pool "
                             f"{pool.id} is currently being updated")
        if pool.invalid:
            raise ClaimError(f"claim {ref}, request {rd.name}: asks for all devices, but resource pool "
                             f"{pool.id} is currently invalid")
        for cand in by_pool.get(id(pool), ()):
            out = selectors.outcome(cand.info, rd.sel_key, rd.class_name, rd.class_exprs, rd.request_exprs)
            if out is not True:
                if out is False:
                    continue
                raise out.error(ref)
            if not cand.node_ok:
                continue
            c = consumption(rd.cap_key, rd.cap_requests, cand.info)
            if c is None or not c[0]:
                continue
            if not fits(c[1], cand.info, aggregated.get(cand.info.id), None):
                continue
            devs.append(cand)
    rd.all_devices = devs
    rd.num = len(devs)


def candidates(rd: RequestData, view: NodeView, selectors: Any) -> list[tuple[Candidate, Any]]:
    """Devices a request may get, in order, with their capacity amounts (or a SelectorFailure).

    Depends only on static facts (selectors, per-device node selection, capacity policy), so the list is
    cached on the node view per (selectors, capacity requests) and shared by requests and calls.
    """
    cache = view.cand_cache
    ckey = (rd.sel_key, rd.cap_key)
    hit = cache.get(ckey)
    if hit is None:
        cands: list[tuple[Candidate, Any]] = []
        prunable = True
        outcome = selectors.outcome
        key, cname, cex, rex = rd.sel_key, rd.class_name, rd.class_exprs, rd.request_exprs
        for cand in view.candidates:
            info = cand.info
            out = outcome(info, key, cname, cex, rex)
            if out is not True:
                if out is False:
                    continue
                cands.append((cand, out))
                prunable = False
                continue
            if not cand.node_ok:
                continue
            c = consumption(rd.cap_key, rd.cap_requests, info)
            if c is None or not c[0]:
                continue
            cands.append((cand, c[1]))
        keys: dict[tuple[Any, ...], None] = {}
        if prunable:
            for cand, _ in cands:
                for set_name, cname_, _v in cand.info.consumes:
                    keys[(cand.pool, set_name, cname_)] = None
        hit = (cands, prunable, list(keys), {})
        cache[ckey] = hit
    rd.cands, rd.prunable, rd.counter_keys, rd.bounds = hit
    return hit[0]
