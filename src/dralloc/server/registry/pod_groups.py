"""scheduling.k8s.io/v1alpha2 Workloads and PodGroups, as kube-apiserver 1.36 serves them with ``GenericWorkload``
on (pkg/registry/scheduling/workload and podgroup): validated with the server's feature gates, so a gated field
(a topology constraint, group-level ResourceClaims, the preemption fields) set while its gate is off is refused
on create; the spec never changes after create; a PodGroup's status (the scheduler's ``PodGroupScheduled``
condition) is written through ``/status`` only, and checked there as kube-apiserver checks conditions.

The rules themselves are the pure functions of ``dralloc.validation.podgroups``; this module only picks the
gates they run with and where each applies.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from dralloc.api.codec import decode
from dralloc.api.scheduling_v1alpha2 import PodGroup, Workload
from dralloc.server.registry.priorities import admit_pod_group
from dralloc.server.registry.strategy import Strategy, managed_field_errors
from dralloc.server.types import Obj
from dralloc.store import SQLStore
from dralloc.validation import validate_status_update
from dralloc.validation.field import FieldError
from dralloc.validation.meta import (
    finalizers_added_while_deleting,
    name_is_dns_subdomain,
    validate_conditions,
    validate_object_meta,
)
from dralloc.validation.podgroups import ALL_FEATURES, PREEMPTION, validate_pod_group, validate_workload

# the gate that serves the API at all (kube-apiserver's GenericWorkload, with scheduling.k8s.io/v1alpha2 enabled)
SERVING_GATE = "GenericWorkload"


def validation_features(enabled: Collection[str]) -> frozenset[str]:
    """The gated options the validation knows of that are enabled."""
    return frozenset(ALL_FEATURES & set(enabled))


class _WorkloadAPIStrategy(Strategy):
    """What Workloads and PodGroups share: generation kept (1 on create), create validation with the gates."""

    tracks_generation = True

    def __init__(self, features: Collection[str]) -> None:
        self.features = frozenset(features)

    def create_errors(self, typed: Any, stored: Obj | None, namespaced: bool) -> list[FieldError]:
        meta = validate_object_meta(typed.metadata, True, name_is_dns_subdomain, require_namespace=namespaced)
        return meta + self.spec_errors(typed)

    def spec_errors(self, typed: Any) -> list[FieldError]:
        raise NotImplementedError


class WorkloadStrategy(_WorkloadAPIStrategy):
    def spec_errors(self, typed: Any) -> list[FieldError]:
        assert isinstance(typed, Workload)
        return validate_workload(typed, self.features)


class PodGroupStrategy(_WorkloadAPIStrategy):
    def admit(self, store: SQLStore, sent: Obj, namespace: str) -> Obj:
        """With ``WorkloadAwarePreemption``, the Priority admission plugin gives a PodGroup its priority."""
        return admit_pod_group(store, sent) if PREEMPTION in self.features else sent

    def spec_errors(self, typed: Any) -> list[FieldError]:
        assert isinstance(typed, PodGroup)
        return validate_pod_group(typed, self.features)

    def update_errors(self, merged: Obj, old: Obj, sub: str, typed_meta: Any) -> list[FieldError]:
        if sub != "status":
            return super().update_errors(merged, old, sub, typed_meta)
        new_typed, old_typed = decode(merged), decode(old)
        assert isinstance(new_typed, PodGroup)
        conditions = new_typed.status.conditions if new_typed.status is not None else None
        return (validate_status_update(new_typed, old_typed)
                + validate_conditions(conditions, "status.conditions")
                + finalizers_added_while_deleting(merged["metadata"], old["metadata"])
                + managed_field_errors(merged))
