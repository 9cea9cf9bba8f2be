"""storage.k8s.io/v1 StorageClass, CSINode, CSIStorageCapacity, CSIDriver and VolumeAttachment, whole (every
field of the upstream types)."""

from __future__ import annotations

from typing import Any, ClassVar

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


class TokenRequest(Base):
    audience: str = ""
    expiration_seconds: int | None = None


class CSIDriverSpec(Base):
    attach_required: bool | None = None
    pod_info_on_mount: bool | None = None
    volume_lifecycle_modes: list[str] | None = None
    storage_capacity: bool | None = None  # whether the driver publishes CSIStorageCapacity objects
    fs_group_policy: str | None = None
    token_requests: list[TokenRequest] | None = None
    requires_republish: bool | None = None
    se_linux_mount: bool | None = msgspec.field(default=None, name="seLinuxMount")
    node_allocatable_update_period_seconds: int | None = None
    service_account_token_in_secrets: bool | None = None


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


class VolumeAttachmentSource(Base):
    PARTIAL: ClassVar[bool] = True  # inlineVolumeSpec is a whole core/v1 PersistentVolumeSpec, kept as sent

    persistent_volume_name: str | None = None
    inline_volume_spec: dict[str, Any] | None = None


class VolumeAttachmentSpec(Base):
    attacher: str = ""
    source: VolumeAttachmentSource = msgspec.field(default_factory=VolumeAttachmentSource)
    node_name: str = ""


class VolumeError(Base):
    time: str | None = None
    message: str | None = None
    error_code: int | None = None


class VolumeAttachmentStatus(Base):
    attached: bool = False
    attachment_metadata: dict[str, str] | None = None
    attach_error: VolumeError | None = None
    detach_error: VolumeError | None = None


class VolumeAttachment(Base):
    """A CSI driver's attachment of a volume to a node (written by the attach/detach controller and the
    external attacher; nothing in dralloc reads it)."""

    api_version: str = GROUP_VERSION
    kind: str = "VolumeAttachment"
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: VolumeAttachmentSpec = msgspec.field(default_factory=VolumeAttachmentSpec)
    status: VolumeAttachmentStatus | None = None
