"""What a simulation produces: per-pod placements or kube-scheduler's message, evictions, utilisation."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from msgspec import to_builtins

from dralloc.api.core_v1 import Pod
from dralloc.api.meta import Condition
from dralloc.api.resource_v1 import ResourceClaim
from dralloc.api.scheduling_v1alpha2 import PodGroup
from dralloc.scheduler.volumes import VolumeBinding


@dataclass
class PodResult:
    """One pod's outcome. ``node`` is None while pending; ``message`` is kube-scheduler's text then."""

    pod: Pod
    node: str | None
    message: str = ""
    claims: list[ResourceClaim] = field(default_factory=list)
    status: str = "pending"  # running (bound before), scheduled, unschedulable, evicted, skipped, error
    attempts: int = 0
    # Held back before the queue (scheduling gates, a PreEnqueue plugin) and never tried: kube-scheduler writes
    # no event and no condition for such a pod, whatever ``message`` says here.
    held: bool = False

    @property
    def namespace(self) -> str:
        return self.pod.metadata.namespace or "default"

    @property
    def name(self) -> str:
        return self.pod.metadata.name or ""

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"


# ``Eviction.by`` for a pod group's preemption: this prefix, then the group's ``namespace/name``
POD_GROUP_PREEMPTOR = "PodGroup/"


@dataclass
class Eviction:
    namespace: str
    name: str
    node: str
    by: str
    # The PodDisruptionBudgets ("namespace/name") this eviction takes below their allowed disruptions.
    violated_budgets: list[str] = field(default_factory=list)


@dataclass
class PodGroupResult:
    """One ``podGroups`` row: the group, its minCount, members scheduled, whether it was placed (its
    PodGroupScheduled condition is True), the topology domain it got and why it was not placed."""

    namespace: str
    name: str
    min_count: int
    scheduled: int
    placed: bool
    domain: str | None
    message: str
    members: list[str]  # the member pods' keys, in input order
    conditions: list[Condition] = field(default_factory=list)  # the PodGroup's, as the scheduler left them
    # With WorkloadAwarePreemption: who evicted its members last (a pod's key, or PodGroup/<namespace>/<name>)
    preempted_by: str | None = None

    def to_dict(self) -> dict[str, object]:
        row: dict[str, object] = {"namespace": self.namespace, "name": self.name, "minCount": self.min_count,
                                  "scheduled": self.scheduled, "placed": self.placed, "domain": self.domain,
                                  "message": self.message, "conditions": [to_builtins(c) for c in self.conditions]}
        if self.preempted_by is not None:
            row["preemptedBy"] = self.preempted_by
        return row


@dataclass
class SimulationResult:
    """Every input and generated pod once, in input order, with the claims and evictions."""

    pods: list[PodResult]
    claims: list[ResourceClaim]
    evicted: list[Eviction]
    utilization: dict[str, Any]
    warnings: list[str] = field(default_factory=list)
    seed: int = 0
    # the claims the simulation bound to a PersistentVolume or left to provisioning on a node
    volume_bindings: list[VolumeBinding] = field(default_factory=list)
    # each PodGroup's row (GenericWorkload on), and the PodGroups with the status the scheduler wrote
    pod_groups: list[PodGroupResult] = field(default_factory=list)
    pod_group_objects: list[PodGroup] = field(default_factory=list)

    @property
    def scheduled(self) -> list[PodResult]:
        return [p for p in self.pods if p.status == "scheduled"]

    @property
    def unschedulable(self) -> list[PodResult]:
        return [p for p in self.pods if p.status in ("unschedulable", "error")]

    def to_dict(self) -> dict[str, Any]:
        """The ``SimulationResult`` JSON document (stable key order)."""
        from dralloc.api.codec import to_dict

        pods = []
        for p in self.pods:
            pods.append({
                "namespace": p.namespace,
                "name": p.name,
                "node": p.node,
                "status": p.status,
                "message": p.message,
                "claims": [{"name": c.metadata.name,
                            "allocation": to_dict(c.status.allocation)
                            if c.status is not None and c.status.allocation is not None else None}
                           for c in p.claims],
            })
        return {
            "apiVersion": "dralloc.dev/v1alpha1",
            "kind": "SimulationResult",
            "seed": self.seed,
            "scheduled": len(self.scheduled),
            "unschedulable": len(self.unschedulable),
            "pods": pods,
            "evicted": [{"namespace": e.namespace, "name": e.name, "node": e.node, "by": e.by,
                         "violatedBudgets": list(e.violated_budgets)} for e in self.evicted],
            "utilization": self.utilization,
            "volumeBindings": [b.to_dict() for b in self.volume_bindings],
            **({"podGroups": [g.to_dict() for g in self.pod_groups]} if self.pod_groups else {}),
            "warnings": list(self.warnings),
        }
