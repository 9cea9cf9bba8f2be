"""A lower bound on the steps upstream's plain search spends in a subtree that dralloc's look-ahead cut.

A cut subtree holds no solution, and nothing in it can raise an error or hit the 32-devices-per-claim limit
(the look-ahead only cuts there), so upstream's search walks every node of it before it backtracks. This
module counts the nodes of that walk that lie within the request being filled — every way of taking its
remaining devices one after the other, in candidate order — without walking them, and only those it is
sure upstream accepts. Nodes deeper than the request count one each. So the count is a lower bound, never
an estimate.

Sure to be accepted, for each pick: a candidate that is statically acceptable, free now, takes no shared
counters and no capacity, and holds one value (no list) of every constraint's attribute. The constraints
decide the rest, with upstream's quirks:

* matchAttribute: once the claim has a value, only devices of that value; a claim without one takes any
  device and the subtree below keeps its value (a fixed set of more than one value is not counted: the
  first device would narrow it for good);
* distinctAttribute: no value another request of the claim remembers; and the request's own last value,
  but only until the first device of a node is accepted: when its subtree fails, removing it makes the
  request forget its value, and every later device of that node passes that check.

Upstream may accept more (a device outside the count may make the request forget its value earlier), never
fewer, so the count stays a lower bound. Counted with suffix sums over the candidates: for each number of
picks still to make, the nodes below each candidate.
"""

from __future__ import annotations

from typing import Any

from dralloc.allocator.claims import RequestData
from dralloc.allocator.constraints import DistinctAttribute, MatchAttribute, attribute_set


def _scalar(info: Any, attribute: str) -> Any:
    """The device's value of ``attribute`` as one (type, value) key, or None if missing or a list."""
    value = attribute_set(info, attribute)
    if not value or len(value[1]) != 1:
        return None
    return (value[0], next(iter(value[1])))


def cut_subtree_steps(rd: RequestData, constraints: list[Any], free: list[Any], need: int,
                      keys_of: dict[Any, Any]) -> int:
    """Upstream's steps in the subtree of the node that fills the next ``need`` devices of ``rd`` (at least;
    the node itself included), given its candidates from the node's start on that are statically acceptable
    and free now (``free``) and the claim's constraints in their current state. ``keys_of`` caches, per
    request and device, the device's values of the constraints' attributes (None: not counted)."""
    if need <= 0 or rd.all_mode or rd.admin:
        return 1
    distinct = [c for c in constraints if type(c) is DistinctAttribute and c.applies(rd.base, rd.full)]
    match = [c for c in constraints if type(c) is MatchAttribute and c.applies(rd.base, rd.full)]
    fixed: list[Any] = []
    for con in match:
        if con.count > 0:
            kind, values = con.current
            if len(values) != 1:
                return 1  # the first device would narrow the set: which value stays is not known here
            fixed.append((kind, next(iter(values))))
        else:
            fixed.append(None)
    # other requests' remembered values (those do not change below) and the request's own last value
    forbidden = [{(v[0], item) for base, v in con.values.items() if base != rd.base and v for item in v[1]}
                 if con.count > 0 else set() for con in distinct]
    own = []
    for dcon in distinct:
        v = dcon.values.get(rd.base) if dcon.count > 0 else None
        own.append({(v[0], item) for item in v[1]} if v else set())
    # the counted candidates: (distinct keys, match keys), in candidate order
    picks: list[tuple[tuple[Any, ...], tuple[Any, ...]]] = []
    rid = id(rd)
    check_forbidden = any(forbidden)
    check_fixed = any(f is not None for f in fixed)
    for cand in free:
        keys = keys_of.get((rid, cand.info.id), _UNSET)
        if keys is _UNSET:
            keys = keys_of[(rid, cand.info.id)] = _keys(cand.info, distinct, match)
        if keys is None:
            continue
        if check_forbidden and any(key in banned for key, banned in zip(keys[0], forbidden)):
            continue
        if check_fixed and any(f is not None and key != f for key, f in zip(keys[1], fixed)):
            continue
        picks.append(keys)
    if not picks:
        return 1
    # Per match group (the devices of one combination of matchAttribute values, in candidate order), the
    # children of a node whose last pick is a member: the later members from the first one that differs
    # from it in every distinctAttribute value on.
    groups: dict[tuple[Any, ...], list[tuple[Any, ...]]] = {}
    for d_keys, m_keys in picks:
        groups.setdefault(m_keys, []).append(d_keys)
    plans: list[tuple[int, list[int]]] = []
    for values in groups.values():
        count = len(values)
        firsts = []
        for j, mine in enumerate(values):
            first = j + 1
            if distinct:
                while first < count and _shares(values[first], mine):
                    first += 1
            firsts.append(first)
        plans.append((count, firsts))
    # below[g][j]: the nodes in the subtree of a node whose last pick is member j of group g, with the picks
    # still to make after it (none at first: the request is filled there)
    below = [[1] * count for count, _ in plans]
    for _ in range(need - 1):
        for g, (count, firsts) in enumerate(plans):
            current = below[g]
            suffix = [0] * (count + 1)
            total = 0
            for j in range(count - 1, -1, -1):
                total += current[j]
                suffix[j] = total
            below[g] = [1 + suffix[first] for first in firsts]
    # the node itself: its own last value holds until the first accepted device
    position = {id(values): g for g, values in enumerate(groups.values())}
    seen = [0] * len(plans)
    total = 1
    started = not any(own)
    for d_keys, m_keys in picks:
        g = position[id(groups[m_keys])]
        j = seen[g]
        seen[g] = j + 1
        if not started:
            if any(key in mine for key, mine in zip(d_keys, own)):
                continue
            started = True
        total += below[g][j]
    return total


def _shares(a: tuple[Any, ...], b: tuple[Any, ...]) -> bool:
    """Whether two devices share a value of some distinctAttribute constraint."""
    for x, y in zip(a, b):
        if x == y:
            return True
    return False


_UNSET = object()


def _keys(info: Any, distinct: list[Any], match: list[Any]) -> tuple[tuple[Any, ...], tuple[Any, ...]] | None:
    """A device's values of the distinctAttribute and matchAttribute constraints' attributes, or None when
    upstream's acceptance of it is not certain from those alone (it draws counters or capacity, or some
    value is missing or a list)."""
    if info.consumes or info.allow_multi or info.capacity:
        return None
    d_keys = tuple(_scalar(info, con.attribute) for con in distinct)
    m_keys = tuple(_scalar(info, con.attribute) for con in match)
    if None in d_keys or None in m_keys:
        return None
    return d_keys, m_keys
