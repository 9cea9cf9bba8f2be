"""scheduling.k8s.io/v1 PriorityClass: the priority a pod's ``priorityClassName`` stands for."""

from __future__ import annotations

import msgspec

from dralloc.api.meta import Base, ListMeta, ObjectMeta

GROUP_VERSION = "scheduling.k8s.io/v1"


class PriorityClass(Base):
    """Not a spec/status object: value, globalDefault and preemptionPolicy sit at the top level."""

    api_version: str = GROUP_VERSION
    kind: str = "PriorityClass"
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    value: int = 0
    global_default: bool | None = None
    description: str | None = None
    preemption_policy: str | None = None  # PreemptLowerPriority (default) or Never


class PriorityClassList(Base):
    api_version: str = GROUP_VERSION
    kind: str = "PriorityClassList"
    metadata: ListMeta | None = None
    items: list[PriorityClass] = msgspec.field(default_factory=list)
