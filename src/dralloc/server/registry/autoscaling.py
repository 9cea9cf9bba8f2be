"""The autoscaling HorizontalPodAutoscaler strategy (pkg/registry/autoscaling/horizontalpodautoscaler): stored as
autoscaling/v2 with decoding's defaults (``SetDefaults_HorizontalPodAutoscaler``: ``minReplicas`` 1, a CPU
utilization metric of 80% when none is given, a given behavior's missing scale-up and scale-down rules), shown
in autoscaling/v2 or autoscaling/v1 (``dralloc.api.autoscaling_conversion``), keeping ``metadata.generation``
(HPAGeneration) and validated as kube-apiserver validates it; its status is written through ``/status`` (the
HPA controller's, server/controllers/autoscaling.py). And the columns ``kubectl get hpa`` prints."""

from __future__ import annotations

import copy
from typing import Any

import msgspec

from dralloc.api import autoscaling_v1
from dralloc.api.autoscaling_conversion import to_v1, to_v2
from dralloc.api.autoscaling_v2 import (
    DEFAULT_CPU_UTILIZATION,
    HorizontalPodAutoscaler,
)
from dralloc.api.codec import decode
from dralloc.api.quantity import Quantity, quantity_dec_hook
from dralloc.errors import InputError
from dralloc.server.registry.strategy import Strategy, managed_field_errors
from dralloc.server.types import Obj
from dralloc.validation import field as f
from dralloc.validation.autoscaling import hpa_spec_errors, hpa_status_errors
from dralloc.validation.meta import (
    finalizers_added_while_deleting,
    name_is_dns_subdomain,
    validate_object_meta,
    validate_object_meta_update,
)

_SCALE_UP = {"stabilizationWindowSeconds": 0, "selectPolicy": "Max", "policies": [
    {"type": "Pods", "value": 4, "periodSeconds": 15}, {"type": "Percent", "value": 100, "periodSeconds": 15}]}
# (no stabilization window: the controller's --horizontal-pod-autoscaler-downscale-stabilization applies)
_SCALE_DOWN = {"selectPolicy": "Max", "policies": [{"type": "Percent", "value": 100, "periodSeconds": 15}]}


def _dict(value: Any) -> Obj | None:
    return value if isinstance(value, dict) else None


def _rules(given: Any, defaults: Obj) -> Obj:
    """GenerateHPAScale{Up,Down}Rules: the defaults, with what ``given`` sets."""
    rules = copy.deepcopy(defaults)
    for key, value in (_dict(given) or {}).items():
        if value is not None:
            rules[key] = value
    return rules


def default_hpa(obj: Obj) -> None:
    """SetDefaults_HorizontalPodAutoscaler (v2), in place."""
    spec = _dict(obj.get("spec"))
    if spec is None:
        return
    if spec.get("minReplicas") is None:
        spec["minReplicas"] = 1
    if not spec.get("metrics"):
        spec["metrics"] = [{"type": "Resource", "resource": {
            "name": "cpu", "target": {"type": "Utilization", "averageUtilization": DEFAULT_CPU_UTILIZATION}}}]
    behavior = _dict(spec.get("behavior"))
    if behavior is not None:
        spec["behavior"] = {**behavior, "scaleUp": _rules(behavior.get("scaleUp"), _SCALE_UP),
                            "scaleDown": _rules(behavior.get("scaleDown"), _SCALE_DOWN)}


class HorizontalPodAutoscalerStrategy(Strategy):
    tracks_generation = True  # (HPAGeneration)

    def decode_defaults(self, obj: Obj, sub: str) -> None:
        if obj.get("apiVersion") == autoscaling_v1.GROUP_VERSION:  # v1's only default; the v2 ones follow its conversion
            spec = _dict(obj.get("spec"))
            if spec is not None and spec.get("minReplicas") is None:
                spec["minReplicas"] = 1
            return
        default_hpa(obj)

    def decode(self, data: Obj) -> Any | None:
        """An autoscaling/v1 body: read as v1 (its fields, its types), then converted to v2 with v2's defaults."""
        if data.get("apiVersion") != autoscaling_v1.GROUP_VERSION:
            return None
        try:
            msgspec.convert(data, autoscaling_v1.HorizontalPodAutoscaler, dec_hook=quantity_dec_hook)
        except msgspec.ValidationError as exc:
            raise InputError(str(exc)) from None
        converted = to_v2(data)
        default_hpa(converted)
        return decode(converted)

    def present(self, obj: Obj, api_version: str) -> Obj | None:
        return to_v1(obj) if api_version == autoscaling_v1.GROUP_VERSION else None

    def prepare_for_update(self, merged: Obj, old: Obj, sub: str) -> None:
        generation = old["metadata"].get("generation", 1)
        merged["metadata"]["generation"] = generation + 1 if merged.get("spec") != old.get("spec") else generation

    def create_errors(self, typed: Any, stored: Obj | None, namespaced: bool) -> list[f.FieldError]:
        assert isinstance(typed, HorizontalPodAutoscaler)
        return (validate_object_meta(typed.metadata, True, name_is_dns_subdomain, require_namespace=namespaced)
                + hpa_spec_errors(typed))

    def update_errors(self, merged: Obj, old: Obj, sub: str, typed_meta: Any) -> list[f.FieldError]:
        errors = finalizers_added_while_deleting(merged["metadata"], old["metadata"]) + managed_field_errors(merged)
        new, previous = decode(merged), decode(old)
        errors = validate_object_meta_update(new.metadata, previous.metadata) + errors
        if sub == "status":
            return errors + hpa_status_errors(new.status)
        bound = 0 if previous.spec.min_replicas == 0 else 1  # (an HPA that already scales to zero may keep it)
        return errors + validate_object_meta(new.metadata, True, name_is_dns_subdomain) + hpa_spec_errors(new, bound)


STRATEGY = HorizontalPodAutoscalerStrategy()


# --- kubectl get hpa (pkg/printers/internalversion: printHorizontalPodAutoscaler, formatHPAMetrics) ----------


def _quantity_text(value: Any) -> str:
    return str(Quantity(value)) if value is not None else "<nil>"


def _metric_text(spec: Obj, status: Obj | None) -> str:
    kind = spec.get("type")
    source = {"External": "external", "Pods": "pods", "Object": "object", "Resource": "resource",
              "ContainerResource": "containerResource"}.get(str(kind))
    if source is None:
        return "<unknown type>"
    src = _dict(spec.get(source)) or {}
    target = _dict(src.get("target")) or {}
    current = _dict((_dict((status or {}).get(source)) or {}).get("current")) if status else None
    shown = "<unknown>"
    if source in ("resource", "containerResource"):
        name = f"{src.get('name')}: "
        if target.get("averageValue") is not None:
            if current is not None:
                shown = _quantity_text(current.get("averageValue"))
            return f"{name}{shown}/{_quantity_text(target['averageValue'])}"
        if current is not None and current.get("averageUtilization") is not None:
            shown = f"{current['averageUtilization']}%"
        goal = f"{target['averageUtilization']}%" if target.get("averageUtilization") is not None else "<auto>"
        return f"{name}{shown}/{goal}"
    if source == "pods":
        if current is not None:
            shown = _quantity_text(current.get("averageValue"))
        return f"{shown}/{_quantity_text(target.get('averageValue'))}"
    if target.get("averageValue") is not None:  # an external or object metric's per-pod target
        if current is not None and current.get("averageValue") is not None:
            shown = _quantity_text(current["averageValue"])
        return f"{shown}/{_quantity_text(target['averageValue'])} (avg)"
    if current is not None:
        shown = _quantity_text(current.get("value"))
    return f"{shown}/{_quantity_text(target.get('value'))}"


def hpa_targets(obj: Obj) -> str:
    """formatHPAMetrics: each metric's current and target values, two at most (``+ N more...``)."""
    specs = [m for m in (_dict(obj.get("spec")) or {}).get("metrics") or [] if isinstance(m, dict)]
    if not specs:
        return "<none>"
    statuses = (_dict(obj.get("status")) or {}).get("currentMetrics") or []
    texts = [_metric_text(spec, statuses[i] if i < len(statuses) and isinstance(statuses[i], dict) else None)
             for i, spec in enumerate(specs)]
    if len(texts) > 2:
        return f"{', '.join(texts[:2])} + {len(texts) - 2} more..."
    return ", ".join(texts)


def _spec(obj: Obj) -> Obj:
    return _dict(obj.get("spec")) or {}


COLUMNS = {
    "=hpaReference": lambda o: "{}/{}".format((_dict(_spec(o).get("scaleTargetRef")) or {}).get("kind", ""),
                                              (_dict(_spec(o).get("scaleTargetRef")) or {}).get("name", "")),
    "=hpaTargets": hpa_targets,
    "=hpaMinPods": lambda o: "<unset>" if _spec(o).get("minReplicas") is None else str(_spec(o)["minReplicas"]),
    "=hpaMaxPods": lambda o: _spec(o).get("maxReplicas") or 0,
    "=hpaReplicas": lambda o: (_dict(o.get("status")) or {}).get("currentReplicas") or 0,
}
COLUMN_TYPES = {"=hpaMaxPods": "integer", "=hpaReplicas": "integer"}
TABLE = (("Name", "metadata.name", 0), ("Reference", "=hpaReference", 0), ("Targets", "=hpaTargets", 0),
         ("MinPods", "=hpaMinPods", 0), ("MaxPods", "=hpaMaxPods", 0), ("Replicas", "=hpaReplicas", 0),
         ("Age", "=age", 0))
