"""The default profile (kube-scheduler 1.36, ``getDefaultPlugins``): plugin order is Filter and Score order.

The volume plugins read PersistentVolumes, PersistentVolumeClaims, StorageClasses and CSINodes from the input;
ImageLocality reads the nodes' ``status.images``; SchedulingGates is not a plugin here (gated pods are not
scheduled and say so).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from dralloc.scheduler.framework import Plugin
from dralloc.scheduler.plugins.balanced_allocation import BalancedAllocation
from dralloc.scheduler.plugins.default_binder import DefaultBinder
from dralloc.scheduler.plugins.dynamic_resources import DynamicResources
from dralloc.scheduler.plugins.inter_pod_affinity import InterPodAffinity
from dralloc.scheduler.plugins.image_locality import ImageLocality
from dralloc.scheduler.plugins.node_affinity import NodeAffinity
from dralloc.scheduler.plugins.node_name import NodeName
from dralloc.scheduler.plugins.node_ports import NodePorts
from dralloc.scheduler.plugins.node_resources_fit import NodeResourcesFit
from dralloc.scheduler.plugins.node_unschedulable import NodeUnschedulable
from dralloc.scheduler.plugins.pod_topology_spread import PodTopologySpread
from dralloc.scheduler.plugins.node_volume_limits import NodeVolumeLimits
from dralloc.scheduler.plugins.taint_toleration import TaintToleration
from dralloc.scheduler.plugins.volume_binding import VolumeBinding
from dralloc.scheduler.plugins.volume_restrictions import VolumeRestrictions
from dralloc.scheduler.plugins.volume_zone import VolumeZone


def default_plugins() -> list[Plugin]:
    """The plugins in profile order, which is each extension point's order (DefaultPreemption is the
    scheduler's PostFilter)."""
    return [
        NodeUnschedulable(),
        NodeName(),
        TaintToleration(),
        NodeAffinity(),
        NodePorts(),
        NodeResourcesFit(),
        VolumeRestrictions(),
        NodeVolumeLimits(),
        VolumeBinding(),
        VolumeZone(),
        PodTopologySpread(),
        InterPodAffinity(),
        DynamicResources(),
        BalancedAllocation(),
        ImageLocality(),
        DefaultBinder(),
    ]


DEFAULT_SCHEDULER = "default-scheduler"


@dataclass(frozen=True)
class Profile:
    """A scheduling profile (``KubeSchedulerProfile``): the pods whose ``spec.schedulerName`` is
    ``scheduler_name`` are scheduled with the default plugins minus ``disabled`` (``"*"``: all of them), plus
    ``enabled`` (factories, appended in order before the Bind plugins, as upstream appends enabled plugins),
    with the score ``weights`` given by plugin name. What a scheduler configuration file fills in."""

    scheduler_name: str = DEFAULT_SCHEDULER
    disabled: frozenset[str] = frozenset()
    enabled: tuple[Callable[[], Plugin], ...] = ()
    weights: Mapping[str, int] = field(default_factory=dict)

    def plugins(self) -> list[Plugin]:
        """The profile's plugins, fresh, in extension-point order."""
        kept = [] if "*" in self.disabled else [p for p in default_plugins() if p.name not in self.disabled]
        binders = [p for p in kept if isinstance(p, DefaultBinder)]
        plugins = [p for p in kept if not isinstance(p, DefaultBinder)] + [make() for make in self.enabled]
        plugins += binders
        for plugin in plugins:
            if plugin.name in self.weights:
                plugin.weight = self.weights[plugin.name]
        return plugins


DEFAULT_PROFILE = Profile()
