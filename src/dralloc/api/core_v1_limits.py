"""core/v1 LimitRange and ResourceQuota: what a namespace's pods may ask for (the LimitRanger admission's
defaults and bounds) and may use in all (the ResourceQuota admission's hard limits), as kube-apiserver decodes
them (quantities parsed)."""

from __future__ import annotations

from typing import Any

import msgspec

from dralloc.api.meta import Base, ObjectMeta
from dralloc.api.quantity import Quantity

ResourceList = dict[str, Quantity]


class LimitRangeItem(Base):
    type: str = ""  # Pod, Container or PersistentVolumeClaim
    max: ResourceList | None = None
    min: ResourceList | None = None
    default: ResourceList | None = None
    default_request: ResourceList | None = None
    max_limit_request_ratio: ResourceList | None = None


class LimitRangeSpec(Base):
    limits: list[LimitRangeItem] = msgspec.field(default_factory=list)


class LimitRange(Base):
    api_version: str = "v1"
    kind: str = "LimitRange"
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: LimitRangeSpec = msgspec.field(default_factory=LimitRangeSpec)


class ResourceQuotaSpec(Base):
    hard: ResourceList | None = None
    scopes: list[str] | None = None
    scope_selector: dict[str, Any] | None = None


class ResourceQuotaStatus(Base):
    hard: ResourceList | None = None
    used: ResourceList | None = None


class ResourceQuota(Base):
    api_version: str = "v1"
    kind: str = "ResourceQuota"
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: ResourceQuotaSpec = msgspec.field(default_factory=ResourceQuotaSpec)
    status: ResourceQuotaStatus | None = None
