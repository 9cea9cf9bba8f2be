"""ResourceClaims shared by a PodGroup (DRAWorkloadResourceClaims): DynamicResources reserves a claim made for
a PodGroup for the group, not for each member pod, so one ``reservedFor`` entry serves every member and the
claim stays allocated while the group exists (a member leaving does not free it)."""

from __future__ import annotations

from dralloc.api.core_v1 import Pod
from dralloc.api.resource_v1 import ResourceClaim, ResourceClaimConsumerReference

PODGROUP_CLAIM_NAME_ANNOTATION = "resource.kubernetes.io/podgroup-claim-name"  # on a PodGroup's generated claim


def group_consumer(claim: ResourceClaim, pod: Pod) -> ResourceClaimConsumerReference | None:
    """Whom DynamicResources reserves ``claim`` for when ``pod`` uses it: the claim's owning PodGroup when the
    claim was made for the pod's group (one ``reservedFor`` entry serves every member, and the claim stays
    allocated while the group exists); None for any other claim (reserved for the pod)."""
    group = pod.spec.scheduling_group
    if group is None or not group.pod_group_name:
        return None
    if PODGROUP_CLAIM_NAME_ANNOTATION not in (claim.metadata.annotations or {}):
        return None
    for owner in claim.metadata.owner_references or ():
        if owner.kind == "PodGroup" and owner.controller and owner.name == group.pod_group_name:
            return ResourceClaimConsumerReference(api_group="scheduling.k8s.io", resource="podgroups",
                                                  name=owner.name, uid=owner.uid)
    return None
