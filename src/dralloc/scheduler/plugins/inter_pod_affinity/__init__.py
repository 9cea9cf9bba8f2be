"""InterPodAffinity (kube-scheduler 1.36): required and preferred pod affinity and anti-affinity."""

from dralloc.scheduler.plugins.inter_pod_affinity.plugin import InterPodAffinity

__all__ = ["InterPodAffinity"]
