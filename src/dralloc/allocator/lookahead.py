"""The look-ahead of a hard search: proofs that the requests still to fill cannot all be filled.

:class:`LookAhead` is a part of :class:`dralloc.allocator.search.Search` (its base class), kept apart so
the search itself stays readable. Every check here is a necessary condition for the requests from the
current one up to the first that could raise an error: when one fails, the subtree holds no solution and the
plain search could only have rejected its way out of it, so cutting it changes neither the answer nor any
error text.

What the checks read, besides the search's state: per request, which candidates could ever be accepted in
this call (:meth:`LookAhead._static_feasible`, computed once when the search turns hard), and caches that
live as long as the search (``_all_safe``, ``_value_keys``).
"""

from __future__ import annotations

from itertools import product
from typing import Any, Protocol

from dralloc.allocator.capacity import consumption, fits
from dralloc.allocator.claims import ClaimPlan, RequestData
from dralloc.allocator.constraints import DistinctAttribute, MatchAttribute, attribute_set
from dralloc.allocator.pools import Candidate, Pool
from dralloc.allocator.selectors import SelectorCache, SelectorFailure
from dralloc.allocator.state import AllocatedState
from dralloc.allocator.tolerations import taint_blocks

_UNSET = object()
COLLIDE_BUDGET = 2000  # group choices tried per look-ahead when checking claims against each other
CHOICE_BUDGET = 64  # firstAvailable choices of one claim checked one by one against its value groups

# A request's passing options (a firstAvailable request's subrequests, else the request itself): per option,
# how many devices it still needs and its free devices.
Options = list[tuple[int, list[Candidate]]]
# A request under matchAttribute constraints: its claim, the constraints that cover every option, its options.
Covered = tuple[int, frozenset[int], Options]


class Resources(Protocol):
    """What the search reads from its owner (the Allocator): allocated state, counters, selector outcomes."""

    state: AllocatedState
    selectors: SelectorCache

    def available_counters(self, pool: Pool) -> dict[tuple[str, str], Any]: ...

    def pool_overcommitted(self, pool: Pool) -> bool: ...


class LookAhead:
    """The look-ahead checks of :class:`~dralloc.allocator.search.Search` (see the module docstring)."""

    # the search's state, set by Search
    res: Resources
    plans: list[ClaimPlan]
    requests: list[list[list[RequestData]]]
    constraints: list[list[Any]]
    allocated: Any
    aggregated: Any
    allocating: dict[str, set[int]]
    allocating_capacity: dict[str, dict[str, Any]]
    consumed: dict[str, dict[tuple[str, str], Any]]
    # built when the search turns hard
    _horizon: dict[tuple[int, int], list[tuple[int, int, list[RequestData]]]]
    _dead_end: dict[tuple[int, int], bool]  # whether the request after the horizon always fails quietly
    _may_exceed: list[bool]
    _all_safe: dict[int, bool]
    _value_keys: dict[tuple[tuple[str, ...], tuple[Any, ...]], dict[str, list[tuple[Any, ...]]]]
    _any_counters: bool  # whether some candidate device consumes shared counters
    _draws: dict[str, list[tuple[tuple[str, str], tuple[tuple[Pool, str], ...], Any]]]
    _scalars: dict[str, dict[str, Any]]  # per attribute, per device: its value as one key (None: a list)
    _keys_of_list: dict[tuple[str, int], tuple[list[Candidate], list[Any] | None]]
    _limits: dict[str, list[tuple[tuple[str, str], Any, Any]]]  # per device: counter, its draw, what is there
    _static_ok: dict[int, list[tuple[int, Candidate, str, bool]]]  # per request (id): see _free_list
    _device_bit: dict[str, int]  # one bit per candidate device of the node, for sets of devices as ints
    _key_draws: dict[str, list[tuple[tuple[str, str, str], Any]]]  # per device: see _counter_draws

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

    def _dead_all(self, options: list[RequestData]) -> bool:
        """Whether a request is an ``allocationMode: All`` request that always fails at its first device,
        before upstream compares that device with the claim's constraints: an allocated claim holds it
        (without adminAccess), a shared counter it draws alone exceeds what is there, or a taint it does
        not tolerate blocks it. Upstream then rejects the request quietly, whatever came before: a request
        that could raise an error ends the look-ahead's horizon, but if it is such a request, no search
        that reaches it succeeds either.
        """
        if len(options) != 1 or not options[0].all_mode or not options[0].all_devices:
            return False
        rd = options[0]
        cand = rd.all_devices[0]  # type: ignore[index]
        info = cand.info
        if info.allow_multi:
            return False
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
        self._keys_of_list = {}  # free lists live as long as this call: their keys are computed once
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
        if any_multi:
            return False
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

    @staticmethod
    def _hall_violated(requests: list[tuple[int, int, int]]) -> bool:
        """True when some requests together need more devices than their free devices hold (Hall's condition).

        ``requests``: per request without adminAccess (those may reuse devices of other claims), the bit
        mask of its free devices that only one request may take, how many devices it needs, and how many
        free devices it has that allow multiple allocations (each request may take each of those once).
        Checked for the sets of requests whose exclusive devices lie within one request's, or within two
        requests' together: requests of one device class or selector form such nested sets (two claims that
        each want most of the NICs, among requests for GPUs), where the union over every request hides the
        shortage.
        """
        if len(requests) < 2:
            return False
        unions = [mask for mask, _, _ in requests]
        if len(requests) <= 12:
            unions += [a | b for i, (a, _, _) in enumerate(requests) for b, _, _ in requests[i + 1:]]
        for union in set(unions):
            need = 0
            can = union.bit_count()
            for mask, n, shared in requests:
                if mask & ~union == 0:
                    need += n
                    can += shared
            if need > can:
                return True
        return False

    @staticmethod
    def _choices(entries: list[Options]) -> list[Options]:
        """Every choice of one option per request (a firstAvailable request takes exactly one of its
        subrequests), as the parts :meth:`_groups_ok` checks; beyond :data:`CHOICE_BUDGET` choices, one
        part per request that any option satisfies (the fewest devices any option needs, among the free
        devices of all of them)."""
        count = 1
        for options in entries:
            count *= len(options)
        if count <= CHOICE_BUDGET:
            return [list(parts) for parts in product(*entries)]
        return [[(min(need for need, _ in options), [c for _, free in options for c in free])
                 for options in entries]]

    def _admin_hall_violated(self, requests: list[tuple[int, bool, int, int, int]]) -> bool:
        """Hall's condition over requests that include an adminAccess request's claim.

        An adminAccess request may take a device that an earlier claim took, or that a later adminAccess
        request takes again, but never one of its own claim, and a later request without adminAccess never
        takes a device it holds. So the requests of its claim and those without adminAccess of the claims
        after it all need devices of their own. Without this an ``allocationMode: All`` request with
        adminAccess over the NICs of one NUMA node looks free of cost, and a later claim that needs the NICs
        it holds makes the search try every combination of the claims before.
        ``requests``: per request, its claim, whether it may have adminAccess, then as :meth:`_hall_violated`.
        """
        for claim in sorted({cj for cj, admin, _, _, _ in requests if admin}):
            family = [(mask, n, shared) for cj, admin, mask, n, shared in requests
                      if cj == claim or (cj > claim and not admin)]
            if self._hall_violated(family):
                return True
        return False

    def _without_remembered(self, opt: RequestData, current: RequestData, free: list[Candidate]) -> list[Candidate]:
        """The free devices that the distinctAttribute constraints of the claim being filled still let
        ``opt`` (the request being filled or a later one of its claim) take: none with a value that another
        request of the claim remembers. Those requests are complete, so their remembered values (of their
        last devices) stay as they are in this subtree; the request being filled changes its own, which is
        left out."""
        forbidden: list[tuple[str, Any]] = []
        for con in self.constraints[opt.ci]:
            if type(con) is DistinctAttribute and con.count > 0 and con.applies(opt.base, opt.full):
                forbidden.extend((con.attribute, value) for base, value in con.values.items()
                                 if value and base != opt.base and base != current.base)
        if not forbidden:
            return free
        out = []
        for c in free:
            for attribute, (kind, values) in forbidden:
                mine = attribute_set(c.info, attribute)
                if mine and mine[0] == kind and mine[1] & values:
                    break
            else:
                out.append(c)
        return out

    def _claims_collide(self, covered: list[Covered], uncovered: list[tuple[int, int]]) -> bool:
        """True when the claims under matchAttribute constraints cannot all get their groups at once.

        Each such claim takes all its devices from one group of devices sharing its constraints' values (one
        of the groups :meth:`_groups_ok` accepts for some choice of its firstAvailable options, with the
        number of devices that choice needs), and claims never share a device (no adminAccess here). So some
        choice of one group per claim must pass Hall's condition: every set of claims needs no more devices
        than their groups hold together, alone, with each request outside such groups (``uncovered``: its
        need and its free devices as a bit mask) or with all of those. Checked claim by claim over the
        choices, within
        :data:`COLLIDE_BUDGET` checks (beyond it the claims are assumed to fit). Without this two later
        claims that both need most of the one big NUMA node each look feasible, and the search tries every
        way of serving an earlier claim from that node.
        """
        per_claim: dict[int, list[tuple[frozenset[int], Options]]] = {}
        for cj, applied, options in covered:
            per_claim.setdefault(cj, []).append((applied, options))
        if not per_claim or (len(per_claim) < 2 and not uncovered):
            return False
        claims: list[list[tuple[int, int]]] = []
        for cj, entries in per_claim.items():
            common = frozenset.intersection(*(applied for applied, _ in entries))
            if not common:
                continue
            cons = [self.constraints[cj][idx] for idx in sorted(common)]
            unique: set[tuple[int, frozenset[str]]] = set()
            for parts in self._choices([options for _, options in entries]):
                found: list[frozenset[str]] = []
                self._groups_ok(cons, parts, found)
                need = sum(n for n, _ in parts)
                unique.update((need, g) for g in found)
            # a group is worth trying only if no other holds it and asks for no more devices
            useful = [(n, g) for n, g in unique
                      if not any((m, h) != (n, g) and m <= n and g <= h for m, h in unique)]
            useful.sort(key=lambda ng: (-len(ng[1]), ng[0], sorted(ng[1])))
            device_bit = self._device_bit
            claims.append([(n, sum(device_bit[did] for did in g)) for n, g in useful])
        if not claims or (len(claims) < 2 and not uncovered):
            return False
        budget = [COLLIDE_BUDGET]

        def place(i: int, chosen: list[tuple[int, int]]) -> bool:
            if i == len(claims):
                return True
            for need, group in claims[i]:
                budget[0] -= 1
                if budget[0] < 0:
                    return True  # undecided: assume they fit
                if self._hall_ok(chosen, need, group, uncovered) and place(i + 1, [*chosen, (need, group)]):
                    return True
            return False

        return not place(0, [])

    @staticmethod
    def _hall_ok(chosen: list[tuple[int, int]], need: int, group: int, uncovered: list[tuple[int, int]]) -> bool:
        """Whether every set of claims that includes the new one needs no more devices than their groups
        hold, alone, with each request outside the groups, and with all of those (groups and free devices
        as bit masks of devices; every request here takes devices of its own)."""
        extra = [*uncovered]
        if len(uncovered) > 1:
            all_need, all_mask = 0, 0
            for n, m in uncovered:
                all_need += n
                all_mask |= m
            extra.append((all_need, all_mask))
        for subset in range(1 << len(chosen)):
            total = need
            devices = group
            for j, (n, g) in enumerate(chosen):
                if subset >> j & 1:
                    total += n
                    devices |= g
            if total > devices.bit_count():
                return False
            for n, m in extra:
                if total + n > (devices | m).bit_count():
                    return False
        return True

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
        keys = self._scalar_keys(con.attribute, free)
        if keys is None:
            return True
        forbidden: set[Any] = set()
        prev: Any = ()
        if same_claim and con.count > 0:
            for base, value in con.values.items():
                if base == opt.base:
                    if opt is current and value:
                        prev = {(value[0], item) for item in value[1]}
                    continue
                if base == current.base and opt is not current:
                    continue  # replaced by the value of the current request's last device
                if value:
                    forbidden.update((value[0], item) for item in value[1])
        open_values: list[Any] = [None]
        if same_claim and opt is not current and opt.base != current.base and con.applies(current.base,
                                                                                            current.full):
            seen = self._scalar_keys(con.attribute, current_free)
            if seen is None:
                return True
            open_values = list(set(seen))
        elif not same_claim and previous:
            # The claim starts empty (count 0), so only the previous request's last value is remembered
            # by the time this one starts, among those of earlier requests (which only forbid more).
            last_values: set[Any] = set()
            for prev_opt, prev_free in previous:
                if not con.applies(prev_opt.base, prev_opt.full):
                    last_values.add(None)
                    continue
                values = self._scalar_keys(con.attribute, prev_free)
                if values is None:
                    return True
                last_values.update(values)
            open_values = list(last_values)
        for v in open_values:
            if v is None or v in forbidden:
                if self._distinct_runs(keys, forbidden, prev, need):
                    return True
            elif self._distinct_runs(keys, forbidden | {v}, prev, need):
                return True
        return False

    def _scalar_keys(self, attribute: str, free: list[Candidate]) -> list[Any] | None:
        """Each device's value of ``attribute`` as one hashable (type, value) key, or None when some device
        lacks the attribute or holds a list (no claim is made then). Cached per device for the search."""
        memo_key = (attribute, id(free))
        known = self._keys_of_list.get(memo_key)
        if known is not None and known[0] is free:
            return known[1]
        cache = self._scalars.get(attribute)
        if cache is None:
            cache = self._scalars[attribute] = {}
        out: list[Any] | None = []
        for c in free:
            did = c.info.id
            key = cache.get(did, _UNSET)
            if key is _UNSET:
                v = attribute_set(c.info, attribute)
                key = cache[did] = (v[0], next(iter(v[1]))) if v and len(v[1]) == 1 else None
            if key is None:
                out = None
                break
            out.append(key)  # type: ignore[union-attr]
        self._keys_of_list[memo_key] = (free, out)  # the list is kept, so its id is not reused meanwhile
        return out

    @staticmethod
    def _distinct_runs(keys: list[Any], forbidden: set[Any], prev: Any, need: int) -> bool:
        """Whether ``need`` devices (their value keys, in candidate order) pass: none of a forbidden value,
        each of another value than the one before (``prev``: the keys of the request's last device)."""
        count = 0
        for key in keys:
            if key in forbidden or key in prev:
                continue
            count += 1
            if count >= need:
                return True
            prev = (key,)
        return need <= 0

    def _groups_ok(self, cons: list[MatchAttribute], parts: list[tuple[int, list[Candidate]]],
                   found: list[frozenset[str]] | None = None) -> bool:
        """Whether one combination of values, one per constraint (within each constraint's fixed set, if
        any), has devices enough for every part (a request: how many it needs, its free devices): each part
        its own number, all parts together that many distinct devices, and the cheapest of them within the
        shared counters. With ``found``, every such group's devices (their ids) are collected there."""
        total = sum(need for need, _ in parts)
        if total <= 0:
            if found is not None:
                found.append(frozenset(c.info.id for _, free in parts for c in free))
            return True
        fixed = tuple((i, con.current) for i, con in enumerate(cons) if con.count > 0)
        attrs = tuple(con.attribute for con in cons)
        value_keys = self._value_keys.get((attrs, fixed))
        if value_keys is None:
            value_keys = self._value_keys[(attrs, fixed)] = {}
        groups: dict[Any, list[list[Candidate]]] = {}
        for pi, (_need, free) in enumerate(parts):
            for c in free:
                did = c.info.id
                keys = value_keys.get(did)
                if keys is None:
                    keys = self._combinations(c, attrs)
                    if fixed:
                        keys = [key for key in keys
                                if all(key[i][0] == fx[0] and key[i][1] in fx[1] for i, fx in fixed)]
                    value_keys[did] = keys
                for key in keys:
                    lists = groups.get(key)
                    if lists is None:
                        lists = groups[key] = [[] for _ in parts]
                    lists[pi].append(c)
        for lists in groups.values():
            if any(len(lst) < need for lst, (need, _) in zip(lists, parts)):
                continue
            ids = {c.info.id for lst in lists for c in lst}
            if len(ids) < total:
                continue
            needs = [need for need, _ in parts]
            fit = True
            if self._any_counters:
                fit, pooled = self._group_counters_fit(lists, needs)
                if fit and pooled:
                    fit = not self._pooled_counters_exceeded([[(need, lst)] for need, lst in zip(needs, lists)])
            if fit:
                if found is None:
                    return True
                found.append(frozenset(ids))
        return bool(found)

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

    def _group_counters_fit(self, lists: list[list[Candidate]], needs: list[int]) -> tuple[bool, bool]:
        """Whether, per shared counter, the cheapest devices each part needs fit what is left of it; and
        whether the devices draw a counter name from several counter sets (only then can the bound summed
        over a pool's sets, :meth:`_pooled_counters_exceeded`, say more)."""
        pools: dict[str, Pool] = {}
        # per counter, per part: the non-zero draws of the part's devices on it
        drawn: dict[tuple[str, str, str], list[list[Any]]] = {}
        for pi, lst in enumerate(lists):
            for c in lst:
                for key, amount in self._counter_draws(c):
                    per_part = drawn.get(key)
                    if per_part is None:
                        per_part = drawn[key] = [[] for _ in lists]
                        pools[key[0]] = c.pool
                    per_part[pi].append(amount)
        for (pool_name, set_name, cname), per_part in drawn.items():
            lo: Any = 0
            for lst, need, amounts in zip(lists, needs, per_part):
                zeros = len(lst) - len(amounts)  # devices that do not draw on this counter cost nothing
                if need > zeros:
                    amounts.sort()
                    lo += sum(amounts[:need - zeros])
            if lo <= 0:
                continue
            a = self.res.available_counters(pools[pool_name]).get((set_name, cname))
            if a is None:
                continue
            if self.consumed.get(pool_name, {}).get((set_name, cname), 0) + lo > a:
                return False, False
        names = {(pool_name, cname) for pool_name, _, cname in drawn}
        return True, len(names) < len(drawn)

    def _counter_draws(self, c: Candidate) -> list[tuple[tuple[str, str, str], Any]]:
        """A device's draws per (pool, counter set, counter), summed; none for a device that allows multiple
        allocations (it may not draw again). Cached for the search."""
        draws = self._key_draws.get(c.info.id)
        if draws is None:
            summed: dict[tuple[str, str, str], Any] = {}
            if not c.info.allow_multi:
                for set_name, cname, amount in c.info.consumes:
                    key = (c.pool.name, set_name, cname)
                    summed[key] = summed.get(key, 0) + amount
            draws = self._key_draws[c.info.id] = list(summed.items())
        return draws

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
        # per counter name, the counter sets its draws come from (as the tuples of the devices' draws)
        touched: dict[tuple[str, str], set[tuple[tuple[Pool, str], ...]]] = {}
        # per request, per option: (need, number of free devices, the non-zero draws per counter name)
        drawn: list[list[tuple[int, int, dict[tuple[str, str], list[Any]]]]] = []
        for options in requests:
            per_option = []
            for need, free in options:
                nonzero: dict[tuple[str, str], list[Any]] = {}
                for c in free:
                    for group, pool_sets, amount in self._draws_of(c):
                        amounts = nonzero.get(group)
                        if amounts is None:
                            nonzero[group] = [amount]
                        else:
                            amounts.append(amount)
                        seen = touched.get(group)
                        if seen is None:
                            touched[group] = {pool_sets}
                        else:
                            seen.add(pool_sets)
                per_option.append((need, len(free), nonzero))
            drawn.append(per_option)
        for group, set_tuples in touched.items():
            sets = {pool_set for pool_sets in set_tuples for pool_set in pool_sets}
            lo: Any = 0
            for per_option in drawn:
                cheapest: Any = None
                for need, n_free, nonzero in per_option:
                    amounts = nonzero.get(group)
                    zeros = n_free - (len(amounts) if amounts else 0)
                    if need <= zeros or not amounts:
                        cheapest = 0
                        break
                    amounts.sort()
                    cost = sum(amounts[:need - zeros])
                    cheapest = cost if cheapest is None or cost < cheapest else cheapest
                lo += cheapest or 0
            if lo <= 0:
                continue
            left: Any = 0
            for pool, set_name in sets:
                a = self.res.available_counters(pool)[(set_name, group[1])]
                used = self.consumed.get(pool.name, {}).get((set_name, group[1]), 0)
                if a > used:
                    left += a - used
            if lo > left:
                return True
        return False

    def _draws_of(self, c: Candidate) -> list[tuple[tuple[str, str], tuple[tuple[Pool, str], ...], Any]]:
        """A device's draws on limited counters, one per counter name: ((pool, counter name), the counter sets
        it draws that name from, amount). Cached for the search: availability does not change during it."""
        draws = self._draws.get(c.info.id)
        if draws is None:
            info = c.info
            by_group: dict[tuple[str, str], tuple[tuple[tuple[Pool, str], ...], Any]] = {}
            if info.consumes and not info.allow_multi:
                avail = self.res.available_counters(c.pool)
                for set_name, cname, amount in info.consumes:
                    if avail.get((set_name, cname)) is None or not amount:
                        continue
                    group = (c.pool.name, cname)
                    sets, total = by_group.get(group, ((), 0))
                    by_group[group] = ((*sets, (c.pool, set_name)), total + amount)
            draws = self._draws[c.info.id] = [(g, sets, amount) for g, (sets, amount) in by_group.items()]
        return draws

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
