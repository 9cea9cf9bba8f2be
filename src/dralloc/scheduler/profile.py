"""The default profile (kube-scheduler 1.36, ``getDefaultPlugins``): plugin order is Filter and Score order.

Not modelled, and why the answer does not change for the inputs dralloc takes: VolumeRestrictions,
NodeVolumeLimits, VolumeBinding, VolumeZone (no volumes: they Skip), ImageLocality (no image state: every
node scores 0), SchedulingGates (gated pods are not scheduled and say so).
"""

from __future__ import annotations

from dralloc.scheduler.framework import Plugin
from dralloc.scheduler.plugins.balanced_allocation import BalancedAllocation
from dralloc.scheduler.plugins.default_binder import DefaultBinder
from dralloc.scheduler.plugins.dynamic_resources import DynamicResources
from dralloc.scheduler.plugins.inter_pod_affinity import InterPodAffinity
from dralloc.scheduler.plugins.node_affinity import NodeAffinity
from dralloc.scheduler.plugins.node_name import NodeName
from dralloc.scheduler.plugins.node_ports import NodePorts
from dralloc.scheduler.plugins.node_resources_fit import NodeResourcesFit
from dralloc.scheduler.plugins.node_unschedulable import NodeUnschedulable
from dralloc.scheduler.plugins.pod_topology_spread import PodTopologySpread
from dralloc.scheduler.plugins.taint_toleration import TaintToleration


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
        PodTopologySpread(),
        InterPodAffinity(),
        DynamicResources(),
        BalancedAllocation(),
        DefaultBinder(),
    ]
