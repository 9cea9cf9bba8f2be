"""What a pending pod's volumes depend on that the simulation does not model, as warnings naming the pod."""

from __future__ import annotations

from dralloc.api.core_v1 import Pod
from dralloc.api.core_v1_storage import ANN_BIND_COMPLETED
from dralloc.scheduler.volumes import VolumeState, pod_claims

IN_TREE_SOURCES = ("gce_persistent_disk", "aws_elastic_block_store")


def volume_warnings(pod: Pod, volumes: VolumeState) -> list[str]:
    if not pod.spec.volumes:
        return []
    ns = pod.metadata.namespace or "default"
    key = f"{ns}/{pod.metadata.name}"
    out: list[str] = []
    limits = any(d.allocatable is not None and d.allocatable.count is not None
                 for c in volumes.csi_nodes.values() for d in c.spec.drivers)
    for vol in pod.spec.volumes:
        if limits and any(getattr(vol, s) is not None for s in IN_TREE_SOURCES):
            out.append(f"pod {key}: volume {vol.name} is an in-tree volume: NodeVolumeLimits does not count it "
                       "(CSI migration is not modelled)")
    for ref in pod_claims(pod):
        pvc = volumes.claim(ns, ref.claim)
        if pvc is None:
            continue
        if pvc.spec.volume_name and ANN_BIND_COMPLETED not in (pvc.metadata.annotations or {}):
            out.append(f"pod {key}: PersistentVolumeClaim {ref.claim} names volume {pvc.spec.volume_name} but "
                       f"lacks the {ANN_BIND_COMPLETED} annotation: kube-scheduler treats it as not bound yet "
                       "(the PV controller finishes binding it in a live cluster)")
        pv = volumes.pvs.get(pvc.spec.volume_name or "")
        if limits and pv is not None and any(getattr(pv.spec, s) is not None for s in IN_TREE_SOURCES):
            out.append(f"pod {key}: PersistentVolume {pv.metadata.name} is an in-tree volume: NodeVolumeLimits "
                       "does not count it (CSI migration is not modelled)")
    return out
