"""The look-ahead of a hard search: proofs that the requests still to fill cannot all be filled.

:class:`LookAhead` is a part of :class:`dralloc.allocator.search.Search` (its base class), kept apart so
the search itself stays readable. Every check here is a necessary condition for the requests from the
current one up to the first that could raise an error: when one fails, the subtree holds no solution and the
plain search could only have rejected its way out of it, so cutting it changes neither the answer nor any
error text.

This module holds the entry points the search calls (:meth:`LookAhead._doomed`, and what it prepares when it
turns hard: :meth:`LookAhead._static_feasible`, :meth:`LookAhead._safe`, :meth:`LookAhead._dead_all`) and
the free devices each request still has. The bounds themselves live in mixins of one concern each:
:mod:`~dralloc.allocator.lookahead_counters` (shared counters), :mod:`~dralloc.allocator.lookahead_hall`
(Hall's condition), :mod:`~dralloc.allocator.lookahead_groups` (matchAttribute value groups) and
:mod:`~dralloc.allocator.lookahead_distinct` (distinctAttribute runs) and
:mod:`~dralloc.allocator.lookahead_wholes` (whole counter sets beside spreading requests) and
:mod:`~dralloc.allocator.lookahead_packing` (where partitions sit in their counter sets), over the state
declared in :mod:`~dralloc.allocator.lookahead_state`.

What the checks read, besides the search's state: per request, which candidates could ever be accepted in
this call (:meth:`LookAhead._static_feasible`, computed once when the search turns hard), and caches that
live as long as the search (``_all_safe``, ``_value_keys``).
"""

from __future__ import annotations

from typing import Any

from dralloc.allocator.capacity import consumption, fits
from dralloc.allocator.claims import RequestData
from dralloc.allocator.constraints import DistinctAttribute, MatchAttribute, attribute_set
from dralloc.allocator.lookahead_groups import ValueGroups
from dralloc.allocator.lookahead_packing import PackingBounds
from dralloc.allocator.lookahead_state import Covered, Resources
from dralloc.allocator.lookahead_wholes import WholeSetBounds
from dralloc.allocator.pools import Candidate
from dralloc.allocator.selectors import SelectorFailure
from dralloc.allocator.tolerations import taint_blocks

__all__ = ["LookAhead", "Resources"]


class LookAhead(ValueGroups, WholeSetBounds, PackingBounds):
    """The look-ahead checks of :class:`~dralloc.allocator.search.Search` (see the module docstring)."""

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

    def _dead_all(self, options: list[RequestData]) -> bool:
        """Whether a request is an ``allocationMode: All`` request that always fails at its first device,
        before upstream compares that device with the claim's constraints: an allocated claim holds it
        (without adminAccess), a shared counter it draws alone exceeds what is there, or a taint it does
        not tolerate blocks it. Upstream then rejects the request quietly, whatever came before: a request
        that could raise an error ends the look-ahead's horizon, but if it is such a request, no search
        that reaches it succeeds either.
        """
        first = _all_request_first_device(options)
        if first is None:
            return False
        rd, cand = first
        info = cand.info
        if not rd.admin and info.id in self.allocated:
            return True
        if info.consumes:
            if self.res.pool_overcommitted(cand.pool):
                return True
            avail = self.res.available_counters(cand.pool)
            for set_name, cname, amount in info.consumes:
                a = avail.get((set_name, cname))
                if a is not None and a < amount:
                    return True
        return bool(info.taints) and taint_blocks(info.taints, rd.tolerations)

    def _all_blocked_now(self, options: list[RequestData]) -> bool:
        """Whether a request is an ``allocationMode: All`` request whose first device the picks made so far
        already block: it is in use (by another claim, or by its own claim for an adminAccess request) or a
        shared counter it draws has too little left. Picks below this search node only add to that, and
        upstream rejects the device quietly, before the claim's constraints could raise an error, wherever
        the search reaches the request from here (as :meth:`_dead_all`, for the state of this subtree).
        """
        first = _all_request_first_device(options)
        if first is None:
            return False
        rd, cand = first
        info = cand.info
        users = self.allocating.get(info.id)
        if users and (not rd.admin or rd.ci in users):
            return True
        if info.consumes:
            consumed = self.consumed.get(cand.pool.name)
            if consumed:
                avail = self.res.available_counters(cand.pool)
                for set_name, cname, amount in info.consumes:
                    a = avail.get((set_name, cname))
                    if a is not None and consumed.get((set_name, cname), 0) + amount > a:
                        return True
        return False

    def _all_blocked_by_forced(self, options: list[RequestData],
                               requests: list[tuple[int, bool, int, int, int]]) -> bool:
        """Whether the ``allocationMode: All`` request after the horizon finds its first device blocked by the
        devices the horizon's requests must take: requests that together need as many devices as their free
        devices number (none with adminAccess, none of those devices shared) take every one of them, before
        the search reaches that request. As :meth:`_all_blocked_now`: upstream then rejects that device
        quietly wherever the search reaches the request. ``requests``: per request of the horizon, as
        :meth:`HallBounds._admin_hall_violated` takes them.
        """
        if len(options) != 1 or not options[0].all_mode or not options[0].all_devices or options[0].admin:
            return False
        first = options[0].all_devices[0]
        info = first.info
        if info.allow_multi:
            return False
        forced = 0
        for union in {mask for _, _, mask, _, _ in requests}:
            need = 0
            for _, admin, mask, n, shared in requests:
                if mask & ~union == 0:
                    if admin or shared:
                        break
                    need += n
            else:
                if need == union.bit_count():
                    forced |= union
        if not forced:
            return False
        if forced & self._device_bit.get(info.id, 0):
            return True
        if not info.consumes:
            return False
        taken = [c for c in self.view.candidates if forced & self._device_bit[c.info.id] and c.pool is first.pool]
        consumed = self.consumed.get(first.pool.name, {})
        avail = self.res.available_counters(first.pool)
        for set_name, cname, amount in info.consumes:
            a = avail.get((set_name, cname))
            if a is None:
                continue
            drawn = consumed.get((set_name, cname), 0) + amount
            for c in taken:
                for s2, c2, amount2 in c.info.consumes:
                    if s2 == set_name and c2 == cname:
                        drawn += amount2
            if drawn > a:
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
                limits = self._limits.get(did)
                if limits is None:
                    avail = self.res.available_counters(cand.pool)
                    limits = self._limits[did] = [((set_name, cname), amount, avail[(set_name, cname)])
                                                  for set_name, cname, amount in info.consumes
                                                  if (set_name, cname) in avail]
                for key, amount, a in limits:
                    if consumed.get(key, 0) + amount > a:
                        return False
        return True

    def _free_list(self, rd: RequestData, ci: int, cands: list[Candidate], ok: list[bool], lo: int,
                   free_cache: dict[str, bool]) -> list[Candidate]:
        """The statically acceptable candidates from ``lo`` on that are free now (cached per device for
        plain requests: then the answer does not depend on the request)."""
        if rd.admin or rd.all_mode:
            return [c for i, c in enumerate(cands[lo:], lo) if ok[i] and self._free_now(c, rd, ci)]
        static = self._static_ok.get(id(rd))
        if static is None:
            # per statically acceptable candidate: position, candidate, id, whether being unused is enough
            static = self._static_ok[id(rd)] = [
                (i, c, c.info.id, not c.info.consumes and not c.info.allow_multi)
                for i, c in enumerate(cands) if ok[i]]
        allocating = self.allocating
        out = []
        for i, c, did, plain in static:
            if i < lo:
                continue
            if plain:
                if did not in allocating:
                    out.append(c)
                continue
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
        if self._dead_end[(ci, ri)] and not self._may_exceed[ci]:
            return True  # every way on reaches the request that ends the horizon, which fails there
        end = self._horizon_end[(ci, ri)]
        if end is not None and not self._may_exceed[ci] and self._all_blocked_now(end):
            return True  # the same, for what the picks so far hold
        self._keys_of_list = {}  # free lists live as long as this call: their keys are computed once
        self._masks_of_list = {}
        horizon = [] if self._may_exceed[ci] else self._horizon[(ci, ri)]
        union: set[str] = set()
        free_of: dict[int, list[Candidate]] = {}
        total_need = 0
        any_multi = False
        covered: list[Covered] = []
        free_cache: dict[str, bool] = {}
        current_free: list[Candidate] = []
        steps: list[tuple[int, list[RequestData], int]] = [(ci, [rd], k)]
        steps.extend((cj, options, 0) for cj, _, options in horizon)
        previous: list[tuple[RequestData, list[Candidate]]] = []  # the step before, if of the same claim
        previous_claim = -1
        options_free: list[list[tuple[int, list[Candidate]]]] = []  # per request: (need, free) per option
        device_bit = self._device_bit
        # per request: its claim, whether it may have adminAccess, its free devices (mask), its need, and how
        # many of them may be shared
        distinct_needs: list[tuple[int, bool, int, int, int]] = []
        uncovered: list[tuple[int, int]] = []  # requests outside matchAttribute constraints: need, free devices
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
                if cj == ci:
                    free = self._without_remembered(opt, rd, free)
                if opt is rd:
                    current_free = free
                if opt.all_mode:
                    if len(free) < need or not opt.all_devices:
                        continue  # an All request needs every listed device, and at least one
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
            mask = 0
            shared: set[str] = set()
            for c in request_free:
                union.add(c.info.id)
                if c.info.allow_multi:
                    shared.add(c.info.id)
                else:
                    mask |= device_bit[c.info.id]
            any_multi = any_multi or bool(shared)
            distinct_needs.append((cj, any(opt.admin for opt in options), mask, best_need, len(shared)))
            applied = frozenset.intersection(*(
                frozenset(idx for idx, con in enumerate(self.constraints[cj])
                          if type(con) is MatchAttribute and con.applies(opt.base, opt.full))
                for opt in options))
            if applied:
                covered.append((cj, applied, options_free[-1]))
            elif not shared:
                uncovered.append((best_need, mask))
        if self._any_counters and self._pooled_counters_exceeded(options_free):
            return True
        if self._hall_violated([(mask, n, shared) for _, admin, mask, n, shared in distinct_needs if not admin]):
            return True
        if self._admin_hall_violated(distinct_needs):
            return True
        end = self._horizon_end[(ci, ri)]
        if end is not None and not self._may_exceed[ci] and self._all_blocked_by_forced(end, distinct_needs):
            return True
        if self._any_counters and self._wholes_doomed(
                [(cj, [(opt, free_of[id(opt)]) for opt in options if id(opt) in free_of], done)
                 for cj, options, done in steps]):
            return True
        if not any_multi and self._all_claims_doomed(steps, free_of, total_need, union, covered, uncovered):
            return True
        # the costliest bound last: it runs only where none of the others cuts
        return self._any_counters and self._packing_doomed(
            [(cj, [(opt, free_of[id(opt)]) for opt in options if id(opt) in free_of], done)
             for cj, options, done in steps])

    def _all_claims_doomed(self, steps: list[tuple[int, list[RequestData], int]],
                           free_of: dict[int, list[Candidate]], total_need: int, union: set[str],
                           covered: list[Covered], uncovered: list[tuple[int, int]]) -> bool:
        """The bounds over the devices of all claims together (no device allows multiple allocations)."""
        # An adminAccess request may take a device another claim took: devices are distinct only within a
        # claim then, so the bounds over all claims together do not hold.
        any_admin = any(opt.admin for _, options, _ in steps for opt in options)
        if not any_admin and len(union) < total_need:
            return True
        # Requests of one claim under the same matchAttribute constraints: all their devices share a value
        # of each constraint's attribute, so some combination of values is on that many devices.
        # Each request takes one of its options, so some choice of options must find such a group.
        groups = {(cj, applied) for cj, applied, _ in covered}
        groups |= {(cj, frozenset((idx,))) for cj, applied, _ in covered for idx in applied}
        for cj, group in groups:
            entries = [options for cj2, applied, options in covered if cj2 == cj and group <= applied]
            cons = [self.constraints[cj][idx] for idx in sorted(group)]
            if not any(self._groups_ok(cons, parts) for parts in self._choices(entries)):
                return True
        if not any_admin and self._claims_collide(covered, uncovered):
            return True
        return not any_admin and self._any_counters and self._counters_doomed(steps, free_of, total_need)


def _all_request_first_device(options: list[RequestData]) -> tuple[RequestData, Candidate] | None:
    """The request and its first device, where ``options`` is one ``allocationMode: All`` request whose first
    device it can take only once (not a device that allows multiple allocations); None otherwise."""
    if len(options) != 1 or not options[0].all_mode or not options[0].all_devices:
        return None
    rd = options[0]
    cand = rd.all_devices[0]  # type: ignore[index]
    return None if cand.info.allow_multi else (rd, cand)
