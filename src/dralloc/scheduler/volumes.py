"""The storage objects the volume plugins read (kube-scheduler's PV, PVC, StorageClass and CSINode listers
and the volume binder's assume cache), the PV controller's matching for static binding, and the record of
what the simulation bound.

A PersistentVolume without ``status.phase`` and without ``claimRef`` is taken as Available: that is what
the PV controller makes of a new volume at once (a dump always carries the phase).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import NamedTuple

from msgspec.structs import replace

from dralloc.allocator.nodes import NodeSelectorError, node_selector_matches
from dralloc.api.core_v1 import ObjectReference, Pod, Volume
from dralloc.api.core_v1_storage import (
    ANN_BETA_STORAGE_CLASS,
    ANN_BIND_COMPLETED,
    ANN_BOUND_BY_CONTROLLER,
    ANN_SELECTED_NODE,
    PersistentVolume,
    PersistentVolumeClaim,
    PersistentVolumeClaimStatus,
    PersistentVolumeStatus,
    claim_class,
    volume_class,
)
from dralloc.api.meta import LabelSelector
from dralloc.api.quantity import Quantity
from dralloc.api.storage_v1 import CSIDriver, CSINode, CSIStorageCapacity, StorageClass
from dralloc.scheduler.labels import from_model

ClaimKey = tuple[str, str]
FILESYSTEM = "Filesystem"
HOSTNAME = "kubernetes.io/hostname"


class PodClaim(NamedTuple):
    """One of a pod's volumes that uses a PVC: the volume, the claim's name, and whether it is a generic
    ephemeral volume (claim ``<pod>-<volume>``, made for the pod by the ephemeral volume controller)."""

    volume: Volume
    claim: str
    ephemeral: bool


def pod_claims(pod: Pod) -> list[PodClaim]:
    """The pod's PVC-backed volumes in spec order (``ephemeral.VolumeClaimName`` for ephemeral ones)."""
    out: list[PodClaim] = []
    for vol in pod.spec.volumes or ():
        if vol.persistent_volume_claim is not None:
            out.append(PodClaim(vol, vol.persistent_volume_claim.claim_name, False))
        elif vol.ephemeral is not None:
            out.append(PodClaim(vol, f"{pod.metadata.name or ''}-{vol.name}", True))
    return out


def not_found(resource: str, name: str) -> str:
    """An informer lister's NotFound text (``persistentvolumeclaim "data" not found``)."""
    return f'{resource} "{name}" not found'


def not_owner(pvc: PersistentVolumeClaim, pod: Pod) -> str | None:
    """``ephemeral.VolumeIsForPod``: the claim of an ephemeral volume must be controlled by the pod."""
    uid = pod.metadata.uid
    for ref in pvc.metadata.owner_references or ():
        if ref.controller and ref.uid == uid:
            return None
    return (f"PVC {pvc.metadata.namespace or 'default'}/{pvc.metadata.name} was not created for pod "
            f"{pod.metadata.namespace or 'default'}/{pod.metadata.name} (pod is not owner)")


def label_selector_matches(selector: LabelSelector, labels: dict[str, str]) -> bool:
    """``metav1.LabelSelectorAsSelector(sel).Matches(labels)``."""
    return from_model(selector).matches(labels)


def volume_node_affinity_matches(pv: PersistentVolume, labels: dict[str, str]) -> bool:
    """``volume.CheckNodeAffinity``: the PV's required node affinity against a node's labels (the node is
    matched by its labels only; a malformed selector matches nothing)."""
    affinity = pv.spec.node_affinity
    if affinity is None or affinity.required is None:
        return True
    try:
        return node_selector_matches(affinity.required, "", labels)
    except NodeSelectorError:
        return False


def local_volume_node_names(pv: PersistentVolume) -> list[str]:
    """``GetLocalPersistentVolumeNodeNames``: per term, the intersection of its ``kubernetes.io/hostname In``
    values; the union over terms (taken as node names)."""
    affinity = pv.spec.node_affinity
    if affinity is None or affinity.required is None:
        return []
    result: set[str] = set()
    for term in affinity.required.node_selector_terms or ():
        names: set[str] | None = None
        for req in term.match_expressions or ():
            if req.key == HOSTNAME and req.operator == "In":
                values = set(req.values or ())
                names = values if names is None else names & values
        result |= names or set()
    return sorted(result)


def _storage(resources: dict[str, Quantity] | None) -> Quantity:
    return (resources or {}).get("storage") or Quantity(0)


def claim_request(pvc: PersistentVolumeClaim) -> Quantity:
    res = pvc.spec.resources
    return _storage(res.requests if res is not None else None)


def bound_to_claim(pv: PersistentVolume, pvc: PersistentVolumeClaim) -> bool:
    """``IsVolumeBoundToClaim``: claimRef names the claim (and its uid, when the ref has one)."""
    ref = pv.spec.claim_ref
    if ref is None:
        return False
    if ref.name != pvc.metadata.name or (ref.namespace or "") != (pvc.metadata.namespace or "default"):
        return False
    return not ref.uid or ref.uid == pvc.metadata.uid


def volume_phase(pv: PersistentVolume) -> str:
    phase = pv.status.phase if pv.status is not None else None
    if not phase:
        return "Available" if pv.spec.claim_ref is None else "Bound"
    return phase


def _host_pinned(pv: PersistentVolume) -> list[str] | None:
    """The hostnames of a PV whose node affinity is exactly one ``kubernetes.io/hostname In`` requirement (how
    local volumes are pinned): it fits a node iff the node's hostname label is one of them. None otherwise."""
    affinity = pv.spec.node_affinity
    terms = affinity.required.node_selector_terms if affinity is not None and affinity.required is not None else None
    if not terms or len(terms) != 1 or terms[0].match_fields or len(terms[0].match_expressions or ()) != 1:
        return None
    req = (terms[0].match_expressions or [])[0]
    if req.key != HOSTNAME or req.operator != "In" or not req.values:
        return None
    return list(req.values)


Ranked = tuple[Fraction, int, PersistentVolume]  # size, position in name order, volume


@dataclass
class Candidates:
    """What ``FindMatchingVolume`` can pick for one claim, sorted out once per scheduling cycle: volumes
    pre-bound to the claim (the first decides), and the others that pass every check but the node's, by
    size then name order, those pinned to hostnames indexed by hostname."""

    prebound: list[PersistentVolume]
    by_host: dict[str, list[Ranked]]
    general: list[Ranked]

    def pick(self, labels: dict[str, str], excluded: set[str]) -> PersistentVolume | None:
        for pv in self.prebound:
            if (pv.metadata.name or "") not in excluded:
                return pv if volume_node_affinity_matches(pv, labels) else None
        best: Ranked | None = None
        host = labels.get(HOSTNAME)
        for ranked in self.by_host.get(host, ()) if host is not None else ():
            if (ranked[2].metadata.name or "") not in excluded:
                best = ranked
                break
        for ranked in self.general:
            if best is not None and ranked[:2] >= best[:2]:
                break
            pv = ranked[2]
            if (pv.metadata.name or "") not in excluded and volume_node_affinity_matches(pv, labels):
                best = ranked
                break
        return best[2] if best is not None else None


def matching_candidates(pvc: PersistentVolumeClaim, volumes: list[PersistentVolume]) -> Candidates:
    """The PV controller's ``FindMatchingVolume`` on the scheduler's path (a node given, delayed binding),
    without the node: a volume pre-bound to the claim wins if it fits the node; else the smallest Available
    volume of the claim's class with enough capacity, the same volume mode and VolumeAttributesClass, matching
    the claim's selector, the node and every access mode of the claim (ties: the first in name order)."""
    requested = claim_request(pvc).as_fraction()
    requested_class = claim_class(pvc)
    claim_mode = pvc.spec.volume_mode or FILESYSTEM
    claim_vac = pvc.spec.volume_attributes_class_name or ""
    claim_modes = pvc.spec.access_modes or []
    out = Candidates([], {}, [])
    for order, pv in enumerate(volumes):
        if pv.spec.claim_ref is not None and not bound_to_claim(pv, pvc):
            continue
        size = _storage(pv.spec.capacity).as_fraction()
        if size < requested or (pv.spec.volume_mode or FILESYSTEM) != claim_mode or pv.metadata.deletion_timestamp:
            continue
        if bound_to_claim(pv, pvc):
            out.prebound.append(pv)
            continue
        if volume_phase(pv) != "Available":
            continue
        if pvc.spec.selector is not None and not label_selector_matches(pvc.spec.selector, pv.metadata.labels or {}):
            continue
        if volume_class(pv) != requested_class:
            continue
        if not all(mode in (pv.spec.access_modes or ()) for mode in claim_modes):
            continue
        if claim_vac != (pv.spec.volume_attributes_class_name or ""):
            continue
        hosts = _host_pinned(pv)
        if hosts is None:
            out.general.append((size, order, pv))
        else:
            for host in hosts:
                out.by_host.setdefault(host, []).append((size, order, pv))
    out.general.sort(key=_rank)
    for ranked in out.by_host.values():
        ranked.sort(key=_rank)
    return out


def _rank(ranked: Ranked) -> tuple[Fraction, int]:
    return ranked[0], ranked[1]


@dataclass
class VolumeBinding:
    """What the simulation decided for one claim of a scheduled pod: bound to a static PV, or left to
    dynamic provisioning on the pod's node (the claim's ``volume.kubernetes.io/selected-node``)."""

    pod: str  # namespace/name
    claim: str  # namespace/name
    node: str
    volume: str | None  # the PV bound; None: provisioned dynamically

    def to_dict(self) -> dict[str, str | None]:
        return {"pod": self.pod, "claim": self.claim, "node": self.node, "volume": self.volume,
                "mode": "static" if self.volume is not None else "provision"}


@dataclass
class VolumeState:
    """PVs, PVCs, classes and CSINodes as the scheduler's informers hold them, updated by the bindings the
    simulation makes."""

    pvs: dict[str, PersistentVolume] = field(default_factory=dict)
    pvcs: dict[ClaimKey, PersistentVolumeClaim] = field(default_factory=dict)
    classes: dict[str, StorageClass] = field(default_factory=dict)
    csi_nodes: dict[str, CSINode] = field(default_factory=dict)
    csi_drivers: dict[str, CSIDriver] = field(default_factory=dict)
    capacities: list[CSIStorageCapacity] = field(default_factory=list)
    bindings: list[VolumeBinding] = field(default_factory=list)
    version: int = 0  # bumped on every change of a claim or volume (keys caches of what pods attach)
    _by_class: dict[str, list[PersistentVolume]] | None = None

    @classmethod
    def build(cls, pvs: list[PersistentVolume], pvcs: list[PersistentVolumeClaim], classes: list[StorageClass],
              csi_nodes: list[CSINode], csi_drivers: list[CSIDriver] | None = None,
              capacities: list[CSIStorageCapacity] | None = None) -> VolumeState:
        state = cls(classes={c.metadata.name or "": c for c in classes},
                    csi_nodes={c.metadata.name or "": c for c in csi_nodes},
                    csi_drivers={d.metadata.name or "": d for d in csi_drivers or ()},
                    capacities=list(capacities or ()))
        for pv in pvs:
            state.pvs[pv.metadata.name or ""] = pv
        for pvc in pvcs:
            state.add_claim(pvc)
        return state

    @property
    def empty(self) -> bool:
        return not self.pvcs and not self.csi_nodes

    def add_claim(self, pvc: PersistentVolumeClaim) -> None:
        """Store a claim; one without a class gets the default StorageClass, as the DefaultStorageClass
        admission plugin (or the PV controller's retroactive assignment) gives it."""
        if pvc.spec.storage_class_name is None and ANN_BETA_STORAGE_CLASS not in (pvc.metadata.annotations or {}):
            default = self.default_class()
            if default is not None:
                pvc = replace(pvc, spec=replace(pvc.spec, storage_class_name=default))
        if not pvc.metadata.namespace:
            pvc = replace(pvc, metadata=replace(pvc.metadata, namespace="default"))
        self.version += 1
        self.pvcs[(pvc.metadata.namespace or "default", pvc.metadata.name or "")] = pvc

    def default_class(self) -> str | None:
        """``GetDefaultClass``: the newest class annotated as default (ties: by name)."""
        defaults = [c for c in self.classes.values() if c.is_default]
        if not defaults:
            return None
        newest = max(defaults, key=lambda c: (c.metadata.creation_timestamp or "", c.metadata.name or ""))
        return newest.metadata.name

    def has_enough_capacity(self, pvc: PersistentVolumeClaim, sc: StorageClass, labels: dict[str, str]) -> bool:
        """``hasEnoughCapacity``: only for a CSIDriver with ``storageCapacity: true``: some CSIStorageCapacity of
        the class whose node topology selects the node and whose maximumVolumeSize (else capacity) holds the
        claim's request. Capacities are read as given: the simulation does not subtract what it provisions,
        as kube-scheduler does not until the driver updates them."""
        res = pvc.spec.resources
        requested = (res.requests or {}).get("storage") if res is not None else None
        if requested is None:
            return True
        driver = self.csi_drivers.get(sc.provisioner)
        if driver is None or not driver.spec.storage_capacity:
            return True
        size = requested.value()
        for cap in self.capacities:
            if cap.storage_class_name != sc.metadata.name or cap.node_topology is None:
                continue
            limit = cap.maximum_volume_size if cap.maximum_volume_size is not None else cap.capacity
            if limit is not None and limit.value() >= size and label_selector_matches(cap.node_topology, labels):
                return True
        return False

    def claim(self, namespace: str, name: str) -> PersistentVolumeClaim | None:
        return self.pvcs.get((namespace, name))

    def volumes_of_class(self, class_name: str) -> list[PersistentVolume]:
        """``pvCache.ListPVs(class)`` in name order."""
        if self._by_class is None:
            by_class: dict[str, list[PersistentVolume]] = {}
            for name in sorted(self.pvs):
                pv = self.pvs[name]
                by_class.setdefault(volume_class(pv), []).append(pv)
            self._by_class = by_class
        return self._by_class.get(class_name, [])

    # ------------------------------------------------------------------ what the binder writes
    def bind(self, pvc: PersistentVolumeClaim, pv: PersistentVolume, pod: str, node: str) -> None:
        """A static binding as the scheduler's PreBind and the PV controller complete it: the PV's claimRef
        and phase Bound, the claim's volumeName, bind-completed annotation and phase Bound."""
        ns = pvc.metadata.namespace or "default"
        ref = ObjectReference(kind="PersistentVolumeClaim", namespace=ns, name=pvc.metadata.name,
                              uid=pvc.metadata.uid, api_version="v1")
        ann = {**(pv.metadata.annotations or {}), ANN_BOUND_BY_CONTROLLER: "yes"}
        bound_pv = replace(pv, metadata=replace(pv.metadata, annotations=ann),
                           spec=replace(pv.spec, claim_ref=ref),
                           status=replace(pv.status or PersistentVolumeStatus(), phase="Bound"))
        self.pvs[pv.metadata.name or ""] = bound_pv
        self._by_class = None
        self.version += 1
        claim_ann = {**(pvc.metadata.annotations or {}), ANN_BIND_COMPLETED: "yes", ANN_BOUND_BY_CONTROLLER: "yes"}
        status = replace(pvc.status or PersistentVolumeClaimStatus(), phase="Bound",
                         access_modes=pv.spec.access_modes, capacity=pv.spec.capacity)
        self.pvcs[(ns, pvc.metadata.name or "")] = replace(
            pvc, metadata=replace(pvc.metadata, annotations=claim_ann),
            spec=replace(pvc.spec, volume_name=pv.metadata.name), status=status)
        self.bindings.append(VolumeBinding(pod, f"{ns}/{pvc.metadata.name}", node, pv.metadata.name))

    def select_node(self, pvc: PersistentVolumeClaim, pod: str, node: str) -> None:
        """Dynamic provisioning: the scheduler annotates the claim with the chosen node; the provisioner
        takes it from there (outside the simulation)."""
        ns = pvc.metadata.namespace or "default"
        ann = {**(pvc.metadata.annotations or {}), ANN_SELECTED_NODE: node}  # attaches as before: no new version
        self.pvcs[(ns, pvc.metadata.name or "")] = replace(pvc, metadata=replace(pvc.metadata, annotations=ann))
        self.bindings.append(VolumeBinding(pod, f"{ns}/{pvc.metadata.name}", node, None))
