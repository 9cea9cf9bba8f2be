"""Policies by name, as profiles: the default profile's filters with the policy as the only score plugin.

``default`` is kube-scheduler's default profile unchanged (its score plugins and upstream's device choice).
Every other policy keeps the default filters (NodeResourcesFit, DynamicResources, ...) with their scoring
switched off, so the policy alone ranks nodes, as in the FGD paper's experiments.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field

from dralloc.errors import InputError
from dralloc.scheduler.framework import Plugin, implements
from dralloc.scheduler.plugins.trace_policies.best_fit import BestFitScore
from dralloc.scheduler.plugins.trace_policies.dot_product import DotProductScore
from dralloc.scheduler.plugins.trace_policies.fgd import FgdScore
from dralloc.scheduler.plugins.trace_policies.fragmentation import PodClass
from dralloc.scheduler.plugins.trace_policies.gpu_clustering import GpuClusteringScore
from dralloc.scheduler.plugins.trace_policies.gpu_packing import GpuPackingScore
from dralloc.scheduler.plugins.trace_policies.most_allocated import MostAllocated
from dralloc.scheduler.plugins.trace_policies.random_score import RandomScore
from dralloc.scheduler.profile import default_plugins

POLICIES = ("default", "mostallocated", "random", "dotprod", "gpuclustering", "gpupacking", "bestfit", "fgd")
PAPER_POLICIES = ("random", "dotprod", "gpuclustering", "gpupacking", "bestfit", "fgd")


@dataclass
class Profile:
    """Plugins in order, and whether ties between top nodes are broken uniformly at random (upstream) or
    by a fixed node rank (the paper's simulator: the lowest rank wins)."""

    name: str
    plugins: list[Plugin] = field(default_factory=list)
    uniform_ties: bool = False


def default_filters() -> list[Plugin]:
    """The default profile's filter plugins, in order, with their scoring switched off, and its binder."""
    kept = [p for p in default_plugins() if p.has_filter]
    for plugin in kept:
        plugin.has_score = False
    return kept + [p for p in default_plugins() if implements(p, "bind")]


def score_plugin(name: str, *, seed: int, workload: tuple[PodClass, ...]) -> Plugin:
    """The score plugin of a paper policy (or ``mostallocated``)."""
    if name == "mostallocated":
        return MostAllocated()
    if name == "random":
        return RandomScore(seed)
    if name == "dotprod":
        return DotProductScore()
    if name == "gpuclustering":
        return GpuClusteringScore()
    if name == "gpupacking":
        return GpuPackingScore()
    if name == "bestfit":
        return BestFitScore()
    if name == "fgd":
        return FgdScore(workload)
    raise InputError(f"unknown policy {name!r} (known: {', '.join(POLICIES)})")


def profile(name: str, *, seed: int = 0, workload: tuple[PodClass, ...] = ()) -> Profile:
    if name == "default":
        return Profile(name, default_plugins(), uniform_ties=True)
    scorer = score_plugin(name, seed=seed, workload=workload)
    return Profile(name, [*default_filters(), scorer], uniform_ties=bool(getattr(scorer, "uniform_ties", False)))


def load_plugin(spec: str) -> Plugin:
    """``module:Class`` → an instance of the user's score plugin (built without arguments)."""
    module_name, _, class_name = spec.partition(":")
    if not module_name or not class_name:
        raise InputError(f"--plugin {spec!r}: expected module:Class")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise InputError(f"--plugin {spec!r}: cannot import {module_name}: {exc}") from None
    cls = getattr(module, class_name, None)
    if not isinstance(cls, type) or not issubclass(cls, Plugin):
        raise InputError(f"--plugin {spec!r}: {class_name} is not a Plugin subclass in {module_name}")
    try:
        plugin = cls()
    except TypeError as exc:
        raise InputError(f"--plugin {spec!r}: cannot build {class_name}(): {exc}") from None
    if not plugin.has_score:
        raise InputError(f"--plugin {spec!r}: {class_name} is not a score plugin (has_score is False)")
    if not plugin.name:
        plugin.name = class_name
    return plugin


def user_profile(spec: str) -> Profile:
    plugin = load_plugin(spec)
    return Profile(plugin.name, [*default_filters(), plugin],
                   uniform_ties=bool(getattr(plugin, "uniform_ties", False)))
