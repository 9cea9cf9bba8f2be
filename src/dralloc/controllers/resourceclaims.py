"""The resourceclaim controller's part for pods: ResourceClaims from ResourceClaimTemplates, and how a pod's
claim entries resolve to ResourceClaim names (``resourceclaim.Name`` in k8s.io/dynamic-resource-allocation).

For each ``spec.resourceClaims[]`` entry with ``resourceClaimTemplateName`` that the pod's status does not
yet resolve, the controller creates a claim:

* ``generateName`` ``<pod>-<pod claim>-``; when that is longer than 57 characters, the pod name and the
  claim name are both cut in proportion to their lengths and joined by ``-``, with no trailing hyphen;
  the API server then appends 5 random characters;
* an ownerReference to the pod (controller, blockOwnerDeletion), the annotation
  ``resource.kubernetes.io/pod-claim-name: <pod claim>`` on top of the template's annotations, the
  template's labels, and the template's claim spec;

and records ``{name: <pod claim>, resourceClaimName: <claim>}`` in ``pod.status.resourceClaimStatuses``.
"""

from __future__ import annotations

from collections.abc import Mapping

from msgspec.structs import replace

from dralloc.api.core_v1 import Pod, PodResourceClaim, PodResourceClaimStatus, PodStatus
from dralloc.api.meta import ObjectMeta, OwnerReference
from dralloc.api.resource_v1 import ResourceClaim, ResourceClaimTemplate
from dralloc.controllers.names import NameGenerator
from dralloc.errors import InputError

__all__ = [
    "POD_CLAIM_NAME_ANNOTATION",
    "ClaimNotCreatedError",
    "PodClaimNameError",
    "UnsupportedPodClaimError",
    "claim_from_template",
    "claim_generate_name",
    "claims_for_pod",
    "pod_claim_name",
    "pod_claim_names",
    "template_claim",
    "unresolved_template_entries",
]

POD_CLAIM_NAME_ANNOTATION = "resource.kubernetes.io/pod-claim-name"
MAX_BASE_LENGTH = 57  # 63 minus a hyphen and 5 random characters


class PodClaimNameError(InputError):
    """A pod claim entry that does not resolve to a ResourceClaim name."""


class ClaimNotCreatedError(PodClaimNameError):
    """The claim of a template entry has not been created yet (upstream's ErrClaimNotFound)."""


class UnsupportedPodClaimError(PodClaimNameError):
    """An entry with neither resourceClaimName nor resourceClaimTemplateName (upstream's ErrAPIUnsupported)."""


def claim_generate_name(pod_name: str, pod_claim_name: str) -> str:
    """The generateName of the claim made for one pod claim (see the module docstring)."""
    base = f"{pod_name}-{pod_claim_name}-"
    if len(base) <= MAX_BASE_LENGTH:
        return base
    # Both parts are cut by the same factor of the untruncated length; integer division as in Go.
    return (pod_name[: len(pod_name) * MAX_BASE_LENGTH // len(base)] + "-"
            + pod_claim_name[: len(pod_claim_name) * MAX_BASE_LENGTH // len(base)])


def pod_claim_name(pod: Pod, pod_claim: PodResourceClaim) -> str | None:
    """The ResourceClaim name a pod claim entry stands for, as ``resourceclaim.Name`` resolves it.

    ``resourceClaimName`` directly; for a template entry the name recorded in
    ``status.resourceClaimStatuses`` (None there means the claim was deliberately not created, and the
    entry is ignored). Raises ClaimNotCreatedError when a template entry has no status yet and
    UnsupportedPodClaimError when the entry names neither."""
    meta = pod.metadata
    if pod_claim.resource_claim_name is not None:
        return pod_claim.resource_claim_name
    if pod_claim.resource_claim_template_name is not None:
        for status in (pod.status.resource_claim_statuses if pod.status else None) or []:
            if status.name == pod_claim.name:
                return status.resource_claim_name
        raise ClaimNotCreatedError(f"Pod {meta.namespace or ''}/{meta.name or ''}: ResourceClaim not created yet")
    raise UnsupportedPodClaimError(f"Pod {meta.namespace or ''}/{meta.name or ''}, spec.resourceClaim "
                                   f"{pod_claim.name}: none of the supported fields are set")


def pod_claim_names(pod: Pod) -> list[tuple[str, str | None]]:
    """(pod claim name, ResourceClaim name or None) for every entry of ``pod.spec.resourceClaims``, in
    order; raises the first PodClaimNameError, as upstream's callers stop at the first."""
    return [(c.name, pod_claim_name(pod, c)) for c in pod.spec.resource_claims or []]


def unresolved_template_entries(pod: Pod) -> list[PodResourceClaim]:
    """The pod's template entries that ``status.resourceClaimStatuses`` does not resolve yet (those the
    controller makes claims for), in ``spec.resourceClaims`` order."""
    resolved = {s.name for s in (pod.status.resource_claim_statuses if pod.status else None) or ()}
    return [e for e in pod.spec.resource_claims or () if e.resource_claim_name is None
            and e.resource_claim_template_name is not None and e.name not in resolved]


def template_claim(pod: Pod, entry: PodResourceClaim, template: ResourceClaimTemplate, name: str,
                   uid: str | None = None) -> ResourceClaim:
    """The claim the controller creates for one template entry of the pod, named ``name`` (generated from
    :func:`claim_generate_name`; see the module docstring)."""
    meta = pod.metadata
    owner = OwnerReference(api_version="v1", kind="Pod", name=meta.name or "", uid=meta.uid or "", controller=True,
                           block_owner_deletion=True)
    return claim_from_template(template, name, claim_generate_name(meta.name or "", entry.name), meta.namespace,
                               uid, owner, (POD_CLAIM_NAME_ANNOTATION, entry.name))


def claim_from_template(template: ResourceClaimTemplate, name: str, generate_name: str, namespace: str | None,
                        uid: str | None, owner: OwnerReference, annotation: tuple[str, str]) -> ResourceClaim:
    """A claim made from ``template`` for its owner (a pod, or a PodGroup): the template's labels, annotations
    and claim spec, the owner as controller, and the annotation naming the owner's claim entry."""
    tmeta = template.spec.metadata or ObjectMeta()
    return ResourceClaim(
        metadata=ObjectMeta(
            name=name, generate_name=generate_name, namespace=namespace, uid=uid,
            labels=dict(tmeta.labels) if tmeta.labels else None,
            annotations={**(tmeta.annotations or {}), annotation[0]: annotation[1]}, owner_references=[owner]),
        spec=template.spec.spec,
    )


def claims_for_pod(pod: Pod, templates: Mapping[str, ResourceClaimTemplate],
                   names: NameGenerator) -> tuple[Pod, list[ResourceClaim]]:
    """The claims the controller creates for a pod's template entries, and the pod with its
    ``status.resourceClaimStatuses`` recording them (in ``spec.resourceClaims`` order).

    ``templates`` maps template names in the pod's namespace to templates. Entries the status already
    resolves are left alone. Raises InputError naming the pod claim when its template does not exist."""
    meta = pod.metadata
    statuses = list((pod.status.resource_claim_statuses if pod.status else None) or [])
    created: list[ResourceClaim] = []
    for entry in unresolved_template_entries(pod):
        template_name = entry.resource_claim_template_name or ""
        template = templates.get(template_name)
        if template is None:
            raise InputError(f"pod {meta.namespace or ''}/{meta.name or ''}, PodResourceClaim {entry.name}: "
                             f'resource claim template "{template_name}": '
                             f'resourceclaimtemplate.resource.k8s.io "{template_name}" not found')
        claim = template_claim(pod, entry, template, names.generate(claim_generate_name(meta.name or "", entry.name)),
                               names.uid())
        created.append(claim)
        statuses.append(PodResourceClaimStatus(name=entry.name, resource_claim_name=claim.metadata.name))
    if not created:
        return pod, []
    order = {c.name: i for i, c in enumerate(pod.spec.resource_claims or [])}
    statuses.sort(key=lambda s: order.get(s.name, len(order)))
    status = replace(pod.status or PodStatus(), resource_claim_statuses=statuses)
    return replace(pod, status=status), created
