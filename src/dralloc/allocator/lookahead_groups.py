"""Look-ahead bounds from matchAttribute constraints: value groups with devices enough for a claim.

All devices a claim takes under a matchAttribute constraint share one value of the attribute, so the
requests it covers must find one combination of values (one per constraint) held by enough free devices,
within the shared counters, for some choice of their firstAvailable options; and claims never share a
device, so the claims under such constraints must find such groups that fit next to each other (Hall's
condition over the groups). These are the value-group checks of :class:`~dralloc.allocator.lookahead.LookAhead`.
"""

from __future__ import annotations

from itertools import product
from typing import Any

from dralloc.allocator.constraints import MatchAttribute, attribute_set
from dralloc.allocator.lookahead_counters import CounterBounds
from dralloc.allocator.lookahead_hall import HallBounds
from dralloc.allocator.lookahead_state import Covered, Options
from dralloc.allocator.pools import Candidate

COLLIDE_BUDGET = 2000  # group choices tried per look-ahead when checking claims against each other
CHOICE_BUDGET = 64  # firstAvailable choices of one claim checked one by one against its value groups


class ValueGroups(CounterBounds, HallBounds):
    """The matchAttribute value-group checks of the look-ahead (see the module docstring)."""

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
        if not self._any_counters:
            return self._groups_by_masks(attrs, fixed, value_keys, parts, total, found)
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

    def _groups_by_masks(self, attrs: tuple[str, ...], fixed: tuple[Any, ...], value_keys: dict[str, Any],
                         parts: list[tuple[int, list[Candidate]]], total: int,
                         found: list[frozenset[str]] | None) -> bool:
        """:meth:`_groups_ok` where no device draws shared counters, so that only numbers of devices matter:
        the node's devices per value combination as bit masks (built once per search), each free list as a
        bit mask (once per look-ahead, as the same lists come back in its checks); a part's devices of a
        combination are the bits the two masks share, the parts' distinct devices those of all of them."""
        by_key = self._devices_by_key(attrs, fixed, value_keys)
        lists = [self._list_mask(free) for _, free in parts]
        needed = [(mask, need) for mask, (need, _) in zip(lists, parts) if need > 0]
        every = 0
        for mask in lists:
            every |= mask
        passed = False
        for devices in by_key.values():
            for mask, need in needed:
                if (devices & mask).bit_count() < need:
                    break
            else:
                union = devices & every
                if union.bit_count() < total:
                    continue
                if found is None:
                    return True
                passed = True
                ids = []
                device_of_bit = self._device_of_bit
                while union:
                    low = union & -union
                    ids.append(device_of_bit[low.bit_length() - 1])
                    union ^= low
                found.append(frozenset(ids))
        return passed

    def _devices_by_key(self, attrs: tuple[str, ...], fixed: tuple[Any, ...],
                        value_keys: dict[str, Any]) -> dict[Any, int]:
        """The node's candidate devices per combination of values (within the fixed sets), as bit masks."""
        known = self._key_devices.get((attrs, fixed))
        if known is not None:
            return known
        masks: dict[Any, int] = {}
        device_bit = self._device_bit
        for c in self.view.candidates:
            did = c.info.id
            keys = value_keys.get(did)
            if keys is None:
                keys = self._combinations(c, attrs)
                if fixed:
                    keys = [key for key in keys if all(key[i][0] == fx[0] and key[i][1] in fx[1] for i, fx in fixed)]
                value_keys[did] = keys
            for key in keys:
                masks[key] = masks.get(key, 0) | device_bit[did]
        self._key_devices[(attrs, fixed)] = masks
        return masks

    def _list_mask(self, free: list[Candidate]) -> int:
        """A free list's devices as a bit mask (cached for the look-ahead call: the list is kept with it, so
        its id is not reused meanwhile)."""
        known = self._masks_of_list.get(id(free))
        if known is not None and known[0] is free:
            return known[1]
        device_bit = self._device_bit
        mask = 0
        for c in free:
            mask |= device_bit[c.info.id]
        self._masks_of_list[id(free)] = (free, mask)
        return mask

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
