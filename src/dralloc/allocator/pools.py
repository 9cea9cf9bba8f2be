"""Pools as one node sees them, and the candidate devices in upstream's order.

Per node: the slices with ``nodeName`` = node plus those without a nodeName are candidates; a slice is
relevant when its nodeName / allNodes / nodeSelector selects the node, or (perDeviceNodeSelection) when at
least one of its devices does. Relevant slices group into pools by (driver, pool name); only the highest
``pool.generation`` counts. A pool whose slice count differs from ``resourceSliceCount`` is looked up
cluster-wide: obsolete (a newer generation exists elsewhere) → dropped; complete → its other slices only
count for counters; otherwise → incomplete. Pools are sorted by driver then pool name; complete pools with
binding conditions go last. Candidate order: pools → device slices by name → devices in spec order.
"""

from __future__ import annotations

from typing import Any

from dralloc.allocator.errors import AllocationInternalError
from dralloc.allocator.nodes import NodeSelectorError, node_matches
from dralloc.allocator.numbers import to_num
from dralloc.allocator.state import device_id
from dralloc.api.semver import Semver
from dralloc.cel import device_activation

BLOCKING_EFFECTS = frozenset(("NoSchedule", "NoExecute"))


class CapacityInfo:
    """One capacity of a device: its value and request policy, as Quantities and exact numbers."""

    __slots__ = ("quantity", "value", "policy", "default", "default_num", "valid_values", "has_range",
                 "range_min", "range_max", "range_step")

    def __init__(self, cap: Any) -> None:
        self.quantity = cap.value
        self.value = to_num(cap.value)
        pol = cap.request_policy
        self.policy = pol
        self.default = pol.default if pol is not None else None
        self.default_num = to_num(self.default) if self.default is not None else None
        self.valid_values = ([(q, to_num(q)) for q in pol.valid_values]
                             if pol is not None and pol.valid_values is not None else None)
        rng = pol.valid_range if pol is not None else None
        self.has_range = rng is not None
        self.range_min = rng.min if rng is not None else None
        self.range_max = rng.max if rng is not None else None
        self.range_step = rng.step if rng is not None else None


class DeviceParts:
    """What a device's counters and capacity mean to the allocator, shared by every device whose decoded
    ``consumesCounters`` and ``capacity`` are the very same objects (a loader that shares identical parts
    makes the same GPU of thousands of nodes use one of these). Holds the decoded objects, so their ids stay
    theirs while the parts are kept."""

    __slots__ = ("source", "consumes", "capacity", "capacity_cache", "cel_capacity")

    def __init__(self, consumes_counters: Any, capacity: Any) -> None:
        self.source = (consumes_counters, capacity)
        self.consumes = tuple((c.counter_set, cname, to_num(counter.value))
                              for c in consumes_counters or () for cname, counter in (c.counters or {}).items())
        self.capacity = {name: CapacityInfo(cap) for name, cap in (capacity or {}).items()}
        # consumption() per capacity request: depends on the capacities alone
        self.capacity_cache: dict[Any, Any] = {}
        # (driver, the capacity map selectors see): made from the capacities and the driver alone
        self.cel_capacity: tuple[str, Any] | None = None


class DeviceInfo:
    """Static facts about one device of one slice, computed once per device object."""

    __slots__ = ("device", "slice", "id", "driver", "pool", "name", "allow_multi", "consumes", "capacity",
                 "taints", "attr_cache", "expr_cache", "match_cache", "per_device", "binds_to_node",
                 "capacity_cache", "parts", "_cel_input")

    # Version attributes as selectors see them, one object per version text (bounded, like Quantity's).
    _versions: dict[str, Semver] = {}

    def __init__(self, slice_: Any, device: Any, parts: DeviceParts | None = None) -> None:
        spec = slice_.spec
        self.device = device
        self.slice = slice_
        self.driver = spec.driver
        self.pool = spec.pool.name
        self.name = device.name
        self.id = device_id(self.driver, self.pool, self.name)
        self.allow_multi = bool(device.allow_multiple_allocations)
        if parts is None:
            parts = DeviceParts(device.consumes_counters, device.capacity)
        self.parts = parts
        self.consumes = parts.consumes
        self.capacity = parts.capacity
        self.capacity_cache = parts.capacity_cache
        taints = device.taints
        self.taints = tuple(t for t in taints if t.effect in BLOCKING_EFFECTS) if taints else ()
        self.attr_cache: dict[str, Any] = {}
        self.expr_cache: dict[str, Any] = {}
        self.match_cache: dict[Any, Any] = {}
        self.per_device = bool(spec.per_device_node_selection)
        self.binds_to_node = bool(device.binds_to_node)
        self._cel_input: dict[str, Any] | Exception | None = None

    def cel_input(self) -> dict[str, Any]:
        """The device as its selectors see it, made on first use (every selector of every request reads the
        same one). Raises, every time, what making it raised (a CEL runtime error)."""
        act = self._cel_input
        if act is None:
            try:
                act = device_activation(self.device, self.driver)
                self._share(act["device"])
            except Exception as exc:  # noqa: BLE001 - kept and raised to each selector as its runtime error
                act = exc
            self._cel_input = act
        if isinstance(act, Exception):
            raise act
        return act

    def _share(self, device: dict[str, Any]) -> None:
        """Make the activation use the capacity map of the devices with the same parts and one object per
        version: equal values, kept once for the hundreds of thousands of devices of a large cluster."""
        parts = self.parts
        held = parts.cel_capacity
        if held is None:
            parts.cel_capacity = (self.driver, device["capacity"])
        elif held[0] == self.driver:
            device["capacity"] = held[1]
        versions = DeviceInfo._versions
        for values in device["attributes"].values():
            for name, value in values.items():
                if type(value) is Semver:
                    text = str(value)
                    shared = versions.get(text)
                    if shared is None:
                        if len(versions) < 4096:
                            versions[text] = value
                    elif shared is not value:
                        values[name] = shared


class Pool:
    """One pool as seen from one node."""

    __slots__ = ("driver", "name", "incomplete", "invalid", "invalid_reason", "device_slices", "other_slices",
                 "counter_sets", "has_binding_conditions")

    def __init__(self, driver: str, name: str) -> None:
        self.driver = driver
        self.name = name
        self.incomplete = False
        self.invalid = False
        self.invalid_reason = ""
        self.device_slices: list[Any] = []
        self.other_slices: list[Any] = []
        self.counter_sets: dict[str, dict[str, Any]] = {}
        self.has_binding_conditions = False

    @property
    def id(self) -> str:
        return f"{self.driver}/{self.name}"

    @property
    def usable(self) -> bool:
        return not (self.incomplete or self.invalid)


class Candidate:
    """A device in candidate order for one node: static info, its pool, and per-device node selection."""

    __slots__ = ("info", "pool", "node_ok", "pos")

    def __init__(self, info: DeviceInfo, pool: Pool, node_ok: bool, pos: int) -> None:
        self.info = info
        self.pool = pool
        self.node_ok = node_ok
        self.pos = pos


def _slice_name(s: Any) -> str:
    return s.metadata.name or ""


def node_matches_or_error(node_name: str, labels: dict[str, str], name: Any, all_nodes: Any, sel: Any,
                          what: str) -> bool:
    """Upstream's node matching for a slice or a device; a malformed selector is a hard error."""
    try:
        return node_matches(node_name, labels, name, all_nodes, sel)
    except NodeSelectorError as exc:
        raise AllocationInternalError(f"gather pool information: failed to perform node selection for {what}: "
                                      f"failed to parse node selector: {exc}") from None


def gather_pools(slices_for_node: list[Any], node_name: str, labels: dict[str, str],
                 all_slices_by_pool: Any) -> list[Pool]:
    """Upstream's GatherPools for one node (``all_slices_by_pool`` returns every slice by pool ID)."""
    groups: dict[tuple[str, str], list[Any]] = {}
    order: list[tuple[str, str]] = []
    for s in slices_for_node:
        spec = s.spec
        if spec.node_name or spec.all_nodes or spec.node_selector is not None:
            relevant = node_matches_or_error(node_name, labels, spec.node_name, spec.all_nodes, spec.node_selector,
                                     f"slice {_slice_name(s)}")
        elif spec.per_device_node_selection:
            relevant = False
            for d in spec.devices or ():
                if node_matches_or_error(node_name, labels, d.node_name, d.all_nodes, d.node_selector,
                                 f"device {d.name} in slice {_slice_name(s)}"):
                    relevant = True
                    break
        else:
            continue
        if not relevant:
            continue
        key = (spec.driver, spec.pool.name)
        group = groups.get(key)
        if group is None:
            groups[key] = [s]
            order.append(key)
        elif spec.pool.generation < group[0].spec.pool.generation:
            continue
        elif spec.pool.generation > group[0].spec.pool.generation:
            groups[key] = [s]
        else:
            group.append(s)

    normal: list[Pool] = []
    with_binding: list[Pool] = []
    for key in order:
        group = groups[key]
        first = group[0].spec.pool
        if len(group) == first.resource_slice_count:
            pool = _build_pool(key, group, None)
        else:
            obsolete = False
            same_gen: list[Any] = []
            for s in all_slices_by_pool().get(key, ()):
                g = s.spec.pool.generation
                if g == first.generation:
                    same_gen.append(s)
                elif g > first.generation:
                    obsolete = True
                    break
            if obsolete:
                continue
            if len(same_gen) != first.resource_slice_count:
                pool = Pool(*key)
                pool.incomplete = True
                normal.append(pool)
                continue
            pool = _build_pool(key, group, same_gen)
        (with_binding if pool.has_binding_conditions else normal).append(pool)
    normal.sort(key=lambda p: (p.driver.encode(), p.name.encode()))
    with_binding.sort(key=lambda p: (p.driver.encode(), p.name.encode()))
    return normal + with_binding


def _build_pool(key: tuple[str, str], group: list[Any], all_same_gen: list[Any] | None) -> Pool:
    pool = Pool(*key)
    group = sorted(group, key=lambda s: _slice_name(s).encode())
    counter_slices: list[Any] = []
    device_slices: list[Any] = []
    for s in group:
        (counter_slices if s.spec.shared_counters else device_slices).append(s)
    other: list[Any] = []
    if all_same_gen is not None and len(group) < len(all_same_gen):
        names = {_slice_name(s) for s in group}
        for s in all_same_gen:
            if _slice_name(s) in names:
                continue
            (counter_slices if s.spec.shared_counters else other).append(s)
    # Duplicate device names among the device slices that target the node.
    seen: set[str] = set()
    for s in device_slices:
        for d in s.spec.devices or ():
            if d.name in seen:
                return _invalid(pool, f"duplicate device name {d.name}")
            seen.add(d.name)
    counter_sets: dict[str, dict[str, Any]] = {}
    for s in counter_slices:
        for cs in s.spec.shared_counters or ():
            if cs.name in counter_sets:
                return _invalid(pool, f"duplicate counter set name {cs.name}")
            counter_sets[cs.name] = {n: to_num(c.value) for n, c in (cs.counters or {}).items()}
    for slices in (device_slices, other):
        for s in slices:
            for d in s.spec.devices or ():
                for c in d.consumes_counters or ():
                    cs = counter_sets.get(c.counter_set)
                    if cs is None:
                        return _invalid(pool, f"counter set {c.counter_set} not found")
                    for n in c.counters or {}:
                        if n not in cs:
                            return _invalid(pool, f"counter {n} not found in counter set {c.counter_set}")
    pool.device_slices = device_slices
    pool.other_slices = other
    pool.counter_sets = counter_sets
    pool.has_binding_conditions = any(
        d.binding_conditions is not None for s in device_slices for d in s.spec.devices or ())
    return pool


def _invalid(pool: Pool, reason: str) -> Pool:
    pool.invalid = True
    pool.invalid_reason = reason
    return pool
