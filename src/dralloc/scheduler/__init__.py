"""kube-scheduler's framework over a cluster snapshot: extension points and statuses
(:mod:`~dralloc.scheduler.framework`), the plugins (:mod:`dralloc.scheduler.plugins`, one package each),
profiles (:mod:`~dralloc.scheduler.profile`), the queue (:mod:`~dralloc.scheduler.queue`), the cycle
(:mod:`~dralloc.scheduler.schedule_one`, run by :mod:`~dralloc.scheduler.runtime`) and the snapshot it
reads (:mod:`~dralloc.scheduler.snapshot`).

The simulator on top of it lives in :mod:`dralloc.simulator`; its ``Scheduler`` (and the result types) are
still importable from here:

    from dralloc.scheduler import Scheduler
    sched = Scheduler.from_objects(objects, seed=0)
    result = sched.schedule()     # .pods, .claims, .unschedulable, .utilization, .to_dict()
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from dralloc.scheduler.features import FeatureGates

if TYPE_CHECKING:  # pragma: no cover
    from dralloc.simulator.result import Eviction, PodResult, SimulationResult
    from dralloc.simulator.simulator import Scheduler

__all__ = ["Eviction", "FeatureGates", "PodResult", "Scheduler", "SimulationResult"]

# The simulator's names, kept importable from here for existing callers; resolved on first use so that the
# framework never loads the simulator built on it.
_FROM_SIMULATOR = {
    "Eviction": "dralloc.simulator.result",
    "PodResult": "dralloc.simulator.result",
    "SimulationResult": "dralloc.simulator.result",
    "Scheduler": "dralloc.simulator.simulator",
}


def __getattr__(name: str) -> Any:
    where = _FROM_SIMULATOR.get(name)
    if where is None:
        raise AttributeError(f"module 'dralloc.scheduler' has no attribute {name!r}")
    return getattr(importlib.import_module(where), name)
