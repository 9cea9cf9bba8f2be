"""Fixtures for scheduler tests."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from sched_builders import load

from dralloc.scheduler import FeatureGates, Scheduler, SimulationResult

Simulate = Callable[..., tuple[Scheduler, SimulationResult]]


@pytest.fixture
def simulate() -> Simulate:
    def run(*docs: str, gates: str = "", seed: int = 0, percentage: int = 0) -> tuple[Scheduler, SimulationResult]:
        sched = Scheduler.from_objects(load(*docs), seed=seed, feature_gates=FeatureGates.parse(gates),
                                       percentage_of_nodes_to_score=percentage)
        return sched, sched.schedule()
    return run
