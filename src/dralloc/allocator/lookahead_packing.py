"""Look-ahead bound from packing counter sets: where each partition sits on its GPU decides what still fits.

MIG-style partitions draw capacity-1 counters, one per memory slice position, from their GPU's counter set,
and each profile only sits at some positions. Summed per counter or per counter name the draws of the
requests still to fill may fit, while no placement of them does: slices that only some profile can cover
stay empty once the other profiles took theirs (a 3g profile at slices 4–7 is the only partition that
covers slice 7; once three of them are placed, slice 7 of every other GPU is lost to partitions).

This bound solves a relaxation of the rest of the search exactly. It keeps, of the requests in the
look-ahead's horizon, the need of each and which devices are free for it now; it drops requests with devices
that allow multiple allocations, and the claims' constraints except two that keep picks apart by GPU
(dropping a condition only lets more through, so a relaxation that has no solution proves the real rest has
none). Each device that draws from exactly one counter set belongs to that set (its *bin*); the others (no
counters, or several sets) are only limited by being picked once. The devices picked from one bin must fit
what its counters have left. So, bin by bin, the inclusion-maximal sets of devices that fit (counted per kind
of device: the requests it is free for) are combined over the bins, keeping only the counts no other count
beats (capped at what the requests can use, and dropping those that cannot reach what a request, or all of
them, need with the most the bins still to come can add), and some combination must give every set of
requests at least the devices they need together (Hall's condition on the requests and the kinds of devices).

What it keeps of the rest:

* a request with several options (``firstAvailable``) takes one of them: each choice of options is tried (a
  few; beyond, such requests are dropped);
* an adminAccess request may take a device another claim holds, and draws its counters again: it takes a
  copy of the device, one per claim;
* picks under ``matchAttribute`` on a value each bin has its own of (the parent GPU) share one bin: each bin
  they may share is tried (a few combinations, the constraints over the most devices first);
* a request under ``distinctAttribute`` on a value shared within each bin, whose values run side by side in
  candidate order, takes at most one device per bin (upstream compares a pick with the request's last one, and
  picks go forward), and so do earlier requests of its claim that take one device more at most with it.

The relaxation's answer only depends on the requests' free devices and what the counters have left: per bin
the maximal packings are cached for the search, and so are the answers. The look-ahead runs this bound last,
where no cheaper bound cuts, with its own throttle (it pays off on few searches, and costs on the others).
"""

from __future__ import annotations

from itertools import product
from typing import Any

from dralloc.allocator.claims import RequestData
from dralloc.allocator.constraints import DistinctAttribute, MatchAttribute, attribute_set, runs_side_by_side
from dralloc.allocator.lookahead_state import LookAheadState
from dralloc.allocator.pools import Candidate

# What the relaxation keeps of a request (one option of it): its need, its free devices (each under the name
# the relaxation gives it: see PackingBounds._packing_doomed), the matchAttribute constraint (claim, index)
# that keeps its picks on one value and so in one bin (see PackingBounds._one_bin_per_value) or None, and
# the distinctAttribute constraint that spreads its picks one per bin (PackingBounds._spreads_over_bins) or
# None.
Demand = tuple[int, list[tuple[str, Candidate]], tuple[int, int] | None, tuple[int, int] | None]
# One step of the look-ahead: the claim, the request's passing options with their free devices, and how many
# devices the request has picked already.
Step = tuple[int, list[tuple[RequestData, list[Candidate]]], int]
# A bin's maximal packings, each as its count of devices per kind: (mask, count) pairs.
Packings = list[tuple[tuple[int, int], ...]]

CHOICES_MAX = 4  # combinations of firstAvailable options tried; beyond, requests with options are dropped
LOCAL_MAX = 8  # combinations of values tried for the requests whose picks share one (matchAttribute)
DEMANDS_MAX = 10  # distinct requests kept (Hall's condition looks at every subset of them)
FRONTIER_MAX = 400  # combined counts kept while combining bins; beyond, the bound gives up (no cut)
GROWN_MAX = 8000  # combinations of the kept counts with one bin's packings; beyond, the bound gives up
PACKINGS_MAX = 5000  # sets of devices looked at per bin; beyond, the bound gives up
FIELD_BITS = 8  # bits per count when counts are compared packed into one integer (see _maximal)


class PackingBounds(LookAheadState):
    """The counter-set packing bound of the look-ahead (see the module docstring)."""

    def _packing_now(self) -> bool:
        """Whether to run the packing bound at this look-ahead: always while it cuts at least one call in
        eight, else at every ``stride``-th call, the stride doubling each time."""
        self._packing_calls += 1
        if self._packing_hits * 8 >= self._packing_calls:
            return True
        self._packing_skipped += 1
        if self._packing_skipped >= self._packing_stride:
            self._packing_skipped = 0
            self._packing_stride *= 2
            return True
        return False

    def _packing_doomed(self, steps: list[Step]) -> bool:
        """True when no choice of options lets the relaxation place every request (see the module
        docstring)."""
        kept: list[list[Demand]] = []
        # per matchAttribute constraint (claim, index): the free devices of the options it applies to
        constrained: dict[tuple[int, int], list[Candidate]] = {}
        for cj, passing, _ in steps:
            for opt, free in passing:
                for idx, con in enumerate(self.constraints[cj]):
                    if type(con) is MatchAttribute and con.applies(opt.base, opt.full):
                        constrained.setdefault((cj, idx), []).extend(free)
        # such constraints on a value each bin has its own of: the value they hold already, or None
        locals_: dict[tuple[int, int], Any] = {}
        for (cj, idx), free in constrained.items():
            con = self.constraints[cj][idx]
            if self._one_bin_per_value(con.attribute, free):
                locals_[(cj, idx)] = con.state()
        for cj, passing, done in steps:
            options: list[Demand] = []
            for opt, free in passing:
                if any(c.info.allow_multi for c in free):
                    options = []
                    break
                applied = [(idx, con) for idx, con in enumerate(self.constraints[cj])
                           if con.applies(opt.base, opt.full)]
                local = next(((cj, idx) for idx, _ in applied if (cj, idx) in locals_), None)
                spread = next(((cj, idx) for idx, con in applied if type(con) is DistinctAttribute
                               and self._spreads_over_bins(con.attribute, free)), None)
                # An adminAccess request may take a device another claim took, and draws its counters
                # again: to the relaxation it takes a copy of the device, one per claim (a claim takes a
                # device once).
                named = [(f"{c.info.id}\0admin{cj}" if opt.admin else c.info.id, c) for c in free]
                options.append((opt.num - done, named, local, spread))
            if options:
                kept.append(options)
        if not kept or not any(self._bin_of(c) is not None for options in kept for _, free, _, _ in options
                               for _, c in free):
            return False
        if not self._packing_now():
            return False
        choices = 1
        for options in kept:
            choices *= len(options)
        if choices > CHOICES_MAX:
            kept = [options for options in kept if len(options) == 1]
        for choice in product(*(range(len(options)) for options in kept)):
            if self._packing_fits([options[i] for options, i in zip(kept, choice)], locals_):
                return False
        self._packing_hits += 1
        return True

    def _bin_of(self, c: Candidate) -> tuple[str, str] | None:
        """The counter set (pool, set) a device draws all its limited counters from; None when it draws
        from none or from several. Cached for the search."""
        did = c.info.id
        if did in self._bins:
            return self._bins[did]
        avail = self.res.available_counters(c.pool)
        sets = {set_name for set_name, cname, amount in c.info.consumes
                if amount and avail.get((set_name, cname)) is not None}
        key = (c.pool.name, next(iter(sets))) if len(sets) == 1 and not c.info.allow_multi else None
        self._bins[did] = key
        return key

    def _spreads_over_bins(self, attribute: str, free: list[Candidate]) -> bool:
        """Whether a request under distinctAttribute on the attribute takes at most one of these free devices
        (in candidate order) per bin: each has one scalar value and lies in a bin, the devices of a bin
        share their value, and each value's devices follow each other. Upstream compares a request's device
        with the last one it took (not with all of them); its picks go forward in candidate order, so once it
        leaves a value's run it never comes back to it, and so never to its bin."""
        value_of_bin: dict[tuple[str, str], Any] = {}
        values: list[Any] = []
        for c in free:
            value = attribute_set(c.info, attribute)
            key = self._bin_of(c)
            if not value or len(value[1]) != 1 or key is None or value_of_bin.setdefault(key, value) != value:
                return False
            values.append(value)
        return runs_side_by_side(values)

    def _one_bin_per_value(self, attribute: str, free: list[Candidate]) -> bool:
        """Whether, among the free devices, each value of the attribute is one scalar found in one bin only.
        Picks that share a value (matchAttribute) then all come from one bin: trying each value is trying
        each bin, and other values (spanning several bins) would multiply the combinations for little."""
        bin_of_value: dict[Any, tuple[str, str]] = {}
        for c in free:
            value = attribute_set(c.info, attribute)
            if not value:
                continue  # never picked under matchAttribute
            key = self._bin_of(c)
            if len(value[1]) != 1 or key is None or bin_of_value.setdefault(value, key) != key:
                return False
        return True

    def _packing_fits(self, demands: list[Demand], locals_: dict[tuple[int, int], Any]) -> bool:
        """Whether the relaxation can give each demand (see :data:`Demand`) its devices. The demands under
        one matchAttribute constraint on scalar values are tried with each value they may share, each with
        only its devices of that value (as long as the combinations stay few). ``locals_``: per such
        constraint, the value it holds already (None: any)."""
        places: dict[Any, list[Any]] = {}
        needs: dict[Any, int] = {}
        for need, free, local, _ in demands:
            if local is None or need <= 0:
                continue
            needs[local] = needs.get(local, 0) + need
            con = self.constraints[local[0]][local[1]]
            values = {value for _, c in free if (value := attribute_set(c.info, con.attribute))}
            held = locals_[local]
            if held is not None:
                values &= {held}
            if local in places:
                values &= set(places[local])
            places[local] = sorted(values, key=str)
        if any(not shared for shared in places.values()):
            return False  # the picks under some matchAttribute constraint find no value to share
        # the constraints over the most devices first (they restrict the most), as many as the combinations
        # allow; the others' demands are taken as any other
        combinations = 1
        for local in sorted(places, key=lambda local: (-needs[local], len(places[local]), local)):
            if combinations * len(places[local]) > LOCAL_MAX:
                del places[local]
            else:
                combinations *= len(places[local])
        spreads = self._spread_groups(demands)
        groups = sorted(places, key=str)
        for chosen in product(*(places[group] for group in groups)):
            value_of_group = dict(zip(groups, chosen))
            restricted = []
            for (need, free, local, _), spread in zip(demands, spreads):
                target = value_of_group.get(local)
                if target is not None:
                    attribute = self.constraints[local[0]][local[1]].attribute  # type: ignore[index]
                    free = [(name, c) for name, c in free if attribute_set(c.info, attribute) == target]
                    if len(free) < need:
                        break
                restricted.append((need, free, spread))
            else:
                if self._plain_fits(restricted):
                    return True
        return False

    def _spread_groups(self, demands: list[Demand]) -> list[Any]:
        """Per demand, the group that takes at most one device per bin, or None.

        A request spreading under a distinctAttribute constraint forms a group of its own. Upstream compares
        a device with the last one each other request of the claim took: so a request's picks also avoid the
        bin of every earlier request's last pick; when each of those takes one device more at most (its last),
        all of them and the last of them together take one device per bin at most: they form one group, as
        long as the devices of a bin share their value across all of them."""
        members: dict[tuple[int, int], list[int]] = {}
        for pos, (need, _, _, spread) in enumerate(demands):
            if spread is not None and need > 0:
                members.setdefault(spread, []).append(pos)
        out: list[Any] = [None] * len(demands)
        for (cj, idx), positions in members.items():
            attribute = self.constraints[cj][idx].attribute
            together = [c for pos in positions for _, c in demands[pos][1]]
            shared = (all(demands[pos][0] <= 1 for pos in positions[:-1])
                      and self._one_value_per_bin(attribute, together))
            for pos in positions:
                out[pos] = (cj, idx) if shared else (cj, idx, pos)
        return out

    def _one_value_per_bin(self, attribute: str, devices: list[Candidate]) -> bool:
        """Whether the devices of each bin share their value of the attribute."""
        value_of_bin: dict[tuple[str, str] | None, Any] = {}
        return all(value_of_bin.setdefault(self._bin_of(c), attribute_set(c.info, attribute))
                   == attribute_set(c.info, attribute) for c in devices)

    def _plain_fits(self, demands: list[tuple[int, list[tuple[str, Candidate]], Any]]) -> bool:
        """Whether the relaxation can give each demand (need, free devices, its distinctAttribute group or
        None) its devices."""
        # requests free for the same devices are one demand: the relaxation cannot tell them apart
        merged: dict[tuple[frozenset[str], Any], int] = {}
        devices: dict[str, Candidate] = {}
        for need, free, spread in demands:
            if need <= 0:
                continue
            ids = (frozenset(name for name, _ in free), spread)
            merged[ids] = merged.get(ids, 0) + need
            for name, c in free:
                devices[name] = c
        if not merged:
            return True
        if len(merged) > DEMANDS_MAX:
            return True  # too many subsets for Hall's condition: no cut
        pools = sorted({c.pool.name for c in devices.values()})
        fits_key = (frozenset(merged.items()),
                    tuple(tuple(sorted(self.consumed.get(name, {}).items())) for name in pools))
        known = self._packing_answers.get(fits_key)
        if known is None:
            known = self._packing_answers[fits_key] = self._relaxation_fits(merged, devices)
        return known

    def _relaxation_fits(self, merged: dict[tuple[frozenset[str], Any], int],
                         devices: dict[str, Candidate]) -> bool:
        """Whether the relaxation can give each demand ((its free devices, its distinctAttribute group):
        its need) its devices.

        Each device counts for the kind of the demands it is free for (a bit mask), except for the demands
        of a distinctAttribute group: each bin gives such a group at most one device, counted apart (for the
        demands of the group it is free for, see :func:`_maximal_packings`)."""
        needs = list(merged.values())
        mask_of: dict[str, int] = {}
        group_masks: dict[Any, int] = {}
        for bit, (ids, spread) in enumerate(merged):
            for did in ids:
                mask_of[did] = mask_of.get(did, 0) | (1 << bit)
            if spread is not None:
                group_masks[spread] = group_masks.get(spread, 0) | (1 << bit)
        groups = tuple(sorted(group_masks.values()))
        spread_bits = sum(groups)
        kinds = sorted({part for mask in mask_of.values()
                        for part in (mask & ~spread_bits, *(mask & g for g in groups))} - {0})
        dim = {mask: i for i, mask in enumerate(kinds)}
        caps = tuple(sum(n for bit, n in enumerate(needs) if mask >> bit & 1) for mask in kinds)
        if max(caps) >= 1 << (FIELD_BITS - 1):
            return True  # counts too large for the packed comparison: no cut
        loose = [0] * len(kinds)  # devices outside any bin: each kind's count
        bins: dict[tuple[str, str], list[tuple[str, Candidate]]] = {}
        for name in sorted(mask_of):
            c = devices[name]
            key = self._bin_of(c)
            if key is None:
                if mask_of[name] & spread_bits:
                    return True  # a group's devices all lie in bins (see _one_value_per_bin)
                loose[dim[mask_of[name]]] += 1
            else:
                bins.setdefault(key, []).append((name, c))
        per_bin: list[list[list[int]]] = []
        for key, members in sorted(bins.items()):
            packings = self._bin_packings(key, members, mask_of, groups)
            if packings is None:
                return True
            vectors = []
            for packing in packings:
                vector = [0] * len(kinds)
                for mask, count in packing:
                    vector[dim[mask]] += count
                vectors.append(vector)
            per_bin.append(vectors)
        # Hall's condition for each demand alone and for all together, with the most the bins still to come
        # can add: a combination that fails it already never reaches a vector that passes
        checks = [_hall_set(needs, kinds, 1 << bit) for bit in range(len(needs))]
        checks.append(_hall_set(needs, kinds, (1 << len(needs)) - 1))
        still: list[list[int]] = [[0] * len(checks)]
        for vectors in reversed(per_bin):
            most = [max(sum(vector[i] for i in dims) for vector in vectors) for _, dims in checks]
            still.append([a + b for a, b in zip(still[-1], most)])
        still.reverse()
        frontier: set[tuple[int, ...]] = {tuple(min(n, cap) for n, cap in zip(loose, caps))}
        for number, vectors in enumerate(per_bin):
            if len(frontier) * len(vectors) > GROWN_MAX:
                return True
            grown = {tuple(min(a + b, cap) for a, b, cap in zip(base, vector, caps))
                     for base in frontier for vector in vectors}
            rest = still[number + 1]
            frontier = _maximal({v for v in grown if all(sum(v[i] for i in dims) + more >= need
                                                         for (need, dims), more in zip(checks, rest))})
            if not frontier:
                return False
            if len(frontier) > FRONTIER_MAX:
                return True
        hall_key = (tuple(needs), tuple(kinds))
        subsets = self._hall_sets.get(hall_key)
        if subsets is None:
            subsets = self._hall_sets[hall_key] = [_hall_set(needs, kinds, subset)
                                                   for subset in range(1, 1 << len(needs))]
        return any(all(sum(vector[i] for i in dims) >= need for need, dims in subsets) for vector in frontier)

    def _bin_packings(self, key: tuple[str, str], members: list[tuple[str, Candidate]],
                      mask_of: dict[str, int], groups: tuple[int, ...]) -> Packings | None:
        """The inclusion-maximal sets of a bin's devices that fit what its counters have left, each as its
        count of devices per kind ((mask, count) pairs); None when there are too many to look at."""
        pool = members[0][1].pool
        avail = self.res.available_counters(pool)
        consumed = self.consumed.get(pool.name, {})
        described = []
        names: set[str] = set()
        for name, c in members:
            draws = self._bin_draws.get(c.info.id)
            if draws is None:
                summed: dict[str, Any] = {}
                for set_name, cname, amount in c.info.consumes:
                    if set_name == key[1] and amount and avail.get((set_name, cname)) is not None:
                        summed[cname] = summed.get(cname, 0) + amount
                draws = self._bin_draws[c.info.id] = tuple(sorted(summed.items()))
            names.update(cname for cname, _ in draws)
            described.append((name, mask_of[name], draws))
        left = {cname: avail[(key[1], cname)] - consumed.get((key[1], cname), 0) for cname in sorted(names)}
        cache_key = (key, tuple(described), tuple(left.items()), groups)
        if cache_key in self._packings:
            return self._packings[cache_key]
        result = _maximal_packings(described, left, groups)
        self._packings[cache_key] = result
        return result


def _hall_set(needs: list[int], kinds: list[int], subset: int) -> tuple[int, list[int]]:
    """Hall's condition for a set of demands (bit mask): their needs together, and the kinds (by index)
    that may serve some of them."""
    return (sum(n for bit, n in enumerate(needs) if subset >> bit & 1),
            [i for i, mask in enumerate(kinds) if mask & subset])


def _maximal_packings(devices: list[tuple[str, int, tuple[tuple[str, Any], ...]]], left: dict[str, Any],
                      groups: tuple[int, ...]) -> list[tuple[tuple[int, int], ...]] | None:
    """The inclusion-maximal sets of devices whose draws fit ``left``, as counts per kind, without repeats;
    None beyond :data:`PACKINGS_MAX` sets looked at.

    ``groups``: the masks of the distinctAttribute groups. A device counts for its mask without the groups'
    bits, unless it is the one device the set gives a group, where it counts for its mask within the group's
    (each way of giving them is a packing)."""
    spread_bits = sum(groups)
    out: set[tuple[tuple[int, int], ...]] = set()
    taken: list[int] = []
    looked = 0

    def fits(i: int) -> bool:
        return all(left[cname] >= amount for cname, amount in devices[i][2])

    def walk(i: int) -> bool:
        nonlocal looked
        looked += 1
        if looked > PACKINGS_MAX:
            return False
        if i == len(devices):
            chosen = set(taken)
            if any(j not in chosen and fits(j) for j in range(len(devices))):
                return True  # not maximal: a larger set holds it
            for given in _given(taken, devices, groups):
                counts: dict[int, int] = {}
                for j in taken:
                    mask = given.get(j, devices[j][1] & ~spread_bits)
                    if mask:
                        counts[mask] = counts.get(mask, 0) + 1
                out.add(tuple(sorted(counts.items())))
            return True
        if fits(i):
            for cname, amount in devices[i][2]:
                left[cname] -= amount
            taken.append(i)
            ok = walk(i + 1)
            taken.pop()
            for cname, amount in devices[i][2]:
                left[cname] += amount
            if not ok:
                return False
        return walk(i + 1)

    if not walk(0):
        return None
    return _maximal_counts(out)


def _given(taken: list[int], devices: list[tuple[str, int, tuple[tuple[str, Any], ...]]],
           groups: tuple[int, ...]) -> list[dict[int, int]]:
    """Every way of giving each group at most one of the taken devices free for it (a device to one group
    at most): per way, the device (index) -> the kind it counts for there (its mask within the group's)."""
    ways: list[dict[int, int]] = [{}]
    for group in groups:
        grown = []
        for way in ways:
            grown.append(way)
            grown.extend({**way, j: devices[j][1] & group}
                         for j in taken if devices[j][1] & group and j not in way)
        ways = grown
    return ways


def _maximal_counts(packings: set[tuple[tuple[int, int], ...]]) -> list[tuple[tuple[int, int], ...]]:
    """The packings whose counts no other packing's counts reach or beat in every kind."""
    as_dicts = [(p, dict(p)) for p in sorted(packings)]
    out = []
    for p, counts in as_dicts:
        if not any(q != p and all(other.get(mask, 0) >= n for mask, n in counts.items())
                   for q, other in as_dicts):
            out.append(p)
    return out


def _maximal(vectors: set[tuple[int, ...]]) -> set[tuple[int, ...]]:
    """The vectors no other vector reaches or beats in every place.

    Each vector (counts below ``2 ** (FIELD_BITS - 1)``) is packed into one integer, a field per place with
    its top bit free: ``w`` reaches ``v`` everywhere exactly when subtracting ``v`` from ``w`` with every
    field's top bit set leaves every top bit set (no field borrows from the next one).
    """
    ordered = sorted(vectors, key=sum, reverse=True)
    if not ordered:
        return set()
    width = len(ordered[0])
    top = sum(1 << (FIELD_BITS * i + FIELD_BITS - 1) for i in range(width))
    kept: list[int] = []
    out: set[tuple[int, ...]] = set()
    for v in ordered:
        packed = 0
        for i, n in enumerate(v):
            packed |= n << (FIELD_BITS * i)
        if not any(((w | top) - packed) & top == top for w in kept):
            kept.append(packed)
            out.add(v)
    return out
