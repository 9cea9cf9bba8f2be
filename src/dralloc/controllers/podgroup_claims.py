"""The resourceclaim controller's part for PodGroups (DRAWorkloadResourceClaims): one ResourceClaim per
PodGroup claim that names a ResourceClaimTemplate, shared by the group's pods.

* The claim is made as for a pod — ``generateName`` ``<group>-<group claim>-`` (cut as a pod's is), the
  template's labels, annotations and claim spec — but owned by the PodGroup (controller, blockOwnerDeletion)
  and annotated ``resource.kubernetes.io/podgroup-claim-name: <group claim>``; the PodGroup's
  ``status.resourceClaimStatuses`` records its name.
* A member pod's claim entry that matches a PodGroup claim exactly (same name, same claim or template) is the
  group's claim: for a template entry the pod's ``status.resourceClaimStatuses`` records the group's generated
  claim, and no claim of its own is made.
* kube-scheduler reserves such a claim for the PodGroup (one ``reservedFor`` entry for every member), and it
  stays allocated while the PodGroup exists (:func:`dralloc.scheduler.plugins.dynamic_resources.group_claims.group_consumer`).
"""

from __future__ import annotations

from collections.abc import Mapping

from msgspec.structs import replace

from dralloc.api.core_v1 import Pod, PodResourceClaimStatus, PodStatus
from dralloc.api.meta import OwnerReference
from dralloc.api.resource_v1 import ResourceClaim, ResourceClaimTemplate
from dralloc.api.scheduling_v1alpha2 import (
    GROUP_VERSION,
    PodGroup,
    PodGroupResourceClaimStatus,
    PodGroupStatus,
)
from dralloc.controllers.names import NameGenerator
from dralloc.controllers.resourceclaims import claim_from_template, claim_generate_name
from dralloc.errors import InputError
from dralloc.scheduler.plugins.dynamic_resources.group_claims import PODGROUP_CLAIM_NAME_ANNOTATION

__all__ = ["claims_for_pod_group", "with_group_claims"]


def claims_for_pod_group(group: PodGroup, templates: Mapping[str, ResourceClaimTemplate],
                         names: NameGenerator) -> tuple[PodGroup, list[ResourceClaim]]:
    """The claims made for the group's template entries not yet resolved in its status, and the group with
    ``status.resourceClaimStatuses`` recording them (in ``spec.resourceClaims`` order)."""
    meta = group.metadata
    status = group.status or PodGroupStatus()
    statuses = list(status.resource_claim_statuses or [])
    resolved = {s.name for s in statuses}
    created: list[ResourceClaim] = []
    for entry in group.spec.resource_claims or []:
        if entry.resource_claim_template_name is None or entry.name in resolved:
            continue
        template = templates.get(entry.resource_claim_template_name)
        if template is None:
            raise InputError(f"PodGroup {meta.namespace or ''}/{meta.name or ''}, claim {entry.name}: resource "
                             f'claim template "{entry.resource_claim_template_name}": resourceclaimtemplate.'
                             f'resource.k8s.io "{entry.resource_claim_template_name}" not found')
        generate_name = claim_generate_name(meta.name or "", entry.name)
        owner = OwnerReference(api_version=GROUP_VERSION, kind="PodGroup", name=meta.name or "", uid=meta.uid or "",
                               controller=True, block_owner_deletion=True)
        claim = claim_from_template(template, names.generate(generate_name), generate_name, meta.namespace,
                                    names.uid(), owner, (PODGROUP_CLAIM_NAME_ANNOTATION, entry.name))
        created.append(claim)
        statuses.append(PodGroupResourceClaimStatus(name=entry.name, resource_claim_name=claim.metadata.name))
    if not created:
        return group, []
    order = {c.name: i for i, c in enumerate(group.spec.resource_claims or [])}
    statuses.sort(key=lambda s: order.get(s.name, len(order)))
    return replace(group, status=replace(status, resource_claim_statuses=statuses)), created


def with_group_claims(pod: Pod, group: PodGroup) -> Pod:
    """The pod with ``status.resourceClaimStatuses`` naming the group's generated claim for each of its
    template entries that matches a group claim exactly."""
    generated = {s.name: s.resource_claim_name
                 for s in (group.status.resource_claim_statuses if group.status else None) or ()}
    shared = {c.name: c for c in group.spec.resource_claims or ()}
    statuses = list((pod.status.resource_claim_statuses if pod.status else None) or [])
    resolved = {s.name for s in statuses}
    added = False
    for entry in pod.spec.resource_claims or []:
        match = shared.get(entry.name)
        if match is None or entry.name in resolved or entry.resource_claim_template_name is None:
            continue
        if match.resource_claim_template_name == entry.resource_claim_template_name \
                and match.resource_claim_name is None and entry.name in generated:
            statuses.append(PodResourceClaimStatus(name=entry.name, resource_claim_name=generated[entry.name]))
            added = True
    if not added:
        return pod
    return replace(pod, status=replace(pod.status or PodStatus(), resource_claim_statuses=statuses))
