"""Look-ahead bounds from distinctAttribute constraints: runs of values a request's devices can take.

Upstream checks each device a claim picks under a distinctAttribute constraint against the value remembered
for every other request of the claim and against the previous device of its own request. So a request can
get at most as many devices as there are runs of equal values among the devices it is still allowed, and
none with a value a finished request of the claim remembers. These are the distinctAttribute checks of
:class:`~dralloc.allocator.lookahead.LookAhead`.
"""

from __future__ import annotations

from typing import Any

from dralloc.allocator.claims import RequestData
from dralloc.allocator.constraints import DistinctAttribute, attribute_set
from dralloc.allocator.lookahead_state import LookAheadState
from dralloc.allocator.pools import Candidate

_UNSET = object()


class DistinctBounds(LookAheadState):
    """The distinctAttribute checks of the look-ahead (see the module docstring)."""

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
