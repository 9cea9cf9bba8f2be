"""How many devices of each attribute value the requests under one attribute's constraints must take.

A proof for the look-ahead (:mod:`dralloc.allocator.lookahead`): the requests still to fill that a
``distinctAttribute`` or ``matchAttribute`` constraint on one attribute covers cannot all be served by the
free devices, counted per value of that attribute.

* A request under ``matchAttribute`` takes all its devices of one value, and so do all such requests of a
  claim together: the value is chosen once per claim (every choice is tried, within a budget).
* A request under ``distinctAttribute`` takes its devices one after another, each of another value than the
  one before (upstream compares a device with the last one of its own request), so of ``n`` devices at
  most ``ceil(n / 2)`` have one value: with three NUMA nodes a request of 8 takes at least 4 outside any
  one node, which a later claim that needs most of that node may lack.
* Requests never share a device: per value, all requests together take at most the free devices of that
  value.

For one choice of values the requests can be served only if every set S of requests needs no more than it
can get, value by value: ``sum(need) <= sum over values v of min(free(v), sum over S of cap(request, v))``
(the max-flow min-cut condition of the transport from values to requests). With no choice passing, the
subtree holds no solution. Requests left out (plain requests, adminAccess, shared devices) only make the
check weaker, never wrong.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import product
from typing import Any

CHOICES_BUDGET = 256  # value choices of the matchAttribute claims tried per check
MAX_REQUESTS = 8  # requests in one check (2^8 subsets); more are left out


@dataclass
class ValueDemand:
    """One request (or all matchAttribute requests of one claim together) as the check sees it.

    ``caps``: per value, how many devices of it the request could take (its free devices of that value,
    at most ``ceil(need / 2)`` under distinctAttribute). ``claim``: for matchAttribute requests, the claim
    whose requests share one value (None: the request spreads over values as its caps allow).
    """

    need: int
    caps: dict[Any, int] = field(default_factory=dict)
    claim: int | None = None


def values_short(demands: list[ValueDemand], supply: dict[Any, int]) -> bool:
    """True when no choice of one value per matchAttribute claim lets every demand be met (see module doc)."""
    demands = [d for d in demands if d.need > 0][:MAX_REQUESTS]
    if not demands:
        return False
    groups: dict[int, list[ValueDemand]] = {}
    spread: list[ValueDemand] = []
    for d in demands:
        if d.claim is None:
            spread.append(d)
        else:
            groups.setdefault(d.claim, []).append(d)
    choices: list[list[tuple[Any, ValueDemand]]] = []
    for members in groups.values():
        need = sum(d.need for d in members)
        options = []
        for value in sorted(supply, key=repr):
            if all(d.caps.get(value, 0) >= d.need for d in members) and supply[value] >= need:
                options.append((value, ValueDemand(need, {value: need})))
        if not options:
            return True
        choices.append(options)
    tried = 0
    for combination in product(*choices):
        tried += 1
        if tried > CHOICES_BUDGET:
            return False  # undecided: assume the demands fit
        if _transport_fits(spread + [d for _, d in combination], supply):
            return False
    return True


def _transport_fits(demands: list[ValueDemand], supply: dict[Any, int]) -> bool:
    """Whether every set of demands needs no more than the values can give it (the cut condition)."""
    n = len(demands)
    for mask in range(1, 1 << n):
        need = 0
        caps: dict[Any, int] = {}
        for i in range(n):
            if mask >> i & 1:
                d = demands[i]
                need += d.need
                for value, cap in d.caps.items():
                    caps[value] = caps.get(value, 0) + cap
        can = 0
        for value, cap in caps.items():
            can += min(cap, supply.get(value, 0))
        if need > can:
            return False
    return True
