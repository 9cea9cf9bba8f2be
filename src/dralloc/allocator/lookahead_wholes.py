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
from dralloc.allocator.constraints import DistinctAttribute
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
        groups: dict[tuple[str, str], Pool] = {}
        for _, passing, _ in steps:
            for _, free in passing:
                for c in free:
                    for group, (pool, _, _) in self._single_set_draws(c).items():
                        groups[group] = pool
        return any(self._group_wholes_doomed(group, pool, steps) for group, pool in groups.items())

    def _group_wholes_doomed(self, group: tuple[str, str], pool: Pool, steps: list[Step]) -> bool:
        cname = group[1]
        avail = self.res.available_counters(pool)
        consumed = self.consumed.get(pool.name, {})
        untouched = touched = 0
        for (set_name, name), a in avail.items():
            if name != cname or a <= 0:
                continue
            used = consumed.get((set_name, name), 0)
            if used == 0:
                untouched += 1
            elif used < a:
                touched += 1
        # per step: the least number of whole picks any of its options makes
        wholes: list[int] = []
        for _, passing, done in steps:
            fewest: int | None = None
            for opt, free in passing:
                partial = 0
                for c in free:
                    draw = self._single_set_draws(c).get(group)
                    if draw is None or draw[2] != avail.get((draw[1], cname)):
                        partial += 1
                forced = max(0, opt.num - done - partial)
                fewest = forced if fewest is None or forced < fewest else fewest
            wholes.append(fewest or 0)
        total = sum(wholes)
        if total > untouched:
            return True
        if total == 0:
            return False
        for index in range(len(steps)):
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
        if keys is None or not self._runs_side_by_side(keys):
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

    @staticmethod
    def _runs_side_by_side(keys: list[Any]) -> bool:
        """Whether each value's devices follow each other in candidate order (no value comes back)."""
        seen: set[Any] = set()
        prev: Any = object()
        for key in keys:
            if key != prev:
                if key in seen:
                    return False
                seen.add(key)
                prev = key
        return True
