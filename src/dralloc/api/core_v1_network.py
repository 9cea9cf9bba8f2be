"""core/v1 Endpoints, as kube-apiserver decodes it (the fields its validation reads; the object is stored as
sent)."""

from __future__ import annotations

from typing import Any

import msgspec

from dralloc.api.meta import Base, ObjectMeta


class EndpointAddress(Base):
    ip: str = ""
    hostname: str | None = None
    node_name: str | None = None
    target_ref: dict[str, Any] | None = None


class EndpointPort(Base):
    name: str | None = None
    port: int = 0
    protocol: str | None = None
    app_protocol: str | None = None


class EndpointSubset(Base):
    addresses: list[EndpointAddress] | None = None
    not_ready_addresses: list[EndpointAddress] | None = None
    ports: list[EndpointPort] | None = None


class Endpoints(Base):
    api_version: str = "v1"
    kind: str = "Endpoints"
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    subsets: list[EndpointSubset] | None = None
