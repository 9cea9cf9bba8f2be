"""kube-controller-manager's horizontal pod autoscaler controller (pkg/controller/podautoscaler) as it behaves on a
cluster without a metrics API (no metrics-server): each HorizontalPodAutoscaler's target is read through its
scale (a Deployment's, ReplicaSet's, StatefulSet's or ReplicationController's ``spec.replicas`` and selector);
a target whose replicas are outside ``[minReplicas, maxReplicas]`` is scaled to the nearest bound without
reading any metric (``SuccessfulRescale``), as upstream does; within the bounds every metric fails to be read,
so the HPA gets ``ScalingActive`` ``False`` with the metric's reason (``FailedGetResourceMetric`` ...) and the
events upstream records, and nothing is scaled; a target at zero replicas is ``ScalingDisabled``. Every HPA is
synced when it is created or its spec changes, and again every 15 seconds (--horizontal-pod-autoscaler-sync-period)."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from dralloc.server.clock import now
from dralloc.server.controllers.events import EventRecorder
from dralloc.server.controllers.writes import Writer
from dralloc.server.registry.kinds import CORE, GROUP_RESOURCES, Resource
from dralloc.server.registry.workload_columns import format_selector
from dralloc.server.types import Obj
from dralloc.store import Change
from dralloc.store.cache import cached

COMPONENT = "horizontal-pod-autoscaler"
HPAS = "horizontalpodautoscalers"
SYNC_PERIOD = 15.0
# what client-go answers for metrics.k8s.io and custom.metrics.k8s.io when no metrics server registered them
NO_RESOURCE_METRICS = ("unable to fetch metrics from resource metrics API: the server could not find the requested "
                       "resource (get pods.metrics.k8s.io)")
NO_CUSTOM_METRICS = "unable to fetch metrics from custom metrics API: no custom metrics API (custom.metrics.k8s.io) registered"
NO_EXTERNAL_METRICS = ("unable to fetch metrics from external metrics API: the server could not find the requested "
                       "resource (get {name}.external.metrics.k8s.io)")


@dataclass
class Scale:
    """What the controller reads of its target: the resource it is served from, its replicas and selector."""

    resource: Resource
    target: Obj
    replicas: int
    selector: str


def _dict(value: Any) -> Obj:
    return value if isinstance(value, dict) else {}


def _scalable(kind: str, api_version: str) -> Resource | None | str:
    """The served resource of a kind that has a scale subresource; the RESTMapper's error otherwise."""
    group = api_version.rpartition("/")[0] if "/" in api_version else ""
    table = CORE if not group else GROUP_RESOURCES.get(group, {})
    for resource in table.values():
        if resource.kind == kind and resource.stored_as is None:
            return resource if "scale" in resource.subresources else None
    return f'no matches for kind "{kind}" in group "{group}"'


def _selector_text(resource: Resource, target: Obj) -> str:
    selector = _dict(target.get("spec")).get("selector")
    if not resource.group:  # a ReplicationController's selector is a map
        selector = {"matchLabels": selector} if isinstance(selector, dict) else None
    text = format_selector(selector)
    return "" if text == "<none>" else text


def metric_failure(metric: Obj) -> tuple[str, str, str]:
    """For a metric no API can answer: its condition reason, the event's text, and the error
    computeReplicasForMetrics wraps it in."""
    kind = metric.get("type")
    if kind == "Resource":
        name = _dict(metric.get("resource")).get("name")
        error = (f"failed to get {name} utilization: unable to get metrics for resource {name}: "
                 f"{NO_RESOURCE_METRICS}")
        return "FailedGetResourceMetric", error, f"failed to get {name} resource metric value: {error}"
    if kind == "ContainerResource":
        source = _dict(metric.get("containerResource"))
        name, container = source.get("name"), source.get("container")
        error = (f"failed to get {name} utilization: unable to get metrics for resource {name}: "
                 f"{NO_RESOURCE_METRICS}")
        return "FailedGetContainerResourceMetric", error, f"failed to get {container} container metric value: {error}"
    if kind == "Pods":
        name = _dict(_dict(metric.get("pods")).get("metric")).get("name")
        error = f"unable to get metric {name}: {NO_CUSTOM_METRICS}"
        return "FailedGetPodsMetric", error, f"failed to get pods metric value: {error}"
    if kind == "Object":
        name = _dict(_dict(metric.get("object")).get("metric")).get("name")
        error = f"unable to get metric {name}: {NO_CUSTOM_METRICS}"
        return "FailedGetObjectMetric", error, f"failed to get object metric value: {error}"
    name = _dict(_dict(metric.get("external")).get("metric")).get("name")
    error = f"unable to get external metric {name}: {NO_EXTERNAL_METRICS.format(name=name)}"
    return "FailedGetExternalMetric", error, f"failed to get {name} external metric value: {error}"


def set_condition(conditions: list[Obj], kind: str, status: str, reason: str, message: str) -> list[Obj]:
    """setConditionInList: the condition of that type updated (its transition time moves only when its status
    changes), or added at the end."""
    out = [dict(c) for c in conditions]
    found = next((c for c in out if c.get("type") == kind), None)
    if found is None:
        found = {"type": kind}
        out.append(found)
    if found.get("status") != status:
        found["lastTransitionTime"] = now()
    found.update(status=status, reason=reason, message=message)
    # (the JSON field order of HorizontalPodAutoscalerCondition)
    order = ("type", "status", "lastTransitionTime", "reason", "message")
    return [{k: c[k] for k in order if k in c} for c in out]


@dataclass
class HorizontalPodAutoscalerController:
    NOTED: ClassVar[frozenset[str] | None] = frozenset((HPAS,))  # (note() is handed only these)
    writer: Writer
    recorder: EventRecorder
    # the generation of each HPA (by uid) last synced: a new or changed HPA is synced at once, the others every
    # sync period (upstream waits for the period even then; the first sync comes sooner here)
    synced: dict[str, int] = field(default_factory=dict)
    changed: bool = True
    next_due: float | None = None

    def notes(self, changes: Sequence[Change]) -> None:
        """Take in changes of HPAs (every one is synced again at its new generation)."""
        self.changed = True

    @property
    def due(self) -> bool:
        return self.changed or (self.next_due is not None and time.time() >= self.next_due)

    def cycle(self) -> bool:
        """Sync the HPAs not synced at their generation yet (every one once a sync period is over); True when it
        wrote anything."""
        periodic = self.next_due is not None and time.time() >= self.next_due
        self.changed = False
        hpas = cached(self.writer.store, HPAS).objects()
        if periodic or self.next_due is None:
            self.next_due = time.time() + SYNC_PERIOD if hpas else None
        wrote = False
        seen: dict[str, int] = {}
        for _, hpa in sorted(hpas.items()):
            meta = _dict(hpa.get("metadata"))
            uid, generation = str(meta.get("uid")), int(meta.get("generation") or 0)
            seen[uid] = generation
            if meta.get("deletionTimestamp") or (not periodic and self.synced.get(uid) == generation):
                continue
            wrote |= self._sync(hpa)
        self.synced = seen
        return wrote

    def _scale(self, hpa: Obj) -> Scale | str:
        ref = _dict(_dict(hpa.get("spec")).get("scaleTargetRef"))
        kind, name = str(ref.get("kind") or ""), str(ref.get("name") or "")
        found = _scalable(kind, str(ref.get("apiVersion") or ""))
        if isinstance(found, str):
            return found
        if found is None:
            return "the server could not find the requested resource"
        namespace = str(_dict(hpa.get("metadata")).get("namespace"))
        target = cached(self.writer.store, found.name).get(namespace, name)
        if target is None:
            return f'{found.group_resource} "{name}" not found'
        replicas = _dict(target.get("spec")).get("replicas")
        return Scale(found, target, replicas if isinstance(replicas, int) else 1, _selector_text(found, target))

    def _sync(self, hpa: Obj) -> bool:
        """reconcileAutoscaler, with no metrics to read."""
        spec, status = _dict(hpa.get("spec")), dict(_dict(hpa.get("status")))
        conditions = list(status.get("conditions") or [])
        scale = self._scale(hpa)
        if isinstance(scale, str):
            self.recorder.record(hpa, "Warning", "FailedGetScale", scale, COMPONENT)
            conditions = set_condition(conditions, "AbleToScale", "False", "FailedGetScale",
                                       f"the HPA controller was unable to get the target's current scale: {scale}")
            return self._write_status(hpa, {**status, "conditions": conditions})
        conditions = set_condition(conditions, "AbleToScale", "True", "SucceededGetScale",
                                   "the HPA controller was able to get the target's current scale")
        current = scale.replicas
        given = spec.get("minReplicas")
        minimum = given if isinstance(given, int) else 1
        maximum = int(spec.get("maxReplicas") or 0)
        metrics: list[Obj] | None = None
        if current == 0 and minimum != 0:
            desired, reason = 0, ""
            conditions = set_condition(conditions, "ScalingActive", "False", "ScalingDisabled",
                                       "scaling is disabled since the replica count of the target is zero")
        elif current > maximum:
            desired, reason = maximum, "Current number of replicas above Spec.MaxReplicas"
        elif current < minimum:
            desired, reason = minimum, "Current number of replicas below Spec.MinReplicas"
        else:
            return self._metrics_failed(hpa, status, conditions, scale)
        rescale = bool(reason) and desired != current
        last_scale = status.get("lastScaleTime")
        if rescale:
            if not self._rescale(scale, desired):
                return False
            conditions = set_condition(conditions, "AbleToScale", "True", "SucceededRescale",
                                       f"the HPA controller was able to update the target scale to {desired}")
            self.recorder.record(hpa, "Normal", "SuccessfulRescale", f"New size: {desired}; reason: {reason}",
                                 COMPONENT)
            last_scale = now()
        else:
            desired = current
        new_status = _status(hpa, current, desired, metrics, last_scale, conditions)
        return self._write_status(hpa, new_status)

    def _metrics_failed(self, hpa: Obj, status: Obj, conditions: list[Obj], scale: Scale) -> bool:
        """computeReplicasForMetrics when every metric fails: ScalingActive False with the first one's reason,
        its events, the target left as it is."""
        specs = [m for m in _dict(hpa.get("spec")).get("metrics") or [] if isinstance(m, dict)]
        if not scale.selector:
            self.recorder.record(hpa, "Warning", "SelectorRequired", "selector is required", COMPONENT)
            conditions = set_condition(conditions, "ScalingActive", "False", "InvalidSelector",
                                       "the HPA target's scale is missing a selector")
            self.recorder.record(hpa, "Warning", "FailedComputeMetricsReplicas", "selector is required", COMPONENT)
        elif specs:
            failures = [metric_failure(m) for m in specs]
            for reason, error, _ in failures:
                self.recorder.record(hpa, "Warning", reason, error, COMPONENT)
            reason, error, wrapped = failures[0]
            conditions = set_condition(conditions, "ScalingActive", "False", reason,
                                       f"the HPA was unable to compute the replica count: {error}")
            self.recorder.record(hpa, "Warning", "FailedComputeMetricsReplicas",
                                 f"invalid metrics ({len(specs)} invalid out of {len(specs)}), first error is: "
                                 f"{wrapped}", COMPONENT)
        metrics = [{"type": ""} for _ in specs] if scale.selector else None
        kept = status.get("desiredReplicas")
        desired = kept if isinstance(kept, int) else 0
        new_status = _status(hpa, scale.replicas, desired, metrics or None, status.get("lastScaleTime"), conditions)
        return self._write_status(hpa, new_status)

    def _rescale(self, scale: Scale, replicas: int) -> bool:
        """The scale subresource's update: the target's ``spec.replicas``."""
        meta = _dict(scale.target.get("metadata"))

        def mutate(current: Obj) -> Obj:
            current["spec"] = {**_dict(current.get("spec")), "replicas": replicas}
            return current

        return self.writer.update(scale.resource.name, str(meta.get("namespace")), str(meta.get("name")), mutate,
                                  uid=meta.get("uid")) is not None

    def _write_status(self, hpa: Obj, status: Obj) -> bool:
        """updateStatusIfNeeded: written only when it changed."""
        if status == hpa.get("status"):
            return False
        meta = _dict(hpa.get("metadata"))

        def mutate(current: Obj) -> Obj | None:
            return {**current, "status": status}

        return self.writer.update(HPAS, str(meta.get("namespace")), str(meta.get("name")), mutate,
                                  uid=meta.get("uid")) is not None


def _status(hpa: Obj, current: int, desired: int, metrics: list[Obj] | None, last_scale: Any,
            conditions: list[Obj]) -> Obj:
    """setStatus: the replicas, the metrics read, the last scale time and the conditions."""
    status: Obj = {}
    generation = _dict(hpa.get("metadata")).get("generation")
    if isinstance(generation, int):
        status["observedGeneration"] = generation
    if last_scale is not None:
        status["lastScaleTime"] = last_scale
    if current:
        status["currentReplicas"] = current
    status["desiredReplicas"] = desired
    if metrics:
        status["currentMetrics"] = metrics
    if conditions:
        status["conditions"] = conditions
    return status
