"""The protobuf schema table (notation: server/protobuf/schema.py) of scheduling.k8s.io/v1alpha2 Workloads and
PodGroups (served with the GenericWorkload gate), which the workload controllers' typed clients send as
protobuf. Written from the generated ``.proto`` of scheduling/v1alpha2 (field numbers) and the Go types' JSON
tags."""

from __future__ import annotations

from dralloc.server.protobuf.schema import META, messages, schema

# A PodGroupTemplate's fields after its name; a PodGroup's spec carries the same ones after its template's
# reference
_POLICIES = {2: "schedulingPolicy PodGroupSchedulingPolicy", 3: "schedulingConstraints *PodGroupSchedulingConstraints",
             4: "resourceClaims []PodGroupResourceClaim", 5: "disruptionMode *string", 6: "priorityClassName string",
             7: "priority *int32"}

SCHEDULING_V1ALPHA2 = schema(META, messages({
    "Workload": {1: "metadata ObjectMeta", 2: "spec WorkloadSpec"},
    "WorkloadSpec": {1: "controllerRef *TypedLocalObjectReference", 2: "podGroupTemplates []PodGroupTemplate"},
    "TypedLocalObjectReference": {1: "apiGroup string", 2: "kind string always", 3: "name string always"},
    "PodGroupTemplate": {1: "name string always", **_POLICIES},
    "PodGroupSchedulingPolicy": {1: "basic *BasicSchedulingPolicy", 2: "gang *GangSchedulingPolicy"},
    "BasicSchedulingPolicy": {},
    "GangSchedulingPolicy": {1: "minCount int32 always"},
    "PodGroupSchedulingConstraints": {1: "topology []TopologyConstraint"},
    "TopologyConstraint": {1: "key string always"},
    "PodGroupResourceClaim": {1: "name string always", 2: "resourceClaimName *string",
                              3: "resourceClaimTemplateName *string"},
    "PodGroup": {1: "metadata ObjectMeta", 2: "spec PodGroupSpec", 3: "status PodGroupStatus"},
    "PodGroupSpec": {1: "podGroupTemplateRef *PodGroupTemplateReference", **_POLICIES},
    "PodGroupTemplateReference": {1: "workload *WorkloadPodGroupTemplateReference"},
    "WorkloadPodGroupTemplateReference": {1: "workloadName string always", 2: "podGroupTemplateName string always"},
    "PodGroupStatus": {1: "conditions []Condition", 2: "resourceClaimStatuses []PodGroupResourceClaimStatus"},
    "PodGroupResourceClaimStatus": {1: "name string always", 2: "resourceClaimName *string"},
}))

KINDS = {("scheduling.k8s.io/v1alpha2", kind): (SCHEDULING_V1ALPHA2, kind) for kind in ("Workload", "PodGroup")}
