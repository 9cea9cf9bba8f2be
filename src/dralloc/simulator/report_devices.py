"""The device side of the report: which devices match which DeviceClass or request, and fragmentation.

* :class:`SliceMatcher` evaluates CEL selector sets on the devices of a slice, once per distinct device list;
* :func:`request_shapes` collects what the input's pods ask for (a class and the request's selectors);
* :func:`blocked_devices` finds free devices that a used-up shared counter blocks;
* :func:`stranded_partitions` lists free counter-consuming devices (MIG-style partitions) that no request can
  use, and :func:`group_stranded` folds the same ones on many nodes into one group.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING

from dralloc.allocator.numbers import to_num
from dralloc.allocator.state import AllocatedState
from dralloc.api.codec import encode_json
from dralloc.api.resource_v1 import Device, DeviceSelector, ResourceClaimSpec, ResourceSlice
from dralloc.cel import CELCompileError, CELRuntimeError, Selector, compile_selector, device_activation
from dralloc.scheduler.plugins.dynamic_resources.manager import DraState
from dralloc.simulator.result import PodResult

if TYPE_CHECKING:
    from dralloc.simulator.simulator import Scheduler

Number = int | Fraction


# ---------------------------------------------------------------------------------------------- records
@dataclass(frozen=True)
class RequestShape:
    """What a request asks for, as far as which devices it can use: a class and its own selectors."""

    device_class: str
    selectors: tuple[str, ...]

    def describe(self) -> str:
        return self.device_class + (" where " + " && ".join(self.selectors) if self.selectors else "")


@dataclass(frozen=True)
class StrandedPartition:
    driver: str
    pool: str
    node: str | None
    device: str
    reason: str  # "no request" | "counters used up"
    detail: str  # for counters: the counter set and counters that are short


@dataclass(frozen=True)
class StrandedGroup:
    """The same stranded devices (by name) in several pools."""

    reason: str
    driver: str
    counter_set: str  # for "counters used up": the counter set that is short; else ""
    devices: tuple[str, ...]
    places: tuple[str, ...]  # node names, or pool names for pools that are not node-local


# ---------------------------------------------------------------------------------------------- selectors
def selector_expressions(selectors: Sequence[DeviceSelector] | None) -> tuple[str, ...]:
    return tuple(s.cel.expression for s in selectors or () if s.cel is not None)


def compile_all(expressions: Iterable[str]) -> tuple[Selector, ...] | None:
    """The CEL selectors compiled; None when one does not compile (validation would have said so): then
    nothing matches."""
    try:
        return tuple(compile_selector(e) for e in expressions)
    except CELCompileError:
        return None


def _all_match(selectors: tuple[Selector, ...] | None, device: Device, driver: str) -> bool:
    if selectors is None:
        return False
    if not selectors:
        return True
    try:
        activation = device_activation(device, driver)  # once for all the selectors
        return all(s.matches(device, driver, activation) for s in selectors)
    except CELRuntimeError:
        return False  # upstream fails the allocation attempt; for the report the device is not usable


class SliceMatcher:
    """Which devices of a slice match which selector sets, computed once per distinct device list.

    Nodes that the DRA state puts in one class publish identical node-local slices up to the names of node,
    pool and slice: the k-th slice of each (pools by driver and name, slices by name — the order the class is
    built in) has the same devices, so (class, k) identifies the device list without reading it; the device
    names are compared as well. Any other slice is identified by its encoded devices."""

    def __init__(self, slices: Sequence[ResourceSlice], dra: DraState) -> None:
        self._memo: dict[tuple[object, ...], list[tuple[bool, ...]]] = {}
        self._keys: dict[int, tuple[object, ...]] = {}
        by_node: dict[str, list[ResourceSlice]] = {}
        for s in slices:
            if s.spec.node_name:
                by_node.setdefault(s.spec.node_name, []).append(s)
        for node, own in by_node.items():
            cls = dra.class_of(node)
            if cls == node:
                continue
            own.sort(key=lambda x: (x.spec.driver, x.spec.pool.name, x.metadata.name or ""))
            for k, x in enumerate(own):
                self._keys[id(x)] = ("class", cls, k, x.spec.driver, tuple(d.name for d in x.spec.devices or ()))

    def matches(self, s: ResourceSlice, tag: str,
                selector_sets: Sequence[tuple[Selector, ...] | None]) -> list[tuple[bool, ...]]:
        """For each device of the slice, whether it matches each of ``selector_sets`` (``tag`` names the
        sets, so different sets are memoised apart)."""
        body = self._keys.get(id(s))
        if body is None:
            body = self._keys[id(s)] = ("devices", s.spec.driver, encode_json(s.spec.devices))
        key = (*body, tag)
        hit = self._memo.get(key)
        if hit is None:
            driver = s.spec.driver
            hit = self._memo[key] = [tuple(_all_match(sel, d, driver) for sel in selector_sets)
                                     for d in s.spec.devices or ()]
        return hit


# ---------------------------------------------------------------------------------------------- fragmentation
def _spec_shapes(spec: ResourceClaimSpec | None) -> Iterable[RequestShape]:
    devices = spec.devices if spec is not None else None
    for r in (devices.requests or ()) if devices is not None else ():
        subs = [r.exactly] if r.exactly is not None else list(r.first_available or ())
        for sub in subs:
            if sub is None:
                continue
            yield RequestShape(sub.device_class_name, selector_expressions(sub.selectors))


def request_shapes(pods: Iterable[PodResult], sched: Scheduler) -> list[RequestShape]:
    """Every distinct request of the input's pods: through their claims (templates, named claims, claims
    already made) and the extended resources that DeviceClasses back."""
    snap = sched.snapshot
    found: dict[RequestShape, None] = {}
    for p in pods:
        ns = p.namespace
        for claim in p.claims:
            for shape in _spec_shapes(claim.spec):
                found[shape] = None
        for pc in p.pod.spec.resource_claims or ():
            spec = None
            if pc.resource_claim_template_name:
                template = sched.templates.get(ns, {}).get(pc.resource_claim_template_name)
                spec = template.spec.spec if template is not None else None
            elif pc.resource_claim_name:
                named = snap.claims.get((ns, pc.resource_claim_name))
                spec = named.spec if named is not None else None
            for shape in _spec_shapes(spec):
                found[shape] = None
        for c in list(p.pod.spec.init_containers or ()) + list(p.pod.spec.containers or ()):
            res = c.resources
            names = set((res.requests or {}) if res is not None else ()) | \
                set((res.limits or {}) if res is not None else ())
            for name in sorted(names):
                cls = snap.extended_mapping.get(name)
                if cls is not None:
                    found[RequestShape(cls, ())] = None
    return sorted(found, key=lambda r: (r.device_class, r.selectors))


def blocked_devices(slices: Sequence[ResourceSlice], state: AllocatedState) -> dict[str, str]:
    """Free devices that cannot be allocated because a shared counter they consume is short, by device ID,
    with the short "counter set/counter" names. Only pools where some device is allocated are looked at."""
    busy: set[tuple[str, str]] = set()
    for s in slices:
        spec = s.spec
        prefix = f"{spec.driver}/{spec.pool.name}/"
        if any(d.consumes_counters and state.is_allocated(prefix + d.name) for d in spec.devices or ()):
            busy.add((spec.driver, spec.pool.name))
    left: dict[tuple[str, str], dict[tuple[str, str], Number]] = {key: {} for key in busy}
    for s in slices:
        spec = s.spec
        pool = left.get((spec.driver, spec.pool.name))
        if pool is not None:
            for cs in spec.shared_counters or ():
                for name, counter in (cs.counters or {}).items():
                    pool[(cs.name, name)] = to_num(counter.value)
    free: list[tuple[str, Device, dict[tuple[str, str], Number]]] = []
    for s in slices:
        spec = s.spec
        pool = left.get((spec.driver, spec.pool.name))
        if pool is None:
            continue
        prefix = f"{spec.driver}/{spec.pool.name}/"
        for d in spec.devices or ():
            if not d.consumes_counters:
                continue
            if not state.is_allocated(prefix + d.name):
                free.append((prefix + d.name, d, pool))
                continue
            for c in d.consumes_counters:
                for name, counter in (c.counters or {}).items():
                    key = (c.counter_set, name)
                    if key in pool:
                        pool[key] -= to_num(counter.value)
    out = {}
    for device_id, d, pool in free:
        short = [f"{c.counter_set}/{name}" for c in d.consumes_counters or ()
                 for name, counter in sorted((c.counters or {}).items())
                 if (c.counter_set, name) in pool and pool[(c.counter_set, name)] < to_num(counter.value)]
        if short:
            out[device_id] = ", ".join(short)
    return out


def stranded_partitions(sched: Scheduler, requests: Sequence[RequestShape],
                        class_selectors: dict[str, tuple[Selector, ...] | None],
                        matcher: SliceMatcher, blocked: dict[str, str]) -> list[StrandedPartition]:
    """Free devices that draw on shared counters which no request of the input could take: none of the
    requested (class, selectors) matches them, or a counter they need is short."""
    snap = sched.snapshot
    state = snap.dra.allocator.state
    # A request matches a device when its class's selectors and its own all do.
    sets: list[tuple[Selector, ...] | None] = []
    for r in requests:
        cls = class_selectors.get(r.device_class)
        own = compile_all(r.selectors)
        sets.append(None if cls is None or own is None else cls + own)
    tag = "requests:" + "\0".join(r.describe() for r in requests)
    out = []
    for s in snap.slices:
        spec = s.spec
        rows = matcher.matches(s, tag, sets) if any(d.consumes_counters for d in spec.devices or ()) else []
        for device, row in zip(spec.devices or (), rows):
            device_id = f"{spec.driver}/{spec.pool.name}/{device.name}"
            if not device.consumes_counters or state.is_allocated(device_id):
                continue
            short = blocked.get(device_id)
            if short:
                out.append(StrandedPartition(spec.driver, spec.pool.name, spec.node_name or None, device.name,
                                             "counters used up", short))
            elif not any(row):
                out.append(StrandedPartition(spec.driver, spec.pool.name, spec.node_name or None, device.name,
                                             "no request", ""))
    return out


def group_stranded(stranded: Iterable[StrandedPartition]) -> list[StrandedGroup]:
    """Per pool and counter set the stranded devices, then pools with the same ones together."""
    per_place: dict[tuple[str, str, str, str, str], list[str]] = {}
    for s in stranded:
        counter_set = s.detail.split("/", 1)[0] if s.reason != "no request" else ""
        place = s.node or s.pool
        per_place.setdefault((s.reason, s.driver, counter_set, place, s.pool), []).append(s.device)
    groups: dict[tuple[str, str, str, tuple[str, ...]], list[str]] = {}
    for (reason, driver, counter_set, place, _), devices in per_place.items():
        groups.setdefault((reason, driver, counter_set, tuple(devices)), []).append(place)
    return [StrandedGroup(reason, driver, cs, devices, tuple(places))
            for (reason, driver, cs, devices), places in groups.items()]
