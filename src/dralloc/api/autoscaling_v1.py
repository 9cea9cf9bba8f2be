"""autoscaling/v1 HorizontalPodAutoscaler: one target, the CPU utilization. ``dralloc serve`` stores HPAs as
autoscaling/v2 (``dralloc.api.autoscaling_v2``) and converts (``dralloc.api.autoscaling_conversion``)."""

from __future__ import annotations

import msgspec

from dralloc.api.autoscaling_v2 import CrossVersionObjectReference
from dralloc.api.meta import Base, ObjectMeta

GROUP_VERSION = "autoscaling/v1"


class HorizontalPodAutoscalerSpec(Base):
    scale_target_ref: CrossVersionObjectReference = msgspec.field(default_factory=CrossVersionObjectReference)
    min_replicas: int | None = None
    max_replicas: int = 0
    target_cpu_utilization_percentage: int | None = msgspec.field(default=None,
                                                                  name="targetCPUUtilizationPercentage")


class HorizontalPodAutoscalerStatus(Base):
    observed_generation: int | None = None
    last_scale_time: str | None = None
    current_replicas: int = 0
    desired_replicas: int = 0
    current_cpu_utilization_percentage: int | None = msgspec.field(default=None,
                                                                   name="currentCPUUtilizationPercentage")


class HorizontalPodAutoscaler(Base):
    api_version: str = GROUP_VERSION
    kind: str = "HorizontalPodAutoscaler"
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: HorizontalPodAutoscalerSpec = msgspec.field(default_factory=HorizontalPodAutoscalerSpec)
    status: HorizontalPodAutoscalerStatus | None = None
