"""The core/v1 ReplicationController strategy (pkg/registry/core/replicationcontroller): stored as sent plus
``SetDefaults_ReplicationController`` (the selector, and the labels when it has none, from its template's labels;
1 replica; the template's pod defaults), with ``metadata.generation``, its status written through ``/status``
(the replication controller's, which is the ReplicaSet controller of server/controllers/workloads.py), its
``/scale`` (``kubectl scale rc``) and kube-apiserver's validation (``dralloc.validation.replication_controllers``).
And the columns ``kubectl get rc`` prints."""

from __future__ import annotations

from typing import Any

import msgspec

from dralloc.api.codec import decode
from dralloc.api.core_v1 import PodTemplateSpec
from dralloc.api.quantity import quantity_dec_hook
from dralloc.server.registry.strategy import managed_field_errors
from dralloc.server.registry.workloads import WorkloadStrategy, replica_set_defaults
from dralloc.server.types import Obj
from dralloc.validation import field as f
from dralloc.validation.meta import (
    finalizers_added_while_deleting,
    name_is_dns_subdomain,
    validate_object_meta,
    validate_object_meta_update,
)
from dralloc.validation.replication_controllers import rc_spec_errors, rc_status_errors


def _dict(value: Any) -> Obj:
    return value if isinstance(value, dict) else {}


def rc_defaults(obj: Obj) -> None:
    """SetDefaults_ReplicationController, in place."""
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return
    template = spec.get("template")
    labels = _dict(template).get("metadata", {}).get("labels") if isinstance(template, dict) \
        and isinstance(template.get("metadata"), dict) else None
    if isinstance(labels, dict):
        if not spec.get("selector"):
            spec["selector"] = dict(labels)
        meta = obj.setdefault("metadata", {})
        if isinstance(meta, dict) and not meta.get("labels"):
            meta["labels"] = dict(labels)
    replica_set_defaults(obj)  # (1 replica, the template's pod defaults: a ReplicaSet's)


def labels_text(labels: Any) -> str:
    """labels.FormatLabels: ``k=v`` pairs sorted by key, ``<none>`` for none."""
    pairs = sorted(_dict(labels).items())
    return ",".join(f"{k}={v}" for k, v in pairs) or "<none>"


def _template(spec: Obj) -> PodTemplateSpec | None:
    raw = spec.get("template")
    if not isinstance(raw, dict):
        return None
    try:
        return msgspec.convert(raw, PodTemplateSpec, dec_hook=quantity_dec_hook)
    except msgspec.ValidationError:
        return PodTemplateSpec()  # (the body's types were checked where it was decoded)


class ReplicationControllerStrategy(WorkloadStrategy):
    def create_errors(self, typed: Any, stored: Obj | None, namespaced: bool) -> list[f.FieldError]:
        spec = _dict((stored or {}).get("spec"))
        return (validate_object_meta(typed.metadata, True, name_is_dns_subdomain, require_namespace=namespaced)
                + rc_spec_errors(spec, _template(spec)))

    def update_errors(self, merged: Obj, old: Obj, sub: str, typed_meta: Any) -> list[f.FieldError]:
        errors = finalizers_added_while_deleting(merged["metadata"], old["metadata"]) + managed_field_errors(merged)
        new, previous = decode(merged), decode(old)
        errors = validate_object_meta_update(new.metadata, previous.metadata) + errors
        if sub == "status":
            return errors + rc_status_errors(_dict(merged.get("status")))
        if sub:
            return errors
        spec = _dict(merged.get("spec"))
        return errors + rc_spec_errors(spec, _template(spec))

    def scale_of(self, obj: Obj) -> Obj | None:
        """The Scale of a ReplicationController: its selector is a label map."""
        meta = _dict(obj.get("metadata"))
        kept = {k: meta[k] for k in ("name", "namespace", "uid", "resourceVersion", "creationTimestamp") if k in meta}
        spec, status = _dict(obj.get("spec")), _dict(obj.get("status"))
        selector = labels_text(spec.get("selector"))
        return {"kind": "Scale", "apiVersion": "autoscaling/v1", "metadata": kept,
                "spec": {"replicas": spec.get("replicas", 1)},
                "status": {"replicas": status.get("replicas") or 0, "selector": "" if selector == "<none>" else selector}}


STRATEGY = ReplicationControllerStrategy(rc_defaults)
COLUMNS = {"=rcSelector": lambda o: labels_text(_dict(o.get("spec")).get("selector"))}
# printReplicationController: NAME DESIRED CURRENT READY AGE, and -o wide the containers, images and selector
TABLE = (("Name", "metadata.name", 0), ("Desired", "=desiredReplicas", 0), ("Current", "=currentReplicas", 0),
         ("Ready", "=readyReplicas", 0), ("Age", "=age", 0), ("Containers", "=containers", 1),
         ("Images", "=images", 1), ("Selector", "=rcSelector", 1))
