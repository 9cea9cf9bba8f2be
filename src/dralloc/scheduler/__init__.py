"""The scheduler and what-if simulator: kube-scheduler's default profile over a cluster snapshot.

    from dralloc.scheduler import Scheduler
    sched = Scheduler.from_objects(objects, seed=0)
    result = sched.schedule()     # .pods, .claims, .unschedulable, .utilization, .to_dict()

The shape is kube-scheduler's: a queue (:mod:`~dralloc.scheduler.queue`), a cycle
(:mod:`~dralloc.scheduler.schedule_one`) and one module per plugin (:mod:`dralloc.scheduler.plugins`).
"""

from dralloc.scheduler.features import FeatureGates
from dralloc.scheduler.result import Eviction, PodResult, SimulationResult
from dralloc.scheduler.simulation import Scheduler

__all__ = ["Eviction", "FeatureGates", "PodResult", "Scheduler", "SimulationResult"]
