"""Feature gates as kube-scheduler takes them (``--feature-gates A=true,B=false``), with 1.36's defaults.

Only the gates that change what the simulator computes are known; any other name is an error, as in
kube-scheduler (``unrecognized feature gate``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from dralloc.errors import InputError

# Kubernetes 1.36 defaults (pkg/features/kube_features.go).
DEFAULTS_1_36: dict[str, bool] = {
    "DynamicResourceAllocation": True,  # GA
    "DRAPrioritizedList": True,  # GA
    "DRAAdminAccess": True,  # GA
    "DRADeviceTaints": True,  # beta
    "DRAPartitionableDevices": True,  # beta
    "DRAConsumableCapacity": True,  # beta
    "DRADeviceBindingConditions": True,  # beta
    "DRAResourceClaimDeviceStatus": True,  # beta (binding conditions are read from the claim's device status)
    "DRAExtendedResource": True,  # beta
    "DRASchedulerFilterTimeout": True,  # beta
    "DRADeviceTaintRules": False,  # beta, off
    "DRANodeAllocatableResources": False,  # alpha (KEP-5517)
    "PodLevelResources": True,  # beta
    "MatchLabelKeysInPodTopologySpread": True,  # beta (PodTopologySpread merges matchLabelKeys into its selector)
    # Workload-aware scheduling, all alpha and off (KEP-4671 and follow-ups).
    "GenericWorkload": False,  # Workload/PodGroup API, pods' spec.schedulingGroup
    "GangScheduling": False,  # the GangScheduling plugin and the pod group cycle
    "TopologyAwareWorkloadScheduling": False,  # TopologyPlacementGenerator + PodGroupPodsCount
    "DRAWorkloadResourceClaims": False,  # ResourceClaims shared by a PodGroup
    "WorkloadAwarePreemption": False,  # preempting for a whole group
    "WorkloadWithJob": False,  # the Job controller creates a Workload and a PodGroup per Job
}

# What each gate needs on as well (pkg/features' dependency table); enabling a gate without them is refused.
DEPENDENCIES: dict[str, tuple[str, ...]] = {
    "GangScheduling": ("GenericWorkload",),
    "TopologyAwareWorkloadScheduling": ("GenericWorkload",),
    "DRAWorkloadResourceClaims": ("GenericWorkload", "DynamicResourceAllocation"),
    "WorkloadAwarePreemption": ("GangScheduling",),
    "WorkloadWithJob": ("GenericWorkload",),
}


class FeatureGateError(InputError):
    """A --feature-gates value kube-scheduler would refuse."""


@dataclass(frozen=True)
class FeatureGates:
    """The enabled state of each known gate."""

    values: Mapping[str, bool] = field(default_factory=lambda: dict(DEFAULTS_1_36))

    def enabled(self, name: str) -> bool:
        return self.values[name]

    def enabled_names(self) -> frozenset[str]:
        """The names of the gates that are on."""
        return frozenset(name for name, on in self.values.items() if on)

    @classmethod
    def parse(cls, text: str | None) -> FeatureGates:
        """``"A=true,B=false"`` over 1.36's defaults."""
        values = dict(DEFAULTS_1_36)
        for item in (text or "").split(","):
            item = item.strip()
            if not item:
                continue
            name, sep, raw = item.partition("=")
            name = name.strip()
            if not sep:
                raise FeatureGateError(f"--feature-gates: missing bool value for {name}")
            if name not in values:
                raise FeatureGateError(f"--feature-gates: unrecognized feature gate: {name}")
            low = raw.strip().lower()
            if low not in ("true", "false", "1", "0", "t", "f"):
                raise FeatureGateError(f"--feature-gates: invalid value of {name}={raw.strip()}, err: "
                                       f'strconv.ParseBool: parsing "{raw.strip()}": invalid syntax')
            values[name] = low in ("true", "1", "t")
        for name, needs in DEPENDENCIES.items():
            missing = [n for n in needs if not values[n]]
            if values[name] and missing:
                raise FeatureGateError(f"--feature-gates: {name} is enabled, but depends on disabled features: "
                                       f"{', '.join(missing)}")
        return cls(values)
