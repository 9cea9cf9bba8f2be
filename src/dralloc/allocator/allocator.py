"""The structured allocator: pick exactly the devices kube-scheduler's allocator would pick.

``Allocator(slices, classes, allocated_claims)`` is built once; ``allocate(node, claims)`` allocates the
pending claims together for one node (all or nothing) and returns an :class:`AllocationOutcome`; hard errors
raise :class:`~dralloc.errors.AllocationError`. The allocated state is updated with :meth:`claim_allocated`
/ :meth:`claim_released`, no rebuild needed.

The search is upstream's depth-first search (first solution wins): claims in order, requests in order, and
for slot k of a request only devices after slot k-1's choice — combinations, never permutations. It prunes
branches that cannot succeed (fewer candidate devices left than slots; shared counters that the cheapest
remaining devices would already exceed), which never changes which solution is found first, nor which
error is raised: pruning is disabled for a request whose candidates include a device with a CEL error.
"""

from __future__ import annotations

import sys
import uuid
from bisect import bisect_left
from collections.abc import Iterable
from typing import Any

from dralloc.allocator.capacity import consumption, fits, requests_key
from dralloc.allocator.constraints import DistinctAttribute, MatchAttribute, attribute_set
from dralloc.allocator.errors import AllocationInternalError, ClaimError, ConstraintError
from dralloc.allocator.pools import Candidate, DeviceInfo, NodeView, Pool, gather_pools
from dralloc.allocator.selectors import SelectorCache, SelectorFailure
from dralloc.allocator.state import AllocatedState

MAX_DEVICES_PER_CLAIM = 32  # resourceapi.AllocationResultsMaxSize
INVALID_POOLS_MESSAGE = "invalid resource pools were encountered"

# Deterministic shareIDs: uuid5 in this namespace over "claim/request/device/index" (upstream: random UUIDs).
SHARE_ID_NAMESPACE = uuid.UUID("6f1c5f1e-2d0a-4d7b-9a51-6472616c6c6f")

_MAXSIZE = 2  # upstream's errAllocationResultMaxSizeExceeded, as a third return value

# Pruning never changes the answer; tests switch it off to compare with the plain upstream search.
PRUNE = True

if sys.getrecursionlimit() < 20000:
    sys.setrecursionlimit(20000)


# Static facts and selector outcomes per device object, shared by every Allocator of the process (like
# upstream's CEL cache): a fresh allocator per scheduling cycle does not re-evaluate selectors on devices
# it has seen. Keyed by id() and checked by identity; the entry keeps its device alive, so ids are not reused.
_DEVICE_INFOS: dict[int, DeviceInfo] = {}
_DEVICE_INFOS_MAX = 500_000


class AllocationOutcome:
    """The answer for one node: ``status`` is "allocated" (``results``) or "unschedulable" (``explanation``)."""

    __slots__ = ("status", "results", "node_name", "invalid_pools", "_explain", "_explanation", "claims")

    def __init__(self, status: str, results: list[Any] | None, node_name: str, *, invalid_pools: bool = False,
                 explain: Any = None, claims: list[Any] | None = None) -> None:
        self.status = status
        self.results = results or []
        self.node_name = node_name
        self.invalid_pools = invalid_pools
        self.claims = claims or []
        self._explain = explain
        self._explanation: Any = None

    @property
    def allocated(self) -> bool:
        return self.status == "allocated"

    @property
    def message(self) -> str | None:
        """Upstream's error value for the unschedulable-with-invalid-pools variant."""
        return INVALID_POOLS_MESSAGE if self.invalid_pools else None

    @property
    def explanation(self) -> Any:
        """Why the node cannot take the claims (computed on first access, off the hot path)."""
        if self._explanation is None and self._explain is not None:
            self._explanation = self._explain()
        return self._explanation

    def __repr__(self) -> str:
        return f"AllocationOutcome(status={self.status!r}, node={self.node_name!r}, results={len(self.results)})"


def _claim_ref(claim: Any) -> str:
    meta = claim.metadata
    if meta.namespace:
        return f"{meta.namespace}/{meta.name}"
    return meta.name or ""


def _class_not_found(name: str) -> str:
    return f'deviceclass.resource.k8s.io "{name}" not found'


class RequestData:
    """One request, or one subrequest of a firstAvailable request, ready for the search."""

    __slots__ = ("ci", "ri", "si", "name", "parent", "base", "full", "cls", "class_name", "class_exprs",
                 "request_exprs", "sel_key", "all_mode", "num", "admin", "tolerations", "cap_requests",
                 "cap_key", "all_devices", "cands", "prunable", "counter_keys", "_bounds", "source",
                 "match_idx")

    def __init__(self) -> None:
        self.cands: list[tuple[Candidate, Any]] | None = None
        self.all_devices: list[Candidate] | None = None
        self.prunable = True
        self.counter_keys: list[tuple[Any, ...]] = []
        self.match_idx: list[int] | None = None
        self._bounds: dict[int, dict[tuple[Any, ...], list[Any]]] = {}


class _Entry:
    """One picked device during the search."""

    __slots__ = ("rd", "cand", "consumed", "capacity_amounts", "counters_reserved")

    def __init__(self, rd: RequestData, cand: Candidate, capacity_amounts: Any, counters_reserved: bool) -> None:
        self.rd = rd
        self.cand = cand
        self.capacity_amounts = capacity_amounts
        self.counters_reserved = counters_reserved


class Allocator:
    """Slices, classes and allocated state of a cluster; allocates pending claims node by node."""

    def __init__(self, slices: Iterable[Any], classes: Iterable[Any], allocated_claims: Iterable[Any] = (),
                 *, state: AllocatedState | None = None) -> None:
        self.slices = list(slices)
        self.classes = {c.metadata.name: c for c in classes}
        self.state = state if state is not None else AllocatedState(allocated_claims)
        on_node: dict[str, list[Any]] = {}
        shared: list[Any] = []
        for s in self.slices:
            name = s.spec.node_name
            if name:
                lst = on_node.get(name)
                if lst is None:
                    on_node[name] = [s]
                else:
                    lst.append(s)
            else:
                shared.append(s)
        self._on_node = on_node
        self._shared = shared
        self._by_pool_cache: dict[tuple[str, str], list[Any]] | None = None
        self._views: dict[Any, NodeView] = {}
        self._infos = _DEVICE_INFOS
        self._selectors = SelectorCache()
        self._available: dict[str, dict[tuple[str, str], Any]] = {}
        self._available_negative: dict[str, bool] = {}
        self._available_version = self.state.version
        self._claim_cache: dict[int, tuple[Any, Any]] = {}
        self._prep_cache: dict[tuple[int, int], tuple[Any, ...]] = {}

    @classmethod
    def from_objects(cls, objects: Iterable[Any]) -> Allocator:
        """Build from decoded objects: ResourceSlices, DeviceClasses, and the allocated ResourceClaims."""
        slices, classes, claims = [], [], []
        for o in objects:
            kind = type(o).__name__
            if kind == "ResourceSlice":
                slices.append(o)
            elif kind == "DeviceClass":
                classes.append(o)
            elif kind == "ResourceClaim" and o.status is not None and o.status.allocation is not None:
                claims.append(o)
        return cls(slices, classes, claims)

    @property
    def _by_pool(self) -> dict[tuple[str, str], list[Any]]:
        """All slices by pool ID (built on first need: only incomplete-looking pools look cluster-wide)."""
        by_pool = self._by_pool_cache
        if by_pool is None:
            by_pool = {}
            for s in self.slices:
                spec = s.spec
                key = (spec.driver, spec.pool.name)
                lst = by_pool.get(key)
                if lst is None:
                    by_pool[key] = [s]
                else:
                    lst.append(s)
            self._by_pool_cache = by_pool
        return by_pool

    # --- incremental allocated state ---
    def claim_allocated(self, claim: Any) -> None:
        """Record a claim that got allocated (its devices and capacity are now taken)."""
        self.state.add_claim(claim)

    def claim_released(self, claim: Any) -> None:
        """Forget an allocated claim (deallocated or deleted)."""
        self.state.remove_claim(claim)

    # --- per-node views ---
    def node_view(self, node: Any) -> NodeView:
        name = node.metadata.name or ""
        labels = node.metadata.labels or {}
        key = (name, tuple(sorted(labels.items()))) if labels else (name, ())
        view = self._views.get(key)
        if view is None:
            slices_for_node = self._on_node.get(name, []) + self._shared
            pools = gather_pools(slices_for_node, name, labels, lambda: self._by_pool)
            cands: list[Candidate] = []
            infos = self._infos
            for pool in pools:
                if not pool.usable:
                    continue
                for s in pool.device_slices:
                    per_device = bool(s.spec.per_device_node_selection)
                    for d in s.spec.devices or ():
                        info = infos.get(id(d))
                        if info is None or info.device is not d or info.slice is not s:
                            info = DeviceInfo(s, d)
                            if len(infos) >= _DEVICE_INFOS_MAX:
                                infos.clear()
                            infos[id(d)] = info
                        ok = True
                        if per_device:
                            from dralloc.allocator.pools import _node_matches

                            ok = _node_matches(name, labels, d.node_name, d.all_nodes, d.node_selector,
                                               f"device {d.name}")
                        cands.append(Candidate(info, pool, ok, len(cands)))
            view = NodeView(pools, cands)
            if len(self._views) > 4096:
                self._views.clear()
            self._views[key] = view
        return view

    def available_counters(self, pool: Pool) -> dict[tuple[str, str], Any]:
        """Counter sets of a pool minus what allocated devices consume (cached per pool name, as upstream)."""
        if self._available_version != self.state.version:
            self._available.clear()
            self._available_negative.clear()
            self._available_version = self.state.version
        avail = self._available.get(pool.name)
        if avail is None:
            avail = {}
            for set_name, counters in pool.counter_sets.items():
                for cname, value in counters.items():
                    avail[(set_name, cname)] = value
            state = self.state
            for slices in (pool.device_slices, pool.other_slices):
                for s in slices:
                    spec = s.spec
                    prefix = f"{spec.driver}/{spec.pool.name}/"
                    for d in spec.devices or ():
                        if not d.consumes_counters or not state.is_allocated(prefix + d.name):
                            continue
                        for c in d.consumes_counters:
                            for cname, counter in (c.counters or {}).items():
                                k = (c.counter_set, cname)
                                if k in avail:
                                    from dralloc.allocator.numbers import to_num

                                    avail[k] = avail[k] - to_num(counter.value)
            self._available[pool.name] = avail
            self._available_negative[pool.name] = any(v < 0 for v in avail.values())
        return avail

    def device_info(self, cand: Candidate) -> DeviceInfo:
        return cand.info

    # --- the entry point ---
    def allocate(self, node: Any, claims: list[Any]) -> AllocationOutcome:
        """Allocate ``claims`` (pending, in order) together on ``node``."""
        run = _Run(self, node, claims)
        return run.run()

    def _defaulted(self, claim: Any) -> Any:
        hit = self._claim_cache.get(id(claim))
        if hit is not None and hit[0] is claim:
            return hit[1]
        from dralloc.api.defaults import apply_defaults

        d = apply_defaults(claim)
        if len(self._claim_cache) > 65536:
            self._claim_cache.clear()
        self._claim_cache[id(claim)] = (claim, d)
        return d


class _Run:
    """State of one allocate() call."""

    def __init__(self, alloc: Allocator, node: Any, claims: list[Any]) -> None:
        self.alloc = alloc
        self.node = node
        self.node_name = node.metadata.name or ""
        self.claims = [alloc._defaulted(c) for c in claims]
        self.original_claims = claims
        self.view = alloc.node_view(node)
        self.pools = self.view.pools
        self.selectors = alloc._selectors
        self.state = alloc.state
        self.allocated = alloc.state.exclusive
        self.aggregated = alloc.state.aggregated_capacity
        # search state
        self.allocating: dict[str, set[int]] = {}
        self.allocating_capacity: dict[str, dict[str, Any]] = {}
        self.consumed: dict[str, dict[tuple[str, str], Any]] = {}
        self.results: list[list[_Entry]] = [[] for _ in claims]
        self.requests: list[list[list[RequestData]]] = []  # claim -> request -> [rd] or [sub rds]
        self.selected_sub: dict[tuple[int, int], int] = {}
        self.constraints: list[list[Any]] = []
        self.claim_refs = [_claim_ref(c) for c in self.claims]

    # ------------------------------------------------------------------ validation
    def _prepare(self) -> None:
        cache = self.alloc._prep_cache
        view = self.view
        for ci, claim in enumerate(self.claims):
            key = (id(claim), ci)
            hit = cache.get(key)
            if hit is not None and hit[0] is claim and hit[1] is view:
                per_claim, specs = hit[2], hit[3]
            else:
                per_claim, specs, has_all = self._prepare_claim(ci, claim)
                if not has_all:  # All-mode lists depend on the allocated state: rebuild them every time
                    if len(cache) > 65536:
                        cache.clear()
                    cache[key] = (claim, view, per_claim, specs)
            self.requests.append(per_claim)
            self.constraints.append([cls(i, names, attr) for cls, i, names, attr in specs])

    def _prepare_claim(self, ci: int, claim: Any) -> tuple[list[list[RequestData]], list[Any], bool]:
        ref = self.claim_refs[ci]
        devices = claim.spec.devices
        reqs = (devices.requests if devices is not None else None) or []
        per_claim: list[list[RequestData]] = []
        min_devices = 0
        has_all = False
        for ri, request in enumerate(reqs):
            if request.first_available:
                subs = []
                lo = None
                for si, sub in enumerate(request.first_available):
                    rd = self._validate(ci, ri, si, sub, request, ref)
                    has_all = has_all or rd.all_mode
                    subs.append(rd)
                    lo = rd.num if lo is None or rd.num < lo else lo
                per_claim.append(subs)
                min_devices += lo or 0
            else:
                rd = self._validate(ci, ri, 0, request.exactly, None, ref, request_name=request.name)
                has_all = has_all or rd.all_mode
                per_claim.append([rd])
                min_devices += rd.num
        if min_devices > MAX_DEVICES_PER_CLAIM:
            raise ClaimError(f"claim {ref}: number of requested devices {min_devices} exceeds the claim limit "
                             f"of {MAX_DEVICES_PER_CLAIM}")
        specs: list[Any] = []
        for i, c in enumerate((devices.constraints if devices is not None else None) or []):
            if c.match_attribute is not None:
                specs.append((MatchAttribute, i, c.requests, c.match_attribute))
            elif c.distinct_attribute is not None:
                specs.append((DistinctAttribute, i, c.requests, c.distinct_attribute))
            else:
                raise ClaimError(f"claim {ref}, constraint #{i}: empty constraint (unsupported constraint type?)")
        return per_claim, specs, has_all

    def _validate(self, ci: int, ri: int, si: int, req: Any, parent: Any, ref: str,
                  request_name: str | None = None) -> RequestData:
        rd = RequestData()
        rd.ci, rd.ri, rd.si = ci, ri, si
        if parent is not None:
            rd.name = req.name
            rd.parent = parent.name
            rd.base = parent.name
            rd.full = f"{parent.name}/{req.name}"
        else:
            rd.name = request_name or ""
            rd.parent = None
            rd.base = rd.name
            rd.full = rd.name
        rd.source = req
        if req is None:
            raise ClaimError(f"claim {ref}, request {rd.name}: missing device class name (unsupported request type?)")
        selectors = req.selectors or []
        for i, sel in enumerate(selectors):
            if sel.cel is None:
                raise ClaimError(f"claim {ref}, request {rd.name}, selector #{i}: CEL expression empty "
                                 f"(unsupported selector type?)")
        if not req.device_class_name:
            raise ClaimError(f"claim {ref}, request {rd.name}: missing device class name (unsupported request type?)")
        cls = self.alloc.classes.get(req.device_class_name)
        if cls is None:
            raise ClaimError(f"claim {ref}, request {rd.name}: could not retrieve device class "
                             f"{req.device_class_name}: {_class_not_found(req.device_class_name)}")
        rd.cls = cls
        rd.class_name = cls.metadata.name
        rd.class_exprs = tuple(s.cel.expression if s.cel is not None else "" for s in (cls.spec.selectors or ()))
        rd.request_exprs = tuple(s.cel.expression for s in selectors)
        rd.sel_key = (rd.class_name, rd.class_exprs, rd.request_exprs)
        rd.admin = bool(getattr(req, "admin_access", None)) if parent is None else False
        rd.tolerations = req.tolerations
        rd.cap_requests = req.capacity.requests if req.capacity is not None else None
        rd.cap_key = requests_key(rd.cap_requests)
        mode = req.allocation_mode or "ExactCount"
        if mode == "ExactCount":
            rd.all_mode = False
            rd.num = int(req.count or 0)
        elif mode == "All":
            rd.all_mode = True
            devs: list[Candidate] = []
            by_pool = self.view.pool_candidates
            for pool in self.pools:
                if pool.incomplete:
                    raise ClaimError(f"claim {ref}, request {rd.name}: asks for all devices, but resource pool "
                                     f"{pool.id} is currently being updated")
                if pool.invalid:
                    raise ClaimError(f"claim {ref}, request {rd.name}: asks for all devices, but resource pool "
                                     f"{pool.id} is currently invalid")
                for cand in by_pool.get(id(pool), ()):
                    out = self.selectors.outcome(cand.info, rd.sel_key, rd.class_name, rd.class_exprs,
                                                 rd.request_exprs)
                    if out is not True:
                        if out is False:
                            continue
                        raise out.error(ref)
                    if not cand.node_ok:
                        continue
                    c = consumption(rd.cap_key, rd.cap_requests, cand.info)
                    if c is None or not c[0]:
                        continue
                    if not fits(c[1], cand.info, self.aggregated.get(cand.info.id), None):
                        continue
                    devs.append(cand)
            rd.all_devices = devs
            rd.num = len(devs)
        else:
            raise ClaimError(f"claim {ref}, request {rd.name}: unsupported count mode {mode}")
        return rd

    def _candidates(self, rd: RequestData) -> list[tuple[Candidate, Any]]:
        """Devices a request may get, in order, with their capacity amounts (or a SelectorFailure).

        Depends only on static facts (selectors, per-device node selection, capacity policy), so the list is
        cached on the node view per (selectors, capacity requests) and shared by requests and calls.
        """
        cache = self.view.cand_cache
        ckey = (rd.sel_key, rd.cap_key)
        hit = cache.get(ckey)
        if hit is None:
            cands: list[tuple[Candidate, Any]] = []
            prunable = True
            outcome = self.selectors.outcome
            key, cname, cex, rex = rd.sel_key, rd.class_name, rd.class_exprs, rd.request_exprs
            for cand in self.view.candidates:
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
        rd.cands, rd.prunable, rd.counter_keys, rd._bounds = hit
        return hit[0]

    # ------------------------------------------------------------------ run
    def run(self) -> AllocationOutcome:
        self._prepare()
        ok = self._one(0, 0, 0, 0, False, 0)
        if ok is not True:
            invalid = self.view.has_invalid
            return AllocationOutcome("unschedulable", None, self.node_name, invalid_pools=invalid,
                                     explain=self._explainer(), claims=self.original_claims)
        from dralloc.allocator.results import build_results

        return AllocationOutcome("allocated", build_results(self), self.node_name, claims=self.original_claims)

    def _explainer(self) -> Any:
        def explain() -> Any:
            from dralloc.allocator.explain import explain_failure

            return explain_failure(self.alloc, self.node, self.original_claims)

        return explain

    # ------------------------------------------------------------------ search
    def _one(self, ci: int, ri: int, si: int, k: int, in_sub: bool, start: int) -> Any:
        if ci >= len(self.claims):
            return True
        per_claim = self.requests[ci]
        if ri >= len(per_claim):
            res = self._one(ci + 1, 0, 0, 0, False, 0)
            if res is _MAXSIZE:
                return False
            return res
        options = per_claim[ri]
        if not in_sub and options[0].parent is not None:
            all_exceeded = True
            for sub_index in range(len(options)):
                res = self._one(ci, ri, sub_index, 0, True, 0)
                if res is _MAXSIZE:
                    continue
                all_exceeded = False
                if res is True:
                    self.selected_sub[(ci, ri)] = sub_index
                    return True
            return _MAXSIZE if all_exceeded else False
        rd = options[si]
        if rd.all_mode and not rd.all_devices:
            return False
        if k >= rd.num:
            return self._one(ci, ri + 1, 0, 0, False, 0)
        results = self.results[ci]
        if len(results) + rd.num - k > MAX_DEVICES_PER_CLAIM:
            return _MAXSIZE
        if rd.all_mode:
            cand = rd.all_devices[k]  # type: ignore[index]
            c = consumption(rd.cap_key, rd.cap_requests, cand.info)
            entry = self._try(rd, cand, c[1] if c is not None else {}, True)
            if entry is None:
                return False
            res = self._one(ci, ri, si, k + 1, in_sub, 0)
            if res is not True:
                self._undo(entry)
            return res
        cands = rd.cands
        if cands is None:
            cands = self._candidates(rd)
        n = len(cands)
        need = rd.num - k
        prune = rd.prunable and PRUNE
        if prune:
            if n - start < need:
                return False
            if rd.counter_keys and need >= 2 and self._counters_prune(rd, start, need):
                return False
            if rd.match_idx is None:
                rd.match_idx = [i for i, c in enumerate(self.constraints[ci])
                                if type(c) is MatchAttribute and c.applies(rd.base, rd.full)]
            if rd.match_idx and need >= 2 and self._match_prune(rd, start, need):
                return False
        admin = rd.admin
        allocating = self.allocating
        allocated = self.allocated
        i = start
        while i < n:
            if prune and n - i < need:
                return False
            cand, extra = cands[i]
            i += 1
            did = cand.info.id
            if admin:
                users = allocating.get(did)
                if users and ci in users:
                    continue
            elif did in allocated or allocating.get(did):
                continue
            if type(extra) is SelectorFailure:
                raise extra.error(self.claim_refs[ci])
            entry = self._try(rd, cand, extra, False)
            if entry is None:
                continue
            res = self._one(ci, ri, si, k + 1, in_sub, i)
            if res is True:
                return True
            self._undo(entry)
            if res is not False:
                return res
        return False

    def _match_prune(self, rd: RequestData, start: int, need: int) -> bool:
        """True when no attribute value is shared by ``need`` remaining candidates (matchAttribute).

        The devices a constraint accepts all share at least one element with the constraint's current set,
        and with each other, so some value must occur on ``need`` of the remaining candidates.
        """
        cons = self.constraints[rd.ci]
        for idx in rd.match_idx:  # type: ignore[union-attr]
            con = cons[idx]
            key = ("attr", con.attribute)
            index = rd._bounds.get(key)
            if index is None:
                index = {}
                for pos, (cand, _) in enumerate(rd.cands):  # type: ignore[arg-type]
                    v = attribute_set(cand.info, con.attribute)
                    if v:
                        for item in v[1]:
                            index.setdefault((v[0], item), []).append(pos)
                rd._bounds[key] = index
            if con.count > 0:
                kind, values = con.current
                keys = [(kind, v) for v in values]
            else:
                keys = index.keys()
            for k in keys:
                positions = index.get(k)
                if positions and len(positions) - bisect_left(positions, start) >= need:
                    break
            else:
                return True
        return False

    def _counters_prune(self, rd: RequestData, start: int, need: int) -> bool:
        """True when even the cheapest ``need`` remaining candidates exceed some shared counter."""
        bounds = rd._bounds.get(start)
        if bounds is None:
            bounds = {}
            rest = rd.cands[start:]  # type: ignore[index]
            for key in rd.counter_keys:
                pool, set_name, cname = key
                vals = []
                for cand, _ in rest:
                    info = cand.info
                    v = 0
                    if not info.allow_multi and cand.pool is pool:
                        for s, c, amount in info.consumes:
                            if s == set_name and c == cname:
                                v += amount
                    vals.append(v)
                vals.sort()
                prefix = [0]
                for v in vals:
                    prefix.append(prefix[-1] + v)
                bounds[key] = prefix
            rd._bounds[start] = bounds
        consumed_all = self.consumed
        for key, prefix in bounds.items():
            if need >= len(prefix):
                continue
            lo = prefix[need]
            if lo <= 0:
                continue
            pool, set_name, cname = key
            pool_name = pool.name
            avail = self.alloc.available_counters(pool)
            a = avail.get((set_name, cname))
            if a is None:
                continue
            used = consumed_all.get(pool_name, {}).get((set_name, cname), 0)
            if used + lo > a:
                return True
        return False

    def _try(self, rd: RequestData, cand: Candidate, amounts: Any, must: bool) -> _Entry | None:
        """Upstream's allocateDevice (with kubernetes#140436 fixed): reserve everything or nothing."""
        info = cand.info
        did = info.id
        ci = rd.ci
        multi = info.allow_multi
        admin = rd.admin
        if not multi and admin:
            users = self.allocating.get(did)
            if users and ci in users:
                return None
        if not admin and (did in self.allocated or self.allocating.get(did)):
            return None
        reserved = False
        if info.consumes and not (multi and (did in self.aggregated or did in self.allocating_capacity)):
            if not self._reserve_counters(cand):
                return None
            reserved = True
        if info.taints and _taint_blocks(info.taints, rd.tolerations):
            if reserved:
                self._release_counters(cand)
            return None
        cons = self.constraints[ci]
        base, full = rd.base, rd.full
        for idx, con in enumerate(cons):
            if not con.add(base, full, info):
                for j in range(idx):
                    cons[j].remove(base, full, info)
                if reserved:
                    self._release_counters(cand)
                if must:
                    raise ConstraintError(f"claim {self.claim_refs[ci]}, request {rd.name}: cannot add device "
                                          f"{did} because a claim constraint would not be satisfied")
                return None
        if info.capacity or amounts:
            if not fits(amounts, info, self.aggregated.get(did), self.allocating_capacity.get(did)):
                for con in cons:
                    con.remove(base, full, info)
                if reserved:
                    self._release_counters(cand)
                return None
        entry = _Entry(rd, cand, None, reserved)
        if multi:
            cur = self.allocating_capacity.get(did)
            if cur is None:
                cur = self.allocating_capacity[did] = {}
            for name, (_, num) in amounts.items():
                cur[name] = cur.get(name, 0) + num
            entry.capacity_amounts = amounts
        else:
            users = self.allocating.get(did)
            if users is None:
                self.allocating[did] = {ci}
            else:
                users.add(ci)
        self.results[ci].append(entry)
        return entry

    def _undo(self, entry: _Entry) -> None:
        rd = entry.rd
        info = entry.cand.info
        did = info.id
        for con in self.constraints[rd.ci]:
            con.remove(rd.base, rd.full, info)
        users = self.allocating.get(did)
        if users is not None:
            users.discard(rd.ci)
        if info.allow_multi:
            amounts = entry.capacity_amounts
            if amounts:  # upstream keeps an entry for a device without capacities
                cur = self.allocating_capacity.get(did)
                if cur is not None:
                    for name, (_, num) in amounts.items():
                        if name in cur:
                            cur[name] = cur[name] - num
                    if all(v == 0 for v in cur.values()):
                        del self.allocating_capacity[did]
        if entry.counters_reserved:
            self._release_counters(entry.cand)
        self.results[rd.ci].pop()

    def _reserve_counters(self, cand: Candidate) -> bool:
        pool = cand.pool
        avail = self.alloc.available_counters(pool)
        consumed = self.consumed.get(pool.name)
        if consumed is None:
            consumed = self.consumed[pool.name] = {}
        ok = True
        for set_name, cname, amount in cand.info.consumes:
            k = (set_name, cname)
            v = consumed.get(k, 0) + amount
            consumed[k] = v
        # Any counter of the pool over its availability rejects the device. Counters this device does not
        # touch were within limits before, except when allocated devices already over-consumed them.
        for set_name, cname, _ in cand.info.consumes:
            k = (set_name, cname)
            a = avail.get(k)
            if a is not None and a < consumed[k]:
                ok = False
                break
        if ok and self.alloc._available_negative.get(pool.name):
            ok = False  # an allocated device over-consumed some counter: nothing fits in this pool
        if not ok:
            self._release_counters(cand)
        return ok

    def _release_counters(self, cand: Candidate) -> None:
        consumed = self.consumed[cand.pool.name]
        for set_name, cname, amount in cand.info.consumes:
            k = (set_name, cname)
            consumed[k] = consumed[k] - amount


def _taint_blocks(taints: list[Any], tolerations: list[Any] | None) -> bool:
    for taint in taints:
        if not tolerations or not any(_tolerates(t, taint) for t in tolerations):
            return True
    return False


def _tolerates(tol: Any, taint: Any) -> bool:
    if tol.effect and tol.effect != taint.effect:
        return False
    if tol.key and tol.key != taint.key:
        return False
    op = tol.operator or "Equal"
    if op == "Exists":
        return True
    if op == "Equal":
        return (tol.value or "") == (taint.value or "")
    return False
