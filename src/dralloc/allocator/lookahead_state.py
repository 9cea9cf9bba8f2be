"""What the look-ahead checks read: the search's state and the caches they keep for one search.

The checks of :mod:`dralloc.allocator.lookahead` are spread over a few mixin classes, one concern each
(counter bounds, Hall's condition, matchAttribute value groups, distinctAttribute runs). They all read
the same state of :class:`dralloc.allocator.search.Search`, declared once here on the base class they
share, so that each mixin type-checks on its own without importing the search.
"""

from __future__ import annotations

from typing import Any, Protocol

from dralloc.allocator.claims import ClaimPlan, RequestData
from dralloc.allocator.pools import Candidate, Pool
from dralloc.allocator.selectors import SelectorCache
from dralloc.allocator.state import AllocatedState
from dralloc.allocator.views import NodeView

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


class LookAheadState:
    """The search's state and caches the look-ahead checks read (set by :class:`~dralloc.allocator.search.Search`)."""

    # the search's state, set by Search
    res: Resources
    view: NodeView
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
    _horizon_end: dict[tuple[int, int], list[RequestData] | None]  # the request after the horizon, if any
    _may_exceed: list[bool]
    _all_safe: dict[int, bool]
    _value_keys: dict[tuple[tuple[str, ...], tuple[Any, ...]], dict[str, list[tuple[Any, ...]]]]
    _any_counters: bool  # whether some candidate device consumes shared counters
    _draws: dict[str, list[tuple[tuple[str, str], tuple[tuple[Pool, str], ...], Any]]]
    _scalars: dict[str, dict[str, Any]]  # per attribute, per device: its value as one key (None: a list)
    _keys_of_list: dict[tuple[str, int], tuple[list[Candidate], list[Any] | None]]
    _masks_of_list: dict[int, tuple[list[Candidate], int]]  # see ValueGroups._list_mask
    _key_devices: dict[Any, dict[Any, int]]  # see ValueGroups._devices_by_key
    _limits: dict[str, list[tuple[tuple[str, str], Any, Any]]]  # per device: counter, its draw, what is there
    _static_ok: dict[int, list[tuple[int, Candidate, str, bool]]]  # per request (id): see LookAhead._free_list
    _device_bit: dict[str, int]  # one bit per candidate device of the node, for sets of devices as ints
    _device_of_bit: list[str]  # the device of each bit
    _key_draws: dict[str, list[tuple[tuple[str, str, str], Any]]]  # per device: see CounterBounds._counter_draws
    _single_draws: dict[str, dict[tuple[str, str], tuple[Pool, str, Any]]]  # see WholeSetBounds._single_set_draws
    _whole_of_device: dict[str, list[tuple[str, str]]]  # per device: see WholeSetBounds._whole_groups
    _bins: dict[str, tuple[str, str] | None]  # per device: see PackingBounds._bin_of
    # per bin and its state: see PackingBounds._bin_packings
    _packings: dict[Any, list[tuple[tuple[int, int], ...]] | None]
    _bin_draws: dict[str, tuple[tuple[str, Any], ...]]  # per device: see PackingBounds._bin_packings
    _hall_sets: dict[Any, list[tuple[int, list[int]]]]  # per needs, kinds: see PackingBounds._relaxation_fits
    _packing_answers: dict[Any, bool]  # per demands and counters consumed: see PackingBounds._packing_fits
    _packing_calls: int  # the packing bound's throttle: see PackingBounds._packing_now
    _packing_hits: int
    _packing_skipped: int
    _packing_stride: int
