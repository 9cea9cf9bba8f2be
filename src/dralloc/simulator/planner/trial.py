"""One trial of a plan: the input cluster with some template nodes added or some nodes removed, simulated
from scratch with the user's settings, and what came of it."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from dralloc.api.core_v1 import Pod
from dralloc.scheduler.config import SchedulerConfig
from dralloc.scheduler.features import FeatureGates
from dralloc.scheduler.podinfo import PodInfo
from dralloc.scheduler.snapshot import ClusterSnapshot
from dralloc.simulator.planner.templates import NodeTemplate
from dralloc.simulator.result import PodResult, SimulationResult

PLACED = frozenset({"scheduled", "running"})


class SimulatorLike(Protocol):
    """What the planner uses of a simulator (``dralloc.Scheduler``)."""

    results: dict[str, PodResult]
    infos: dict[str, PodInfo]
    snapshot: ClusterSnapshot

    def schedule(self, progress: Any = None) -> SimulationResult: ...

    def schedule_pod(self, pod: Pod) -> PodResult: ...

    def remove_nodes(self, names: list[str]) -> list[str]: ...


class SimulatorClass(Protocol):
    def from_objects(self, objects: Iterable[Any], *, seed: int = 0, feature_gates: FeatureGates | None = None,
                     percentage_of_nodes_to_score: int = 0, victims_terminate_at: str | None = None,
                     config: SchedulerConfig | None = None) -> Any: ...


@dataclass(frozen=True)
class PlanSettings:
    """The simulator every trial runs (``dralloc.Scheduler``, passed in so that the planner, which the
    simulator offers as methods, does not import it back) and what trials share with ``dralloc simulate``:
    the seed, feature gates and node sampling."""

    simulator: SimulatorClass
    seed: int = 0
    feature_gates: FeatureGates | None = None
    percentage_of_nodes_to_score: int = 0
    config: SchedulerConfig | None = None  # a KubeSchedulerConfiguration (``--config``)

    def build(self, objects: list[Any]) -> SimulatorLike:
        built: SimulatorLike = self.simulator.from_objects(
            objects, seed=self.seed, feature_gates=self.feature_gates,
            percentage_of_nodes_to_score=self.percentage_of_nodes_to_score, config=self.config)
        return built


@dataclass
class Trial:
    """A finished simulation of one candidate cluster."""

    scheduler: SimulatorLike
    result: SimulationResult
    added: dict[str, list[str]] = field(default_factory=dict)  # template name → names of its clones

    def placed(self, key: str) -> bool:
        return self.scheduler.results[key].status in PLACED

    def left_pending(self, keys: Iterable[str]) -> list[str]:
        return [k for k in keys if not self.placed(k)]

    @property
    def evictions(self) -> int:
        return len(self.result.evicted)


def clone_names(template: NodeTemplate, count: int, taken: set[str]) -> list[str]:
    """``<template>-1``, ``<template>-2``, ... skipping names the cluster already has."""
    names: list[str] = []
    i = 0
    while len(names) < count:
        i += 1
        name = f"{template.name}-{i}"
        if name not in taken:
            names.append(name)
    return names


def run_trial(objects: list[Any], settings: PlanSettings, *, add: Mapping[NodeTemplate, int] | None = None,
              remove: Iterable[str] = ()) -> Trial:
    """Simulate ``objects`` with ``add[template]`` clones of each template and without the nodes ``remove``
    (their pods pending again, their claims deallocated, as ``dralloc simulate --remove-node``)."""
    extra: list[Any] = []
    added: dict[str, list[str]] = {}
    if add:
        from dralloc.api.core_v1 import Node

        taken = {o.metadata.name or "" for o in objects if isinstance(o, Node)}
        for template in sorted(add, key=lambda t: t.name):
            names = clone_names(template, add[template], taken)
            taken.update(names)
            added[template.name] = names
            for name in names:
                node, slices = template.clone(name)
                extra.append(node)
                extra.extend(slices)
    sched = settings.build(list(objects) + extra)
    removed = list(remove)
    if removed:
        sched.remove_nodes(removed)
    return Trial(sched, sched.schedule(), added)
