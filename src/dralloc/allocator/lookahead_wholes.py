"""Look-ahead bound from whole counter sets: picks that need a counter set untouched, beside a request that
must spread over several sets.

A device that draws all of what a counter set has of some counter (a whole GPU, or the MIG profile that
spans it) fits only while nothing else draws that counter of the set: such *whole* picks each need a set of
their own that no other pick touches. A request under a distinctAttribute constraint whose value tells the
counter set (a partition's parent GPU) touches one set per device it still needs: upstream compares each of
its devices with the request's previous one, and when the values among its free devices form runs in
candidate order (all partitions of one GPU side by side), devices that differ from their predecessor differ
from all earlier ones. So, per counter name of a pool, the whole picks of the other requests and the sets
that request must touch beyond those already in use cannot outnumber the untouched sets. Per set and summed
over the sets (:mod:`~dralloc.allocator.lookahead_counters`) the draws may still fit: it is where they land
that fails, and the search would otherwise try every spread of the partitions over the GPUs.
"""

from __future__ import annotations

from typing import Any

from dralloc.allocator.claims import RequestData
from dralloc.allocator.constraints import DistinctAttribute, runs_side_by_side
from dralloc.allocator.lookahead_counters import CounterBounds
from dralloc.allocator.lookahead_distinct import DistinctBounds
from dralloc.allocator.pools import Candidate, Pool

# One step of the look-ahead: the claim, the request's passing options with their free devices, and how many
# devices the request has picked already.
Step = tuple[int, list[tuple[RequestData, list[Candidate]]], int]


class WholeSetBounds(CounterBounds, DistinctBounds):
    """The whole-counter-set bound of the look-ahead (see the module docstring)."""

    def _single_set_draws(self, c: Candidate) -> dict[tuple[str, str], tuple[Pool, str, Any]]:
        """Per counter name (pool, name) the device draws from exactly one counter set: (pool, set, amount).
        Cached for the search."""
        draws = self._single_draws.get(c.info.id)
        if draws is None:
            draws = self._single_draws[c.info.id] = {group: (sets[0][0], sets[0][1], amount)
                                                     for group, sets, amount in self._draws_of(c) if len(sets) == 1}
        return draws

    def _wholes_doomed(self, steps: list[Step]) -> bool:
        """True when, for some counter name, the whole picks and a spreading request need more untouched
        counter sets than there are (see the module docstring)."""
        pools: dict[tuple[str, str], Pool] = {}  # the counter names some free device draws whole
        # per step, per option: its need and, per counter name, how many of its free devices draw it whole
        counted: list[list[tuple[int, dict[tuple[str, str], int]]]] = []
        for _, passing, done in steps:
            per_option = []
            for opt, free in passing:
                whole_of: dict[tuple[str, str], int] = {}
                for c in free:
                    for group in self._whole_groups(c):
                        whole_of[group] = whole_of.get(group, 0) + 1
                        if group not in pools:
                            pools[group] = c.pool
                # a device that is not whole on a counter name is free of charge there
                per_option.append((opt.num - done - len(free), whole_of))
            counted.append(per_option)
        # only a request of a claim under distinctAttribute can spread (see _sets_touched)
        spreading = [index for index, (cj, _, _) in enumerate(steps)
                     if any(type(con) is DistinctAttribute for con in self.constraints[cj])]
        sets_left: dict[str, dict[str, list[int]]] = {}  # per pool, per counter name: [untouched, touched]
        for group, pool in pools.items():
            left = sets_left.get(pool.name)
            if left is None:
                left = sets_left[pool.name] = self._sets_left(pool)
            # per step: the least number of whole picks any of its options makes
            wholes = []
            for per_option in counted:
                fewest: int | None = None
                for short, whole_of in per_option:
                    forced = max(0, short + whole_of.get(group, 0))
                    fewest = forced if fewest is None or forced < fewest else fewest
                wholes.append(fewest or 0)
            untouched, touched = left.get(group[1], (0, 0))
            if self._group_wholes_doomed(group, steps, spreading, wholes, untouched, touched):
                return True
        return False

    def _sets_left(self, pool: Pool) -> dict[str, list[int]]:
        """Per counter name of the pool: how many of its counter sets no pick has drawn on yet, and how many
        have some of it left after picks drew on them."""
        consumed = self.consumed.get(pool.name, {})
        out: dict[str, list[int]] = {}
        for (set_name, name), a in self.res.available_counters(pool).items():
            if a <= 0:
                continue
            counts = out.get(name)
            if counts is None:
                counts = out[name] = [0, 0]
            used = consumed.get((set_name, name), 0)
            if used == 0:
                counts[0] += 1
            elif used < a:
                counts[1] += 1
        return out

    def _whole_groups(self, c: Candidate) -> list[tuple[str, str]]:
        """The counter names (pool, name) a device draws all of from its one counter set. Cached for the
        search: availability does not change during it."""
        groups = self._whole_of_device.get(c.info.id)
        if groups is None:
            avail = self.res.available_counters(c.pool)
            groups = self._whole_of_device[c.info.id] = [
                group for group, (_, set_name, amount) in self._single_set_draws(c).items()
                if amount == avail.get((set_name, group[1]))]
        return groups

    def _group_wholes_doomed(self, group: tuple[str, str], steps: list[Step], spreading: list[int],
                             wholes: list[int], untouched: int, touched: int) -> bool:
        total = sum(wholes)
        if total > untouched:
            return True
        if total == 0:
            return False
        for index in spreading:
            spread = self._sets_touched(group, steps, index, wholes)
            if spread and total - wholes[index] + max(0, spread - touched) > untouched:
                return True
        return False

    def _sets_touched(self, group: tuple[str, str], steps: list[Step], index: int, wholes: list[int]) -> int:
        """The least number of distinct counter sets (of the counter name ``group``) that the remaining
        devices of step ``index``'s request touch, together with the last device of each earlier request of
        its claim in the look-ahead that makes no whole pick: all of them differ in the value of a
        distinctAttribute constraint whose values run side by side among the free devices and name one value
        per set. For each option, its need beyond the devices that do not draw the name from one set; 0 when
        no such constraint applies."""
        cj, passing, done = steps[index]
        earlier = [(opts, d) for pos, (ck, opts, d) in enumerate(steps[:index]) if ck == cj and not wholes[pos]]
        fewest: int | None = None
        for opt, free in passing:
            best = 0
            for con in self.constraints[cj]:
                if type(con) is not DistinctAttribute or not con.applies(opt.base, opt.full):
                    continue
                value_of_set: dict[str, Any] = {}
                drawing = self._drawing_keys(group, con.attribute, free, value_of_set)
                if drawing is None:
                    continue
                count = opt.num - done - (len(free) - drawing)
                if count <= 0:
                    continue
                for opts, _ in earlier:
                    # the last device of every option of the earlier request draws from one set, with a value
                    # this request must avoid
                    if all(con.applies(o.base, o.full) and free_o
                           and self._drawing_keys(group, con.attribute, free_o, value_of_set) == len(free_o)
                           for o, free_o in opts):
                        count += 1
                best = max(best, count)
            fewest = best if fewest is None or best < fewest else fewest
            if not fewest:
                return 0
        return fewest or 0

    def _drawing_keys(self, group: tuple[str, str], attribute: str, free: list[Candidate],
                      value_of_set: dict[str, Any]) -> int | None:
        """How many of the free devices draw the counter name from one set, recording each such set's value
        in ``value_of_set``; None when some value is not one scalar, the values do not run side by side, or
        a set would hold two values."""
        keys = self._scalar_keys(attribute, free)
        if keys is None or not runs_side_by_side(keys):
            return None
        drawing = 0
        for c, key in zip(free, keys):
            draw = self._single_set_draws(c).get(group)
            if draw is None:
                continue
            drawing += 1
            if value_of_set.setdefault(draw[1], key) != key:
                return None
        return drawing
