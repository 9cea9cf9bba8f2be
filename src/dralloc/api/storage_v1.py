"""storage.k8s.io/v1 StorageClass, CSINode and CSIStorageCapacity, whole (every field of the upstream types),
and the part of CSIDriver the scheduler reads (whether the driver publishes storage capacity)."""

from __future__ import annotations

from typing import ClassVar

import msgspec

from dralloc.api.meta import Base, LabelSelector, ObjectMeta
from dralloc.api.quantity import Quantity

GROUP_VERSION = "storage.k8s.io/v1"
IMMEDIATE = "Immediate"
WAIT_FOR_FIRST_CONSUMER = "WaitForFirstConsumer"
BINDING_MODES = (IMMEDIATE, WAIT_FOR_FIRST_CONSUMER)
# a provisioner name meaning "no dynamic provisioning" (static local volumes)
NO_PROVISIONER = "kubernetes.io/no-provisioner"
IS_DEFAULT_CLASS = "storageclass.kubernetes.io/is-default-class"
IS_DEFAULT_CLASS_BETA = "storageclass.beta.kubernetes.io/is-default-class"


class TopologySelectorLabelRequirement(Base):
    key: str = ""
    values: list[str] = msgspec.field(default_factory=list)


class TopologySelectorTerm(Base):
    match_label_expressions: list[TopologySelectorLabelRequirement] | None = None


class StorageClass(Base):
    api_version: str = GROUP_VERSION
    kind: str = "StorageClass"
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    provisioner: str = ""
    parameters: dict[str, str] | None = None
    reclaim_policy: str | None = None  # Delete (default) or Retain
    mount_options: list[str] | None = None
    allow_volume_expansion: bool | None = None
    volume_binding_mode: str | None = None  # Immediate (default) or WaitForFirstConsumer
    allowed_topologies: list[TopologySelectorTerm] | None = None

    @property
    def binding_mode(self) -> str:
        """The binding mode after API defaulting."""
        return self.volume_binding_mode or IMMEDIATE

    @property
    def is_default(self) -> bool:
        ann = self.metadata.annotations or {}
        return ann.get(IS_DEFAULT_CLASS) == "true" or ann.get(IS_DEFAULT_CLASS_BETA) == "true"


class VolumeNodeResources(Base):
    count: int | None = None


class CSINodeDriver(Base):
    name: str = ""
    node_id: str = msgspec.field(default="", name="nodeID")
    topology_keys: list[str] | None = None
    allocatable: VolumeNodeResources | None = None


class CSINodeSpec(Base):
    drivers: list[CSINodeDriver] = msgspec.field(default_factory=list)


class CSINode(Base):
    api_version: str = GROUP_VERSION
    kind: str = "CSINode"
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: CSINodeSpec = msgspec.field(default_factory=CSINodeSpec)


class CSIDriverSpec(Base):
    PARTIAL: ClassVar[bool] = True  # upstream has more fields

    storage_capacity: bool | None = None


class CSIDriver(Base):
    api_version: str = GROUP_VERSION
    kind: str = "CSIDriver"
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: CSIDriverSpec = msgspec.field(default_factory=CSIDriverSpec)


class CSIStorageCapacity(Base):
    """Room a CSI driver reports for new volumes of a class on the nodes its topology selects."""

    api_version: str = GROUP_VERSION
    kind: str = "CSIStorageCapacity"
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    node_topology: LabelSelector | None = None
    storage_class_name: str = ""
    capacity: Quantity | None = None
    maximum_volume_size: Quantity | None = None
