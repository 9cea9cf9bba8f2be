"""meta.k8s.io/v1 pieces every object carries: ObjectMeta, ListMeta, OwnerReference, Condition, LabelSelector.

Timestamps stay RFC 3339 strings, exactly as the API server writes them; nothing in dralloc does date
arithmetic on them except the scheduler's taint eviction, which parses on demand.
"""

from __future__ import annotations

from typing import Any

import msgspec


class Base(msgspec.Struct, rename="camel", omit_defaults=True, kw_only=True):
    """Shared settings: camelCase JSON names, unset (None) fields omitted on output."""


class OwnerReference(Base):
    api_version: str = ""
    kind: str = ""
    name: str = ""
    uid: str = ""
    controller: bool | None = None
    block_owner_deletion: bool | None = None


class ObjectMeta(Base):
    name: str | None = None
    generate_name: str | None = None
    namespace: str | None = None
    self_link: str | None = None
    uid: str | None = None
    resource_version: str | None = None
    generation: int | None = None
    creation_timestamp: str | None = None
    deletion_timestamp: str | None = None
    deletion_grace_period_seconds: int | None = None
    labels: dict[str, str] | None = None
    annotations: dict[str, str] | None = None
    owner_references: list[OwnerReference] | None = None
    finalizers: list[str] | None = None
    managed_fields: list[Any] | None = None


class ListMeta(Base):
    self_link: str | None = None
    resource_version: str | None = None
    continue_: str | None = msgspec.field(default=None, name="continue")
    remaining_item_count: int | None = None


class Condition(Base):
    type: str = ""
    status: str = ""
    observed_generation: int | None = None
    last_transition_time: str | None = None
    reason: str | None = None
    message: str | None = None


class LabelSelectorRequirement(Base):
    key: str = ""
    operator: str = ""  # In, NotIn, Exists, DoesNotExist
    values: list[str] | None = None


class LabelSelector(Base):
    """Selects objects by labels: every matchLabels pair and every matchExpressions requirement must hold."""

    match_labels: dict[str, str] | None = None
    match_expressions: list[LabelSelectorRequirement] | None = None
