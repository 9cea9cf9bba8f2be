"""Multi-dimensional resources: ResourceList and its nine comparisons, claim footprints, node fit."""

from dralloc.resources.fit import FastFit, FitResult, node_fit, pod_footprint, pod_requests
from dralloc.resources.footprint import DeviceIndex, claim_footprint
from dralloc.resources.resourcelist import COMPARISONS, ResourceList, compare_all

__all__ = [
    "COMPARISONS",
    "DeviceIndex",
    "FastFit",
    "FitResult",
    "ResourceList",
    "claim_footprint",
    "compare_all",
    "node_fit",
    "pod_footprint",
    "pod_requests",
]
