"""Who a claim is reserved for, and when kube-apiserver refuses one more reservation.

kube-scheduler 1.36 puts no limit on sharing a claim itself (``resourceclaim.CanBeReserved`` is always true):
PreFilter takes a claim whatever its ``status.reservedFor`` holds. PreBind adds the consumer — the pod, or for
a claim made for the pod's PodGroup the PodGroup, once for every member — to each claim not yet reserved for
the pod or its group, and it is kube-apiserver's validation of that status write that refuses a 257th entry
(``ResourceClaimReservedForMaxSize``): PreBind fails with that error (``add reservation to claim ns/name: ...
Too many: 257: must have at most 256 items``), the pod is unreserved and tried again after its backoff. A
member of a group whose claim already holds the group's entry adds nothing, so a full claim still serves it.
"""

from __future__ import annotations

from dralloc.api.core_v1 import Pod
from dralloc.api.resource_v1 import ResourceClaim, ResourceClaimConsumerReference
from dralloc.scheduler.plugins.dynamic_resources.group_claims import group_consumer
from dralloc.validation import field as f
from dralloc.validation.resource import RESERVED_FOR_MAX, validate_set

__all__ = ["RESERVED_FOR_MAX", "consumer", "is_reserved_for_pod", "reservation_refused"]


def consumer(claim: ResourceClaim, pod: Pod) -> ResourceClaimConsumerReference:
    """The ``reservedFor`` entry PreBind adds for ``pod``: its PodGroup for a claim made for the group, else
    the pod."""
    return group_consumer(claim, pod) or ResourceClaimConsumerReference(
        resource="pods", name=pod.metadata.name or "", uid=pod.metadata.uid or "")


def is_reserved_for_pod(claim: ResourceClaim, pod: Pod) -> bool:
    """``IsReservedForPod``: the claim lists the pod, or the PodGroup it was made for and the pod belongs to."""
    status = claim.status
    if status is None or not status.reserved_for:
        return False
    group = group_consumer(claim, pod)
    uids = {pod.metadata.uid, group.uid if group is not None else None} - {None}
    return any(r.uid in uids for r in status.reserved_for)


def reservation_refused(claim: ResourceClaim, reserved: list[ResourceClaimConsumerReference]) -> str | None:
    """kube-apiserver's refusal of ``claim``'s status written with ``reserved`` as its ``reservedFor`` (the
    rule ``dralloc serve`` validates a claim's status with), as PreBind reports it; None when it is taken."""
    errors = validate_set(reserved, RESERVED_FOR_MAX, lambda _r, _p: [], lambda r: r.uid, "status.reservedFor")
    if not errors:
        return None
    name = claim.metadata.name or ""
    return (f"add reservation to claim {claim.metadata.namespace or 'default'}/{name}: "
            f'ResourceClaim.resource.k8s.io "{name}" is invalid: {f.aggregate_message(errors)}')
