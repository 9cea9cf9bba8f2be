"""VolumeBinding: the pod's PersistentVolumeClaims must be bound, or bindable on the node.

PreFilter (pods with PVC or generic ephemeral volumes): every claim must exist (an ephemeral volume's claim
must belong to the pod), not be lost or being deleted; a claim that is not fully bound (``volumeName`` plus
the ``pv.kubernetes.io/bind-completed`` annotation) and not of a WaitForFirstConsumer class keeps the pod
pending ("pod has unbound immediate PersistentVolumeClaims"). Claims bound to local volumes pinned by
``kubernetes.io/hostname In`` narrow the candidate nodes.

Filter: a bound claim's PV must exist and its node affinity match the node; each WaitForFirstConsumer claim
must find a matching Available PV on the node (the PV controller's choice: the smallest that fits) or be
provisionable there (a provisioner other than ``kubernetes.io/no-provisioner`` and the class's
``allowedTopologies`` matching the node's labels, and room in a CSIStorageCapacity when the class's CSIDriver
publishes capacity). A claim already annotated with a selected node fits only that node.

Reserve/PreBind: the chosen node's static bindings are made at once (the PV's claimRef, the claim's
volumeName; both Bound), claims left to provisioning get ``volume.kubernetes.io/selected-node``; what was
bound is recorded for the result. No Score: 1.36 scores only with StorageCapacityScoring, an alpha gate.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from dataclasses import dataclass, field

from dralloc.api.core_v1 import NodeSelector
from dralloc.api.core_v1_storage import (
    ANN_BIND_COMPLETED,
    ANN_SELECTED_NODE,
    PersistentVolume,
    PersistentVolumeClaim,
    claim_class,
)
from dralloc.api.storage_v1 import NO_PROVISIONER, WAIT_FOR_FIRST_CONSUMER, TopologySelectorTerm
from dralloc.scheduler.framework import SKIP, Cycle, Plugin, Status, error, unresolvable
from dralloc.scheduler.nodeinfo import NodeInfo
from dralloc.scheduler.volumes import (
    HOSTNAME,
    Candidates,
    VolumeState,
    claim_request,
    local_volume_node_names,
    matching_candidates,
    not_found,
    not_owner,
    pod_claims,
    volume_node_affinity_matches,
)

NAME = "VolumeBinding"
UNBOUND_IMMEDIATE = "pod has unbound immediate PersistentVolumeClaims"
REASON_NODE_CONFLICT = "node(s) had volume node affinity conflict"
REASON_BIND_CONFLICT = "node(s) didn't find available persistent volumes to bind"
REASON_PV_NOT_EXIST = "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"
REASON_NOT_ENOUGH_SPACE = "node(s) did not have enough free storage"
NOT_ENOUGH_SPACE = "not enough space"


@dataclass
class PodVolumes:
    """What binding the pod's delayed claims on one node takes."""

    static: list[tuple[PersistentVolumeClaim, PersistentVolume]] = field(default_factory=list)
    provision: list[PersistentVolumeClaim] = field(default_factory=list)


@dataclass
class VolumeBindingCycle:
    bound: list[PersistentVolumeClaim]
    delayed: list[PersistentVolumeClaim]
    # per delayed claim without a selected node (by position in ``delayed``), the volumes it could bind
    candidates: dict[int, Candidates]
    # selected-node annotations make a node's name part of its verdict; otherwise these labels make it
    names_matter: bool
    label_keys: tuple[str, ...] = ()
    by_node: dict[str, PodVolumes] = field(default_factory=dict)
    reserved: PodVolumes | None = None


def fully_bound(pvc: PersistentVolumeClaim) -> bool:
    return bool(pvc.spec.volume_name) and ANN_BIND_COMPLETED in (pvc.metadata.annotations or {})


def topology_matches(terms: list[TopologySelectorTerm] | None, labels: dict[str, str]) -> bool:
    """``MatchTopologySelectorTerms``: no terms match every node; otherwise some term whose every
    requirement has the node's label among its values."""
    if not terms:
        return True
    for term in terms:
        if all(labels.get(req.key) in req.values for req in term.match_label_expressions or ()):
            return True
    return False


def _delayed(pvc: PersistentVolumeClaim, volumes: VolumeState) -> bool:
    """``IsDelayBindingMode``: the claim's class exists and waits for the first consumer."""
    name = claim_class(pvc)
    sc = volumes.classes.get(name) if name else None
    return sc is not None and sc.binding_mode == WAIT_FOR_FIRST_CONSUMER


class VolumeBinding(Plugin):
    name = NAME
    has_filter = True

    def pre_filter(self, cycle: Cycle) -> Status | set[str] | None:
        pod = cycle.pod.pod
        if not pod.spec.volumes:
            return SKIP
        claims = pod_claims(pod)
        if not claims:
            return SKIP
        volumes = cycle.snapshot.volumes
        ns = cycle.pod.namespace
        bound: list[PersistentVolumeClaim] = []
        delayed: list[PersistentVolumeClaim] = []
        immediate = False
        for ref in claims:
            pvc = volumes.claim(ns, ref.claim)
            if pvc is None:
                text = (f'waiting for ephemeral volume controller to create the persistentvolumeclaim "{ref.claim}"'
                        if ref.ephemeral else not_found("persistentvolumeclaim", ref.claim))
                return unresolvable(NAME, text)
            if pvc.status is not None and pvc.status.phase == "Lost":
                return unresolvable(NAME, f'persistentvolumeclaim "{ref.claim}" bound to non-existent '
                                          f'persistentvolume "{pvc.spec.volume_name or ""}"')
            if pvc.metadata.deletion_timestamp:
                return unresolvable(NAME, f'persistentvolumeclaim "{ref.claim}" is being deleted')
            if ref.ephemeral:
                problem = not_owner(pvc, pod)
                if problem is not None:
                    return unresolvable(NAME, problem)
            if fully_bound(pvc):
                bound.append(pvc)
            elif _delayed(pvc, volumes) and not pvc.spec.volume_name:
                delayed.append(pvc)
            else:
                immediate = True
        if immediate:
            return unresolvable(NAME, UNBOUND_IMMEDIATE)
        # byPVCSize: claims with smaller requests are matched first (a stable sort)
        delayed.sort(key=claim_request_key)
        candidates = {i: matching_candidates(pvc, volumes.volumes_of_class(claim_class(pvc)))
                      for i, pvc in enumerate(delayed) if ANN_SELECTED_NODE not in (pvc.metadata.annotations or {})}
        names_matter = len(candidates) < len(delayed)
        state = VolumeBindingCycle(bound, delayed, candidates, names_matter,
                                   _label_keys(volumes, bound, delayed, candidates.values()))
        cycle.data[NAME] = state
        pinned = self._eligible_nodes(volumes, bound)
        if delayed or any(self._has_affinity(volumes, pvc) for pvc in bound):
            cycle.keyed.append(self)
        return pinned

    @staticmethod
    def _has_affinity(volumes: VolumeState, pvc: PersistentVolumeClaim) -> bool:
        pv = volumes.pvs.get(pvc.spec.volume_name or "")
        return pv is None or pv.spec.node_affinity is not None

    @staticmethod
    def _eligible_nodes(volumes: VolumeState, bound: list[PersistentVolumeClaim]) -> set[str] | None:
        """``GetEligibleNodes``: the nodes named by the local volumes of bound claims (intersected), or None
        (every node) when none is local or some PV is missing."""
        eligible: set[str] | None = None
        for pvc in bound:
            pv = volumes.pvs.get(pvc.spec.volume_name or "")
            if pv is None:
                return None
            names = local_volume_node_names(pv)
            if names:
                eligible = set(names) if eligible is None else eligible & set(names)
        return eligible

    def filter(self, cycle: Cycle, node: NodeInfo) -> Status | None:
        state: VolumeBindingCycle = cycle.data[NAME]
        found, reasons = self.find_pod_volumes(cycle, state, node)
        if isinstance(found, Status):
            return found
        if reasons:
            return unresolvable(NAME, *reasons)
        state.by_node[node.name] = found
        return None

    def find_pod_volumes(self, cycle: Cycle, state: VolumeBindingCycle, node: NodeInfo
                         ) -> tuple[PodVolumes | Status, list[str]]:
        """``FindPodVolumes``: the bindings the node would take, or why it cannot (reasons in upstream's
        order: node affinity, bind conflict, missing PV)."""
        volumes = cycle.snapshot.volumes
        labels = node.labels
        bound_ok = pvs_found = unbound_ok = enough_space = True
        out = PodVolumes()
        for pvc in state.bound:
            pv = volumes.pvs.get(pvc.spec.volume_name or "")
            if pv is None:
                pvs_found = False
                break
            if not volume_node_affinity_matches(pv, labels):
                bound_ok = False
                break
        to_match: list[tuple[PersistentVolumeClaim, Candidates]] = []
        to_provision: list[PersistentVolumeClaim] = []
        for i, pvc in enumerate(state.delayed):
            found = state.candidates.get(i)
            if found is not None:
                to_match.append((pvc, found))
            elif (pvc.metadata.annotations or {}).get(ANN_SELECTED_NODE) != node.name:
                unbound_ok = False
                break
            else:
                to_provision.append(pvc)
        else:
            chosen: set[str] = set()
            for pvc, found in to_match:
                pv = found.pick(labels, chosen)
                if pv is None:
                    unbound_ok = False
                    to_provision.append(pvc)
                else:
                    chosen.add(pv.metadata.name or "")
                    out.static.append((pvc, pv))
            if to_provision:
                checked = self._check_provisions(volumes, to_provision, labels)
                if isinstance(checked, Status):
                    return checked, []
                if checked == NOT_ENOUGH_SPACE:
                    unbound_ok, enough_space = True, False
                else:
                    unbound_ok = bool(checked)
                out.provision = to_provision if checked is True else []
        reasons = []
        if not bound_ok:
            reasons.append(REASON_NODE_CONFLICT)
        if not unbound_ok:
            reasons.append(REASON_BIND_CONFLICT)
        if not pvs_found:
            reasons.append(REASON_PV_NOT_EXIST)
        if not enough_space:
            reasons.append(REASON_NOT_ENOUGH_SPACE)
        return out, reasons

    @staticmethod
    def _check_provisions(volumes: VolumeState, claims: list[PersistentVolumeClaim], labels: dict[str, str]
                          ) -> bool | str | Status:
        """``checkVolumeProvisions``: every claim's class can provision dynamically on the node (False), with
        room there (NOT_ENOUGH_SPACE)."""
        for pvc in claims:
            name = claim_class(pvc)
            if not name:
                return error(NAME, f'no class for claim "{pvc.metadata.namespace}/{pvc.metadata.name}"')
            sc = volumes.classes.get(name)
            if sc is None:
                return error(NAME, f'failed to find storage class "{name}"')
            if not sc.provisioner or sc.provisioner == NO_PROVISIONER:
                return False
            if not topology_matches(sc.allowed_topologies, labels):
                return False
            if not volumes.has_enough_capacity(pvc, sc, labels):
                return NOT_ENOUGH_SPACE
        return True

    def node_key(self, cycle: Cycle, node: NodeInfo) -> Hashable:
        """The verdict reads the node's labels (PV node affinity, allowed topologies), and its name only for
        claims with a selected node."""
        state: VolumeBindingCycle = cycle.data[NAME]
        if state.names_matter:
            return node.name
        labels = node.labels
        return tuple(labels.get(k) for k in state.label_keys)

    # ------------------------------------------------------------------ reserve + bind
    def reserve(self, cycle: Cycle, node: NodeInfo) -> Status | None:
        """``AssumePodVolumes``: the chosen node's bindings (computed again when the node's verdict was
        shared with another node in the same state)."""
        state: VolumeBindingCycle | None = cycle.data.get(NAME)
        if state is None or not state.delayed:
            return None
        found = state.by_node.get(node.name)
        if found is None:
            computed, reasons = self.find_pod_volumes(cycle, state, node)
            if isinstance(computed, Status):
                return computed
            if reasons:  # cannot happen: a node in the same state passed
                return unresolvable(NAME, *reasons)
            found = computed
        state.reserved = found
        return None

    def unreserve(self, cycle: Cycle, node: NodeInfo) -> None:
        state: VolumeBindingCycle | None = cycle.data.get(NAME)
        if state is not None:
            state.reserved = None

    def pre_bind(self, cycle: Cycle, node: NodeInfo) -> Status | None:
        """``BindPodVolumes``, completed at once: what the PV controller and the provisioner then do is
        outside the simulation, except the static binding, which is final."""
        state: VolumeBindingCycle | None = cycle.data.get(NAME)
        if state is None or state.reserved is None:
            return None
        volumes = cycle.snapshot.volumes
        pod = cycle.pod.key
        for pvc, pv in state.reserved.static:
            volumes.bind(pvc, pv, pod, node.name)
        for pvc in state.reserved.provision:
            if ANN_SELECTED_NODE not in (pvc.metadata.annotations or {}):
                volumes.select_node(pvc, pod, node.name)
        return None


def _selector_keys(selector: NodeSelector | None) -> set[str]:
    keys: set[str] = set()
    for term in selector.node_selector_terms or () if selector is not None else ():
        keys.update(req.key for req in term.match_expressions or ())
    return keys


def _label_keys(volumes: VolumeState, bound: list[PersistentVolumeClaim], delayed: list[PersistentVolumeClaim],
                candidates: Iterable[Candidates]) -> tuple[str, ...]:
    """The node labels the verdict can read: the keys of the bound PVs' and candidate PVs' node affinity, of
    the delayed claims' classes' allowed topologies, and of their storage capacities' node topology."""
    keys: set[str] = set()
    for pvc in bound:
        pv = volumes.pvs.get(pvc.spec.volume_name or "")
        if pv is not None and pv.spec.node_affinity is not None:
            keys |= _selector_keys(pv.spec.node_affinity.required)
    for found in candidates:
        if found.by_host:
            keys.add(HOSTNAME)
        for pv in [*found.prebound, *(ranked[2] for ranked in found.general)]:
            if pv.spec.node_affinity is not None:
                keys |= _selector_keys(pv.spec.node_affinity.required)
    classes = {claim_class(pvc) for pvc in delayed}
    for name in classes:
        sc = volumes.classes.get(name)
        for term in sc.allowed_topologies or () if sc is not None else ():
            keys.update(req.key for req in term.match_label_expressions or ())
    for cap in volumes.capacities:
        if cap.storage_class_name in classes and cap.node_topology is not None:
            keys.update(cap.node_topology.match_labels or {})
            keys.update(req.key for req in cap.node_topology.match_expressions or ())
    return tuple(sorted(keys))


def claim_request_key(pvc: PersistentVolumeClaim) -> int:
    """``byPVCSize``: claims with smaller storage requests are matched first."""
    return claim_request(pvc).value()
