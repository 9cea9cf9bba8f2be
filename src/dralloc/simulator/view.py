"""What the what-if and explain helpers read and call of a running simulation, so that they need not import
the simulator that calls them."""

from __future__ import annotations

from typing import Protocol

from dralloc.api.core_v1 import Pod
from dralloc.scheduler.cache import SchedulerCache
from dralloc.scheduler.podinfo import PodInfo
from dralloc.scheduler.schedule_one import Framework
from dralloc.scheduler.snapshot import ClusterSnapshot
from dralloc.simulator.result import PodResult


class SimulationView(Protocol):
    snapshot: ClusterSnapshot
    cache: SchedulerCache
    framework: Framework
    results: dict[str, PodResult]
    infos: dict[str, PodInfo]
    pending: list[PodInfo]

    def schedule_pod(self, pod: Pod) -> PodResult: ...

    def release_claims(self, pod: Pod, *, pod_deleted: bool = True) -> None: ...
