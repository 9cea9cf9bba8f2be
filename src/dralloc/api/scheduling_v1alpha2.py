"""scheduling.k8s.io/v1alpha2 Workload and PodGroup (Kubernetes 1.36, alpha behind ``GenericWorkload``).

A Workload holds up to 8 pod group templates; a workload controller (the Job controller with
``WorkloadWithJob``) creates one PodGroup per replica from a template, and pods join it through
``spec.schedulingGroup.podGroupName``. A PodGroup's policy is either ``basic`` (pods scheduled one by one)
or ``gang`` (``minCount`` pods or none), optionally with one topology constraint (``TopologyAwareWorkload
Scheduling``: every pod on nodes sharing one value of the label) and up to 4 ResourceClaims shared by the
group (``DRAWorkloadResourceClaims``).
"""

from __future__ import annotations

import msgspec

from dralloc.api.meta import Base, Condition, ListMeta, ObjectMeta

GROUP_VERSION = "scheduling.k8s.io/v1alpha2"
MAX_POD_GROUP_TEMPLATES = 8  # WorkloadMaxPodGroupTemplates
MAX_POD_GROUP_RESOURCE_CLAIMS = 4  # MaxPodGroupResourceClaims
MAX_TOPOLOGY_CONSTRAINTS = 1
POD_GROUP_SCHEDULED = "PodGroupScheduled"  # the condition type the scheduler writes
DISRUPTION_MODES = ["Pod", "PodGroup"]


class TypedLocalObjectReference(Base):
    api_group: str | None = None
    kind: str = ""
    name: str = ""


class BasicSchedulingPolicy(Base):
    """Empty: its presence selects pod-by-pod scheduling."""


class GangSchedulingPolicy(Base):
    min_count: int = 0


class PodGroupSchedulingPolicy(Base):
    """A union: exactly one of ``basic`` and ``gang``."""

    basic: BasicSchedulingPolicy | None = None
    gang: GangSchedulingPolicy | None = None


class TopologyConstraint(Base):
    key: str = ""


class PodGroupSchedulingConstraints(Base):
    topology: list[TopologyConstraint] | None = None


class PodGroupResourceClaim(Base):
    """A claim shared by the group's pods: exactly one of a claim name and a template name."""

    name: str = ""
    resource_claim_name: str | None = None
    resource_claim_template_name: str | None = None


class PodGroupTemplate(Base):
    name: str = ""
    scheduling_policy: PodGroupSchedulingPolicy = msgspec.field(default_factory=PodGroupSchedulingPolicy)
    scheduling_constraints: PodGroupSchedulingConstraints | None = None
    resource_claims: list[PodGroupResourceClaim] | None = None
    disruption_mode: str | None = None
    priority_class_name: str | None = None
    priority: int | None = None


class WorkloadSpec(Base):
    controller_ref: TypedLocalObjectReference | None = None
    pod_group_templates: list[PodGroupTemplate] = msgspec.field(default_factory=list)


class Workload(Base):
    api_version: str = GROUP_VERSION
    kind: str = "Workload"
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: WorkloadSpec = msgspec.field(default_factory=WorkloadSpec)


class WorkloadList(Base):
    api_version: str = GROUP_VERSION
    kind: str = "WorkloadList"
    metadata: ListMeta | None = None
    items: list[Workload] = msgspec.field(default_factory=list)


class WorkloadPodGroupTemplateReference(Base):
    workload_name: str = ""
    pod_group_template_name: str = ""


class PodGroupTemplateReference(Base):
    workload: WorkloadPodGroupTemplateReference | None = None


class PodGroupSpec(Base):
    pod_group_template_ref: PodGroupTemplateReference | None = None
    scheduling_policy: PodGroupSchedulingPolicy = msgspec.field(default_factory=PodGroupSchedulingPolicy)
    scheduling_constraints: PodGroupSchedulingConstraints | None = None
    resource_claims: list[PodGroupResourceClaim] | None = None
    disruption_mode: str | None = None
    priority_class_name: str | None = None
    priority: int | None = None


class PodGroupResourceClaimStatus(Base):
    name: str = ""
    resource_claim_name: str | None = None


class PodGroupStatus(Base):
    conditions: list[Condition] | None = None
    resource_claim_statuses: list[PodGroupResourceClaimStatus] | None = None


class PodGroup(Base):
    api_version: str = GROUP_VERSION
    kind: str = "PodGroup"
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: PodGroupSpec = msgspec.field(default_factory=PodGroupSpec)
    status: PodGroupStatus | None = None

    @property
    def min_count(self) -> int:
        """The gang's minCount; 1 for a basic group (upstream's ``getMinCount``)."""
        gang = self.spec.scheduling_policy.gang
        return gang.min_count if gang is not None else 1

    @property
    def topology_key(self) -> str | None:
        """The label of the group's one topology constraint, if any."""
        constraints = self.spec.scheduling_constraints
        if constraints is None or not constraints.topology:
            return None
        return constraints.topology[0].key


class PodGroupList(Base):
    api_version: str = GROUP_VERSION
    kind: str = "PodGroupList"
    metadata: ListMeta | None = None
    items: list[PodGroup] = msgspec.field(default_factory=list)
