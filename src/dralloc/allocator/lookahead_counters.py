"""Look-ahead bounds from shared counters: picks whose cheapest draws already exceed what a counter has left.

Partitionable devices draw on counters of their pool's counter sets (a GPU's memory and slices shared by its
MIG partitions and the whole GPU). The requests still to fill need at least their cheapest free devices'
draws, so when even those exceed what is left of a counter (one counter set, or a counter name summed over
the sets of a pool), no way of filling them fits. These are the counter checks of
:class:`~dralloc.allocator.lookahead.LookAhead`; the matchAttribute value groups use them per group.
"""

from __future__ import annotations

from typing import Any

from dralloc.allocator.claims import RequestData
from dralloc.allocator.lookahead_state import LookAheadState
from dralloc.allocator.pools import Candidate, Pool


class CounterBounds(LookAheadState):
    """The shared-counter bounds of the look-ahead (see the module docstring)."""

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
