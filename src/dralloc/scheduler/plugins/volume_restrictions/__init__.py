"""VolumeRestrictions: volumes that only one pod (or one node) may use.

Disk conflicts (Filter, Unschedulable): a GCE persistent disk used by a pod on the node (unless both mount
it read-only), the same AWS EBS volume id, the same iSCSI IQN (unless both read-only), or the same RBD image
(a shared Ceph monitor, same pool — default "rbd" — and image, unless both read-only).

ReadWriteOncePod (PreFilter + Filter, Unschedulable): when a PVC of the pod with that access mode is used
by any pod already assigned to any node, no node fits. The count of such claims is cycle state that the
preemption dry run keeps right (RemovePod/AddPod), so evicting the claim's user can make room.
A missing PVC rejects the pod in PreFilter (``persistentvolumeclaim "x" not found``).
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass

from dralloc.api.core_v1 import Pod, Volume
from dralloc.api.core_v1_storage import READ_WRITE_ONCE_POD
from dralloc.scheduler.framework import SKIP, Cycle, Plugin, Status, unresolvable, unschedulable
from dralloc.scheduler.nodeinfo import NodeInfo
from dralloc.scheduler.podinfo import PodInfo
from dralloc.scheduler.volumes import not_found

NAME = "VolumeRestrictions"
REASON_DISK_CONFLICT = "node(s) had no available disk"
REASON_RWOP_CONFLICT = ("node has pod using PersistentVolumeClaim with the same name and ReadWriteOncePod "
                        "access mode")
DEFAULT_RBD_POOL = "rbd"


@dataclass
class RestrictionsCycle:
    rwop_claims: frozenset[str]  # namespace/name of the pod's ReadWriteOncePod PVCs
    conflicts: int  # how many of them some assigned pod uses
    disk_check: bool

    def clone(self) -> RestrictionsCycle:
        return RestrictionsCycle(self.rwop_claims, self.conflicts, self.disk_check)


def _restricted(vol: Volume) -> bool:
    return (vol.gce_persistent_disk is not None or vol.aws_elastic_block_store is not None
            or vol.rbd is not None or vol.iscsi is not None)


def volume_conflicts(vol: Volume, other: Pod) -> bool:
    """``isVolumeConflict``: the volume clashes with one of the other pod's volumes."""
    for ev in other.spec.volumes or ():
        gce, egce = vol.gce_persistent_disk, ev.gce_persistent_disk
        if gce is not None and egce is not None and gce.pd_name == egce.pd_name \
                and not (gce.read_only and egce.read_only):
            return True
        ebs, eebs = vol.aws_elastic_block_store, ev.aws_elastic_block_store
        if ebs is not None and eebs is not None and ebs.volume_id == eebs.volume_id:
            return True
        iscsi, eiscsi = vol.iscsi, ev.iscsi
        if iscsi is not None and eiscsi is not None and iscsi.iqn == eiscsi.iqn \
                and not (iscsi.read_only and eiscsi.read_only):
            return True
        rbd, erbd = vol.rbd, ev.rbd
        if rbd is not None and erbd is not None and set(rbd.monitors) & set(erbd.monitors) \
                and (rbd.pool or DEFAULT_RBD_POOL) == (erbd.pool or DEFAULT_RBD_POOL) and rbd.image == erbd.image \
                and not (rbd.read_only and erbd.read_only):
            return True
    return False


def _uses(pod: Pod, claims: frozenset[str]) -> int:
    """``conflictingPVCRefCountForPod``: the pod's PVC volumes that name one of ``claims``."""
    ns = pod.metadata.namespace or "default"
    return sum(1 for v in pod.spec.volumes or ()
               if v.persistent_volume_claim is not None and f"{ns}/{v.persistent_volume_claim.claim_name}" in claims)


class VolumeRestrictions(Plugin):
    name = NAME
    has_filter = True
    has_pre_filter_extensions = True

    def pre_filter(self, cycle: Cycle) -> Status | set[str] | None:
        pod = cycle.pod.pod
        vols = pod.spec.volumes
        if not vols:
            return SKIP
        disk_check = any(_restricted(v) for v in vols)
        volumes = cycle.snapshot.volumes
        ns = cycle.pod.namespace
        rwop: set[str] = set()
        for v in vols:
            if v.persistent_volume_claim is None:
                continue
            name = v.persistent_volume_claim.claim_name
            pvc = volumes.claim(ns, name)
            if pvc is None:
                return unresolvable(NAME, not_found("persistentvolumeclaim", name))
            if READ_WRITE_ONCE_POD in (pvc.spec.access_modes or ()):
                rwop.add(f"{ns}/{name}")
        claims = frozenset(rwop)
        conflicts = len(claims & _used_claims(cycle, claims)) if claims else 0
        if not disk_check and conflicts == 0:
            return SKIP
        cycle.data[NAME] = RestrictionsCycle(claims, conflicts, disk_check)
        if disk_check:
            cycle.keyed.append(self)
        return None

    def filter(self, cycle: Cycle, node: NodeInfo) -> Status | None:
        state: RestrictionsCycle = cycle.data[NAME]
        if state.disk_check:
            for vol in cycle.pod.pod.spec.volumes or ():
                if _restricted(vol) and any(volume_conflicts(vol, p.pod) for p in node.pods):
                    return unschedulable(NAME, REASON_DISK_CONFLICT)
        if state.conflicts > 0:
            return unschedulable(NAME, REASON_RWOP_CONFLICT)
        return None

    def add_pod(self, cycle: Cycle, pod: PodInfo, node: NodeInfo) -> Status | None:
        state: RestrictionsCycle = cycle.data[NAME]
        state.conflicts += _uses(pod.pod, state.rwop_claims)
        return None

    def remove_pod(self, cycle: Cycle, pod: PodInfo, node: NodeInfo) -> Status | None:
        state: RestrictionsCycle = cycle.data[NAME]
        state.conflicts -= _uses(pod.pod, state.rwop_claims)
        return None

    def node_key(self, cycle: Cycle, node: NodeInfo) -> Hashable:
        return node.name  # disk conflicts read the node's pods


def _used_claims(cycle: Cycle, claims: frozenset[str]) -> set[str]:
    """Which of ``claims`` some pod assigned to a node uses (the snapshot's ``IsPVCUsedByPods``)."""
    used: set[str] = set()
    for node in cycle.snapshot.nodes:
        for p in node.pods:
            if not p.pod.spec.volumes:
                continue
            ns = p.namespace
            for v in p.pod.spec.volumes:
                if v.persistent_volume_claim is not None:
                    key = f"{ns}/{v.persistent_volume_claim.claim_name}"
                    if key in claims:
                        used.add(key)
    return used
