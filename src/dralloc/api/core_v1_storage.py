"""core/v1 PersistentVolume and PersistentVolumeClaim: the parts the scheduler's volume plugins and the PV
controller's matching read.

Both are partial models (``PARTIAL``): strict decoding checks them against their whole upstream schema
(:mod:`dralloc.api.core_v1_fields`), and fields dralloc does not read (most volume sources) are dropped.
"""

from __future__ import annotations

from typing import Any, ClassVar

import msgspec

from dralloc.api.core_v1 import (
    AWSElasticBlockStoreVolumeSource,
    GCEPersistentDiskVolumeSource,
    NodeSelector,
    ObjectReference,
    PersistentVolumeClaimSpec,
    ResourceList,
)
from dralloc.api.meta import Base, ObjectMeta

# spec.accessModes values
READ_WRITE_ONCE = "ReadWriteOnce"
READ_ONLY_MANY = "ReadOnlyMany"
READ_WRITE_MANY = "ReadWriteMany"
READ_WRITE_ONCE_POD = "ReadWriteOncePod"
ACCESS_MODES = (READ_WRITE_ONCE, READ_ONLY_MANY, READ_WRITE_MANY, READ_WRITE_ONCE_POD)
VOLUME_MODES = ("Block", "Filesystem")
RECLAIM_POLICIES = ("Recycle", "Delete", "Retain")

# annotations the PV controller and the scheduler write
ANN_BIND_COMPLETED = "pv.kubernetes.io/bind-completed"
ANN_BOUND_BY_CONTROLLER = "pv.kubernetes.io/bound-by-controller"
ANN_SELECTED_NODE = "volume.kubernetes.io/selected-node"
ANN_BETA_STORAGE_CLASS = "volume.beta.kubernetes.io/storage-class"


class VolumeNodeAffinity(Base):
    required: NodeSelector | None = None


class CSIPersistentVolumeSource(Base):
    PARTIAL: ClassVar[bool] = True  # upstream has more fields

    driver: str = ""
    volume_handle: str = ""
    read_only: bool | None = None
    fs_type: str | None = None


class PersistentVolumeSpec(Base):
    PARTIAL: ClassVar[bool] = True  # upstream has every volume source

    capacity: ResourceList | None = None
    access_modes: list[str] | None = None
    claim_ref: ObjectReference | None = None
    persistent_volume_reclaim_policy: str | None = None
    storage_class_name: str | None = None
    volume_mode: str | None = None
    node_affinity: VolumeNodeAffinity | None = None
    volume_attributes_class_name: str | None = None
    csi: CSIPersistentVolumeSource | None = None
    gce_persistent_disk: GCEPersistentDiskVolumeSource | None = None
    aws_elastic_block_store: AWSElasticBlockStoreVolumeSource | None = None
    local: dict[str, Any] | None = None
    host_path: dict[str, Any] | None = None


class PersistentVolumeStatus(Base):
    PARTIAL: ClassVar[bool] = True

    phase: str | None = None  # Pending, Available, Bound, Released, Failed
    message: str | None = None
    reason: str | None = None


class PersistentVolume(Base):
    api_version: str = "v1"
    kind: str = "PersistentVolume"
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: PersistentVolumeSpec = msgspec.field(default_factory=PersistentVolumeSpec)
    status: PersistentVolumeStatus | None = None


class PersistentVolumeClaimStatus(Base):
    PARTIAL: ClassVar[bool] = True

    phase: str | None = None  # Pending, Bound, Lost
    access_modes: list[str] | None = None
    capacity: ResourceList | None = None


class PersistentVolumeClaim(Base):
    api_version: str = "v1"
    kind: str = "PersistentVolumeClaim"
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: PersistentVolumeClaimSpec = msgspec.field(default_factory=PersistentVolumeClaimSpec)
    status: PersistentVolumeClaimStatus | None = None


def claim_class(pvc: PersistentVolumeClaim) -> str:
    """``GetPersistentVolumeClaimClass``: the beta annotation wins over ``spec.storageClassName``."""
    ann = pvc.metadata.annotations or {}
    if ANN_BETA_STORAGE_CLASS in ann:
        return ann[ANN_BETA_STORAGE_CLASS]
    return pvc.spec.storage_class_name or ""


def volume_class(pv: PersistentVolume) -> str:
    """``GetPersistentVolumeClass``: the beta annotation wins over ``spec.storageClassName``."""
    ann = pv.metadata.annotations or {}
    if ANN_BETA_STORAGE_CLASS in ann:
        return ann[ANN_BETA_STORAGE_CLASS]
    return pv.spec.storage_class_name or ""
