"""Timing a simulation: build, schedule, pods/s and peak memory (``dralloc bench schedule``)."""

from __future__ import annotations

import gc
import resource
import sys
import time
from dataclasses import dataclass
from typing import Any

from dralloc.simulator import perf
from dralloc.simulator.simulator import Scheduler

SCENARIOS = {
    "5000pods_500nodes": lambda scale: perf.claim_template(500 * scale, 10, 5000 * scale),
    "2000pods_100nodes": lambda scale: perf.claim_template(100 * scale, 20, 2000 * scale),
    "shared_5000pods_500nodes": lambda scale: perf.shared_claims(500 * scale, 2, 5000 * scale, 5),
    "steady_empty_500nodes": lambda scale: perf.steady_state(500 * scale, 10, "empty", 100),
    "steady_half_500nodes": lambda scale: perf.steady_state(500 * scale, 10, "half", 100),
    "steady_full_500nodes": lambda scale: perf.steady_state(500 * scale, 10, "full", 100),
    # 500 nodes x 8 H100 (152 devices per node); --scale 10 is the 5000-node cluster
    "h100_mig_500nodes": lambda scale: perf.h100_mig(500 * scale, 1000 * scale),
}


@dataclass
class Timing:
    scenario: str
    nodes: int
    pods: int
    build_s: float
    schedule_s: float
    scheduled: int
    unschedulable: int
    peak_rss_mib: float

    @property
    def pods_per_s(self) -> float:
        return (self.scheduled + self.unschedulable) / self.schedule_s if self.schedule_s else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {"scenario": self.scenario, "nodes": self.nodes, "pods": self.pods,
                "build_s": round(self.build_s, 3), "schedule_s": round(self.schedule_s, 3),
                "pods_per_s": round(self.pods_per_s, 1), "scheduled": self.scheduled,
                "unschedulable": self.unschedulable, "peak_rss_mib": round(self.peak_rss_mib, 1)}


def peak_rss_mib() -> float:
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return rss / (1024 * 1024) if sys.platform == "darwin" else rss / 1024


def run(name: str, objects: list[Any], seed: int = 0) -> Timing:
    """Build a scheduler from ``objects`` and schedule every pending pod, timing both."""
    gc.collect()
    t0 = time.perf_counter()
    sched = Scheduler.from_objects(objects, seed=seed)
    t1 = time.perf_counter()
    result = sched.schedule()
    t2 = time.perf_counter()
    pending = sum(1 for p in result.pods if p.status in ("scheduled", "unschedulable", "error"))
    nodes = len(sched.snapshot.nodes)
    return Timing(name, nodes, pending, t1 - t0, t2 - t1, len(result.scheduled), len(result.unschedulable),
                  peak_rss_mib())
