"""One node's view of the slices: its pools and candidate devices in upstream's order, and the caches
behind it.

Both caches here belong to an :class:`~dralloc.allocator.Allocator` and live exactly as long as it does;
nothing is kept at module level, so a long-running process does not pin devices it no longer uses.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dralloc.allocator.pools import (
    Candidate,
    DeviceInfo,
    DeviceParts,
    Pool,
    gather_pools,
    node_matches_or_error,
)
from dralloc.api.resource_v1 import Device, ResourceSlice


class NodeView:
    """Pools for one node plus the flat candidate list (devices of usable pools, in order).

    ``cand_cache`` holds each request's candidate list per (selectors, capacity requests): static facts of
    the node's devices, valid as long as the view. ``request_cache`` holds a claim's requests prepared for
    this node (see :func:`dralloc.allocator.claims.requests_for_node`), keyed by (claim plan, claim index).
    """

    __slots__ = ("cand_cache", "candidates", "has_invalid", "has_unusable", "pool_candidates", "pools",
                 "request_cache")

    def __init__(self, pools: list[Pool], candidates: list[Candidate]) -> None:
        self.cand_cache: dict[Any, Any] = {}
        self.request_cache: dict[Any, Any] = {}
        self.pool_candidates: dict[int, list[Candidate]] = {}
        for cand in candidates:
            self.pool_candidates.setdefault(id(cand.pool), []).append(cand)
        self.pools = pools
        self.candidates = candidates
        self.has_unusable = any(not p.usable for p in pools)
        self.has_invalid = any(p.invalid for p in pools)


class DeviceInfoCache:
    """Static facts and selector outcomes per device object (:class:`DeviceInfo`).

    Invalidation rule: entries are keyed by ``id(device)`` and served only if the cached device *and* slice
    are the very objects asked about, so a new slice object (a new generation, a copy with taints added)
    gets fresh entries and a stale answer is never served. An entry keeps its device alive, so an id cannot
    be reused while it is cached. :meth:`forget` drops the entries of removed slices; the rest goes with the
    owner (the Allocator). Objects handed to the allocator must not be mutated in place.

    Devices whose ``consumesCounters`` and ``capacity`` are the same objects share one
    :class:`~dralloc.allocator.pools.DeviceParts` (keyed by the ids of those objects, which the parts hold);
    :meth:`forget` starts that table afresh, so parts of removed slices are not kept.
    """

    __slots__ = ("_infos", "_parts")

    def __init__(self) -> None:
        self._infos: dict[int, DeviceInfo] = {}
        self._parts: dict[tuple[int, int], DeviceParts] = {}

    def get(self, slice_: ResourceSlice, device: Device) -> DeviceInfo:
        info = self._infos.get(id(device))
        if info is None or info.device is not device or info.slice is not slice_:
            counters, capacity = device.consumes_counters, device.capacity
            key = (id(counters), id(capacity))
            parts = self._parts.get(key)
            if parts is None or parts.source[0] is not counters or parts.source[1] is not capacity:
                parts = self._parts[key] = DeviceParts(counters, capacity)
            info = DeviceInfo(slice_, device, parts)
            self._infos[id(device)] = info
        return info

    def forget(self, slices: list[ResourceSlice]) -> None:
        self._parts.clear()
        for s in slices:
            for d in s.spec.devices or ():
                info = self._infos.get(id(d))
                if info is not None and info.slice is s:
                    del self._infos[id(d)]

    def __len__(self) -> int:
        return len(self._infos)


def build_node_view(node_name: str, labels: dict[str, str], slices_for_node: list[ResourceSlice],
                    all_slices_by_pool: Callable[[], dict[tuple[str, str], list[ResourceSlice]]],
                    infos: DeviceInfoCache) -> NodeView:
    pools = gather_pools(slices_for_node, node_name, labels, all_slices_by_pool)
    cands: list[Candidate] = []
    cached = infos._infos  # DeviceInfoCache.get, inlined: this loop runs for every device of the node
    for pool in pools:
        if not pool.usable:
            continue
        for s in pool.device_slices:
            per_device = bool(s.spec.per_device_node_selection)
            for d in s.spec.devices or ():
                info = cached.get(id(d))
                if info is None or info.device is not d or info.slice is not s:
                    info = infos.get(s, d)
                ok = True
                if per_device:
                    ok = node_matches_or_error(node_name, labels, d.node_name, d.all_nodes, d.node_selector,
                                               f"device {d.name}")
                cands.append(Candidate(info, pool, ok, len(cands)))
    return NodeView(pools, cands)
