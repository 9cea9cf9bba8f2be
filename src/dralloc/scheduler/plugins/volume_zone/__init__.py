"""VolumeZone: a bound PersistentVolume's zone and region labels must match the node's.

PreFilter collects the zone/region labels (``failure-domain.beta.kubernetes.io/zone``, ``.../region``,
``topology.kubernetes.io/zone``, ``.../region``; a value may list several zones joined by ``__``) of the PVs
bound to the pod's PVC volumes, skipping claims of WaitForFirstConsumer classes that are not bound yet. A node
without any of those labels fits; otherwise each PV label must be on the node (a beta key may be matched by the
node's GA key) with one of the PV's values, else "node(s) had no available volume zone"
(UnschedulableAndUnresolvable).
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import NamedTuple

from dralloc.api.core_v1_storage import claim_class
from dralloc.api.storage_v1 import WAIT_FOR_FIRST_CONSUMER
from dralloc.scheduler.framework import SKIP, Cycle, Plugin, Status, unresolvable
from dralloc.scheduler.nodeinfo import NodeInfo
from dralloc.scheduler.volumes import not_found

NAME = "VolumeZone"
REASON = "node(s) had no available volume zone"
BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"
BETA_REGION = "failure-domain.beta.kubernetes.io/region"
ZONE = "topology.kubernetes.io/zone"
REGION = "topology.kubernetes.io/region"
TOPOLOGY_LABELS = (BETA_ZONE, BETA_REGION, ZONE, REGION)
GA_LABEL = {BETA_ZONE: ZONE, BETA_REGION: REGION}


class PVTopology(NamedTuple):
    key: str
    values: frozenset[str]


class VolumeZone(Plugin):
    name = NAME
    has_filter = True

    def pre_filter(self, cycle: Cycle) -> Status | set[str] | None:
        vols = cycle.pod.pod.spec.volumes
        if not vols:
            return SKIP
        volumes = cycle.snapshot.volumes
        ns = cycle.pod.namespace
        topologies: list[PVTopology] = []
        for v in vols:
            if v.persistent_volume_claim is None:
                continue
            name = v.persistent_volume_claim.claim_name
            if not name:
                return unresolvable(NAME, "PersistentVolumeClaim had no name")
            pvc = volumes.claim(ns, name)
            if pvc is None:
                return unresolvable(NAME, not_found("persistentvolumeclaim", name))
            pv_name = pvc.spec.volume_name
            if not pv_name:
                class_name = claim_class(pvc)
                if not class_name:
                    return unresolvable(NAME, "PersistentVolumeClaim had no pv name and storageClass name")
                sc = volumes.classes.get(class_name)
                if sc is None:
                    return unresolvable(NAME, not_found("storageclass.storage.k8s.io", class_name))
                if sc.binding_mode == WAIT_FOR_FIRST_CONSUMER:
                    continue
                return unresolvable(NAME, "PersistentVolume had no name")
            pv = volumes.pvs.get(pv_name)
            if pv is None:
                return unresolvable(NAME, not_found("persistentvolume", pv_name))
            labels = pv.metadata.labels or {}
            for key in TOPOLOGY_LABELS:
                if key in labels:
                    topologies.append(PVTopology(key, frozenset(labels[key].split("__"))))
        if not topologies:
            return SKIP
        cycle.data[NAME] = topologies
        cycle.keyed.append(self)
        return None

    def filter(self, cycle: Cycle, node: NodeInfo) -> Status | None:
        labels = node.labels
        if not any(k in labels for k in TOPOLOGY_LABELS):
            return None
        for topology in cycle.data[NAME]:
            value = labels.get(topology.key)
            if value is None:
                value = labels.get(GA_LABEL.get(topology.key, topology.key))
            if value is None or value not in topology.values:
                return unresolvable(NAME, REASON)
        return None

    def node_key(self, cycle: Cycle, node: NodeInfo) -> Hashable:
        labels = node.labels
        return tuple(labels.get(k) for k in TOPOLOGY_LABELS)
