"""kube-apiserver validation for the objects dralloc reads: resource.k8s.io, and the core, scheduling, apps and
batch kinds a simulation reads (Node, Pod, Namespace, PriorityClass, the workloads).

``validate(obj)`` returns every field error of a new object (after API defaulting, as kube-apiserver
validates); ``validate_update(new, old)`` and ``validate_status_update(new, old)`` the errors of an update,
immutability included. Each error prints as ``<field path>: <Type>: <detail>``.
"""

from __future__ import annotations

from typing import Any

from dralloc.api.apps_v1 import DaemonSet, Deployment, ReplicaSet, StatefulSet
from dralloc.api.batch_v1 import CronJob, Job
from dralloc.api.coordination_v1 import Lease
from dralloc.api.core_v1 import Node, Pod
from dralloc.api.core_v1_storage import PersistentVolume, PersistentVolumeClaim
from dralloc.api.defaults import apply_defaults
from dralloc.api.jobset_v1alpha2 import JobSet
from dralloc.api.kinds import NAMESPACED_KINDS
from dralloc.api.leaderworkerset_v1 import LeaderWorkerSet
from dralloc.api.policy_v1 import PodDisruptionBudget
from dralloc.api.resource_v1 import (
    DeviceClass,
    DeviceTaintRule,
    ResourceClaim,
    ResourceClaimTemplate,
    ResourceSlice,
)
from dralloc.api.scheduling_v1 import PriorityClass
from dralloc.api.scheduling_v1alpha2 import PodGroup, Workload
from dralloc.api.storage_v1 import CSINode, StorageClass
from dralloc.errors import ValidationFailed
from dralloc.validation import field
from dralloc.validation.coordination import validate_lease_spec
from dralloc.validation.field import FieldError, aggregate_message
from dralloc.validation.meta import (
    IMMUTABLE,
    name_is_dns_label,
    name_is_dns_subdomain,
    validate_annotations,
    validate_labels,
    validate_object_meta,
    validate_object_meta_update,
)
from dralloc.validation.namespace import spec_finalizer_errors
from dralloc.validation.node import node_errors
from dralloc.validation.pod import pod_spec_errors
from dralloc.validation.podgroups import (
    validate_pod_group,
    validate_pod_group_update,
    validate_workload,
    validate_workload_update,
)
from dralloc.validation.policy import validate_pdb
from dralloc.validation.rbac import RbacKind, rbac_errors, rbac_update_errors
from dralloc.validation.resource import (
    RequestNames,
    validate_claim_spec,
    validate_claim_status,
    validate_device_class_spec,
    validate_slice_spec,
    validate_taint_rule_spec,
    validate_taint_rule_status,
)
from dralloc.validation.scheduling import validate_priority_class, validate_priority_class_update
from dralloc.validation.storage import (
    validate_csi_node,
    validate_persistent_volume,
    validate_persistent_volume_claim,
    validate_storage_class,
)
from dralloc.validation.workload_sets import jobset_errors, leaderworkerset_errors
from dralloc.validation.workloads import cron_job_errors, workload_spec_errors, workload_update_errors

__all__ = [
    "FieldError",
    "aggregate_message",
    "validate",
    "validate_update",
    "validate_status_update",
    "check",
    "NAMESPACED_KINDS",
]


def _meta(obj: Any, namespaced: bool, require_namespace: bool) -> list[FieldError]:
    return validate_object_meta(obj.metadata, namespaced, name_is_dns_subdomain, require_namespace=require_namespace)


def validate(obj: Any, *, require_namespace: bool = False) -> list[FieldError]:
    """All field errors of ``obj`` as kube-apiserver reports them on create."""
    obj = apply_defaults(obj)
    if isinstance(obj, ResourceSlice):
        return _meta(obj, False, False) + validate_slice_spec(obj.spec, None)
    if isinstance(obj, DeviceClass):
        return _meta(obj, False, False) + validate_device_class_spec(obj.spec, None)
    if isinstance(obj, ResourceClaim):
        errs = _meta(obj, True, require_namespace) + validate_claim_spec(obj.spec, "spec")
        if obj.status is not None:
            # A file may carry an allocated claim; check its status as a first status write would be.
            errs += validate_claim_status(obj.status, None, obj.metadata.deletion_timestamp is not None,
                                          RequestNames(obj.spec.devices))
        return errs
    if isinstance(obj, ResourceClaimTemplate):
        errs = _meta(obj, True, require_namespace)
        tmeta = obj.spec.metadata
        if tmeta is not None:
            errs += validate_labels(tmeta.labels, "spec.metadata.labels")
            errs += validate_annotations(tmeta.annotations, "spec.metadata.annotations")
        return errs + validate_claim_spec(obj.spec.spec, "spec.spec")
    if isinstance(obj, DeviceTaintRule):
        return _meta(obj, False, False) + validate_taint_rule_spec(obj.spec, None)
    if isinstance(obj, PriorityClass):
        return _meta(obj, False, False) + validate_priority_class(obj)
    if isinstance(obj, Lease):
        return _meta(obj, True, require_namespace) + validate_lease_spec(obj.spec)
    if isinstance(obj, Node):
        return _meta(obj, False, False) + node_errors(obj)
    if isinstance(obj, Pod):
        return _meta(obj, True, require_namespace) + pod_spec_errors(obj.spec, "spec", obj.metadata.name)
    if isinstance(obj, StatefulSet):  # (its pods are named <name>-<ordinal>: a DNS label)
        return (validate_object_meta(obj.metadata, True, name_is_dns_label, require_namespace=require_namespace)
                + workload_spec_errors(obj))
    if isinstance(obj, (Deployment, ReplicaSet, DaemonSet, Job)):
        return _meta(obj, True, require_namespace) + workload_spec_errors(obj)
    if isinstance(obj, PodDisruptionBudget):
        return _meta(obj, True, require_namespace) + validate_pdb(obj)
    if isinstance(obj, CronJob):
        return _meta(obj, True, require_namespace) + cron_job_errors(obj)
    if isinstance(obj, RbacKind):
        return rbac_errors(obj, require_namespace)
    if isinstance(obj, JobSet):
        return _meta(obj, True, require_namespace) + jobset_errors(obj)
    if isinstance(obj, LeaderWorkerSet):
        return _meta(obj, True, require_namespace) + leaderworkerset_errors(obj)
    if isinstance(obj, Workload):
        return _meta(obj, True, require_namespace) + validate_workload(obj)
    if isinstance(obj, PodGroup):
        return _meta(obj, True, require_namespace) + validate_pod_group(obj)
    if isinstance(obj, PersistentVolume):
        return _meta(obj, False, False) + validate_persistent_volume(obj)
    if isinstance(obj, PersistentVolumeClaim):
        return _meta(obj, True, require_namespace) + validate_persistent_volume_claim(obj)
    if isinstance(obj, StorageClass):
        return _meta(obj, False, False) + validate_storage_class(obj)
    if isinstance(obj, CSINode):
        return _meta(obj, False, False) + validate_csi_node(obj)
    kind = type(obj).__name__
    if kind == "Namespace":
        return validate_object_meta(obj.metadata, False, name_is_dns_label) + spec_finalizer_errors(obj.spec, False)
    if hasattr(obj, "metadata"):
        return _meta(obj, kind in NAMESPACED_KINDS, require_namespace)
    return []


def validate_update(new: Any, old: Any) -> list[FieldError]:
    """Field errors of replacing ``old`` by ``new`` (main resource; status is not written here)."""
    new, old = apply_defaults(new), apply_defaults(old)
    kind_new = type(new).__name__
    errs = validate_object_meta_update(new.metadata, old.metadata)
    if isinstance(new, ResourceSlice):
        return _meta(new, False, False) + errs + validate_slice_spec(new.spec, old.spec)
    if isinstance(new, DeviceClass):
        return _meta(new, False, False) + errs + validate_device_class_spec(new.spec, old.spec)
    if isinstance(new, ResourceClaim):
        errs = _meta(new, True, False) + errs
        if new.spec != old.spec:
            errs.append(field.invalid("spec", _spec_dict(new.spec), IMMUTABLE))
        return errs
    if isinstance(new, ResourceClaimTemplate):
        if new.spec != old.spec:
            errs.append(field.invalid("spec", _spec_dict(new.spec), IMMUTABLE))
        return errs
    if isinstance(new, DeviceTaintRule):
        return _meta(new, False, False) + errs + validate_taint_rule_spec(new.spec, old.spec)
    if isinstance(new, PriorityClass):
        return _meta(new, False, False) + errs + validate_priority_class_update(new, old)
    if isinstance(new, Lease):
        return _meta(new, True, False) + errs + validate_lease_spec(new.spec)
    if isinstance(new, Workload):
        return _meta(new, True, False) + errs + validate_workload_update(new, old)
    if isinstance(new, RbacKind):
        return rbac_errors(new) + errs + rbac_update_errors(new, old)
    if isinstance(new, CronJob):
        return _meta(new, True, False) + cron_job_errors(new, old) + errs + workload_update_errors(new, old)
    if isinstance(new, (Deployment, ReplicaSet, StatefulSet, DaemonSet, Job)):
        return validate(new) + errs + workload_update_errors(new, old)
    if isinstance(new, PodGroup):
        return _meta(new, True, False) + errs + validate_pod_group_update(new, old)
    if kind_new in ("Namespace", "Node", "Pod"):
        return errs
    return errs


def validate_status_update(new: Any, old: Any) -> list[FieldError]:
    """Field errors of a write to the ``/status`` subresource."""
    errs = validate_object_meta_update(new.metadata, old.metadata)
    if isinstance(new, ResourceClaim):
        from dralloc.api.resource_v1 import ResourceClaimStatus

        status = new.status or ResourceClaimStatus()
        return errs + validate_claim_status(status, old.status, new.metadata.deletion_timestamp is not None,
                                            RequestNames(new.spec.devices))
    if isinstance(new, DeviceTaintRule):
        return errs + validate_taint_rule_status(new.status)
    return errs


def _spec_dict(spec: Any) -> Any:
    from dralloc.api.codec import to_dict

    return to_dict(spec)


def check(obj: Any) -> None:
    """Raise ValidationFailed (an InputError) with kube-apiserver's message when ``obj`` is invalid."""
    errors = validate(obj)
    if errors:
        kind = getattr(obj, "kind", type(obj).__name__)
        name = getattr(getattr(obj, "metadata", None), "name", None) or ""
        raise ValidationFailed(f'{kind}.resource.k8s.io "{name}" is invalid: {aggregate_message(errors)}', errors)
