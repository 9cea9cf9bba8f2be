"""Replay a workload through the scheduling framework, pod by pod, in the FGD paper's protocol.

Each pod arrives once, in :mod:`dralloc.trace.protocol`'s order; the framework (the default profile's
filters, the policy's score plugins, DynamicResources allocating its claims) places it or finds no node;
a pod without a node is dropped (never retried) but its GPUs count as arrived; nothing departs.

After every arrival one row is recorded: arrived milli-GPU A (all pods so far), allocated milli-GPU U and
the cluster's fragmentation ΣF (FGD's measure, for the workload's typical pods). The curve the paper plots
is U against A, both as % of the cluster's milli-GPU, discretised as its scripts do: rows grouped by
round(A %) (half to even), the mean of round(U %, 2) per group, 2 decimals; a column with no rows takes
the rows within 1 point.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from dralloc.scheduler.attributes import referenced_attributes
from dralloc.scheduler.features import FeatureGates
from dralloc.scheduler.nodeinfo import NodeInfo
from dralloc.scheduler.plugins.trace_policies.fragmentation import Fragmentation
from dralloc.scheduler.plugins.trace_policies.gpus import gpus_of
from dralloc.scheduler.plugins.trace_policies.registry import Profile
from dralloc.scheduler.podinfo import PodInfo
from dralloc.scheduler.schedule_one import Framework
from dralloc.scheduler.snapshot import ClusterSnapshot
from dralloc.trace.protocol import Demand, arrivals, node_ranks
from dralloc.trace.workload import Workload, WorkPod

Curve = list[tuple[int, float]]


@dataclass
class EventSeries:
    """An event-driven replay over time: one entry per event time (seconds of the trace), and the queue
    wait of the pods that were scheduled."""

    times: list[int] = field(default_factory=list)
    allocated: list[float] = field(default_factory=list)  # GPUs allocated, % of the cluster's milli-GPU
    fragmentation: list[float] = field(default_factory=list)  # ΣF, % of the cluster's milli-GPU
    waiting: list[int] = field(default_factory=list)  # pods in the queue after the event
    waits: list[int] = field(default_factory=list)  # per scheduled pod: seconds from arrival to its node
    never_scheduled: int = 0  # pods that left (or the trace ended) while they waited

    @property
    def mean_wait(self) -> float:
        return sum(self.waits) / len(self.waits) if self.waits else 0.0

    @property
    def p99_wait(self) -> float:
        """The nearest-rank 99th percentile of the waits."""
        if not self.waits:
            return 0.0
        ordered = sorted(self.waits)
        return float(ordered[max(0, -(-99 * len(ordered) // 100) - 1)])

    def to_json(self) -> dict[str, object]:
        return {"times": self.times, "allocated": self.allocated, "fragmentation": self.fragmentation,
                "waiting": self.waiting, "meanWaitSeconds": round(self.mean_wait, 3),
                "p99WaitSeconds": self.p99_wait, "neverScheduled": self.never_scheduled}


@dataclass
class ReplayResult:
    policy: str
    seed: int
    total_gpus: int
    pods: int  # arrivals
    failed_pods: int
    seconds: float
    curve: Curve = field(default_factory=list)  # (arrived %, allocated %)
    frag_curve: Curve = field(default_factory=list)  # (arrived %, fragmentation % of capacity)
    rows: list[tuple[float, float, float]] = field(default_factory=list)  # per arrival: A %, U %, ΣF %
    events: EventSeries | None = None  # the event-driven replay's series (``--events``)

    def at(self, arrived: int, curve: Curve | None = None) -> float | None:
        return next((y for x, y in (curve or self.curve) if x == arrived), None)

    def to_json(self) -> dict[str, object]:
        return {"kind": "TraceReplayResult", "policy": self.policy, "seed": self.seed, "totalGpus": self.total_gpus,
                "pods": self.pods, "curve": [[x, y] for x, y in self.curve], "failedPods": self.failed_pods,
                "seconds": round(self.seconds, 3),
                "fragmentation": [[x, y] for x, y in self.frag_curve],
                **({"events": self.events.to_json()} if self.events is not None else {})}


def discretise(points: list[tuple[float, float]]) -> Curve:
    """The artifact's discretisation of (arrived %, value %) rows: one column per whole arrived %."""
    if not points:
        return []
    rows = [(round(a), round(v, 2), a) for a, v in points]
    by_x: dict[int, list[float]] = {}
    for x, v, _ in rows:
        by_x.setdefault(x, []).append(v)
    out: Curve = []
    for x in range(0, max(by_x) + 1):
        values = by_x.get(x)
        if values is None:
            values = [v for _, v, a in rows if abs(a - x) <= 1]
        if values:
            out.append((x, round(sum(values) / len(values), 2)))
    return out


@dataclass
class Setup:
    """What a replay runs on: the arrivals in protocol order, the snapshot, the framework over it and the
    cluster's fragmentation kept node by node."""

    pods: list[WorkPod]
    snapshot: ClusterSnapshot
    framework: Framework
    frag: FragmentationTracker


class FragmentationTracker:
    """ΣF over the cluster, updated one node at a time (only a node whose pods changed is measured again)."""

    def __init__(self, snapshot: ClusterSnapshot, frag: Fragmentation) -> None:
        self.snapshot, self.frag = snapshot, frag
        self.per_node = {n.name: self._of(n) for n in snapshot.nodes}
        self.total = sum(self.per_node.values())

    def _of(self, node: NodeInfo) -> float:
        g = gpus_of(self.snapshot, node)
        return self.frag.of(g.model, g.cpu_left, g.free)

    def update(self, node: NodeInfo) -> None:
        now = self._of(node)
        self.total += now - self.per_node[node.name]
        self.per_node[node.name] = now


def prepare(workload: Workload, profile: Profile, *, seed: int, inflate: float, memo: bool = True) -> Setup:
    rng = random.Random(seed)
    sources = workload.pods
    order = arrivals([Demand(p.pod.metadata.name or "", p.demand.milli, p.demand.total) for p in sources],
                     workload.total_gpus * 1000, inflate, rng)
    ranks = node_ranks([n.metadata.name or "" for n in workload.nodes], rng)
    pods = [sources[a.source] if a.name == sources[a.source].pod.metadata.name else sources[a.source].copy(a.name)
            for a in order]
    claims = [c for p in pods for c in p.claims]
    attributes = referenced_attributes(workload.classes, [c.spec for c in claims])
    snapshot = ClusterSnapshot(list(workload.nodes), list(workload.slices), list(workload.classes), claims, [],
                               FeatureGates(), attributes)
    tie_break: Callable[[list[NodeInfo]], NodeInfo] | None = None
    if not profile.uniform_ties:
        def tie_break(nodes: list[NodeInfo]) -> NodeInfo:
            return min(nodes, key=lambda n: ranks[n.name])
    framework = Framework(snapshot, seed=seed, percentage_of_nodes_to_score=100, plugins=profile.plugins,
                          tie_break=tie_break, memo=memo)
    return Setup(pods, snapshot, framework, FragmentationTracker(snapshot, Fragmentation(workload.typical())))


def replay(workload: Workload, profile: Profile, *, seed: int, inflate: float, memo: bool = True,
           progress: Callable[[int, int], None] | None = None) -> ReplayResult:
    """``memo``: keep verdicts and scores across pods of one shape (same outcome; off to compare)."""
    started = time.perf_counter()
    gpus = workload.total_gpus
    capacity = gpus * 1000
    setup = prepare(workload, profile, seed=seed, inflate=inflate, memo=memo)
    pods, framework, frag = setup.pods, setup.framework, setup.frag
    arrived = allocated = failed = 0
    rows: list[tuple[float, float, float]] = []
    cache: dict[bytes, tuple[dict[str, int], int, int]] = {}
    for i, work in enumerate(pods):
        info = PodInfo.build(work.pod, i, 0, cache)
        arrived += work.demand.total
        attempt = framework.attempt(info)
        if attempt.node is None:
            failed += 1
        else:
            allocated += work.demand.total
            frag.update(attempt.node)
        rows.append((arrived * 100 / capacity, allocated * 100 / capacity, frag.total * 100 / capacity))
        if progress is not None:
            progress(i + 1, len(pods))
    curve = discretise([(a, u) for a, u, _ in rows])
    frag_curve = discretise([(a, f) for a, _, f in rows])
    return ReplayResult(profile.name, seed, gpus, len(pods), failed, time.perf_counter() - started, curve,
                        frag_curve, rows)
