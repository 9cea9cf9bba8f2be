"""The cluster as the scheduler sees it: nodes in the node tree's order with what is assigned to them,
the ResourceClaims, DeviceClasses and the DRA state (kube-scheduler's cache snapshot + DRA manager)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from msgspec.structs import replace

from dralloc.api.core_v1 import Node
from dralloc.api.policy_v1 import PodDisruptionBudget
from dralloc.api.resource_v1 import (
    DeviceClass,
    DeviceTaintRule,
    ResourceClaim,
    ResourceClaimStatus,
    ResourceSlice,
)
from dralloc.scheduler.attributes import AttributeKey
from dralloc.scheduler.features import FeatureGates
from dralloc.scheduler.groups import NodeGroups
from dralloc.scheduler.nodeinfo import NodeInfo, node_tree_order
from dralloc.scheduler.plugins.dynamic_resources.extended_resources import class_mapping, extended_claim_owner
from dralloc.scheduler.plugins.dynamic_resources.manager import ClaimKey, DraState, claim_key
from dralloc.scheduler.pod_index import PodIndex
from dralloc.scheduler.podinfo import PodInfo
from dralloc.scheduler.volumes import VolumeState

__all__ = ["ClaimKey", "ClusterSnapshot", "claim_key", "rebuild"]

class ClusterSnapshot:
    """Nodes, claims, classes, slices and the allocator state; updated in place as pods are bound."""

    def __init__(self, nodes: list[Node], slices: list[ResourceSlice], classes: list[DeviceClass],
                 claims: list[ResourceClaim], taint_rules: list[DeviceTaintRule], gates: FeatureGates,
                 attributes: frozenset[AttributeKey] | None = None, now: datetime | None = None) -> None:
        self.gates = gates
        self.now = now  # for binding-condition timeouts; None: nothing times out (a dump has no clock)
        self.node_list = node_tree_order(nodes)
        self.nodes = [NodeInfo.build(n) for n in self.node_list]
        self.by_name = {n.name: n for n in self.nodes}
        self.static_keys: dict[tuple[object, ...], int] = {}
        self.nominations = 0  # nodes with nominated pods (their verdicts are not shared)
        for info in self.nodes:
            info.set_static_keys(self.static_keys)
        self.classes = {c.metadata.name or "": c for c in classes}
        self.claims: dict[ClaimKey, ResourceClaim] = {claim_key(c): c for c in claims}
        # The claims made for pods' DRA-backed extended resources, by the uid of the pod that owns each
        # (DynamicResources finds a pod's claim from an earlier cycle here).
        self.extended_claims: dict[str, ClaimKey] = {}
        for c in claims:
            self._index_extended(c)
        self.taint_rules = taint_rules
        self.raw_slices = slices
        slices = allocator_slices(slices, taint_rules, gates)
        self.slices = slices
        self.extended_mapping = class_mapping(classes) if gates.enabled("DRAExtendedResource") else {}
        self.dra_extended_resources = frozenset(self.extended_mapping)
        self.attributes = attributes
        self.dra = DraState(slices, classes, [c for c in claims if _allocated(c)],
                            footprints=gates.enabled("DRANodeAllocatableResources"), attributes=attributes)
        self.groups = NodeGroups(self.nodes, self.dra)
        # The Services and controllers whose selectors default topology spreading reads.
        # The Services and the controllers (ReplicationControllers, ReplicaSets, StatefulSets) of the input, as
        # kube-scheduler's informers list them (default topology spreading reads their selectors).
        self.services: list[Any] = []
        self.controllers: list[Any] = []
        self.pod_index = PodIndex(self.nodes)
        # Namespace name -> its labels (the Namespace objects of the input; kube-apiserver's
        # kubernetes.io/metadata.name label included), read by pod affinity's namespaceSelector.
        self.namespace_labels: dict[str, dict[str, str]] = {}
        self.disruption_budgets: list[PodDisruptionBudget] = []
        self.volumes = VolumeState()  # PVs, PVCs, StorageClasses, CSINodes (the caller fills it)
        # What a plugin works out once from this snapshot's nodes and slices and keeps between cycles, under
        # the plugin's name (a policy's map of each node's GPUs); emptied when the nodes and slices change.
        self.plugin_state: dict[str, object] = {}

    # ------------------------------------------------------------------ nominations
    def nominate(self, node: NodeInfo, pod: PodInfo) -> None:
        node.nominated.append(pod)
        self.nominations += 1

    def unnominate(self, node: NodeInfo, pod: PodInfo) -> None:
        if pod in node.nominated:
            node.nominated.remove(pod)
            self.nominations -= 1

    # ------------------------------------------------------------------ claims
    def set_claim(self, claim: ResourceClaim) -> None:
        """Store a claim's new state, keeping the allocator's allocated state in step."""
        key = claim_key(claim)
        old = self.claims.get(key)
        was, now = old is not None and _allocated(old), _allocated(claim)
        if was and old is not None and (not now or old.status.allocation is not claim.status.allocation):  # type: ignore[union-attr]
            self.dra.claim_released(old)
            was = False
        self.claims[key] = claim
        self._index_extended(claim)
        if now and not was:
            self.dra.claim_allocated(claim)

    def delete_claim(self, claim: ResourceClaim) -> None:
        old = self.claims.pop(claim_key(claim), None)
        if old is not None:
            owner = extended_claim_owner(old)
            if owner is not None and self.extended_claims.get(owner) == claim_key(old):
                del self.extended_claims[owner]
        if old is not None and _allocated(old):
            self.dra.claim_released(old)

    def _index_extended(self, claim: ResourceClaim) -> None:
        owner = extended_claim_owner(claim)
        if owner is not None:
            self.extended_claims[owner] = claim_key(claim)

    def deallocate(self, claim: ResourceClaim) -> ResourceClaim:
        """Clear a claim's allocation, reservations and device status (DynamicResources PostFilter and the
        resourceclaim controller)."""
        current = self.claims.get(claim_key(claim), claim)
        status = current.status or ResourceClaimStatus()
        freed = replace(current, status=replace(status, allocation=None, reserved_for=None, devices=None))
        self.set_claim(freed)
        return freed


def allocator_slices(slices: list[ResourceSlice], taint_rules: list[DeviceTaintRule],
                     gates: FeatureGates) -> list[ResourceSlice]:
    """The slices as the allocator sees them: with DRADeviceTaints off, kube-scheduler's allocator ignores
    device taints (so the devices' own taints are dropped and DeviceTaintRules, which need the gate, add
    none); with it on, the DeviceTaintRules (gate DRADeviceTaintRules) add theirs."""
    if not gates.enabled("DRADeviceTaints"):
        return [_untainted(s) for s in slices]
    if taint_rules and gates.enabled("DRADeviceTaintRules"):
        from dralloc.allocator.taintrules import apply_taint_rules

        return apply_taint_rules(slices, taint_rules)
    return slices


def _untainted(slice_: ResourceSlice) -> ResourceSlice:
    devices = slice_.spec.devices or []
    if not any(d.taints for d in devices):
        return slice_
    return replace(slice_, spec=replace(slice_.spec, devices=[replace(d, taints=None) if d.taints else d
                                                              for d in devices]))


def _allocated(claim: ResourceClaim) -> bool:
    return claim.status is not None and claim.status.allocation is not None


def rebuild(snap: ClusterSnapshot, nodes: list[Node], slices: list[ResourceSlice]) -> None:
    """Change the set of nodes and slices (what-if): NodeInfos of kept nodes keep their pods, the DRA state
    is rebuilt over the new slices with the claims allocated now."""
    kept = {n.name: n for n in snap.nodes}
    snap.node_list = node_tree_order(nodes)
    snap.nodes = [kept.get(n.metadata.name or "") or NodeInfo.build(n) for n in snap.node_list]
    snap.by_name = {n.name: n for n in snap.nodes}
    for info in snap.nodes:
        info.set_static_keys(snap.static_keys)
    snap.raw_slices = slices
    slices = allocator_slices(slices, snap.taint_rules, snap.gates)
    snap.slices = slices
    share = snap.dra.share
    snap.dra = DraState(slices, list(snap.classes.values()), [c for c in snap.claims.values() if _allocated(c)],
                        footprints=snap.gates.enabled("DRANodeAllocatableResources"), attributes=snap.attributes)
    snap.dra.share = share
    snap.groups = NodeGroups(snap.nodes, snap.dra)
    snap.pod_index.watch(snap.nodes)
    snap.plugin_state.clear()
