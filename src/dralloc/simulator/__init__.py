"""The what-if simulator on top of :mod:`dralloc.scheduler`: a cluster dump and a batch of pods in,
kube-scheduler's placements, messages, evictions and utilisation out (``dralloc simulate``).

    from dralloc.simulator import Simulator
    sim = Simulator.from_objects(objects, seed=0)
    result = sim.schedule()     # .pods, .claims, .unschedulable, .utilization, .to_dict()

:mod:`~dralloc.simulator.simulator` (the run), :mod:`~dralloc.simulator.whatif` (added and removed nodes,
how many more copies fit), :mod:`~dralloc.simulator.explain`, :mod:`~dralloc.simulator.result`,
:mod:`~dralloc.simulator.loading` (input kinds), :mod:`~dralloc.simulator.generate` (generated clusters) and
the HTML report (:mod:`~dralloc.simulator.report`). The simulator uses only the framework's public points.
"""

from dralloc.simulator.result import Eviction, PodResult, SimulationResult
from dralloc.simulator.simulator import Scheduler, Simulator

__all__ = ["Eviction", "PodResult", "Scheduler", "SimulationResult", "Simulator"]
