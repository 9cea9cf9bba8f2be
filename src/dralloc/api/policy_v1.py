"""policy/v1 PodDisruptionBudget: how many of the pods it selects may be disrupted at once.

DefaultPreemption reads a budget's ``spec.selector`` and its ``status`` (``disruptionsAllowed`` and
``disruptedPods``, which the disruption controller keeps); ``minAvailable`` / ``maxUnavailable`` are what the
controller computes the status from.
"""

from __future__ import annotations

import msgspec

from dralloc.api.meta import Base, Condition, LabelSelector, ListMeta, ObjectMeta

GROUP_VERSION = "policy/v1"


class PodDisruptionBudgetSpec(Base):
    min_available: int | str | None = None
    selector: LabelSelector | None = None
    max_unavailable: int | str | None = None
    unhealthy_pod_eviction_policy: str | None = None  # IfHealthyBudget (default) or AlwaysAllow


class PodDisruptionBudgetStatus(Base):
    observed_generation: int | None = None
    disrupted_pods: dict[str, str] | None = None  # pod name -> time the eviction was processed
    disruptions_allowed: int = 0
    current_healthy: int = 0
    desired_healthy: int = 0
    expected_pods: int = 0
    conditions: list[Condition] | None = None


class PodDisruptionBudget(Base):
    api_version: str = GROUP_VERSION
    kind: str = "PodDisruptionBudget"
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: PodDisruptionBudgetSpec = msgspec.field(default_factory=PodDisruptionBudgetSpec)
    status: PodDisruptionBudgetStatus | None = None


class PodDisruptionBudgetList(Base):
    api_version: str = GROUP_VERSION
    kind: str = "PodDisruptionBudgetList"
    metadata: ListMeta | None = None
    items: list[PodDisruptionBudget] = msgspec.field(default_factory=list)
