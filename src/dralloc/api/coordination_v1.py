"""coordination.k8s.io/v1 Lease: what leader election (client-go's LeaseLock) and node heartbeats hold."""

from __future__ import annotations

import msgspec

from dralloc.api.meta import Base, ListMeta, ObjectMeta

GROUP_VERSION = "coordination.k8s.io/v1"


class LeaseSpec(Base):
    holder_identity: str | None = None
    lease_duration_seconds: int | None = None
    acquire_time: str | None = None  # MicroTime: RFC 3339 with microseconds
    renew_time: str | None = None
    lease_transitions: int | None = None
    strategy: str | None = None
    preferred_holder: str | None = None


class Lease(Base):
    api_version: str = GROUP_VERSION
    kind: str = "Lease"
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: LeaseSpec | None = None


class LeaseList(Base):
    api_version: str = GROUP_VERSION
    kind: str = "LeaseList"
    metadata: ListMeta | None = None
    items: list[Lease] = msgspec.field(default_factory=list)
