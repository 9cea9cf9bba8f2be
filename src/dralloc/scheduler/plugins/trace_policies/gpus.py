"""What the GPU policies read: the pod's GPU demand and each node's GPUs (milli-GPU left per device).

A GPU is a device with the consumable capacity ``milli`` (1000 = the whole GPU) and a string attribute
``model``, as ``dralloc generate trace`` publishes them; devices without that capacity are not GPUs to these
policies. A pod's demand comes from its pending claims: the devices its ExactCount requests ask for and the
``milli`` each consumes (a request that names no capacity takes whole GPUs).
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from dralloc.allocator.numbers import to_num
from dralloc.api.resource_v1 import ResourceClaim
from dralloc.scheduler.framework import Cycle, Plugin
from dralloc.scheduler.nodeinfo import NodeInfo
from dralloc.scheduler.plugins.dynamic_resources import NAME as DRA
from dralloc.scheduler.plugins.dynamic_resources import DraCycle
from dralloc.scheduler.podinfo import PodInfo

if TYPE_CHECKING:
    from dralloc.scheduler.snapshot import ClusterSnapshot

CAPACITY = "milli"
MODEL = "model"
WHOLE = 1000
CPU_MAX = 128_000  # the paper's normalisers: the largest node's milli-CPU and milli-GPU
GPU_MAX = 8_000
DEMAND_KEY = "trace-policies/demand"


@dataclass(frozen=True, slots=True)
class GpuDemand:
    """A pod's demand: milli-CPU, GPU count k and milli per GPU u (u = 1000: whole GPUs)."""

    cpu: int
    count: int
    milli: int

    @property
    def total(self) -> int:
        return self.count * self.milli

    @property
    def shares(self) -> bool:
        """One GPU, part of it."""
        return self.count == 1 and self.milli < WHOLE


@dataclass(frozen=True, slots=True)
class NodeGpus:
    """One node's GPUs: model ("" when mixed or none), milli left per GPU in device order, CPU left,
    and each GPU's (driver, pool, device) for the device-ordering hook."""

    model: str
    free: tuple[int, ...]
    cpu_left: int
    devices: tuple[tuple[str, str, str], ...]

    @property
    def idle(self) -> int:
        return sum(self.free)


def claims_demand(claims: list[ResourceClaim], cpu: int) -> GpuDemand:
    """The GPU demand of a pod with ``cpu`` milli-CPU and these claims."""
    count, milli = 0, 0
    for claim in claims:
        for request in claim.spec.devices.requests or () if claim.spec.devices is not None else ():
            exactly = request.exactly
            if exactly is None:
                continue
            count += exactly.count if exactly.count is not None else 1
            wanted = (exactly.capacity.requests or {}).get(CAPACITY) if exactly.capacity is not None else None
            milli = max(milli, int(to_num(wanted)) if wanted is not None else WHOLE)
    return GpuDemand(cpu, count, milli if count else 0)


def demand(cycle: Cycle) -> GpuDemand:
    """The pod's GPU demand: what its pending claims ask for (computed once per cycle)."""
    found: GpuDemand | None = cycle.data.get(DEMAND_KEY)
    if found is None:
        st: DraCycle | None = cycle.data.get(DRA)
        found = claims_demand(st.to_allocate if st is not None else [], cycle.pod.request.get("cpu", 0))
        cycle.data[DEMAND_KEY] = found
    return found


def placed_demand(snapshot: ClusterSnapshot, pod: PodInfo) -> GpuDemand:
    """The GPU demand of a pod already on a node: what its claims ask for."""
    placed = _layout(snapshot).placed
    found = placed.get(pod)
    if found is None:
        ns = pod.namespace
        claims = []
        for pc in pod.pod.spec.resource_claims or ():
            claim = snapshot.claims.get((ns, pc.resource_claim_name or ""))
            if claim is not None:
                claims.append(claim)
        found = placed[pod] = claims_demand(claims, pod.request.get("cpu", 0))
    return found


class _Layout:
    """Per snapshot: each node's GPUs (device ids and capacity) from its node-local slices, each node's GPUs
    as last computed, and the demand of the pods placed so far."""

    def __init__(self, snapshot: ClusterSnapshot) -> None:
        self.devices: dict[str, list[tuple[str, str, str, str, int]]] = {}
        self.models: dict[str, str] = {}
        for s in snapshot.slices:
            node = s.spec.node_name
            if not node:
                continue
            for d in s.spec.devices or ():
                cap = (d.capacity or {}).get(CAPACITY)
                if cap is None:
                    continue
                attr = (d.attributes or {}).get(MODEL)
                model = attr.string if attr is not None and attr.string is not None else ""
                self.devices.setdefault(node, []).append(
                    (s.spec.driver, s.spec.pool.name, d.name, f"{s.spec.driver}/{s.spec.pool.name}/{d.name}",
                     int(to_num(cap.value))))
                known = self.models.setdefault(node, model)
                if known != model:
                    self.models[node] = ""
        self.cache: dict[str, tuple[object, int, NodeGpus]] = {}
        # (by the PodInfo: a pod's claims stay the same while it is placed; a new PodInfo is a new placement)
        self.placed: weakref.WeakKeyDictionary[PodInfo, GpuDemand] = weakref.WeakKeyDictionary()


_LAYOUT_KEY = "trace_policies.gpus"


def _layout(snap: ClusterSnapshot) -> _Layout:
    layout = snap.plugin_state.get(_LAYOUT_KEY)
    if not isinstance(layout, _Layout):
        layout = snap.plugin_state[_LAYOUT_KEY] = _Layout(snap)
    return layout


def node_gpus(cycle: Cycle, node: NodeInfo) -> NodeGpus:
    """The node's GPUs now (cached while its devices' allocations and its requests are unchanged)."""
    return gpus_of(cycle.snapshot, node)


def gpus_of(snap: ClusterSnapshot, node: NodeInfo) -> NodeGpus:
    """:func:`node_gpus` outside a scheduling cycle."""
    layout = _layout(snap)
    sid = snap.dra.state_id(node.name)
    hit = layout.cache.get(node.name)
    if hit is not None and hit[0] is sid and hit[1] == node.generation:
        return hit[2]
    state = snap.dra.allocator.state
    consumed, exclusive = state.aggregated_capacity, state.exclusive
    free = []
    refs = []
    for driver, pool, name, did, value in layout.devices.get(node.name, ()):
        left = 0 if did in exclusive else value - int(consumed.get(did, {}).get(CAPACITY, 0))
        free.append(left)
        refs.append((driver, pool, name))
    gpus = NodeGpus(layout.models.get(node.name, ""), tuple(free),
                    node.allocatable.get("cpu", 0) - node.requested.get("cpu", 0), tuple(refs))
    layout.cache[node.name] = (sid, node.generation, gpus)
    return gpus


def pick_gpus(free: tuple[int, ...], want: GpuDemand) -> list[int]:
    """The GPU indices the paper's "best" choice takes: for a share, the fitting GPU with the least left
    (lowest index on ties); for whole GPUs, the lowest-index free ones. [] when they do not fit."""
    if want.shares:
        best = -1
        for i, g in enumerate(free):
            if g >= want.milli and (best < 0 or g < free[best]):
                best = i
        return [best] if best >= 0 else []
    picked = [i for i, g in enumerate(free) if g >= WHOLE][: want.count]
    return picked if len(picked) == want.count else []


def order_key(gpus: NodeGpus, chosen: list[int]) -> Callable[[str, str, str], Any]:
    """A device order putting ``chosen`` first (in that order), the rest after in upstream's order."""
    rank = {gpus.devices[i]: r for r, i in enumerate(chosen)}
    rest = len(chosen)
    return lambda driver, pool, device: rank.get((driver, pool, device), rest)


class GpuPolicy(Plugin):
    """A GPU policy: a score plugin that also chooses which GPUs of the chosen node serve the pod.

    Upstream DRA scores nodes only and takes the first fitting devices in slice order; these policies go
    beyond it through the device-ordering hook. Subclasses override ``score`` and, to choose GPUs other
    than the paper's "best" rule, ``choose``."""

    weight = 1
    has_score = True

    def choose(self, cycle: Cycle, gpus: NodeGpus, want: GpuDemand) -> list[int]:
        return pick_gpus(gpus.free, want)

    def device_order(self, cycle: Cycle, node: NodeInfo) -> Callable[[str, str, str], Any] | None:
        want = demand(cycle)
        if not want.count:
            return None
        gpus = node_gpus(cycle, node)
        chosen = self.choose(cycle, gpus, want)
        return order_key(gpus, chosen) if chosen else None
