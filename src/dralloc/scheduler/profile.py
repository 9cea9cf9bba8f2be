"""The default profile (kube-scheduler 1.36, ``getDefaultPlugins``): plugin order is Filter and Score order.

The volume plugins read PersistentVolumes, PersistentVolumeClaims, StorageClasses and CSINodes from the input;
ImageLocality reads the nodes' ``status.images``; SchedulingGates is not a plugin here (gated pods are not
scheduled and say so).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from dralloc.scheduler.config import ProfileConfig
from dralloc.scheduler.config import types as cfg
from dralloc.scheduler.config.plugins import DEFAULT_MULTI_POINT
from dralloc.scheduler.config.validation import parse_duration
from dralloc.scheduler.framework import Plugin
from dralloc.scheduler.plugins.balanced_allocation import BalancedAllocation
from dralloc.scheduler.plugins.default_binder import DefaultBinder
from dralloc.scheduler.plugins.dynamic_resources import DynamicResources
from dralloc.scheduler.plugins.image_locality import ImageLocality
from dralloc.scheduler.plugins.inter_pod_affinity import InterPodAffinity
from dralloc.scheduler.plugins.node_affinity import NodeAffinity
from dralloc.scheduler.plugins.node_name import NodeName
from dralloc.scheduler.plugins.node_ports import NodePorts
from dralloc.scheduler.plugins.node_resources_fit import NodeResourcesFit
from dralloc.scheduler.plugins.node_unschedulable import NodeUnschedulable
from dralloc.scheduler.plugins.node_volume_limits import NodeVolumeLimits
from dralloc.scheduler.plugins.pod_topology_spread import PodTopologySpread
from dralloc.scheduler.plugins.taint_toleration import TaintToleration
from dralloc.scheduler.plugins.volume_binding import VolumeBinding
from dralloc.scheduler.plugins.volume_restrictions import VolumeRestrictions
from dralloc.scheduler.plugins.volume_zone import VolumeZone


def default_plugins() -> list[Plugin]:
    """The plugins in profile order (``getDefaultPlugins``' MultiPoint list), which is each extension point's
    order; DefaultPreemption is the scheduler's PostFilter, and the plugins dralloc has no use for
    (SchedulingGates, PrioritySort: gated pods and the queue order are the simulator's) are left out."""
    return [FACTORIES[name](None) for name, _ in DEFAULT_MULTI_POINT if name in FACTORIES]


DEFAULT_SCHEDULER = "default-scheduler"


@dataclass(frozen=True)
class Profile:
    """A scheduling profile (``KubeSchedulerProfile``): the pods whose ``spec.schedulerName`` is
    ``scheduler_name`` are scheduled with the default plugins minus ``disabled`` (``"*"``: all of them), plus
    ``enabled`` (factories, appended in order before the Bind plugins, as upstream appends enabled plugins),
    with the score ``weights`` given by plugin name. A profile read from a configuration file
    (:meth:`from_config`) instead lists its plugins per extension point (``points``), makes them with their
    args (``factories``) and says how DefaultPreemption runs (``preemption``: its minCandidateNodes
    percentage and absolute, None when it is disabled)."""

    scheduler_name: str = DEFAULT_SCHEDULER
    disabled: frozenset[str] = frozenset()
    enabled: tuple[Callable[[], Plugin], ...] = ()
    weights: Mapping[str, int] = field(default_factory=dict)
    points: Mapping[str, tuple[str, ...]] | None = None
    factories: tuple[Callable[[], Plugin], ...] = ()
    preemption: tuple[int, int] | None = (10, 100)
    percentage_of_nodes_to_score: int | None = None

    def plugins(self) -> list[Plugin]:
        """The profile's plugins, fresh, in extension-point order."""
        if self.points is not None:
            plugins = [make() for make in self.factories]
        else:
            kept = [] if "*" in self.disabled else [p for p in default_plugins() if p.name not in self.disabled]
            binders = [p for p in kept if isinstance(p, DefaultBinder)]
            plugins = [p for p in kept if not isinstance(p, DefaultBinder)] + [make() for make in self.enabled]
            plugins += binders
        for plugin in plugins:
            if plugin.name in self.weights:
                plugin.weight = self.weights[plugin.name]
        return plugins

    @classmethod
    def from_config(cls, config: ProfileConfig) -> Profile:
        """The profile a KubeSchedulerConfiguration describes (already defaulted, validated and expanded)."""
        points = {point: tuple(names) for point, names in config.plugins.points.items()}
        enabled = config.plugins.enabled()
        order = [name for name, _ in DEFAULT_MULTI_POINT]
        names = sorted(enabled & set(FACTORIES), key=lambda n: order.index(n) if n in order else len(order))
        factories = tuple(_factory(name, config.args.get(name)) for name in names)
        preemption: tuple[int, int] | None = None
        if "DefaultPreemption" in points.get("postFilter", ()):
            args = config.args.get("DefaultPreemption")
            assert isinstance(args, cfg.DefaultPreemptionArgs)
            preemption = (args.min_candidate_nodes_percentage or 0, args.min_candidate_nodes_absolute or 0)
        return cls(config.scheduler_name, weights=dict(config.plugins.weights), points=points,
                   factories=factories, preemption=preemption,
                   percentage_of_nodes_to_score=config.percentage_of_nodes_to_score)


DEFAULT_PROFILE = Profile()

# The plugins a configuration can name, and how each is made from its args.
FACTORIES: dict[str, Callable[[cfg.ArgsBase | None], Plugin]] = {
    "NodeUnschedulable": lambda a: NodeUnschedulable(),
    "NodeName": lambda a: NodeName(),
    "TaintToleration": lambda a: TaintToleration(),
    "NodeAffinity": lambda a: _node_affinity(a),
    "NodePorts": lambda a: NodePorts(),
    "NodeResourcesFit": lambda a: _node_resources_fit(a),
    "VolumeRestrictions": lambda a: VolumeRestrictions(),
    "NodeVolumeLimits": lambda a: NodeVolumeLimits(),
    "VolumeBinding": lambda a: VolumeBinding(),
    "VolumeZone": lambda a: VolumeZone(),
    "PodTopologySpread": lambda a: _pod_topology_spread(a),
    "InterPodAffinity": lambda a: InterPodAffinity(
        a.hard_pod_affinity_weight if isinstance(a, cfg.InterPodAffinityArgs)
        and a.hard_pod_affinity_weight is not None else 1,
        isinstance(a, cfg.InterPodAffinityArgs) and a.ignore_preferred_terms_of_existing_pods),
    "DynamicResources": lambda a: _dynamic_resources(a),
    "NodeResourcesBalancedAllocation": lambda a: BalancedAllocation(
        [r.name for r in a.resources or ()] if isinstance(a, cfg.NodeResourcesBalancedAllocationArgs)
        and a.resources else ("cpu", "memory")),
    "ImageLocality": lambda a: ImageLocality(),
    "DefaultBinder": lambda a: DefaultBinder(),
}


def _factory(name: str, args: cfg.ArgsBase | None) -> Callable[[], Plugin]:
    make = FACTORIES[name]
    return lambda: make(args)


def _dynamic_resources(args: cfg.ArgsBase | None) -> Plugin:
    if isinstance(args, cfg.DynamicResourcesArgs) and args.filter_timeout is not None:
        return DynamicResources(filter_timeout=parse_duration(args.filter_timeout))
    return DynamicResources()


def _node_resources_fit(args: cfg.ArgsBase | None) -> Plugin:
    if not isinstance(args, cfg.NodeResourcesFitArgs) or args.scoring_strategy is None:
        return NodeResourcesFit()
    strategy = args.scoring_strategy
    shape = [(p.utilization, p.score) for p in (strategy.requested_to_capacity_ratio.shape or ())] \
        if strategy.requested_to_capacity_ratio is not None else []
    return NodeResourcesFit(strategy.type, [(r.name, r.weight) for r in strategy.resources or ()], shape,
                            args.ignored_resources or (), args.ignored_resource_groups or ())


def _node_affinity(args: cfg.ArgsBase | None) -> Plugin:
    added = args.added_affinity if isinstance(args, cfg.NodeAffinityArgs) else None
    if added is None:
        return NodeAffinity()
    preferred = [(t.weight, t.preference) for t in added.preferred_during_scheduling_ignored_during_execution or ()]
    return NodeAffinity(added.required_during_scheduling_ignored_during_execution, preferred)


def _pod_topology_spread(args: cfg.ArgsBase | None) -> Plugin:
    if not isinstance(args, cfg.PodTopologySpreadArgs):
        return PodTopologySpread()
    return PodTopologySpread(args.default_constraints or (), args.defaulting_type or "System")
