"""The default profile (kube-scheduler 1.36, ``getDefaultPlugins``): plugin order is Filter and Score order.

Not modelled, and why the answer does not change for the inputs dralloc takes: PodTopologySpread and
InterPodAffinity (no topology spread constraints or pod affinity are evaluated: pods that declare them
are warned about), SchedulingGates (gated pods are not scheduled and say so). The volume plugins read
PersistentVolumes, PersistentVolumeClaims, StorageClasses and CSINodes from the input; ImageLocality reads
the nodes' ``status.images``.
"""

from __future__ import annotations

from dralloc.scheduler.plugins.balanced_allocation import BalancedAllocation
from dralloc.scheduler.plugins.base import Plugin
from dralloc.scheduler.plugins.dynamic_resources import DynamicResources
from dralloc.scheduler.plugins.image_locality import ImageLocality
from dralloc.scheduler.plugins.node_affinity import NodeAffinity
from dralloc.scheduler.plugins.node_name import NodeName
from dralloc.scheduler.plugins.node_ports import NodePorts
from dralloc.scheduler.plugins.node_resources_fit import NodeResourcesFit
from dralloc.scheduler.plugins.node_unschedulable import NodeUnschedulable
from dralloc.scheduler.plugins.node_volume_limits import NodeVolumeLimits
from dralloc.scheduler.plugins.taint_toleration import TaintToleration
from dralloc.scheduler.plugins.volume_binding import VolumeBinding
from dralloc.scheduler.plugins.volume_restrictions import VolumeRestrictions
from dralloc.scheduler.plugins.volume_zone import VolumeZone


def default_plugins() -> list[Plugin]:
    """Filter/score plugins in profile order (DefaultPreemption is the scheduler's PostFilter)."""
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
        DynamicResources(),
        BalancedAllocation(),
        ImageLocality(),
    ]
