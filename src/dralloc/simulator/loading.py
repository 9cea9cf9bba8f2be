"""Sorting decoded objects into what a simulation takes, expanding workload controllers into pods."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from dralloc.api.core_v1 import Node, Pod
from dralloc.api.core_v1_storage import PersistentVolume, PersistentVolumeClaim
from dralloc.api.resource_v1 import (
    DeviceClass,
    DeviceTaintRule,
    ResourceClaim,
    ResourceClaimTemplate,
    ResourceSlice,
)
from dralloc.api.scheduling_v1alpha2 import PodGroup, Workload
from dralloc.api.storage_v1 import CSIDriver, CSINode, CSIStorageCapacity, StorageClass
from dralloc.controllers.names import NameGenerator

WORKLOAD_KINDS = ("Deployment", "ReplicaSet", "StatefulSet", "Job", "DaemonSet")
WORKLOAD_SET_KINDS = ("JobSet", "LeaderWorkerSet")  # sets of Jobs / StatefulSets, made by their own controllers


@dataclass
class ClusterObjects:
    nodes: list[Node] = field(default_factory=list)
    pods: list[Pod] = field(default_factory=list)
    slices: list[ResourceSlice] = field(default_factory=list)
    classes: list[DeviceClass] = field(default_factory=list)
    claims: list[ResourceClaim] = field(default_factory=list)
    templates: list[ResourceClaimTemplate] = field(default_factory=list)
    taint_rules: list[DeviceTaintRule] = field(default_factory=list)
    priority_classes: list[Any] = field(default_factory=list)
    workloads: list[Any] = field(default_factory=list)
    # Services and ReplicationControllers: their selectors feed default topology spreading.
    services: list[Any] = field(default_factory=list)
    replication_controllers: list[Any] = field(default_factory=list)
    namespaces: list[Any] = field(default_factory=list)
    disruption_budgets: list[Any] = field(default_factory=list)
    persistent_volumes: list[PersistentVolume] = field(default_factory=list)
    persistent_volume_claims: list[PersistentVolumeClaim] = field(default_factory=list)
    storage_classes: list[StorageClass] = field(default_factory=list)
    csi_nodes: list[CSINode] = field(default_factory=list)
    csi_drivers: list[CSIDriver] = field(default_factory=list)
    storage_capacities: list[CSIStorageCapacity] = field(default_factory=list)
    pod_groups: list[PodGroup] = field(default_factory=list)
    scheduling_workloads: list[Workload] = field(default_factory=list)  # scheduling.k8s.io Workloads
    warnings: list[str] = field(default_factory=list)


def sort_objects(objects: Iterable[Any], names: NameGenerator) -> ClusterObjects:
    """Objects by kind; workloads expanded into the pods their controllers create (names from ``names``)."""
    out = ClusterObjects()
    buckets: dict[str, list[Any]] = {
        "Node": out.nodes, "Pod": out.pods, "ResourceSlice": out.slices, "DeviceClass": out.classes,
        "ResourceClaim": out.claims, "ResourceClaimTemplate": out.templates, "DeviceTaintRule": out.taint_rules,
        "PriorityClass": out.priority_classes, "Service": out.services,
        "ReplicationController": out.replication_controllers, "Namespace": out.namespaces,
        "PodDisruptionBudget": out.disruption_budgets, "PersistentVolume": out.persistent_volumes,
        "PersistentVolumeClaim": out.persistent_volume_claims, "StorageClass": out.storage_classes,
        "CSINode": out.csi_nodes, "CSIDriver": out.csi_drivers, "CSIStorageCapacity": out.storage_capacities,
        "PodGroup": out.pod_groups, "Workload": out.scheduling_workloads,
    }
    sets: list[Any] = []
    for obj in objects:
        kind = type(obj).__name__
        if kind in WORKLOAD_KINDS:
            out.workloads.append(obj)
        elif kind in WORKLOAD_SET_KINDS:
            sets.append(obj)
        elif kind in buckets:
            buckets[kind].append(obj)
    if out.workloads or sets:
        from dralloc.controllers.workloads import expand_workloads

        created, pods = expand_workloads(out.workloads, out.nodes, names, out.pods)
        if sets:
            from dralloc.controllers.workload_sets import expand_workload_sets

            made = expand_workload_sets(sets, created, out.pods, pods, names, out.priority_classes, out.services)
            created, pods = created + made.workloads, made.pods
            out.services.extend(made.services)
            out.warnings.extend(made.warnings)
        out.workloads = created
        out.pods.extend(pods)
        from dralloc.api.apps_v1 import StatefulSet
        from dralloc.controllers.workloads import statefulset_claims

        have = {(c.metadata.namespace or "default", c.metadata.name or "") for c in out.persistent_volume_claims}
        for sts in (w for w in created if isinstance(w, StatefulSet)):
            out.persistent_volume_claims.extend(statefulset_claims(sts, have))
    return out


def load_validated(sources: list[str]) -> tuple[list[Any], list[str]]:
    """Decode the sources on the shared strict path and validate every object with kube-apiserver's
    rules; raises ValidationFailed (every error, with field paths) on invalid input. Unknown and repeated
    fields come back as warnings, with the skipped kinds."""
    objects, skipped, field_problems = load_checked_inputs(sources)
    return objects, skipped + field_problems


def load_checked_inputs(sources: list[str]) -> tuple[list[Any], list[str], list[str]]:
    """As load_validated, with the skipped kinds and the unknown or repeated fields apart (the fields are
    errors under ``--strict``, the kinds are not)."""
    import warnings

    from dralloc.api import codec
    from dralloc.api.resource_v1 import ResourceSlice
    from dralloc.errors import ValidationFailed
    from dralloc.simulator.sharing import SliceSharing
    from dralloc.validation import validate

    sharing = SliceSharing()  # (each slice shares as it is decoded: a big dump never holds unshared copies)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        objects, field_problems = codec.load_checked(
            sources, each=lambda obj: sharing.share(obj) if type(obj) is ResourceSlice else obj)
    skipped = [str(w.message) for w in caught]
    fields = [f"{p.where}: {p.kind}/{p.name}: {p.message}" for p in field_problems]
    problems: list[str] = []
    for obj in objects:
        meta = getattr(obj, "metadata", None)
        where = f"{type(obj).__name__}/{getattr(meta, 'name', '') or '(unnamed)'}"
        errors = [str(err) for err in validate(obj)]
        errors += [e for e in _template_spread_errors(obj) if e not in errors]
        problems.extend(f"{where}: {e}" for e in errors)
    if problems:
        raise ValidationFailed("invalid input:\n  " + "\n  ".join(problems))
    return objects, skipped, fields


def _template_spread_errors(obj: Any) -> list[str]:
    """The topology spread constraints of a workload's pod template, checked as its pods' will be: the
    simulator makes the pods itself, so a template kube-apiserver leaves unchecked (a StatefulSet's) is
    refused here rather than scheduled as pods the controller could never create."""
    from dralloc.validation.pod import topology_spread_errors

    template = getattr(getattr(obj, "spec", None), "template", None)
    constraints = getattr(getattr(template, "spec", None), "topology_spread_constraints", None)
    if not constraints:
        return []
    return [str(e) for e in topology_spread_errors(constraints, "spec.template.spec.topologySpreadConstraints")]
