"""HorizontalPodAutoscalers between autoscaling/v1 and autoscaling/v2 (pkg/apis/autoscaling/v1/conversion.go), on
their JSON forms. v1 has one target, ``targetCPUUtilizationPercentage``: the v2 object's CPU utilization metric.
v2's status conditions travel in v1 as the ``autoscaling.alpha.kubernetes.io/conditions`` annotation (JSON), as
upstream carries them. Not carried: v2's other metrics and its behavior (upstream's metrics, current-metrics and
behavior annotations)."""

from __future__ import annotations

import json
from typing import Any

from dralloc.api.autoscaling_v1 import GROUP_VERSION as GROUP_VERSION_V1
from dralloc.api.autoscaling_v2 import GROUP_VERSION

CONDITIONS_ANNOTATION = "autoscaling.alpha.kubernetes.io/conditions"

Obj = dict[str, Any]


def _dict(value: Any) -> Obj:
    return value if isinstance(value, dict) else {}


def _cpu_utilization(metric: Any, key: str) -> int | None:
    """The CPU utilization of a v2 Resource metric (spec: its target's, status: its current value's)."""
    metric = _dict(metric)
    resource = _dict(metric.get("resource"))
    if metric.get("type") != "Resource" or resource.get("name") != "cpu":
        return None
    value = _dict(resource.get(key))
    if key == "target" and value.get("type") != "Utilization":
        return None
    utilization = value.get("averageUtilization")
    return utilization if isinstance(utilization, int) else None


def to_v2(v1: Obj) -> Obj:
    """A v1 object in v2's form."""
    spec = dict(_dict(v1.get("spec")))
    target = spec.pop("targetCPUUtilizationPercentage", None)
    if target is not None:
        spec["metrics"] = [{"type": "Resource", "resource": {
            "name": "cpu", "target": {"type": "Utilization", "averageUtilization": target}}}]
    out: Obj = {**v1, "apiVersion": GROUP_VERSION, "spec": spec}
    meta = dict(_dict(v1.get("metadata")))
    annotations = dict(_dict(meta.get("annotations")))
    conditions = annotations.pop(CONDITIONS_ANNOTATION, None)
    if CONDITIONS_ANNOTATION in _dict(meta.get("annotations")):
        meta["annotations"] = annotations or None
        if meta["annotations"] is None:
            meta.pop("annotations")
        out["metadata"] = meta
    if "status" in v1:
        status = dict(_dict(v1.get("status")))
        current = status.pop("currentCPUUtilizationPercentage", None)
        if current is not None:
            status["currentMetrics"] = [{"type": "Resource", "resource": {
                "name": "cpu", "current": {"averageUtilization": current}}}]
        if isinstance(conditions, str):
            try:
                parsed = json.loads(conditions)
            except ValueError:
                parsed = None
            if isinstance(parsed, list):
                status["conditions"] = parsed
        out["status"] = status
    return out


def to_v1(v2: Obj) -> Obj:
    """A v2 object in v1's form."""
    spec = {k: v for k, v in _dict(v2.get("spec")).items() if k not in ("metrics", "behavior")}
    for metric in _dict(v2.get("spec")).get("metrics") or []:
        target = _cpu_utilization(metric, "target")
        if target is not None:
            spec["targetCPUUtilizationPercentage"] = target
            break
    out: Obj = {**v2, "apiVersion": GROUP_VERSION_V1, "spec": spec}
    if "status" in v2:
        source = _dict(v2.get("status"))
        status = {k: v for k, v in source.items() if k not in ("currentMetrics", "conditions")}
        status.setdefault("currentReplicas", 0)
        status.setdefault("desiredReplicas", 0)
        for metric in source.get("currentMetrics") or []:
            current = _cpu_utilization(metric, "current")
            if current is not None:
                status["currentCPUUtilizationPercentage"] = current
                break
        out["status"] = status
        if source.get("conditions"):
            meta = dict(_dict(v2.get("metadata")))
            meta["annotations"] = {**_dict(meta.get("annotations")),
                                   CONDITIONS_ANNOTATION: json.dumps(source["conditions"], separators=(",", ":"))}
            out["metadata"] = meta
    return out
