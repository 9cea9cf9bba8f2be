"""What the HTML report shows, computed from a finished simulation (no HTML here, so it can be tested).

* the summary (nodes, pods by outcome, devices allocated of total, the seed);
* placements (pod → node, claim → devices) and evictions;
* pending pods grouped by kube-scheduler's message;
* a node × (cpu, memory, pods, DeviceClass) utilisation heat map: for a class, the node's devices that match
  every selector of the class and how many of them are allocated. Large clusters are folded: identical rows
  first, then nodes of one shape, then the remainder into one row, so the page stays readable;
* per pool: free devices, shared counters left, consumable capacity left on shared devices;
* fragmentation: free devices that draw on shared counters (MIG-style partitions) that no request of the
  input's pods could use — no requested class/selector matches them, or the counters they would consume are
  used up already.

The device matching and the fragmentation live in :mod:`~dralloc.simulator.report_devices`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING

from dralloc.allocator.numbers import to_num
from dralloc.api.quantity import Quantity
from dralloc.api.resource_v1 import ResourceClaim
from dralloc.cel import Selector
from dralloc.simulator.report_devices import (
    RequestShape,
    SliceMatcher,
    StrandedGroup,
    StrandedPartition,
    blocked_devices,
    compile_all,
    group_stranded,
    request_shapes,
    selector_expressions,
    stranded_partitions,
)
from dralloc.simulator.result import PodResult, SimulationResult

if TYPE_CHECKING:
    from dralloc.simulator.simulator import Scheduler

Number = int | Fraction
PENDING = ("unschedulable", "error")
PLACED = ("running", "scheduled")
RESOURCE_COLUMNS = ("cpu", "memory", "pods")
MAX_HEAT_ROWS = 60


# ---------------------------------------------------------------------------------------------- records
@dataclass(frozen=True)
class Summary:
    nodes: int
    pods: int
    running: int  # bound before the simulation
    scheduled: int  # placed by the simulation
    pending: int  # unschedulable or failed
    evicted: int
    other: int  # left to another scheduler, or finished
    devices_allocated: int
    devices_total: int
    seed: int


@dataclass(frozen=True)
class ClaimDevices:
    claim: str
    devices: tuple[str, ...]  # "driver/pool/device", or empty when the claim is not allocated


@dataclass(frozen=True)
class Placement:
    pod: str  # namespace/name
    node: str
    status: str  # running | scheduled
    claims: tuple[ClaimDevices, ...]


@dataclass(frozen=True)
class PendingGroup:
    message: str  # kube-scheduler's whole message, the group key
    reasons: str  # the filter part: what follows "0/N nodes are available: " up to the first ". "
    pods: tuple[str, ...]

    @property
    def count(self) -> int:
        return len(self.pods)


@dataclass(frozen=True)
class EvictedPod:
    pod: str
    node: str
    by: str


@dataclass(frozen=True)
class Usage:
    """``used`` of ``total`` in ``unit``: "milli" (cpu), "bytes", or "count" (pods, devices)."""

    used: Number
    total: Number
    unit: str = "count"
    blocked: int = 0  # devices: free, but a shared counter they need is used up

    @property
    def fraction(self) -> float:
        return float(self.used) / float(self.total) if self.total else 0.0

    def __add__(self, other: Usage) -> Usage:
        return Usage(self.used + other.used, self.total + other.total, self.unit, self.blocked + other.blocked)


@dataclass(frozen=True)
class HeatRow:
    label: str
    nodes: tuple[str, ...]  # the nodes the row stands for (one unless folded); empty for a network pool
    cells: tuple[Usage | None, ...]  # per column; None: the node has none of it


@dataclass(frozen=True)
class HeatMap:
    columns: tuple[str, ...]  # RESOURCE_COLUMNS, then DeviceClass names
    rows: tuple[HeatRow, ...]
    note: str  # how rows were folded, or ""


@dataclass(frozen=True)
class CounterLeft:
    counter_set: str
    counter: str
    total: str
    available: str


@dataclass(frozen=True)
class CapacityLeft:
    device: str
    capacity: str
    total: str
    available: str


@dataclass(frozen=True)
class PoolUsage:
    driver: str
    pool: str
    node: str | None
    allocated: int
    total: int
    free: tuple[str, ...]
    counters: tuple[CounterLeft, ...]
    capacity: tuple[CapacityLeft, ...]


@dataclass(frozen=True)
class PoolGroup:
    """Pools that look the same (the same devices free, the same counters and capacity left): the first
    stands for all, so a cluster of identical nodes is a few rows."""

    pool: PoolUsage
    pools: tuple[str, ...]


@dataclass(frozen=True)
class ReportData:
    title: str
    summary: Summary
    placements: tuple[Placement, ...]
    pending: tuple[PendingGroup, ...]
    evicted: tuple[EvictedPod, ...]
    heatmap: HeatMap
    pools: tuple[PoolUsage, ...]
    requests: tuple[RequestShape, ...]
    stranded: tuple[StrandedPartition, ...]
    warnings: tuple[str, ...]

    @property
    def pool_groups(self) -> list[PoolGroup]:
        return fold_pools(self.pools)

    @property
    def stranded_groups(self) -> list[StrandedGroup]:
        return group_stranded(self.stranded)


# ---------------------------------------------------------------------------------------------- building
def build_report_data(sched: Scheduler, result: SimulationResult, *, title: str = "dralloc simulation",
                      max_heat_rows: int = MAX_HEAT_ROWS) -> ReportData:
    snap = sched.snapshot
    matcher = SliceMatcher(snap.slices, snap.dra)
    class_selectors = {name: compile_all(selector_expressions(c.spec.selectors)) for name, c in sorted(snap.classes.items())}
    requests = request_shapes(result.pods, sched)
    blocked = blocked_devices(snap.slices, snap.dra.allocator.state)
    return ReportData(
        title=title,
        summary=summary(sched, result),
        placements=tuple(placements(result.pods)),
        pending=tuple(pending_groups(result.pods)),
        evicted=tuple(EvictedPod(f"{e.namespace}/{e.name}", e.node, e.by) for e in result.evicted),
        heatmap=heat_map(sched, class_selectors, matcher, blocked, max_rows=max_heat_rows),
        pools=tuple(pool_usage(sched, result)),
        requests=tuple(requests),
        stranded=tuple(stranded_partitions(sched, requests, class_selectors, matcher, blocked)),
        warnings=tuple(result.warnings),
    )


def summary(sched: Scheduler, result: SimulationResult) -> Summary:
    counts: dict[str, int] = {}
    for p in result.pods:
        counts[p.status] = counts.get(p.status, 0) + 1
    devices = result.utilization.get("devices", {})
    known = counts.get("running", 0) + counts.get("scheduled", 0) + counts.get("evicted", 0) + \
        sum(counts.get(s, 0) for s in PENDING)
    return Summary(
        nodes=len(sched.snapshot.nodes), pods=len(result.pods), running=counts.get("running", 0),
        scheduled=counts.get("scheduled", 0), pending=sum(counts.get(s, 0) for s in PENDING),
        evicted=counts.get("evicted", 0), other=len(result.pods) - known,
        devices_allocated=int(devices.get("allocated", 0)), devices_total=int(devices.get("total", 0)),
        seed=result.seed)


def _claim_devices(claim: ResourceClaim) -> ClaimDevices:
    alloc = claim.status.allocation if claim.status is not None else None
    results = alloc.devices.results or [] if alloc is not None and alloc.devices is not None else []
    return ClaimDevices(claim.metadata.name or "", tuple(f"{r.driver}/{r.pool}/{r.device}" for r in results))


def placements(pods: Iterable[PodResult]) -> list[Placement]:
    return [Placement(p.key, p.node or "", p.status, tuple(_claim_devices(c) for c in p.claims))
            for p in pods if p.status in PLACED and p.node]


def reasons_of(message: str) -> str:
    """The filter part of a FitError text: after "0/N nodes are available: ", before the first ". "."""
    head, sep, rest = message.partition(" nodes are available: ")
    if sep and head.startswith("0/"):
        message = rest
    return message.split(". ", 1)[0].rstrip(".")


def pending_groups(pods: Iterable[PodResult]) -> list[PendingGroup]:
    """Pending pods grouped by kube-scheduler's exact message; the largest group first, then by message."""
    groups: dict[str, list[str]] = {}
    for p in pods:
        if p.status in PENDING:
            groups.setdefault(p.message, []).append(p.key)
    ordered = sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0]))
    return [PendingGroup(msg, reasons_of(msg), tuple(keys)) for msg, keys in ordered]


# ---------------------------------------------------------------------------------------------- heat map
def heat_map(sched: Scheduler, class_selectors: dict[str, tuple[Selector, ...] | None], matcher: SliceMatcher,
             blocked: dict[str, str], *, max_rows: int = MAX_HEAT_ROWS) -> HeatMap:
    snap = sched.snapshot
    state = snap.dra.allocator.state
    names = list(class_selectors)
    sets = [class_selectors[n] for n in names]
    tag = "classes:" + "\0".join(names)
    # node (or network pool) -> class -> [allocated, total, blocked]
    per_owner: dict[str, list[list[int]]] = {}
    network: list[str] = []
    for s in snap.slices:
        spec = s.spec
        owner = spec.node_name or f"pool {spec.driver}/{spec.pool.name}"
        if not spec.node_name and owner not in per_owner:
            network.append(owner)
        counts = per_owner.setdefault(owner, [[0, 0, 0] for _ in names])
        prefix = f"{spec.driver}/{spec.pool.name}/"
        for device, row in zip(spec.devices or (), matcher.matches(s, tag, sets)):
            if not any(row):
                continue
            used = state.is_allocated(prefix + device.name)
            stuck = not used and prefix + device.name in blocked
            for i, hit in enumerate(row):
                if hit:
                    counts[i][1] += 1
                    counts[i][0] += int(used)
                    counts[i][2] += int(stuck)
    shown = [i for i, n in enumerate(names) if any(c[i][1] for c in per_owner.values())]
    columns = RESOURCE_COLUMNS + tuple(names[i] for i in shown)
    rows: list[HeatRow] = []
    for n in snap.nodes:
        cells: list[Usage | None] = [
            _usage(n.requested.get("cpu", 0), n.allocatable.get("cpu", 0), "milli"),
            _usage(n.requested.get("memory", 0), n.allocatable.get("memory", 0), "bytes"),
            _usage(len(n.pods), n.allocatable.get("pods", 0), "count"),
        ]
        found = per_owner.get(n.name)
        cells += [_usage(found[i][0], found[i][1], "count", found[i][2]) if found else None for i in shown]
        rows.append(HeatRow(n.name, (n.name,), tuple(cells)))
    folded, note = fold_rows(rows, max_rows)
    for owner in sorted(network):
        counts = per_owner[owner]
        pool_cells = tuple(_usage(counts[i][0], counts[i][1], "count", counts[i][2]) for i in shown)
        folded.append(HeatRow(owner, (), (None,) * len(RESOURCE_COLUMNS) + pool_cells))
    return HeatMap(columns, tuple(folded), note)


def _usage(used: Number, total: Number, unit: str, blocked: int = 0) -> Usage | None:
    return Usage(used, total, unit, blocked) if total else None


def _sum_cells(rows: Sequence[HeatRow]) -> tuple[Usage | None, ...]:
    out: list[Usage | None] = list(rows[0].cells)
    for r in rows[1:]:
        for i, c in enumerate(r.cells):
            if c is not None:
                prev = out[i]
                out[i] = c if prev is None else prev + c
    return tuple(out)


def _group(rows: Sequence[HeatRow], key_of: object) -> list[list[HeatRow]]:
    groups: dict[object, list[HeatRow]] = {}
    for r in rows:
        groups.setdefault(key_of(r), []).append(r)  # type: ignore[operator]
    return list(groups.values())  # in order of first appearance


def _label(rows: Sequence[HeatRow], what: str) -> str:
    nodes = [n for r in rows for n in r.nodes]
    if len(nodes) == 1:
        return nodes[0]
    return f"{len(nodes)} {what} ({nodes[0]}, …)" if len(nodes) > 2 else f"2 {what} ({nodes[0]}, {nodes[1]})"


def fold_rows(rows: list[HeatRow], max_rows: int) -> tuple[list[HeatRow], str]:
    """Keep at most ``max_rows`` rows: merge nodes with identical cells, then nodes of one shape (the same
    totals in every column, usage summed), then fold what is left over into one last row."""
    if len(rows) <= max_rows:
        return rows, ""
    groups = _group(rows, lambda r: r.cells)
    if len(groups) <= max_rows:
        note = f"{len(rows)} nodes: nodes with identical usage share a row, which shows one node's figures"
        return [HeatRow(_label(g, "identical nodes, each"), tuple(n for r in g for n in r.nodes), g[0].cells)
                for g in groups], note
    groups = _group(rows, lambda r: tuple(c.total if c is not None else None for c in r.cells))
    note = f"{len(rows)} nodes: one row per node shape (the same allocatable and devices), usage summed"
    out = [HeatRow(_label(g, "nodes of this shape"), tuple(n for r in g for n in r.nodes), _sum_cells(g))
           for g in groups]
    if len(out) > max_rows:
        rest = out[max_rows - 1:]
        out = out[:max_rows - 1]
        nodes = tuple(n for r in rest for n in r.nodes)
        out.append(HeatRow(f"{len(nodes)} other nodes", nodes, _sum_cells(rest)))
        note += f"; the last row sums the {len(nodes)} nodes of the {len(rest)} shapes not shown"
    return out, note


# ---------------------------------------------------------------------------------------------- pools
def _fmt(value: Number, like: Quantity) -> str:
    return str(Quantity.from_fraction(value, like.format))


def pool_usage(sched: Scheduler, result: SimulationResult) -> list[PoolUsage]:
    """Per pool: devices allocated/total, the free ones, shared counters left and consumable capacity left
    on devices that several claims share."""
    snap = sched.snapshot
    consumed = snap.dra.allocator.state.aggregated_capacity
    capacity: dict[tuple[str, str], list[CapacityLeft]] = {}
    for s in snap.slices:
        spec = s.spec
        for d in spec.devices or ():
            if not d.allow_multiple_allocations or not d.capacity:
                continue
            used = consumed.get(f"{spec.driver}/{spec.pool.name}/{d.name}", {})
            for cname, cap in sorted(d.capacity.items()):
                total = to_num(cap.value)
                capacity.setdefault((spec.driver, spec.pool.name), []).append(
                    CapacityLeft(d.name, cname, str(cap.value), _fmt(total - used.get(cname, 0), cap.value)))
    out = []
    for p in result.utilization.get("pools", []):
        out.append(PoolUsage(
            driver=p["driver"], pool=p["pool"], node=p["node"], allocated=p["devices"]["allocated"],
            total=p["devices"]["total"], free=tuple(p["free"]),
            counters=tuple(CounterLeft(c["counterSet"], c["counter"], c["total"], c["available"])
                           for c in p["counters"]),
            capacity=tuple(capacity.get((p["driver"], p["pool"]), ()))))
    return out


def fold_pools(pools: Iterable[PoolUsage]) -> list[PoolGroup]:
    groups: dict[object, list[PoolUsage]] = {}
    for p in pools:
        key = (p.driver, p.node is None, p.allocated, p.total, p.free, p.counters, p.capacity)
        groups.setdefault(key, []).append(p)
    return [PoolGroup(g[0], tuple(p.pool for p in g)) for g in groups.values()]
