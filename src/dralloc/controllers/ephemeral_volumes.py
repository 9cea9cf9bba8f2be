"""The ephemeral volume controller's step: a PersistentVolumeClaim ``<pod>-<volume>`` for each generic ephemeral
volume of a pod, from the volume's claim template, owned (controlled) by the pod. An existing claim of that
name is left alone (VolumeBinding then checks that the pod owns it)."""

from __future__ import annotations

from dralloc.api.core_v1 import Pod
from dralloc.api.core_v1_storage import PersistentVolumeClaim
from dralloc.api.meta import ObjectMeta, OwnerReference
from dralloc.scheduler.volumes import VolumeState, pod_claims


def ephemeral_claims(pod: Pod, volumes: VolumeState) -> list[PersistentVolumeClaim]:
    """The claims the controller would create for the pod now."""
    meta = pod.metadata
    ns = meta.namespace or "default"
    out: list[PersistentVolumeClaim] = []
    for ref in pod_claims(pod):
        if not ref.ephemeral or volumes.claim(ns, ref.claim) is not None:
            continue
        source = ref.volume.ephemeral
        template = source.volume_claim_template if source is not None else None
        if template is None:
            continue
        tmeta = template.metadata or ObjectMeta()
        owner = OwnerReference(api_version="v1", kind="Pod", name=meta.name or "", uid=meta.uid or "",
                               controller=True, block_owner_deletion=True)
        out.append(PersistentVolumeClaim(
            metadata=ObjectMeta(name=ref.claim, namespace=ns, labels=dict(tmeta.labels) if tmeta.labels else None,
                                annotations=dict(tmeta.annotations) if tmeta.annotations else None,
                                owner_references=[owner]),
            spec=template.spec))
    return out
