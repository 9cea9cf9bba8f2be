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

* look-ahead (module :mod:`dralloc.allocator.lookahead`): every request still to fill, up to the first
  one that could raise an error, must have enough devices that are free and acceptable on their own right
  now (counters, capacity, taints, the claim's fixed matchAttribute value); all of them together need that
  many distinct devices, each matchAttribute constraint needs one value shared by all the devices it covers,
  a distinctAttribute request no more devices than there are runs of values it may still take (a request
  after the first of a claim avoids the last value of the request before it), and the cheapest free devices
  must fit every shared counter, and, summed over a pool's counter sets, every counter name; claims under
  matchAttribute must find their value groups side by side, beside the requests outside such groups
  (Hall's condition over one group each), each firstAvailable request with one of its subrequests; an
  adminAccess request's claim and the later requests without adminAccess need devices of their own; a
  distinctAttribute claim's requests avoid the values its finished requests remember; an
  ``allocationMode: All`` request under a constraint does not end the look-ahead when none of its devices
  can break the constraint before a counter stops it, and one whose first device can never be taken (or
  that lists none) fails wherever the search reaches it, as does one whose first device the picks so far,
  or the devices the requests before it must all take, hold or leave too few counters for; and the partitions still needed must pack into
  their counter sets, slice positions and all, with the picks that share a GPU (matchAttribute on the
  parent) or spread over GPUs (distinctAttribute) kept so (module :mod:`dralloc.allocator.lookahead_packing`);
* failure memo (:meth:`Search._state_key`): a subtree that failed is recorded with the part of the state it
  can see (devices in use and counters consumed among the devices the rest of the search may pick, the
  claim's constraint state, its device count) and any later subtree at the same place with the same
  visible state is skipped: its outcome would be the same. Where the order of picks cannot matter,
  identical GPUs are described by their state rather than their name (module
  :mod:`dralloc.allocator.symmetry`).

``estimate=True`` also estimates how many steps upstream's plain search would take (module
:mod:`dralloc.allocator.upstream_cost`): the sizes of memoised subtrees and random walks below cuts.

``step_budget`` (the Allocator's ``timeout_steps``): once a search has taken :data:`PROVE_AFTER` steps, it
also counts the steps upstream's plain search surely takes — the nodes visited, the recorded count of each
subtree the failure memo answers with a key that holds the whole visible state (twin devices counted by
kind may hide subtrees of other sizes), and below each cut the ways of filling the cut request that upstream
walks (module :mod:`dralloc.allocator.step_bound`). That count is a lower bound, so once it passes the
budget before any solution, upstream's search would still be running when kube-scheduler's filter timeout
ends it: the search stops with :class:`~dralloc.allocator.errors.AllocationTimeout`. Shorter searches are
never stopped: they answer, and the estimate above says whether upstream would time out first.
"""

from __future__ import annotations

import random
import sys
from bisect import bisect_left
from types import FrameType
from typing import Any, cast

from dralloc.allocator.capacity import consumption, fits
from dralloc.allocator.claims import (
    MAX_DEVICES_PER_CLAIM,
    ClaimPlan,
    RequestData,
    candidates,
    requests_for_node,
)
from dralloc.allocator.constraints import MatchAttribute, attribute_set
from dralloc.allocator.errors import AllocationTimeout, ConstraintError
from dralloc.allocator.lookahead import LookAhead, Resources
from dralloc.allocator.pools import Candidate
from dralloc.allocator.selectors import SelectorFailure
from dralloc.allocator.step_bound import cut_subtree_steps
from dralloc.allocator.symmetry import IdenticalGpus, find_identical_gpus, gpu_states
from dralloc.allocator.tolerations import taint_blocks
from dralloc.allocator.upstream_cost import SubtreeEstimator, UpstreamCost
from dralloc.allocator.views import NodeView
from dralloc.api.resource_v1 import ResourceClaim

MAXSIZE = 2  # upstream's errAllocationResultMaxSizeExceeded, as a third return value of a subtree
HARD_AFTER = 1000  # steps after which look-ahead and the failure memo switch on (easy searches never pay)
MEMO_MAX = 400_000  # failure memo entries kept per search
PROVE_AFTER = 5000  # steps after which cut subtrees count towards the proof of upstream's timeout

# A search recurses once per node along its path (twice once it is hard: the guard, then the node): per claim a
# claim boundary, and per request a request boundary, a firstAvailable choice and its slots, the slots of one
# claim at most MAX_DEVICES_PER_CLAIM (the search stops deeper: MAXSIZE).
_FRAMES_PER_NODE = 2
_CALLERS_MARGIN = 100  # frames the search's own helpers and the interpreter's checks may add below it


def _path_bound(requests: list[list[list[RequestData]]]) -> int:
    """The most frames a search of these claims' requests can stack."""
    nodes = sum(1 + 2 * len(per_claim) + MAX_DEVICES_PER_CLAIM for per_claim in requests) + 1
    return _FRAMES_PER_NODE * nodes + _CALLERS_MARGIN


def _ensure_depth(frames: int) -> None:
    """Let the recursion limit hold ``frames`` more frames than are on this thread's stack now (raised, never
    lowered: the limit is the process's; only as far as this search needs, since C code that recurses, a
    decoder's, may go as deep as the limit lets it on the C stack)."""
    if sys.getrecursionlimit() >= frames + 4 * _CALLERS_MARGIN:
        return  # (the common case: no walk of the stack)
    depth, frame = 0, cast(FrameType | None, sys._getframe())
    while frame is not None:
        depth, frame = depth + 1, frame.f_back
    if sys.getrecursionlimit() < depth + frames:
        sys.setrecursionlimit(depth + frames)


class Entry:
    """One picked device during the search."""

    __slots__ = ("cand", "capacity_amounts", "counters_reserved", "rd")

    def __init__(self, rd: RequestData, cand: Candidate, capacity_amounts: Any, counters_reserved: bool) -> None:
        self.rd = rd
        self.cand = cand
        self.capacity_amounts = capacity_amounts
        self.counters_reserved = counters_reserved


class Search(LookAhead):
    """State of one allocate call: the prepared requests, the picks so far, and the pruning data."""

    def __init__(self, resources: Resources, view: NodeView, node_name: str, plans: list[ClaimPlan], *,
                 prune: bool = True, hard_after: int = HARD_AFTER, estimate: bool = False,
                 step_budget: int | None = None) -> None:
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
        # estimating upstream's step count (module upstream_cost): what cut subtrees would have cost it
        self.estimate = estimate
        self._extra = 0.0
        self._estimator = SubtreeEstimator() if estimate else None
        self._memo_size: dict[Any, float] = {}
        # a proof that upstream's plain search runs past its step budget (module upstream_cost): the steps
        # it takes besides the nodes this search visits, counted only where they are certain
        self.step_budget = step_budget
        self._proven = 0
        self._memo_proven: dict[Any, int] = {}
        self._proof_keys: dict[Any, Any] = {}
        self._proof_counts: dict[Any, int] = {}
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
    _later_bits: dict[tuple[int, int], dict[str, tuple[bool, ...]]]
    _symmetric: dict[tuple[int, int], bool]
    _signature: dict[str, Any]
    _gpus: IdenticalGpus
    _gpu_windows: dict[tuple[int, int], list[tuple[bool, ...]]]
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

    def upstream_cost(self) -> UpstreamCost:
        """Upstream's search steps for this input, estimated (exact for the plain search); after :meth:`run`
        of a search made with ``estimate=True``."""
        return UpstreamCost(round(self.steps + self._extra))

    def run(self) -> bool:
        _ensure_depth(_path_bound(self.requests))
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
            if rd.match_idx is None:
                rd.match_idx = [i for i, c in enumerate(self.constraints[ci])
                                if type(c) is MatchAttribute and c.applies(rd.base, rd.full)]
            if (n - start < need or (rd.counter_keys and need >= 2 and self._counters_prune(rd, start, need))
                    or (rd.match_idx and need >= 2 and self._match_prune(rd, start, need))):
                if self.estimate:
                    self._cut(ci, ri, si, k, in_sub, start)
                if self._hard and self.step_budget is not None and self.steps >= PROVE_AFTER:
                    self._prove_cut(rd, ci, k, start)  # the request cannot be filled: its nodes are all
                return False
        admin = rd.admin
        allocating = self.allocating
        allocated = self.allocated
        i = start
        while i < n:
            if prune and n - i < need:
                if self.estimate:
                    self._cut(ci, ri, si, k, in_sub, i)
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
            if self.estimate:
                self._cut(ci, ri, si, k, in_sub, start)
            if self.step_budget is not None and self.steps >= PROVE_AFTER and not self._may_exceed[ci]:
                self._prove_cut(rd, ci, k, start)
            return False
        key = self._state_key(rd, ci, ri, si, k, in_sub, start)
        hit = self._memo.get(key)
        if hit is not None:
            self.steps += 1
            if self.estimate:
                self._extra += self._memo_size.get(key, 1.0) - 1
            proven = self._memo_proven.get(key)
            if proven is not None:
                self._proven += proven - 1
                if self.step_budget is not None and self.steps + self._proven > self.step_budget:
                    raise AllocationTimeout(self.node_name, self.steps + self._proven)
            return hit
        before = self.steps + self._extra
        before_proven = self.steps + self._proven
        res = self._one(ci, ri, si, k, in_sub, start)
        if res is not True and len(self._memo) < MEMO_MAX:
            self._memo[key] = res
            if self.estimate:
                self._memo_size[key] = self.steps + self._extra - before
            if not self._symmetric[(ci, ri)]:
                # The key holds everything the plain search below can see, so it walks the same subtree
                # each time it gets here; a key that counts twin devices by kind holds no such promise.
                self._memo_proven[key] = self.steps + self._proven - before_proven
        return res

    def _prove_cut(self, rd: RequestData, ci: int, k: int, start: int) -> None:
        """Add what upstream walks below a node the look-ahead cut (module :mod:`dralloc.allocator.step_bound`)
        to the proven steps; stop with upstream's timeout once they exceed the budget."""
        assert self.step_budget is not None
        ok, _pos, _last, cands = rd.feasible
        free = self._free_list(rd, ci, cands, ok, start, {})
        constraints = self.constraints[ci]
        # the count depends on nothing else: cuts with the same free devices and claim state count alike
        key = (id(rd), rd.num - k, tuple([c.info.id for c in free]), tuple([con.state() for con in constraints]))
        proven = self._proof_counts.get(key)
        if proven is None:
            proven = cut_subtree_steps(rd, constraints, free, rd.num - k, self._proof_keys)
            if len(self._proof_counts) < MEMO_MAX:
                self._proof_counts[key] = proven
        self._proven += proven - 1
        if self.steps + self._proven > self.step_budget:
            raise AllocationTimeout(self.node_name, self.steps + self._proven)

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
        self._key_devices = {}
        self._draws = {}
        self._memo = {}
        self._later = {}
        self._horizon = {}
        self._dead_end = {}
        self._horizon_end = {}
        self._may_exceed = []
        self._later_bits = {}
        self._symmetric = {}
        self._doomed_calls = self._doomed_hits = self._skipped = 0
        self._scalars = {}
        self._any_counters = any(cand.info.consumes for cand in self.view.candidates)
        self._static_ok = {}
        self._limits = {}
        self._key_draws = {}
        self._single_draws = {}
        self._whole_of_device = {}
        self._bins = {}
        self._packings = {}
        self._packing_answers = {}
        self._bin_draws = {}
        self._hall_sets = {}
        self._packing_calls = self._packing_hits = self._packing_skipped = 0
        self._packing_stride = 1
        self._device_bit = {cand.info.id: 1 << i for i, cand in enumerate(self.view.candidates)}
        self._device_of_bit = [cand.info.id for cand in self.view.candidates]
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
        self._gpus = find_identical_gpus(
            self.view.candidates, (rd for per_claim in self.requests for options in per_claim for rd in options),
            {c.attribute for cons in self.constraints for c in cons}, self.res.available_counters)
        self._gpu_windows = {}
        devices: set[str] = set()
        counters: set[Any] = set()
        horizon: list[tuple[int, int, list[RequestData]]] = []
        bits: dict[str, tuple[bool, ...]] = {}
        width = 0
        all_safe = True
        dead_end = False  # whether the request that ends the horizon always fails (module lookahead)
        end: list[RequestData] | None = None  # the request that ends the horizon
        distinct_from: list[bool] = [False] * (len(self.requests) + 1)
        for ci in range(len(self.requests) - 1, -1, -1):
            distinct_from[ci] = distinct_from[ci + 1] or any(type(c) is not MatchAttribute
                                                             for c in self.constraints[ci])
        for ci, ri, options in reversed(flat):
            self._later[(ci, ri)] = (frozenset(devices), frozenset(counters))
            self._horizon[(ci, ri)] = horizon
            self._dead_end[(ci, ri)] = dead_end
            self._horizon_end[(ci, ri)] = end
            self._later_bits[(ci, ri)] = bits
            for rd in options:
                for cand in self._cand_list(rd):
                    devices.add(cand.info.id)
                    for set_name, cname, _ in cand.info.consumes:
                        counters.add((cand.pool.name, set_name, cname))
            safe = all(self._safe(rd) for rd in options)
            horizon = [(ci, ri, options), *horizon] if safe else []
            if not safe:
                dead_end = self._dead_all(options)
                end = options
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
        gpus = self._gpus
        gpu_part: Any = None
        cons: Any = None
        if self._symmetric[(ci, ri)] and gpus:
            gpu_part, cons = self._gpu_key(rd, ci, k if rd.all_mode else start)
        if self._symmetric[(ci, ri)]:
            bits = self._later_bits[(ci, ri)]
            signature = self._signature
            kinds: dict[Any, int] = {}
            gpu_index = gpus.index if gpu_part is not None else {}
            for did, users in self.allocating.items():
                if did in gpu_index:
                    continue
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
        gpu_sets = gpus.sets if gpu_part is not None else {}
        for pool_name, values in self.consumed.items():
            for (set_name, cname), v in values.items():
                if v:
                    key = (pool_name, set_name, cname)
                    if (pool_name, set_name) in gpu_sets:
                        continue  # in the GPU's state
                    if key not in private and (key in later_counters or last.get(key, -1) >= start):
                        consumed.append((key, v))
        if cons is None:
            cons = tuple(c.state() for c in self.constraints[ci])
        return (ci, ri, si, k, in_sub, start, len(self.results[ci]), used, frozenset(caps),
                frozenset(consumed), cons, gpu_part)

    def _gpu_key(self, rd: RequestData, ci: int, start: int) -> tuple[Any, Any]:
        """The identical GPUs' part of a memo key, and the claim's constraint states with each label value
        replaced by a mark on its GPU (module :mod:`dralloc.allocator.symmetry`). ``start``: the first
        position the current request may still pick (for an All request, the next device of its list)."""
        gpus = self._gpus
        window = self._gpu_windows.get((id(rd), start))
        if window is None:
            ok, pos = rd.feasible[0], rd.feasible[1]
            window = self._gpu_windows[(id(rd), start)] = [
                tuple(pos.get(did, -1) >= start and ok[pos[did]] for did in gpu.devices) for gpu in gpus.gpus]
        marks: dict[int, tuple[int, ...]] = {}
        cons = []
        for idx, con in enumerate(self.constraints[ci]):
            state = con.state()
            if state is not None and con.attribute in gpus.labels and type(con) is MatchAttribute:
                kind, values = state
                if len(values) == 1:
                    owner = gpus.label_owner.get((con.attribute, (kind, frozenset(values))))
                    if owner is not None:
                        marks[owner] = (*marks.get(owner, ()), idx)
                        state = "label"
            cons.append(state)
        return gpu_states(gpus, self.allocating, ci, window, self.consumed, marks), tuple(cons)

    # ------------------------------------------------------------------ estimating upstream's steps
    def _cut(self, ci: int, ri: int, si: int, k: int, in_sub: bool, start: int) -> None:
        """Count what upstream would walk below a node this search cut (the node itself is counted)."""
        assert self._estimator is not None
        size = self._estimator.estimate(
            (ci, ri, si, k), lambda rng: self._walk(ci, ri, si, k, in_sub, start, rng))
        self._extra += size - 1

    def _walk(self, ci: int, ri: int, si: int, k: int, in_sub: bool, start: int, rng: random.Random) -> float:
        """One random walk down the plain search from a node: Knuth's estimate of the subtree's node count
        (the sum over depths of the product of the branching factors met). The state is restored after."""
        picked: list[Entry] = []
        size = 0.0
        weight = 1.0
        try:
            while True:
                size += weight
                if ci >= len(self.plans):
                    break
                per_claim = self.requests[ci]
                if ri >= len(per_claim):
                    ci, ri, si, k, in_sub, start = ci + 1, 0, 0, 0, False, 0
                    continue
                options = per_claim[ri]
                if not in_sub and options[0].parent is not None:
                    weight *= len(options)
                    si, k, in_sub, start = rng.randrange(len(options)), 0, True, 0
                    continue
                rd = options[si]
                if (rd.all_mode and not rd.all_devices) or (
                        k < rd.num and len(self.results[ci]) + rd.num - k > MAX_DEVICES_PER_CLAIM):
                    break
                if k >= rd.num:
                    ri, si, k, in_sub, start = ri + 1, 0, 0, False, 0
                    continue
                if rd.all_mode:
                    cand = rd.all_devices[k]  # type: ignore[index]
                    c = consumption(rd.cap_key, rd.cap_requests, cand.info)
                    try:
                        entry = self._try(rd, cand, c[1] if c is not None else {}, True)
                    except ConstraintError:
                        break
                    if entry is None:
                        break
                    picked.append(entry)
                    k += 1
                    continue
                if rd.cands is None:
                    candidates(rd, self.view, self.selectors)
                accepted: list[tuple[int, Candidate, Any]] = []
                for i in range(start, len(rd.cands or ())):
                    cand, extra = rd.cands[i]  # type: ignore[index]
                    if type(extra) is SelectorFailure:
                        break  # upstream stops with the error here
                    entry = self._try(rd, cand, extra, False)
                    if entry is not None:
                        self._undo(entry)
                        accepted.append((i, cand, extra))
                if not accepted:
                    break
                weight *= len(accepted)
                i, cand, extra = accepted[rng.randrange(len(accepted))]
                entry = self._try(rd, cand, extra, False)
                assert entry is not None
                picked.append(entry)
                k, start = k + 1, i + 1
        finally:
            for entry in reversed(picked):
                self._undo(entry)
        return size

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
