"""autoscaling/v2 HorizontalPodAutoscaler, whole (every field of the upstream type). ``dralloc serve`` stores HPAs as autoscaling/v2 and shows them in either
version; its HPA controller has no metrics API to read, so it only keeps replicas within the bounds."""

from __future__ import annotations

import msgspec

from dralloc.api.meta import Base, LabelSelector, ListMeta, ObjectMeta
from dralloc.api.quantity import Quantity

GROUP = "autoscaling"
GROUP_VERSION = "autoscaling/v2"
DEFAULT_CPU_UTILIZATION = 80
METRIC_SOURCE_TYPES = ("ContainerResource", "External", "Object", "Pods", "Resource")
TARGET_TYPES = ("AverageValue", "Utilization", "Value")
SELECT_POLICIES = ("Disabled", "Max", "Min")
POLICY_TYPES = ("Percent", "Pods")


class CrossVersionObjectReference(Base):
    kind: str = ""
    name: str = ""
    api_version: str | None = None


class MetricIdentifier(Base):
    name: str = ""
    selector: LabelSelector | None = None


class MetricTarget(Base):
    type: str = ""
    value: Quantity | None = None
    average_value: Quantity | None = None
    average_utilization: int | None = None


class ObjectMetricSource(Base):
    described_object: CrossVersionObjectReference = msgspec.field(default_factory=CrossVersionObjectReference)
    target: MetricTarget = msgspec.field(default_factory=MetricTarget)
    metric: MetricIdentifier = msgspec.field(default_factory=MetricIdentifier)


class PodsMetricSource(Base):
    metric: MetricIdentifier = msgspec.field(default_factory=MetricIdentifier)
    target: MetricTarget = msgspec.field(default_factory=MetricTarget)


class ResourceMetricSource(Base):
    name: str = ""
    target: MetricTarget = msgspec.field(default_factory=MetricTarget)


class ContainerResourceMetricSource(Base):
    name: str = ""
    target: MetricTarget = msgspec.field(default_factory=MetricTarget)
    container: str = ""


class ExternalMetricSource(Base):
    metric: MetricIdentifier = msgspec.field(default_factory=MetricIdentifier)
    target: MetricTarget = msgspec.field(default_factory=MetricTarget)


class MetricSpec(Base):
    type: str = ""
    object: ObjectMetricSource | None = None
    pods: PodsMetricSource | None = None
    resource: ResourceMetricSource | None = None
    container_resource: ContainerResourceMetricSource | None = None
    external: ExternalMetricSource | None = None


class HPAScalingPolicy(Base):
    type: str = ""
    value: int = 0
    period_seconds: int = 0


class HPAScalingRules(Base):
    stabilization_window_seconds: int | None = None
    select_policy: str | None = None
    policies: list[HPAScalingPolicy] | None = None
    tolerance: Quantity | None = None


class HorizontalPodAutoscalerBehavior(Base):
    scale_up: HPAScalingRules | None = None
    scale_down: HPAScalingRules | None = None


class HorizontalPodAutoscalerSpec(Base):
    scale_target_ref: CrossVersionObjectReference = msgspec.field(default_factory=CrossVersionObjectReference)
    min_replicas: int | None = None
    max_replicas: int = 0
    metrics: list[MetricSpec] | None = None
    behavior: HorizontalPodAutoscalerBehavior | None = None


class MetricValueStatus(Base):
    value: Quantity | None = None
    average_value: Quantity | None = None
    average_utilization: int | None = None


class ObjectMetricStatus(Base):
    metric: MetricIdentifier = msgspec.field(default_factory=MetricIdentifier)
    current: MetricValueStatus = msgspec.field(default_factory=MetricValueStatus)
    described_object: CrossVersionObjectReference = msgspec.field(default_factory=CrossVersionObjectReference)


class PodsMetricStatus(Base):
    metric: MetricIdentifier = msgspec.field(default_factory=MetricIdentifier)
    current: MetricValueStatus = msgspec.field(default_factory=MetricValueStatus)


class ResourceMetricStatus(Base):
    name: str = ""
    current: MetricValueStatus = msgspec.field(default_factory=MetricValueStatus)


class ContainerResourceMetricStatus(Base):
    name: str = ""
    current: MetricValueStatus = msgspec.field(default_factory=MetricValueStatus)
    container: str = ""


class ExternalMetricStatus(Base):
    metric: MetricIdentifier = msgspec.field(default_factory=MetricIdentifier)
    current: MetricValueStatus = msgspec.field(default_factory=MetricValueStatus)


class MetricStatus(Base):
    type: str = ""
    object: ObjectMetricStatus | None = None
    pods: PodsMetricStatus | None = None
    resource: ResourceMetricStatus | None = None
    container_resource: ContainerResourceMetricStatus | None = None
    external: ExternalMetricStatus | None = None


class HorizontalPodAutoscalerCondition(Base):
    type: str = ""
    status: str = ""
    last_transition_time: str | None = None
    reason: str | None = None
    message: str | None = None


class HorizontalPodAutoscalerStatus(Base):
    observed_generation: int | None = None
    last_scale_time: str | None = None
    current_replicas: int | None = None
    desired_replicas: int = 0
    current_metrics: list[MetricStatus] | None = None
    conditions: list[HorizontalPodAutoscalerCondition] | None = None


class HorizontalPodAutoscaler(Base):
    api_version: str = GROUP_VERSION
    kind: str = "HorizontalPodAutoscaler"
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: HorizontalPodAutoscalerSpec = msgspec.field(default_factory=HorizontalPodAutoscalerSpec)
    status: HorizontalPodAutoscalerStatus | None = None


class HorizontalPodAutoscalerList(Base):
    api_version: str = GROUP_VERSION
    kind: str = "HorizontalPodAutoscalerList"
    metadata: ListMeta | None = None
    items: list[HorizontalPodAutoscaler] = msgspec.field(default_factory=list)
