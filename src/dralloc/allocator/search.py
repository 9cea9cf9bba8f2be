"""Upstream's depth-first search for one allocate call, with pruning that never changes its answer.

The search (first solution wins): claims in order, requests in order, and for slot k of a request only
devices after slot k-1's choice — combinations, never permutations. ``firstAvailable`` tries each
subrequest with the whole rest of the search. The 32-devices-per-claim limit stops a branch with a special
value that a firstAvailable request skips over.

Pruning cuts only subtrees that provably hold no solution, and only where the plain search could not have
raised an error or hit the 32-device limit inside them, so the first solution, the "unschedulable" verdict
and every error text stay upstream's. ``prune=False`` runs the plain search (the tests' reference).

Always on (cheap): for the current request, fewer candidates left than slots; the cheapest remaining
candidates already exceed a shared counter; no matchAttribute value shared by enough remaining candidates.

Once a search has taken :data:`HARD_AFTER` steps (easy searches never pay for this):

* look-ahead (:meth:`Search._doomed`): every request still to fill, up to the first one that could raise an
  error, must have enough devices that are free and acceptable on their own right now (counters, capacity,
  taints, the claim's fixed matchAttribute value); all of them together need that many distinct devices,
  each matchAttribute constraint needs one value shared by all the devices it covers, a distinctAttribute
  request no more devices than there are runs of values it may still take (a request after the first of a
  claim avoids the last value of the request before it), and the cheapest free devices must fit every shared
  counter, and, summed over a pool's counter sets, every counter name (:meth:`Search._pooled_counters_exceeded`);
  an ``allocationMode: All`` request under a constraint does not end the look-ahead when none of its
  devices can break the constraint before a counter stops it (:meth:`Search._all_cannot_raise`);
* failure memo (:meth:`Search._state_key`): a subtree that failed is recorded with the part of the state it
  can see (devices in use and counters consumed among the devices the rest of the search may pick, the
  claim's constraint state, its device count) and any later subtree at the same place with the same
  visible state is skipped: its outcome would be the same.
"""

from __future__ import annotations

import sys
from bisect import bisect_left
from typing import Any, Protocol

from dralloc.allocator.capacity import consumption, fits
from dralloc.allocator.claims import (
    MAX_DEVICES_PER_CLAIM,
    ClaimPlan,
    RequestData,
    candidates,
    requests_for_node,
)
from dralloc.allocator.constraints import DistinctAttribute, MatchAttribute, attribute_set
from dralloc.allocator.errors import ConstraintError
from dralloc.allocator.pools import Candidate, Pool
from dralloc.allocator.selectors import SelectorCache, SelectorFailure
from dralloc.allocator.state import AllocatedState
from dralloc.allocator.tolerations import taint_blocks
from dralloc.allocator.views import NodeView
from dralloc.api.resource_v1 import ResourceClaim

MAXSIZE = 2  # upstream's errAllocationResultMaxSizeExceeded, as a third return value of a subtree
HARD_AFTER = 1000  # steps after which look-ahead and the failure memo switch on (easy searches never pay)
MEMO_MAX = 400_000  # failure memo entries kept per search

if sys.getrecursionlimit() < 20000:
    sys.setrecursionlimit(20000)


class Resources(Protocol):
    """What the search reads from its owner (the Allocator): allocated state, counters, selector outcomes."""

    state: AllocatedState
    selectors: SelectorCache

    def available_counters(self, pool: Pool) -> dict[tuple[str, str], Any]: ...

    def pool_overcommitted(self, pool: Pool) -> bool: ...


class Entry:
    """One picked device during the search."""

    __slots__ = ("cand", "capacity_amounts", "counters_reserved", "rd")

    def __init__(self, rd: RequestData, cand: Candidate, capacity_amounts: Any, counters_reserved: bool) -> None:
        self.rd = rd
        self.cand = cand
        self.capacity_amounts = capacity_amounts
        self.counters_reserved = counters_reserved


class Search:
    """State of one allocate call: the prepared requests, the picks so far, and the pruning data."""

    def __init__(self, resources: Resources, view: NodeView, node_name: str, plans: list[ClaimPlan], *,
                 prune: bool = True, hard_after: int = HARD_AFTER) -> None:
        self.res = resources
        self.view = view
        self.node_name = node_name
        self.plans = plans
        self.prune = prune
        self.hard_after = hard_after
        self.selectors = resources.selectors
        self.allocated = resources.state.exclusive
        self.aggregated = resources.state.aggregated_capacity
        self.requests: list[list[list[RequestData]]] = []  # claim -> request -> [rd] or [sub rds]
        self.constraints: list[list[Any]] = []
        # search state
        self.allocating: dict[str, set[int]] = {}
        self.allocating_capacity: dict[str, dict[str, Any]] = {}
        self.consumed: dict[str, dict[tuple[str, str], Any]] = {}
        self.results: list[list[Entry]] = [[] for _ in plans]
        self.selected_sub: dict[tuple[int, int], int] = {}
        self.steps = 0
        self._hard = False  # the rest is built by _start_hard when the search takes hard_after steps
        self._next: Any = self._one

    @property
    def claims(self) -> list[ResourceClaim]:
        """The pending claims, with API defaults applied."""
        return [p.claim for p in self.plans]

    @property
    def claim_refs(self) -> list[str]:
        """``namespace/name`` of each pending claim, as upstream's errors name them."""
        return [p.ref for p in self.plans]

    _memo: dict[Any, Any]
    _later: dict[tuple[int, int], tuple[frozenset[str], frozenset[Any]]]
    _horizon: dict[tuple[int, int], list[tuple[int, int, list[RequestData]]]]
    _may_exceed: list[bool]
    _all_safe: dict[int, bool]
    _value_keys: dict[tuple[str, tuple[str, ...], tuple[Any, ...]], list[tuple[Any, ...]]]
    _later_bits: dict[tuple[int, int], dict[str, tuple[bool, ...]]]
    _symmetric: dict[tuple[int, int], bool]
    _signature: dict[str, Any]
    _private: set[Any]
    _doomed_calls: int
    _doomed_hits: int
    _skipped: int
    _stride: int

    # ------------------------------------------------------------------ validation
    def prepare(self) -> None:
        """Node-dependent validation, claim by claim (raises upstream's errors in upstream's order)."""
        for ci, plan in enumerate(self.plans):
            self.requests.append(requests_for_node(plan, ci, self.view, self.selectors, self.aggregated))
            self.constraints.append([kind(i, names, attr) for kind, i, names, attr in plan.constraints])

    def run(self) -> bool:
        try:
            return self._one(0, 0, 0, 0, False, 0) is True
        finally:
            self._next = None  # a bound method of self: drop it so the search is freed without the GC

    # ------------------------------------------------------------------ search
    def _one(self, ci: int, ri: int, si: int, k: int, in_sub: bool, start: int) -> Any:
        """One search node: the end, a claim or request boundary, a firstAvailable choice, or slot k of a
        request (each acceptable candidate in turn, then the rest of the search). Children are visited
        through ``self._next``: this method itself, or :meth:`_guarded` once the search is hard."""
        self.steps += 1
        if ci >= len(self.plans):
            return True
        per_claim = self.requests[ci]
        if ri >= len(per_claim):
            res = self._next(ci + 1, 0, 0, 0, False, 0)
            if res is MAXSIZE:
                return False
            return res
        options = per_claim[ri]
        if not in_sub and options[0].parent is not None:
            all_exceeded = True
            for sub_index in range(len(options)):
                res = self._next(ci, ri, sub_index, 0, True, 0)
                if res is MAXSIZE:
                    continue
                all_exceeded = False
                if res is True:
                    self.selected_sub[(ci, ri)] = sub_index
                    return True
            return MAXSIZE if all_exceeded else False
        rd = options[si]
        if rd.all_mode and not rd.all_devices:
            return False
        if k >= rd.num:
            return self._next(ci, ri + 1, 0, 0, False, 0)
        if len(self.results[ci]) + rd.num - k > MAX_DEVICES_PER_CLAIM:
            return MAXSIZE
        if rd.cands is None and not rd.all_mode:
            candidates(rd, self.view, self.selectors)
        prune = self.prune and rd.prunable
        if self.prune and not self._hard and self.steps >= self.hard_after:
            self._start_hard()
            self.steps -= 1  # visited again, through the guard
            return self._guarded(ci, ri, si, k, in_sub, start)
        if rd.all_mode:
            cand = rd.all_devices[k]  # type: ignore[index]
            c = consumption(rd.cap_key, rd.cap_requests, cand.info)
            entry = self._try(rd, cand, c[1] if c is not None else {}, True)
            if entry is None:
                return False
            res = self._next(ci, ri, si, k + 1, in_sub, 0)
            if res is not True:
                self._undo(entry)
            return res
        cands = rd.cands
        assert cands is not None
        n = len(cands)
        need = rd.num - k
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
                raise extra.error(self.plans[ci].ref)
            entry = self._try(rd, cand, extra, False)
            if entry is None:
                continue
            res = self._next(ci, ri, si, k + 1, in_sub, i)
            if res is True:
                return True
            self._undo(entry)
            if res is not False:
                return res
        return False

    def _guarded(self, ci: int, ri: int, si: int, k: int, in_sub: bool, start: int) -> Any:
        """A search node of a hard search: look ahead and consult the failure memo before visiting a slot."""
        per_claim = self.requests[ci] if ci < len(self.plans) else None
        if per_claim is None or ri >= len(per_claim):
            return self._one(ci, ri, si, k, in_sub, start)
        options = per_claim[ri]
        if not in_sub and options[0].parent is not None:
            return self._one(ci, ri, si, k, in_sub, start)
        rd = options[si]
        if ((rd.all_mode and not rd.all_devices) or k >= rd.num
                or len(self.results[ci]) + rd.num - k > MAX_DEVICES_PER_CLAIM):
            return self._one(ci, ri, si, k, in_sub, start)
        if self._look_ahead_now() and self._doomed(rd, ci, ri, k, start):
            self.steps += 1
            self._doomed_hits += 1
            return False
        key = self._state_key(rd, ci, ri, si, k, in_sub, start)
        hit = self._memo.get(key)
        if hit is not None:
            self.steps += 1
            return hit
        res = self._one(ci, ri, si, k, in_sub, start)
        if res is not True and len(self._memo) < MEMO_MAX:
            self._memo[key] = res
        return res

    # ------------------------------------------------------------------ cheap per-request pruning
    def _match_prune(self, rd: RequestData, start: int, need: int) -> bool:
        """True when no attribute value is shared by ``need`` remaining candidates (matchAttribute).

        The devices a constraint accepts all share at least one element with the constraint's current set,
        and with each other, so some value must occur on ``need`` of the remaining candidates.
        """
        cons = self.constraints[rd.ci]
        for idx in rd.match_idx:  # type: ignore[union-attr]
            con = cons[idx]
            key = ("attr", con.attribute)
            index = rd.bounds.get(key)
            if index is None:
                index = {}
                for pos, (cand, _) in enumerate(rd.cands):  # type: ignore[arg-type]
                    v = attribute_set(cand.info, con.attribute)
                    if v:
                        for item in v[1]:
                            index.setdefault((v[0], item), []).append(pos)
                rd.bounds[key] = index
            keys: Any
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
        bounds = rd.bounds.get(start)
        if bounds is None:
            bounds = {}
            rest = rd.cands[start:]  # type: ignore[index]
            for key in rd.counter_keys:
                pool, set_name, cname = key
                vals = []
                for cand, _ in rest:
                    info = cand.info
                    v: Any = 0
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
            rd.bounds[start] = bounds
        consumed_all = self.consumed
        for key, prefix in bounds.items():
            if need >= len(prefix):
                continue
            lo = prefix[need]
            if lo <= 0:
                continue
            pool, set_name, cname = key
            avail = self.res.available_counters(pool)
            a = avail.get((set_name, cname))
            if a is None:
                continue
            used = consumed_all.get(pool.name, {}).get((set_name, cname), 0)
            if used + lo > a:
                return True
        return False

    # ------------------------------------------------------------------ hard searches: look-ahead + memo
    def _look_ahead_now(self) -> bool:
        """Whether to look ahead at this request start: always while it pays off (at least one call in
        eight prunes); otherwise at every ``stride``-th request start, the stride doubling each time."""
        self._doomed_calls += 1
        if self._doomed_hits * 8 >= self._doomed_calls:
            return True
        self._skipped += 1
        if self._skipped >= self._stride:
            self._skipped = 0
            self._stride *= 2
            return True
        return False

    def _start_hard(self) -> None:
        """Precompute, per request position, what the rest of the search can see and where it is safe."""
        self._hard = True
        self._next = self._guarded
        self._all_safe = {}
        self._value_keys = {}
        self._memo = {}
        self._later = {}
        self._horizon = {}
        self._may_exceed = []
        self._later_bits = {}
        self._symmetric = {}
        self._doomed_calls = self._doomed_hits = self._skipped = 0
        self._stride = 1
        flat: list[tuple[int, int, list[RequestData]]] = []
        for ci, per_claim in enumerate(self.requests):
            total = 0
            for ri, options in enumerate(per_claim):
                for rd in options:
                    if rd.cands is None and not rd.all_mode:
                        candidates(rd, self.view, self.selectors)
                    self._static_feasible(rd)
                total += max(rd.num for rd in options)
                flat.append((ci, ri, options))
            self._may_exceed.append(total > MAX_DEVICES_PER_CLAIM)
        # A counter that only one candidate consumes is that device's own business: while the device is
        # free nobody has consumed it, once it is used it no longer matters. The memo ignores such counters.
        consumers: dict[Any, int] = {}
        for cand in self.view.candidates:
            for set_name, cname, _ in cand.info.consumes:
                key = (cand.pool.name, set_name, cname)
                consumers[key] = consumers.get(key, 0) + 1
        private = {key for key, n in consumers.items() if n == 1}
        if any(rd.admin for per_claim in self.requests for options in per_claim for rd in options):
            private = set()  # an admin request may pick a device in use again, consuming its counters twice
        self._private = private
        names = sorted({c.attribute for cons in self.constraints for c in cons if type(c) is MatchAttribute})
        self._signature = {
            cand.info.id: (tuple(attribute_set(cand.info, a) for a in names),
                           tuple(sorted((cand.pool.name, s, c, amount) for s, c, amount in cand.info.consumes
                                        if (cand.pool.name, s, c) not in private)))
            for cand in self.view.candidates}
        any_multi = any(cand.info.allow_multi for cand in self.view.candidates)
        devices: set[str] = set()
        counters: set[Any] = set()
        horizon: list[tuple[int, int, list[RequestData]]] = []
        bits: dict[str, tuple[bool, ...]] = {}
        width = 0
        all_safe = True
        distinct_from: list[bool] = [False] * (len(self.requests) + 1)
        for ci in range(len(self.requests) - 1, -1, -1):
            distinct_from[ci] = distinct_from[ci + 1] or any(type(c) is not MatchAttribute
                                                             for c in self.constraints[ci])
        for ci, ri, options in reversed(flat):
            self._later[(ci, ri)] = (frozenset(devices), frozenset(counters))
            self._horizon[(ci, ri)] = horizon
            self._later_bits[(ci, ri)] = bits
            for rd in options:
                for cand in self._cand_list(rd):
                    devices.add(cand.info.id)
                    for set_name, cname, _ in cand.info.consumes:
                        counters.add((cand.pool.name, set_name, cname))
            safe = all(self._safe(rd) for rd in options)
            horizon = [(ci, ri, options), *horizon] if safe else []
            all_safe = all_safe and safe
            self._symmetric[(ci, ri)] = (all_safe and not any_multi and not distinct_from[ci]
                                         and not self._may_exceed[ci])
            # membership of each device in each later request (statically acceptable candidates only)
            new_bits: dict[str, tuple[bool, ...]] = {}
            member = []
            for rd in options:
                ok, _pos, _last, cands = rd.feasible
                member.append({c.info.id for i, c in enumerate(cands) if ok[i]})
            for did in set(bits).union(*member):
                new_bits[did] = tuple(did in m for m in member) + bits.get(did, (False,) * width)
            width += len(options)
            bits = new_bits

    def _cand_list(self, rd: RequestData) -> list[Candidate]:
        if rd.all_mode:
            return rd.all_devices or []
        return [c for c, _ in rd.cands or ()]

    def _safe(self, rd: RequestData) -> bool:
        """Whether the plain search, inside this request, can only accept or reject (never raise)."""
        if not rd.prunable:
            return False
        if rd.all_mode:
            safe = self._all_safe.get(id(rd))
            if safe is None:
                safe = self._all_safe[id(rd)] = self._all_cannot_raise(rd)
            return safe
        return True

    def _all_cannot_raise(self, rd: RequestData) -> bool:
        """Whether an ``allocationMode: All`` request under claim constraints can never raise.

        Upstream fails the whole allocation when a device an All request must take breaks a constraint,
        but only after the device passed the in-use, counter and taint checks. So the request is safe when
        every device that could break a constraint cannot pass those checks at that point: it is taken
        already, tainted, or each device of the claim picked before it that conflicts with it on a
        constraint (a distinctAttribute value in common, a matchAttribute value it lacks) shares a counter
        with it that cannot hold both. A whole GPU after partitions of other GPUs is the typical case: a
        partition of the same GPU would be the only conflict, and it uses up the GPU's counters. Without
        this, the look-ahead stops at every such request and cannot see a hopeless claim behind it.
        """
        ci = rd.ci
        cons = [c for c in self.constraints[ci] if c.applies(rd.base, rd.full)]
        if not cons:
            return True
        before: list[tuple[RequestData, Candidate]] = []  # what the claim may have picked before
        for options in self.requests[ci][:rd.ri]:
            for opt in options:
                before.extend((opt, c) for c in self._cand_list(opt))
        for cand in rd.all_devices or ():
            info = cand.info
            if ((info.id in self.allocated and not rd.admin)
                    or (info.taints and taint_blocks(info.taints, rd.tolerations))):
                continue  # rejected before the constraints are checked, never picked
            if info.allow_multi:
                return False
            for con in cons:
                mine = attribute_set(info, con.attribute)
                if not mine or len(mine[1]) != 1:
                    return False
                for opt, other in before:
                    if other.info.id == info.id or not con.applies(opt.base, opt.full):
                        continue
                    theirs = attribute_set(other.info, con.attribute)
                    if type(con) is DistinctAttribute:
                        conflict = bool(theirs) and theirs[0] == mine[0] and bool(theirs[1] & mine[1])
                    else:  # a device without the value is never picked under matchAttribute
                        conflict = bool(theirs) and (theirs[0] != mine[0] or not mine[1] <= theirs[1])
                    if conflict and not self._counters_exclude(cand, other):
                        return False
            before.append((rd, cand))
        return True

    def _counters_exclude(self, a: Candidate, b: Candidate) -> bool:
        """Whether two devices can never hold their counters together (a shared counter too small)."""
        if a.pool is not b.pool or a.info.allow_multi or b.info.allow_multi:
            return False
        avail = self.res.available_counters(a.pool)
        drawn = {(set_name, cname): amount for set_name, cname, amount in b.info.consumes}
        for set_name, cname, amount in a.info.consumes:
            other = drawn.get((set_name, cname))
            limit = avail.get((set_name, cname))
            if other is not None and limit is not None and amount + other > limit:
                return True
        return False

    def _static_feasible(self, rd: RequestData) -> None:
        """Per candidate: could it ever be accepted for this request in this call (state of other claims
        aside)? Also each candidate's position, and the last position of each counter it consumes."""
        res = self.res
        cons = [c for c in self.constraints[rd.ci] if c.applies(rd.base, rd.full)]
        ok: list[bool] = []
        pos: dict[str, int] = {}
        last: dict[Any, int] = {}
        for i, cand in enumerate(self._cand_list(rd)):
            info = cand.info
            pos[info.id] = i
            for set_name, cname, _ in info.consumes:
                last[(cand.pool.name, set_name, cname)] = i
            good = True
            if not rd.admin and info.id in self.allocated or info.taints and taint_blocks(info.taints, rd.tolerations):
                good = False
            elif info.consumes and not (info.allow_multi and info.id in self.aggregated):
                if res.pool_overcommitted(cand.pool):
                    good = False
                else:
                    avail = res.available_counters(cand.pool)
                    for set_name, cname, amount in info.consumes:
                        a = avail.get((set_name, cname))
                        if a is not None and a < amount:
                            good = False
                            break
            if good:
                for con in cons:
                    v = attribute_set(info, con.attribute)
                    if not v and (type(con) is MatchAttribute or v is None):
                        good = False
                        break
            if good and not rd.all_mode:
                amounts = rd.cands[i][1]  # type: ignore[index]
                if type(amounts) is not SelectorFailure and (info.capacity or amounts):
                    good = fits(amounts, info, self.aggregated.get(info.id), None)
            ok.append(good)
        rd.feasible = (ok, pos, last, self._cand_list(rd))

    def _free_now(self, cand: Candidate, rd: RequestData, ci: int) -> bool:
        """Whether a statically acceptable candidate is free and fits the counters picked so far."""
        info = cand.info
        did = info.id
        users = self.allocating.get(did)
        if users and (not rd.admin or ci in users):
            return False
        if info.allow_multi:
            cur = self.allocating_capacity.get(did)
            if cur is not None or did in self.aggregated:
                if cur is not None and not rd.all_mode:
                    c = consumption(rd.cap_key, rd.cap_requests, info)
                    if c is not None and not fits(c[1], info, self.aggregated.get(did), cur):
                        return False
                return True
        if info.consumes:
            consumed = self.consumed.get(cand.pool.name)
            if consumed:
                avail = self.res.available_counters(cand.pool)
                for set_name, cname, amount in info.consumes:
                    a = avail.get((set_name, cname))
                    if a is not None and consumed.get((set_name, cname), 0) + amount > a:
                        return False
        return True

    def _free_list(self, rd: RequestData, ci: int, cands: list[Candidate], ok: list[bool], lo: int,
                   free_cache: dict[str, bool]) -> list[Candidate]:
        """The statically acceptable candidates from ``lo`` on that are free now (cached per device for
        plain requests: then the answer does not depend on the request)."""
        if rd.admin or rd.all_mode:
            return [c for i, c in enumerate(cands[lo:], lo) if ok[i] and self._free_now(c, rd, ci)]
        out = []
        for i in range(lo, len(cands)):
            if not ok[i]:
                continue
            c = cands[i]
            did = c.info.id
            free = free_cache.get(did)
            if free is None:
                free = self._free_now(c, rd, ci)
                if not c.info.allow_multi:
                    free_cache[did] = free
            if free:
                out.append(c)
        return out

    def _doomed(self, rd: RequestData, ci: int, ri: int, k: int, start: int) -> bool:
        """True when the requests from here to the first risky one cannot all be filled (see module doc)."""
        if not self._safe(rd):
            return False
        horizon = [] if self._may_exceed[ci] else self._horizon[(ci, ri)]
        union: set[str] = set()
        free_of: dict[int, list[Candidate]] = {}
        total_need = 0
        any_multi = False
        covered: list[tuple[int, frozenset[int], int, list[Candidate]]] = []
        free_cache: dict[str, bool] = {}
        current_free: list[Candidate] = []
        steps: list[tuple[int, list[RequestData], int]] = [(ci, [rd], k)]
        steps.extend((cj, options, 0) for cj, _, options in horizon)
        previous: list[tuple[RequestData, list[Candidate]]] = []  # the step before, if of the same claim
        previous_claim = -1
        options_free: list[list[tuple[int, list[Candidate]]]] = []  # per request: (need, free) per option
        for cj, options, done in steps:
            best_need: int | None = None
            request_free: list[Candidate] = []
            passing: list[tuple[RequestData, list[Candidate]]] = []
            if cj != previous_claim:
                previous = []
            for opt in options:
                need = opt.num - done
                ok, _pos, _last, cands = opt.feasible
                lo = (k if opt.all_mode else start) if opt is rd else 0
                free = self._free_list(opt, cj, cands, ok, lo, free_cache)
                if opt is rd:
                    current_free = free
                if opt.all_mode:
                    if len(free) < need:
                        continue  # an All request needs every listed device
                elif len(free) < need:
                    continue
                matches = [con for con in self.constraints[cj]
                           if type(con) is MatchAttribute and con.applies(opt.base, opt.full)]
                if matches and not self._groups_ok(matches, [(need, free)]):
                    continue
                if not all(self._distinct_ok(con, opt, free, need, rd, cj == ci, current_free, previous)
                           for con in self.constraints[cj]
                           if type(con) is DistinctAttribute and con.applies(opt.base, opt.full)):
                    continue
                free_of[id(opt)] = free
                passing.append((opt, free))
                request_free.extend(free)
                best_need = need if best_need is None or need < best_need else best_need
            if best_need is None:
                return True
            previous, previous_claim = passing, cj
            options_free.append([(opt.num - done, free) for opt, free in passing])
            total_need += best_need
            for c in request_free:
                union.add(c.info.id)
                any_multi = any_multi or c.info.allow_multi
            applied = frozenset.intersection(*(
                frozenset(idx for idx, con in enumerate(self.constraints[cj])
                          if type(con) is MatchAttribute and con.applies(opt.base, opt.full))
                for opt in options))
            if applied:
                covered.append((cj, applied, best_need, request_free))
        if self._pooled_counters_exceeded(options_free):
            return True
        if any_multi:
            return False
        # An adminAccess request may take a device another claim took: devices are distinct only within a
        # claim then, so the bounds over all claims together do not hold.
        any_admin = any(opt.admin for _, options, _ in steps for opt in options)
        if not any_admin and len(union) < total_need:
            return True
        # Requests of one claim under the same matchAttribute constraints: all their devices share a value
        # of each constraint's attribute, so some combination of values is on that many devices.
        groups = {(cj, applied) for cj, applied, _, _ in covered}
        groups |= {(cj, frozenset((idx,))) for cj, applied, _, _ in covered for idx in applied}
        for cj, group in groups:
            parts = [(n, free) for cj2, applied, n, free in covered if cj2 == cj and group <= applied]
            cons = [self.constraints[cj][idx] for idx in sorted(group)]
            if not self._groups_ok(cons, parts):
                return True
        return not any_admin and self._counters_doomed(steps, free_of, total_need)

    def _distinct_ok(self, con: DistinctAttribute, opt: RequestData, free: list[Candidate], need: int,
                     current: RequestData, same_claim: bool, current_free: list[Candidate],
                     previous: list[tuple[RequestData, list[Candidate]]]) -> bool:
        """Whether ``need`` free devices (in candidate order) can pass upstream's distinctAttribute check.

        Each device must differ from the value remembered for every other request of the claim and from the
        previous device of its own request, so the most a request can get is the number of runs of equal
        values among the allowed devices. The request being filled still changes its value: a later request
        must avoid the value of its last device, one of the values among its free devices. A request of a
        claim not started yet likewise avoids the last value of the claim's request before it (``previous``:
        that request's options and their free devices): without this a claim whose second request can only
        alternate between values the first one also needs (two NUMA nodes, counts above one) looks
        satisfiable from outside, and the search tries every combination of the claims before it.
        Multi-valued (list) or unknown-typed attributes: no claim is made.
        """
        forbidden = []
        prev = None
        if same_claim and con.count > 0:
            for base, value in con.values.items():
                if base == opt.base:
                    if opt is current:
                        prev = value
                    continue
                if base == current.base and opt is not current:
                    continue  # replaced by the value of the current request's last device
                if value:
                    forbidden.append(value)
        open_values: list[Any] = [None]
        if same_claim and opt is not current and opt.base != current.base and con.applies(current.base,
                                                                                            current.full):
            seen = {attribute_set(c.info, con.attribute) for c in current_free}
            if any(not v or len(v[1]) != 1 for v in seen):
                return True
            open_values = list(seen)
        elif not same_claim and previous:
            # The claim starts empty (count 0), so only the previous request's last value is remembered
            # by the time this one starts, among those of earlier requests (which only forbid more).
            last_values: set[Any] = set()
            for prev_opt, prev_free in previous:
                if not con.applies(prev_opt.base, prev_opt.full):
                    last_values.add(None)
                    continue
                for c in prev_free:
                    v = attribute_set(c.info, con.attribute)
                    if not v or len(v[1]) != 1:
                        return True
                    last_values.add(v)
            open_values = list(last_values)
        return any(self._distinct_runs(con, free, forbidden + ([v] if v else []), prev, need)
                   for v in open_values)

    @staticmethod
    def _distinct_runs(con: DistinctAttribute, free: list[Candidate], forbidden: list[Any], prev: Any,
                       need: int) -> bool:
        count = 0
        for c in free:
            v = attribute_set(c.info, con.attribute)
            if not v or len(v[1]) != 1:
                return True
            if any(f[0] == v[0] and f[1] & v[1] for f in forbidden):
                continue
            if prev and prev[0] == v[0] and prev[1] & v[1]:
                continue
            count += 1
            prev = v
            if count >= need:
                return True
        return need <= 0

    def _groups_ok(self, cons: list[MatchAttribute], parts: list[tuple[int, list[Candidate]]]) -> bool:
        """Whether one combination of values, one per constraint (within each constraint's fixed set, if
        any), has devices enough for every part (a request: how many it needs, its free devices): each part
        its own number, all parts together that many distinct devices, and the cheapest of them within the
        shared counters."""
        total = sum(need for need, _ in parts)
        if total <= 0:
            return True
        fixed = tuple((i, con.current) for i, con in enumerate(cons) if con.count > 0)
        attrs = tuple(con.attribute for con in cons)
        value_keys = self._value_keys
        groups: dict[Any, list[list[Candidate]]] = {}
        for pi, (_need, free) in enumerate(parts):
            for c in free:
                keys = value_keys.get((c.info.id, attrs, fixed))
                if keys is None:
                    keys = self._combinations(c, attrs)
                    if fixed:
                        keys = [key for key in keys
                                if all(key[i][0] == fx[0] and key[i][1] in fx[1] for i, fx in fixed)]
                    value_keys[(c.info.id, attrs, fixed)] = keys
                for key in keys:
                    lists = groups.get(key)
                    if lists is None:
                        lists = groups[key] = [[] for _ in parts]
                    lists[pi].append(c)
        for lists in groups.values():
            if any(len(lst) < need for lst, (need, _) in zip(lists, parts)):
                continue
            if len({c.info.id for lst in lists for c in lst}) < total:
                continue
            needs = [need for need, _ in parts]
            if (self._group_counters_fit(lists, needs)
                    and not self._pooled_counters_exceeded([[(need, lst)] for need, lst in zip(needs, lists)])):
                return True
        return False

    @staticmethod
    def _combinations(c: Candidate, attrs: tuple[str, ...]) -> list[tuple[Any, ...]]:
        """Every combination of one value per attribute of the device (none if one is missing)."""
        keys: list[tuple[Any, ...]] = [()]
        for attr in attrs:
            v = attribute_set(c.info, attr)
            if not v:
                return []
            keys = [key + ((v[0], item),) for key in keys for item in v[1]]
        return keys

    def _group_counters_fit(self, lists: list[list[Candidate]], needs: list[int]) -> bool:
        """Whether, per shared counter, the cheapest devices each part needs fit what is left of it."""
        keys: dict[tuple[str, str, str], Pool] = {}
        for lst in lists:
            for c in lst:
                for set_name, cname, _ in c.info.consumes:
                    keys[(c.pool.name, set_name, cname)] = c.pool
        for (pool_name, set_name, cname), pool in keys.items():
            lo: Any = 0
            for lst, need in zip(lists, needs):
                costs = []
                for c in lst:
                    v: Any = 0
                    if not c.info.allow_multi and c.pool.name == pool_name:
                        for s, n, amount in c.info.consumes:
                            if s == set_name and n == cname:
                                v += amount
                    costs.append(v)
                costs.sort()
                lo += sum(costs[:need])
            if lo <= 0:
                continue
            a = self.res.available_counters(pool).get((set_name, cname))
            if a is None:
                continue
            if self.consumed.get(pool_name, {}).get((set_name, cname), 0) + lo > a:
                return False
        return True

    def _pooled_counters_exceeded(self, requests: list[list[tuple[int, list[Candidate]]]]) -> bool:
        """True when the requests together need more of a counter name than all its counter sets have left.

        Partitionable devices of one pool usually draw on one counter set per physical device (``memory``
        of ``gpu-0-counters``, of ``gpu-1-counters``, ...). Each set bounds the picks drawing on it, so
        their sum bounds the picks drawing on any of them: the requests' cheapest possible draw on a counter
        name, summed over the sets their devices touch, must fit what those sets have left. Per set alone
        this is invisible (any one GPU may be avoided) and the search tries every spread of the picks over
        the GPUs. ``requests``: per request, each option's need and free devices; a request costs at least
        its cheapest option. Multi-allocatable devices count as free of charge (they may not reserve again).
        """
        weights: dict[tuple[str, str], dict[str, Any]] = {}  # (pool, counter name) -> device id -> draw
        touched: dict[tuple[str, str], set[tuple[Pool, str]]] = {}
        seen: set[str] = set()
        for options in requests:
            for _need, free in options:
                for c in free:
                    info = c.info
                    if not info.consumes or info.allow_multi or info.id in seen:
                        continue
                    seen.add(info.id)
                    avail = self.res.available_counters(c.pool)
                    for set_name, cname, amount in info.consumes:
                        if avail.get((set_name, cname)) is None:
                            continue
                        group = (c.pool.name, cname)
                        draws = weights.setdefault(group, {})
                        draws[info.id] = draws.get(info.id, 0) + amount
                        touched.setdefault(group, set()).add((c.pool, set_name))
        for group, draws in weights.items():
            lo: Any = 0
            for options in requests:
                cheapest: Any = None
                for need, free in options:
                    if need <= 0:
                        cheapest = 0
                        break
                    costs = sorted(draws.get(c.info.id, 0) for c in free)
                    cost = sum(costs[:need])
                    cheapest = cost if cheapest is None or cost < cheapest else cheapest
                lo += cheapest or 0
            if lo <= 0:
                continue
            left: Any = 0
            for pool, set_name in touched[group]:
                a = self.res.available_counters(pool)[(set_name, group[1])]
                used = self.consumed.get(pool.name, {}).get((set_name, group[1]), 0)
                if a > used:
                    left += a - used
            if lo > left:
                return True
        return False

    def _counters_doomed(self, steps: list[tuple[int, list[RequestData], int]], free_of: dict[int, list[Candidate]],
                         total_need: int) -> bool:
        """True when the cheapest ``total_need`` free devices already exceed some shared counter."""
        devices: dict[str, Candidate] = {}
        for _, options, _ in steps:
            for opt in options:
                for c in free_of.get(id(opt), ()):
                    devices[c.info.id] = c
        costs: dict[tuple[str, str, str], list[Any]] = {}
        pools: dict[str, Pool] = {}
        for c in devices.values():
            for set_name, cname, amount in c.info.consumes:
                costs.setdefault((c.pool.name, set_name, cname), []).append(amount)
                pools[c.pool.name] = c.pool
        n = len(devices)
        for (pool_name, set_name, cname), vals in costs.items():
            zeros = n - len(vals)
            if zeros >= total_need:
                continue
            vals.sort()
            lo = sum(vals[: total_need - zeros])
            a = self.res.available_counters(pools[pool_name]).get((set_name, cname))
            if a is None:
                continue
            used = self.consumed.get(pool_name, {}).get((set_name, cname), 0)
            if used + lo > a:
                return True
        return False

    def _state_key(self, rd: RequestData, ci: int, ri: int, si: int, k: int, in_sub: bool, start: int) -> Any:
        """The part of the state the rest of the search can see (see the module docstring).

        Devices in use count only if the rest of the search could pick them. Where nothing from here on can
        raise, no distinctAttribute constraint makes the order of picks matter and no device is shared,
        devices are only told apart by what the rest of the search sees of them (in which requests they are
        candidates, their matchAttribute values, the shared counters they consume): two states that differ
        by swapping such twins succeed or fail together, so the key counts devices in use per kind.
        """
        later_devices, later_counters = self._later[(ci, ri)]
        ok, pos, last, _cands = rd.feasible
        if self._symmetric[(ci, ri)]:
            bits = self._later_bits[(ci, ri)]
            signature = self._signature
            kinds: dict[Any, int] = {}
            for did, users in self.allocating.items():
                p = pos.get(did, -1)
                current = p >= start and ok[p]
                b = bits.get(did)
                if b is None and not current:
                    continue
                kind = (b, current, ci in users, signature[did])
                kinds[kind] = kinds.get(kind, 0) + 1
            used: Any = frozenset(kinds.items())
        else:
            used = frozenset((did, ci in users) for did, users in self.allocating.items()
                             if did in later_devices or pos.get(did, -1) >= start)
        caps = []
        for did, cur in self.allocating_capacity.items():
            if did in later_devices or pos.get(did, -1) >= start:
                caps.append((did, tuple(sorted(cur.items()))))
        consumed = []
        private = self._private
        for pool_name, values in self.consumed.items():
            for (set_name, cname), v in values.items():
                if v:
                    key = (pool_name, set_name, cname)
                    if key not in private and (key in later_counters or last.get(key, -1) >= start):
                        consumed.append((key, v))
        cons = tuple(c.state() for c in self.constraints[ci])
        return (ci, ri, si, k, in_sub, start, len(self.results[ci]), used, frozenset(caps),
                frozenset(consumed), cons)

    # ------------------------------------------------------------------ picking and undoing
    def _try(self, rd: RequestData, cand: Candidate, amounts: Any, must: bool) -> Entry | None:
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
            if not self.reserve_counters(cand):
                return None
            reserved = True
        if info.taints and taint_blocks(info.taints, rd.tolerations):
            if reserved:
                self.release_counters(cand)
            return None
        cons = self.constraints[ci]
        base, full = rd.base, rd.full
        for idx, con in enumerate(cons):
            if not con.add(base, full, info):
                for j in range(idx):
                    cons[j].remove(base, full, info)
                if reserved:
                    self.release_counters(cand)
                if must:
                    raise ConstraintError(f"claim {self.plans[ci].ref}, request {rd.name}: cannot add device "
                                          f"{did} because a claim constraint would not be satisfied")
                return None
        if (info.capacity or amounts) and not fits(amounts, info, self.aggregated.get(did),
                                                   self.allocating_capacity.get(did)):
            for con in cons:
                con.remove(base, full, info)
            if reserved:
                self.release_counters(cand)
            return None
        entry = Entry(rd, cand, None, reserved)
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

    def _undo(self, entry: Entry) -> None:
        rd = entry.rd
        info = entry.cand.info
        did = info.id
        for con in self.constraints[rd.ci]:
            con.remove(rd.base, rd.full, info)
        users = self.allocating.get(did)
        if users is not None:
            users.discard(rd.ci)
            if not users:
                del self.allocating[did]
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
            self.release_counters(entry.cand)
        self.results[rd.ci].pop()

    def reserve_counters(self, cand: Candidate) -> bool:
        """Add the device's counter consumption; False (and nothing reserved) if a counter is exceeded."""
        pool = cand.pool
        avail = self.res.available_counters(pool)
        consumed = self.consumed.get(pool.name)
        if consumed is None:
            consumed = self.consumed[pool.name] = {}
        ok = True
        for set_name, cname, amount in cand.info.consumes:
            k = (set_name, cname)
            consumed[k] = consumed.get(k, 0) + amount
        # Any counter of the pool over its availability rejects the device. Counters this device does not
        # touch were within limits before, except when allocated devices already over-consumed them.
        for set_name, cname, _ in cand.info.consumes:
            k = (set_name, cname)
            a = avail.get(k)
            if a is not None and a < consumed[k]:
                ok = False
                break
        if ok and self.res.pool_overcommitted(pool):
            ok = False  # an allocated device over-consumed some counter: nothing fits in this pool
        if not ok:
            self.release_counters(cand)
        return ok

    def release_counters(self, cand: Candidate) -> None:
        consumed = self.consumed[cand.pool.name]
        for set_name, cname, amount in cand.info.consumes:
            k = (set_name, cname)
            consumed[k] = consumed[k] - amount
