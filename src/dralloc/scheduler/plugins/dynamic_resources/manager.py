"""The DRA side of the cluster snapshot: claims, the allocator, and the cache of per-node answers.

kube-scheduler runs the allocator for every pod on every node it examines. Most of those calls repeat an
earlier one: the same claim specs (pods of one workload) on a node whose devices have not changed, or on
another node that publishes identical devices in the same allocated state. The cache answers those:

* key = (the node's device class, the allocated state of its node-local devices, the claims' specs),
  where nodes are in one device class when their node-local ResourceSlices are identical up to the names
  of node, pool and slice. With any slice that is not node-local (network-attached devices, nodeSelector
  or allNodes pools) the node itself is the class, and every allocation anywhere changes the key;
* the cached value says whether the claims fit, the allocator's message when it does not, the results
  and the node-allocatable footprint. Results found on another node of the class are recomputed for the
  chosen node when it is bound, so bound allocations always come from a real allocator run.

Invalidation: the allocated state of a node's local devices is part of the key, so a claim allocated or
released changes the key of exactly the nodes it touches; the cache lives as long as this object, which
lives as long as the snapshot's slices and classes (a change of either builds a new one).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from msgspec.structs import replace

from dralloc.allocator import AllocationOutcome, Allocator
from dralloc.allocator.allocator import DeviceOrder
from dralloc.allocator.upstream_cost import TIMEOUT_STEPS
from dralloc.api.codec import encode_json
from dralloc.api.core_v1 import Node, NodeSelector, NodeSelectorRequirement, NodeSelectorTerm
from dralloc.api.names import DeviceName, DriverName, NodeName, PoolName
from dralloc.api.resource_v1 import AllocationResult, Device, DeviceClass, ResourceClaim, ResourceSlice
from dralloc.resources.footprint import DeviceIndex, claim_footprint
from dralloc.scheduler.attributes import AttributeKey, attribute_key, referenced_attributes
from dralloc.scheduler.podinfo import scheduler_units

CACHE_LIMIT = 200_000

# A node-local device as the node's other devices see it: (driver, rank of its pool on the node, device name).
LocalDevice = tuple[DriverName, int, DeviceName]




@dataclass
class Found:
    """The allocator's answer for some claims on one node."""

    results: list[AllocationResult] | None  # None: the claims do not fit
    message: str | None = None  # upstream's error text for the invalid-pools variant
    footprint: dict[str, int] = field(default_factory=dict)
    node: str = ""  # the node the results were computed for
    steps: int = 0


ClaimKey = tuple[str, str]


def claim_key(claim: ResourceClaim) -> ClaimKey:
    """A claim's (namespace, name)."""
    return (claim.metadata.namespace or "default", claim.metadata.name or "")


NO_LOCAL_DEVICES = -1  # the class of nodes without node-local slices when all slices are node-local


class DraState:
    """Slices, classes and allocated state for the scheduler, with the per-node answer cache."""

    def __init__(self, slices: list[ResourceSlice], classes: Iterable[DeviceClass],
                 allocated: Iterable[ResourceClaim], *, footprints: bool = False,
                 attributes: frozenset[AttributeKey] | None = None) -> None:
        """``attributes``: the only device attributes any selector or constraint can read (see
        :mod:`dralloc.scheduler.attributes`); None when every attribute may matter."""
        self.slices = slices
        self.allocator = Allocator(slices, list(classes), list(allocated))
        self.device_index = DeviceIndex(slices)
        self.footprints = footprints
        # Answers shared between nodes of one device class (off: every node is its own class; tests
        # compare both).
        self.share = True
        self._cache: dict[tuple[object, ...], Found] = {}
        self._checked: dict[bytes, bool] = {}
        self.hits = 0
        self.misses = 0
        # Node-local pools: (driver, pool) → (node, rank of the pool on the node, its device names): no
        # device ID string and key tuple per device, which matters at hundreds of thousands of devices.
        self._owner: dict[tuple[DriverName, PoolName], tuple[NodeName, int, set[str]]] = {}
        self._node_class: dict[str, object] = {}
        self._class_ids: dict[tuple[object, ...], int] = {}
        self._pools_by_rank: dict[NodeName, list[tuple[DriverName, PoolName]]] = {}
        self._node_devices: dict[NodeName, dict[LocalDevice, str]] = {}
        self._node_token: dict[NodeName, tuple[tuple[LocalDevice, str], ...]] = {}
        self._token_ids: dict[tuple[tuple[LocalDevice, str], ...], int] = {(): 0}
        self._node_token_id: dict[str, int] = {}
        self._state_ids: dict[str, tuple[object, int, int]] = {}
        self.on_node_change: Callable[[str], None] | None = None
        self._global_version = 0
        self.all_local = all(s.spec.node_name for s in slices)
        self.attributes = attributes
        self._index_local(slices)
        for claim in allocated:
            self._touch(claim)

    # ------------------------------------------------------------------ device classes of nodes
    def _index_local(self, slices: list[ResourceSlice]) -> None:
        by_node: dict[NodeName, dict[tuple[DriverName, PoolName], list[ResourceSlice]]] = {}
        for s in slices:
            if s.spec.node_name:
                pool_key = (DriverName(s.spec.driver), PoolName(s.spec.pool.name))
                by_node.setdefault(NodeName(s.spec.node_name), {}).setdefault(pool_key, []).append(s)
        for node, pools in by_node.items():
            self._pools_by_rank[node] = sorted(pools)
            parts: list[object] = []
            for rank, key in enumerate(sorted(pools)):
                group = sorted(pools[key], key=lambda x: x.metadata.name or "")
                top = max(x.spec.pool.generation for x in group)
                parts.append((key[0], len(group), tuple(sorted({x.spec.pool.resource_slice_count for x in group}))))
                for x in group:
                    spec = x.spec
                    parts.append((x.spec.pool.generation == top, self._devices_signature(spec.devices, spec.driver),
                                  encode_json(spec.shared_counters), bool(spec.per_device_node_selection)))
                    if spec.devices:
                        owner = self._owner.get(key)
                        if owner is None or owner[0] != node or owner[1] != rank:
                            owner = self._owner[key] = (node, rank, set())
                        owner[2].update(d.name for d in spec.devices)
            if self.all_local:
                self._node_class[node] = self._class_ids.setdefault(tuple(parts), len(self._class_ids))
            else:
                self._node_class[node] = node

    def _devices_signature(self, devices: list[Device] | None, driver: str) -> bytes:
        """The devices as the allocator sees them: every field, but only the attributes that can matter."""
        keep = self.attributes
        if keep is None or not devices:
            return encode_json(devices)
        trimmed = []
        for d in devices:
            attrs = d.attributes
            if attrs and any(attribute_key(k, driver) not in keep for k in attrs):
                d = replace(d, attributes={k: v for k, v in attrs.items() if attribute_key(k, driver) in keep})
            trimmed.append(d)
        return encode_json(trimmed)

    def claims_within_attributes(self, claims: list[ResourceClaim]) -> bool:
        """Whether the claims read no attribute outside ``attributes`` (else sharing must stop)."""
        if self.attributes is None:
            return True
        found = referenced_attributes((), [c.spec for c in claims])
        return found is not None and found <= self.attributes

    def admit_claims(self, claims: list[ResourceClaim], signature: bytes) -> None:
        """Check claims before they are allocated anywhere: ones that read an attribute the device classes of
        nodes were built without stop the sharing (DynamicResources' PreFilter calls this, before any node
        is filtered)."""
        if self.share and self.attributes is not None:
            ok = self._checked.get(signature)
            if ok is None:
                ok = self._checked[signature] = self.claims_within_attributes(claims)
            if not ok:
                self.stop_sharing()

    def stop_sharing(self) -> None:
        """Every node becomes its own class (a claim reads attributes the classes were built without)."""
        self.share = False
        self._cache.clear()
        self._state_ids.clear()
        if self.on_node_change is not None:
            for node in self._node_class:
                self.on_node_change(node)

    def class_of(self, node: str) -> object:
        """Nodes of one class give the same allocator answers in the same allocated state. When every slice
        is node-local, the nodes without slices form one class (no device is reachable from any of them);
        otherwise a node without node-local slices is its own class."""
        if not self.share:
            return node
        found = self._node_class.get(node)
        if found is not None:
            return found
        return NO_LOCAL_DEVICES if self.all_local else node

    # ------------------------------------------------------------------ allocated state
    def _touch(self, claim: ResourceClaim, sign: int = 1) -> None:
        alloc = claim.status.allocation if claim.status is not None else None
        if alloc is None or alloc.devices is None:
            return
        changed: set[NodeName] = set()
        for r in alloc.devices.results or ():
            owner = self._owner.get((DriverName(r.driver), PoolName(r.pool)))
            if owner is None or r.device not in owner[2]:
                self._global_version += 1
                self._state_ids.clear()
                continue
            node = owner[0]
            key = (DriverName(r.driver), owner[1], DeviceName(r.device))
            devices = self._node_devices.setdefault(node, {})
            entry = ("admin" if r.admin_access else "shared" if r.share_id else "exclusive") + \
                (encode_json(r.consumed_capacity).decode() if r.consumed_capacity else "")
            if sign > 0:
                devices[key] = devices.get(key, "") + "|" + entry
            else:
                rest = devices.get(key, "").replace("|" + entry, "", 1)
                if rest:
                    devices[key] = rest
                else:
                    devices.pop(key, None)
            changed.add(node)
        for node in changed:
            token = tuple(sorted(self._node_devices.get(node, {}).items()))
            self._node_token[node] = token
            self._node_token_id[node] = self._token_ids.setdefault(token, len(self._token_ids))
            self._state_ids.pop(node, None)
            if self.on_node_change is not None:
                self.on_node_change(node)

    def claim_allocated(self, claim: ResourceClaim) -> None:
        self.allocator.claim_allocated(claim)
        self._touch(claim, +1)

    def claim_released(self, claim: ResourceClaim) -> None:
        self.allocator.claim_released(claim)
        self._touch(claim, -1)

    def state_id(self, node: str) -> tuple[object, int, int]:
        """Equal for two nodes exactly when the allocator answers every claim the same way on both
        (up to names): their device class and the allocated state of their node-local devices. The same
        object is returned while the state lasts (callers compare with ``is``)."""
        version = 0 if self.all_local else self._global_version
        sid = self._state_ids.get(node)
        if sid is None or sid[2] != version:
            sid = (self.class_of(node), self._node_token_id.get(node, 0), version)
            self._state_ids[node] = sid
        return sid

    # ------------------------------------------------------------------ allocation
    @staticmethod
    def claims_signature(claims: list[ResourceClaim]) -> bytes:
        """What the allocator reads of the claims besides their identity: their specs, in order."""
        return b"\0".join(encode_json(c.spec) for c in claims)

    def allocate(self, node: Node, claims: list[ResourceClaim], signature: bytes, *, exact: bool = False,
                 device_order: DeviceOrder | None = None, timeout_steps: int | None = TIMEOUT_STEPS) -> Found:
        """Allocate ``claims`` together on ``node`` (cached; ``exact`` insists on results for this node).
        ``device_order``: a policy's device preference (see ``Allocator.allocate``); such answers are not
        cached. ``timeout_steps``: the filter timeout as upstream search steps (None: no timeout). Raises
        AllocationError for upstream's hard errors, AllocationTimeout where upstream's search would time out."""
        name = node.metadata.name or ""
        self.admit_claims(claims, signature)
        if device_order is not None:
            return self._found(claims, self.allocator.allocate(node, claims, device_order=device_order,
                                                               timeout_steps=timeout_steps), name)
        key = (*self.state_id(name), signature, timeout_steps)
        found = self._cache.get(key)
        if found is not None and (not exact or found.node == name or found.results is None):
            self.hits += 1
            return found
        self.misses += 1
        found = self._found(claims, self.allocator.allocate(node, claims, timeout_steps=timeout_steps), name)
        if len(self._cache) >= CACHE_LIMIT:
            self._cache.clear()
        self._cache[key] = found
        return found

    def _found(self, claims: list[ResourceClaim], outcome: AllocationOutcome, name: str) -> Found:
        if outcome.allocated:
            results = list(outcome.results)
            found = Found(results, None, self._footprint(claims, results) if self.footprints else {}, name,
                          getattr(outcome, "steps", 0))
        else:
            found = Found(None, outcome.message, {}, name, getattr(outcome, "steps", 0))
        return found

    def results_for(self, found: Found, node: str) -> list[AllocationResult] | None:
        """``found``'s results moved to ``node`` (another node of the same device class): the same devices
        of the pool with the same rank, the node selector naming ``node``. None when the results cannot be
        moved safely (shared devices with shareIDs, selectors of another shape): then allocate anew."""
        if found.results is None or found.node == node:
            return found.results
        if not self.share:
            return None
        src, dst = self._pools_by_rank.get(NodeName(found.node)), self._pools_by_rank.get(NodeName(node))
        if src is None or dst is None or len(src) != len(dst):
            return None
        pools = dict(zip(src, dst))
        moved = []
        for res in found.results:
            devices = res.devices
            new = []
            for r in (devices.results or ()) if devices is not None else ():
                target = pools.get((DriverName(r.driver), PoolName(r.pool)))
                if r.share_id or target is None:
                    return None
                new.append(replace(r, pool=target[1]))
            selector = res.node_selector
            if selector is not None:
                if encode_json(selector) != encode_json(_pinned(found.node)):
                    return None
                selector = _pinned(node)
            moved.append(replace(res, devices=replace(devices, results=new or None) if devices else None,
                                 node_selector=selector))
        return moved

    def _footprint(self, claims: list[ResourceClaim], results: list[AllocationResult]) -> dict[str, int]:
        from msgspec.structs import replace

        from dralloc.api.resource_v1 import ResourceClaimStatus
        from dralloc.resources.resourcelist import ResourceList

        total = ResourceList()
        for claim, result in zip(claims, results):
            status = claim.status or ResourceClaimStatus()
            total = total + claim_footprint(replace(claim, status=replace(status, allocation=result)),
                                            self.device_index)
        return {k: v for k, v in scheduler_units(total).items() if v}


def _pinned(node: str) -> NodeSelector:
    """The node selector of an allocation with node-local devices."""
    return NodeSelector(node_selector_terms=[NodeSelectorTerm(match_fields=[
        NodeSelectorRequirement(key="metadata.name", operator="In", values=[node])])])
