"""NodeVolumeLimits (CSI): a node may attach at most ``allocatable.count`` volumes of each CSI driver, as its
CSINode says.

The pod's PVC and generic ephemeral volumes are counted by driver: a bound claim by its PV's CSI driver and
volume handle, an unbound one by its class's provisioner (a handle of its own, so it is new everywhere).
Volumes the node's pods already use are counted once and do not count again for the pod. A node without a
CSINode, or a driver without a count, has no limit. In-tree volumes (CSI migration) and VolumeAttachment
objects are not counted (the simulator warns about in-tree volumes of pending pods).
"""

from __future__ import annotations

from collections.abc import Hashable

from dralloc.api.core_v1 import Pod
from dralloc.api.core_v1_storage import claim_class
from dralloc.api.storage_v1 import CSINode
from dralloc.scheduler.framework import SKIP, Cycle, Plugin, Status, error, unresolvable, unschedulable
from dralloc.scheduler.nodeinfo import NodeInfo
from dralloc.scheduler.volumes import VolumeState, not_found, not_owner, pod_claims

NAME = "NodeVolumeLimits"
REASON = "node(s) exceed max volume count"
UNBOUND_PREFIX = "unbound"  # upstream uses a random prefix: a handle no real volume has


def attachable_volumes(pod: Pod, volumes: VolumeState, new_pod: bool) -> dict[str, str] | Status:
    """``filterAttachableVolumes``: unique volume name → driver for the pod's CSI volumes; for the pod to
    schedule, what rejects it: a missing PVC (UnschedulableAndUnresolvable: it cannot run until the claim
    exists), a claim reference without a name or an ephemeral volume's claim made for another pod (an Error,
    as upstream's Filter turns any other lookup error into one)."""
    ns = pod.metadata.namespace or "default"
    out: dict[str, str] = {}
    for ref in pod_claims(pod):
        if not ref.claim:
            return error(NAME, "PersistentVolumeClaim had no name")
        pvc = volumes.claim(ns, ref.claim)
        if pvc is None:
            if new_pod:
                return unresolvable(NAME, f"looking up PVC {ns}/{ref.claim}: "
                                          f"{not_found('persistentvolumeclaim', ref.claim)}")
            continue
        if ref.ephemeral:
            problem = not_owner(pvc, pod)
            if problem is not None:
                return error(NAME, problem)
        driver, handle = "", ""
        pv = volumes.pvs.get(pvc.spec.volume_name or "") if pvc.spec.volume_name else None
        if pv is not None:
            if pv.spec.csi is not None:
                driver, handle = pv.spec.csi.driver, pv.spec.csi.volume_handle
        else:  # unbound, or its PV is gone: the class's provisioner
            sc = volumes.classes.get(claim_class(pvc))
            if sc is not None and sc.provisioner:
                driver, handle = sc.provisioner, f"{UNBOUND_PREFIX}-{ns}/{ref.claim}"
        if driver and handle:
            out[f"{driver}/{handle}"] = driver
    return out


class NodeVolumeLimits(Plugin):
    name = NAME
    has_filter = True

    def __init__(self) -> None:
        self._cache: dict[str, tuple[NodeInfo, int, int, dict[str, str], dict[str, int]]] = {}
        self._limit_cache: dict[str, tuple[CSINode, dict[str, int]]] = {}

    def pre_filter(self, cycle: Cycle) -> Status | set[str] | None:
        vols = cycle.pod.pod.spec.volumes
        if not vols or not any(v.persistent_volume_claim is not None or v.ephemeral is not None for v in vols):
            return SKIP
        volumes = cycle.snapshot.volumes
        # what the pod attaches reads only the pod and the volume objects: once per cycle
        cycle.data[NAME] = attachable_volumes(cycle.pod.pod, volumes, True)
        if any(self._limits(c) for c in volumes.csi_nodes.values()):
            cycle.keyed.append(self)
        return None

    def filter(self, cycle: Cycle, node: NodeInfo) -> Status | None:
        found: dict[str, str] | Status = cycle.data[NAME]
        if isinstance(found, Status):
            return found
        if not found:
            return None
        csi_node = cycle.snapshot.volumes.csi_nodes.get(node.name)
        limits = self._limits(csi_node) if csi_node is not None else {}
        if not limits:
            return None
        attached, attached_count = self._attached(cycle, node)
        new_count: dict[str, int] = {}
        for unique, driver in found.items():
            if unique not in attached:
                new_count[driver] = new_count.get(driver, 0) + 1
        for driver, count in new_count.items():
            limit = limits.get(driver)
            if limit is not None and attached_count.get(driver, 0) + count > limit:
                return unschedulable(NAME, REASON)
        return None

    def _limits(self, csi_node: CSINode) -> dict[str, int]:
        name = csi_node.metadata.name or ""
        cached = self._limit_cache.get(name)
        if cached is None or cached[0] is not csi_node:
            cached = self._limit_cache[name] = (csi_node, _limits(csi_node))
        return cached[1]

    def _attached(self, cycle: Cycle, node: NodeInfo) -> tuple[dict[str, str], dict[str, int]]:
        """The CSI volumes the node's pods use (unique name → driver) and their count per driver; kept per
        node until its pods or the claims and volumes change."""
        volumes = cycle.snapshot.volumes
        cached = self._cache.get(node.name)
        if cached is not None and cached[0] is node and cached[1] == node.generation and cached[2] == volumes.version:
            return cached[3], cached[4]
        attached: dict[str, str] = {}
        for p in node.pods:
            if p.pod.spec.volumes:
                found = attachable_volumes(p.pod, volumes, False)
                if isinstance(found, dict):
                    attached.update(found)
        counts: dict[str, int] = {}
        for driver in attached.values():
            counts[driver] = counts.get(driver, 0) + 1
        if cycle.snapshot.by_name.get(node.name) is node:  # not a preemption trial's copy
            self._cache[node.name] = (node, node.generation, volumes.version, attached, counts)
        return attached, counts

    def node_key(self, cycle: Cycle, node: NodeInfo) -> Hashable:
        """Exactly what the verdict reads of the node: its limits for the pod's drivers, how many volumes of
        each its pods attach, and which of the pod's volumes are among them."""
        found: dict[str, str] | Status = cycle.data[NAME]
        csi_node = cycle.snapshot.volumes.csi_nodes.get(node.name)
        limits = self._limits(csi_node) if csi_node is not None else {}
        if isinstance(found, Status) or not found or not limits:
            return None
        drivers = sorted(set(found.values()))
        attached, counts = self._attached(cycle, node)
        return (tuple(limits.get(d) for d in drivers), tuple(counts.get(d, 0) for d in drivers),
                tuple(u in attached for u in found))


def _limits(csi_node: CSINode) -> dict[str, int]:
    """``getVolumeLimits``: allocatable count per driver of a CSINode."""
    out: dict[str, int] = {}
    for d in csi_node.spec.drivers:
        if d.allocatable is not None and d.allocatable.count is not None:
            out[d.name] = d.allocatable.count
    return out
