"""Which model class decodes which apiVersion/kind (shared by the codec and strict decoding)."""

from __future__ import annotations

from dralloc.api import (
    admissionregistration_v1,
    apps_v1,
    autoscaling_v1,
    autoscaling_v2,
    batch_v1,
    conversion,
    coordination_v1,
    core_v1,
    core_v1_storage,
    jobset_v1alpha2,
    leaderworkerset_v1,
    networking_v1,
    policy_v1,
    rbac_v1,
    resource_v1,
    scheduling_v1,
    scheduling_v1alpha2,
    storage_v1,
)

_RESOURCE_KINDS: dict[str, type] = {
    "ResourceSlice": resource_v1.ResourceSlice,
    "DeviceClass": resource_v1.DeviceClass,
    "ResourceClaim": resource_v1.ResourceClaim,
    "ResourceClaimTemplate": resource_v1.ResourceClaimTemplate,
    "DeviceTaintRule": resource_v1.DeviceTaintRule,
}
_CORE_KINDS: dict[str, type] = {
    "Node": core_v1.Node,
    "Pod": core_v1.Pod,
    "Namespace": core_v1.Namespace,
    "Service": core_v1.Service,
    "ReplicationController": core_v1.ReplicationController,
    "PersistentVolume": core_v1_storage.PersistentVolume,
    "PersistentVolumeClaim": core_v1_storage.PersistentVolumeClaim,
}
# Other groups, by apiVersion: the workload controllers' kinds, PriorityClass and Lease.
_OTHER_KINDS: dict[str, dict[str, type]] = {
    apps_v1.GROUP_VERSION: {
        "Deployment": apps_v1.Deployment,
        "ReplicaSet": apps_v1.ReplicaSet,
        "StatefulSet": apps_v1.StatefulSet,
        "DaemonSet": apps_v1.DaemonSet,
        "ControllerRevision": apps_v1.ControllerRevision,
    },
    batch_v1.GROUP_VERSION: {"Job": batch_v1.Job, "CronJob": batch_v1.CronJob},
    jobset_v1alpha2.GROUP_VERSION: {"JobSet": jobset_v1alpha2.JobSet},
    leaderworkerset_v1.GROUP_VERSION: {"LeaderWorkerSet": leaderworkerset_v1.LeaderWorkerSet},
    scheduling_v1.GROUP_VERSION: {"PriorityClass": scheduling_v1.PriorityClass},
    scheduling_v1alpha2.GROUP_VERSION: {"Workload": scheduling_v1alpha2.Workload,
                                        "PodGroup": scheduling_v1alpha2.PodGroup},
    coordination_v1.GROUP_VERSION: {"Lease": coordination_v1.Lease},
    rbac_v1.GROUP_VERSION: {"Role": rbac_v1.Role, "ClusterRole": rbac_v1.ClusterRole,
                            "RoleBinding": rbac_v1.RoleBinding, "ClusterRoleBinding": rbac_v1.ClusterRoleBinding},
    autoscaling_v2.GROUP_VERSION: {"HorizontalPodAutoscaler": autoscaling_v2.HorizontalPodAutoscaler},
    autoscaling_v1.GROUP_VERSION: {"HorizontalPodAutoscaler": autoscaling_v1.HorizontalPodAutoscaler},
    networking_v1.GROUP_VERSION: {"Ingress": networking_v1.Ingress, "IngressClass": networking_v1.IngressClass,
                                  "NetworkPolicy": networking_v1.NetworkPolicy},
    policy_v1.GROUP_VERSION: {"PodDisruptionBudget": policy_v1.PodDisruptionBudget},
    admissionregistration_v1.GROUP_VERSION: {**admissionregistration_v1.WEBHOOK_CONFIGURATION_KINDS,
                                             **admissionregistration_v1.POLICY_KINDS},
    storage_v1.GROUP_VERSION: {"StorageClass": storage_v1.StorageClass, "CSINode": storage_v1.CSINode,
                               "CSIDriver": storage_v1.CSIDriver, "CSIStorageCapacity": storage_v1.CSIStorageCapacity,
                               "VolumeAttachment": storage_v1.VolumeAttachment},
}

# Every kind above is namespaced or cluster-scoped, as kube-apiserver serves it.
NAMESPACED_KINDS = frozenset({
    "ResourceClaim", "ResourceClaimTemplate", "Pod", "Service", "ReplicationController", "PersistentVolumeClaim",
    "Deployment", "ReplicaSet", "StatefulSet", "DaemonSet", "ControllerRevision", "Job", "CronJob", "JobSet",
    "LeaderWorkerSet", "Workload", "PodGroup", "Lease", "PodDisruptionBudget", "CSIStorageCapacity", "Role", "RoleBinding",
    "Ingress", "NetworkPolicy", "HorizontalPodAutoscaler"})
CLUSTER_KINDS = frozenset({
    "ResourceSlice", "DeviceClass", "DeviceTaintRule", "Node", "Namespace", "PersistentVolume", "PriorityClass",
    "StorageClass", "CSINode", "CSIDriver", "VolumeAttachment", "ClusterRole", "ClusterRoleBinding", "IngressClass",
    *admissionregistration_v1.WEBHOOK_CONFIGURATION_KINDS, *admissionregistration_v1.POLICY_KINDS})


def model_for(api_version: str | None, kind: str | None) -> type | None:
    """The model class for an apiVersion/kind, or None if dralloc does not model it."""
    if api_version in conversion.SERVED_VERSIONS:
        return _RESOURCE_KINDS.get(kind or "")
    if api_version == "v1":
        return _CORE_KINDS.get(kind or "")
    return _OTHER_KINDS.get(api_version or "", {}).get(kind or "")


def modelled_kinds() -> set[str]:
    """Every kind dralloc decodes."""
    kinds = set(_RESOURCE_KINDS) | set(_CORE_KINDS)
    for group in _OTHER_KINDS.values():
        kinds |= set(group)
    return kinds
