"""PodTopologySpread (kube-scheduler 1.36): constraints and defaults, the filter and the score."""

from dralloc.scheduler.plugins.pod_topology_spread.plugin import NAME, PodTopologySpread

__all__ = ["NAME", "PodTopologySpread"]
