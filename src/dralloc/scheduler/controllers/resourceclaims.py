"""The resourceclaim controller's claim-from-template step."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

from msgspec.structs import replace

from dralloc.api.core_v1 import Pod, PodResourceClaimStatus, PodStatus
from dralloc.api.meta import ObjectMeta, OwnerReference
from dralloc.api.resource_v1 import ResourceClaim, ResourceClaimTemplate

POD_CLAIM_NAME_ANNOTATION = "resource.kubernetes.io/pod-claim-name"
MAX_BASE = 57


class Names(Protocol):
    def name(self, base: str) -> str: ...


def generate_name(pod_name: str, claim_name: str) -> str:
    """``<pod>-<claim>-``, both cut in proportion when longer than 57 characters (then no trailing hyphen)."""
    base = f"{pod_name}-{claim_name}-"
    if len(base) > MAX_BASE:
        pod_len = len(pod_name) * MAX_BASE // len(base)
        claim_len = len(claim_name) * MAX_BASE // len(base)
        base = f"{pod_name[:pod_len]}-{claim_name[:claim_len]}"
    return base


def claims_for_pod(pod: Pod, templates: Mapping[tuple[str, str], ResourceClaimTemplate],
                   existing: Mapping[tuple[str, str], ResourceClaim], names: Names
                   ) -> tuple[Pod, list[ResourceClaim], list[str]]:
    ns = pod.metadata.namespace or "default"
    statuses = list(pod.status.resource_claim_statuses or ()) if pod.status is not None else []
    recorded = {s.name for s in statuses}
    claims: list[ResourceClaim] = []
    problems: list[str] = []
    for pc in pod.spec.resource_claims or ():
        if not pc.resource_claim_template_name or pc.name in recorded:
            continue
        template = templates.get((ns, pc.resource_claim_template_name))
        if template is None:
            problems.append(f"pod {ns}/{pod.metadata.name}: resourceclaimtemplate "
                            f"{pc.resource_claim_template_name!r} not found")
            continue
        tmeta = template.spec.metadata or ObjectMeta()
        annotations = dict(tmeta.annotations or {})
        annotations[POD_CLAIM_NAME_ANNOTATION] = pc.name
        gen = generate_name(pod.metadata.name or "", pc.name)
        claim = ResourceClaim(
            metadata=ObjectMeta(
                name=names.name(gen), generate_name=gen, namespace=ns, labels=tmeta.labels,
                annotations=annotations,
                owner_references=[OwnerReference(api_version="v1", kind="Pod", name=pod.metadata.name or "",
                                                 uid=pod.metadata.uid or "", controller=True,
                                                 block_owner_deletion=True)],
            ),
            spec=template.spec.spec,
        )
        claims.append(claim)
        statuses.append(PodResourceClaimStatus(name=pc.name, resource_claim_name=claim.metadata.name))
    if claims:
        status = pod.status or PodStatus()
        pod = replace(pod, status=replace(status, resource_claim_statuses=statuses))
    return pod, claims, problems
