"""DynamicResources: a pod's ResourceClaims must exist, be usable by it and be allocatable on the node.

PreEnqueue keeps a pod out of the queue (never tried) while a claim of it is missing, being deleted or
generated for another pod; PreFilter checks the same first.
PreFilter (per attempt): the pod's claims in ``spec.resourceClaims`` order — a template claim by the name
in ``status.resourceClaimStatuses`` — must exist, not be deleting, be owned by the pod when generated; an
unallocated claim's device classes must exist (a claim's ``reservedFor`` is not counted here: 1.36 puts no
limit on sharing, see :mod:`.reservations`). Filter (per node): an
allocated claim's ``allocation.nodeSelector`` must match the node (``resourceclaim not available on the
node``), and so must not have failed its binding (a binding failure condition True, or binding
conditions still unmet after the timeout); the unallocated claims (and the special claim of DRA-backed extended resources) are allocated
together (``cannot allocate all claims``); a hard allocator error aborts the attempt, and so does a search
that upstream's allocator provably could not finish within the filter timeout (``node NAME: timed out trying
to allocate devices``, an Error since 1.36). Every rejection is
UnschedulableAndUnresolvable, so preemption never runs for it (1.36). A claim for the pod's extended
resources left allocated by an earlier cycle passes no node (``cannot schedule extended resource claim``) and
PostFilter deletes it (``deletion of ResourceClaim completed``); else PostFilter deallocates an
unavailable claim that nobody else uses. Score: 8 − i for each firstAvailable request served by its
i-th subrequest, normalised. Reserve allocates the claims on the chosen node (the special claim gets its
name) and counts their node-allocatable footprint on it; PreBind writes them (allocation, delete-protection
finalizer, ``reservedFor``; an error when kube-apiserver would refuse a 257th ``reservedFor`` entry) and
records the special claim in the pod's status; Unreserve drops the reservation, and after PreBind takes the
pod out of its claims' ``reservedFor`` and deletes the special claim it created.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from msgspec.structs import replace

from dralloc.allocator.errors import AllocationTimeout
from dralloc.allocator.upstream_cost import FILTER_TIMEOUT_SECONDS, timeout_steps
from dralloc.api.core_v1 import NodeSelector, PodStatus
from dralloc.api.resource_v1 import (
    AllocationResult,
    ResourceClaim,
    ResourceClaimConsumerReference,
    ResourceClaimStatus,
)
from dralloc.errors import AllocationError
from dralloc.scheduler.framework import (
    SKIP,
    Code,
    Cycle,
    K,
    Plugin,
    Status,
    default_normalize,
    error,
    interned,
    unresolvable,
)
from dralloc.scheduler.nodeinfo import NodeInfo
from dralloc.scheduler.plugins.dynamic_resources import binding_conditions, extended_resources
from dralloc.scheduler.plugins.dynamic_resources.group_claims import group_consumer
from dralloc.scheduler.plugins.dynamic_resources.manager import ClaimKey, claim_key
from dralloc.scheduler.plugins.dynamic_resources.reservations import (
    consumer,
    is_reserved_for_pod,
    reservation_refused,
)
from dralloc.scheduler.plugins.node_affinity import _matches as node_selector_matches
from dralloc.scheduler.podinfo import PodInfo

NAME = "DynamicResources"
FIRST_AVAILABLE_MAX = 8  # FirstAvailableDeviceRequestMaxSize

NOT_AVAILABLE = "resourceclaim not available on the node"
CANNOT_ALLOCATE = "cannot allocate all claims"
CANNOT_ALLOCATE_STATUS = unresolvable(NAME, CANNOT_ALLOCATE)
NO_CLAIMS = "no new claims to deallocate"
DEALLOCATED = "deallocation of ResourceClaim completed"
STILL_NOT = "still not schedulable"
STALE_EXTENDED = "cannot schedule extended resource claim"
DELETED = "deletion of ResourceClaim completed"
DELETE_PROTECTION_FINALIZER = "resource.kubernetes.io/delete-protection"


@dataclass
class NodeAllocation:
    """What Filter found on one node, for Reserve and Score."""

    results: list[AllocationResult]
    extended_claim: ResourceClaim | None = None
    mappings: list[extended_resources.RequestMapping] = field(default_factory=list)
    footprint: dict[str, int] = field(default_factory=dict)


@dataclass
class Reservation:
    """What Reserve claimed on the chosen node, for PreBind to write."""

    claims: list[ResourceClaim]  # to allocate, the special claim (named) last
    results: list[AllocationResult]
    extended_claim: ResourceClaim | None = None
    mappings: list[extended_resources.RequestMapping] = field(default_factory=list)


@dataclass
class DraCycle:
    claims: list[ResourceClaim] = field(default_factory=list)
    available_on: list[NodeSelector | None] = field(default_factory=list)
    to_allocate: list[ResourceClaim] = field(default_factory=list)
    extended: list[str] = field(default_factory=list)  # DRA-backed extended resources the pod requests
    unavailable: set[int] = field(default_factory=set)
    # allocated claims whose binding failed (a failure condition is True) or timed out
    binding_failed: set[int] = field(default_factory=set)
    nodes: dict[str, NodeAllocation] = field(default_factory=dict)
    signature: bytes = b""
    reservation: Reservation | None = None
    bound: bool = False  # PreBind wrote the reservation (Unreserve then takes the pod out of the claims)
    # The pod's claim for DRA-backed extended resources from an earlier cycle, already allocated: no node
    # passes until PostFilter deletes it.
    stale_extended: ResourceClaim | None = None
    prioritized: bool = True  # some claim to allocate has a firstAvailable request (set by PreScore)

    @property
    def empty(self) -> bool:
        return not self.claims and not self.extended and self.stale_extended is None


def claim_ref(claim: ResourceClaim) -> str:
    return f"{claim.metadata.namespace}/{claim.metadata.name}"


def is_allocated(claim: ResourceClaim) -> bool:
    return claim.status is not None and claim.status.allocation is not None


def pinned_names(selector: NodeSelector) -> frozenset[str] | None:
    """The node names a selector of the form ``matchFields metadata.name In [...]`` (what an allocation of
    node-local devices carries) allows; None for any other selector."""
    terms = selector.node_selector_terms or []
    if len(terms) != 1 or terms[0].match_expressions:
        return None
    fields = terms[0].match_fields or []
    if len(fields) != 1 or fields[0].key != "metadata.name" or fields[0].operator != "In":
        return None
    return frozenset(fields[0].values or ())


def selector_matches(selector: NodeSelector, node: NodeInfo) -> bool:
    names = pinned_names(selector)
    return node.name in names if names is not None else node_selector_matches(selector, node)


def _owned_by(claim: ResourceClaim, pod_uid: str) -> bool:
    return any(o.controller and o.uid == pod_uid and o.kind == "Pod"
               for o in claim.metadata.owner_references or ())


def _default_claim_name(generate_name: str) -> str:
    return generate_name + "x"


def pod_claims(claims: Mapping[ClaimKey, ResourceClaim], pod: PodInfo) -> list[ResourceClaim] | Status:
    """The pod's claims in ``spec.resourceClaims`` order (a template claim by the name in
    ``status.resourceClaimStatuses``; one not generated, with no name there, is left out), or the status
    that rejects the pod: a claim not created yet, missing, being deleted, or generated for another pod."""
    ns = pod.namespace
    statuses = {s.name: s.resource_claim_name
                for s in (pod.pod.status.resource_claim_statuses or ())} if pod.pod.status else {}
    found: list[ResourceClaim] = []
    for pc in pod.pod.spec.resource_claims or ():
        must_check_owner = False
        if pc.resource_claim_name:
            name: str | None = pc.resource_claim_name
        elif pc.resource_claim_template_name:
            if pc.name not in statuses:
                return unresolvable(NAME, f'pod "{ns}/{pod.name}": ResourceClaim not created yet')
            name = statuses[pc.name]
            must_check_owner = True
        else:
            return unresolvable(NAME, f'pod "{ns}/{pod.name}", spec.resourceClaim "{pc.name}": '
                                      f"none of the supported fields are set")
        if name is None:
            continue
        claim = claims.get((ns, name))
        if claim is None:
            return unresolvable(NAME, f'resourceclaim.resource.k8s.io "{name}" not found')
        if claim.metadata.deletion_timestamp:
            return unresolvable(NAME, f'resourceclaim "{name}" is being deleted')
        if must_check_owner and not _owned_by(claim, pod.uid) and group_consumer(claim, pod.pod) is None:
            return unresolvable(NAME, f"ResourceClaim {ns}/{name} was not created for pod "
                                      f"{ns}/{pod.name} (pod is not owner)")
        found.append(claim)
    return found


class DynamicResources(Plugin):
    name = NAME
    weight = 1
    has_filter = True
    has_score = True

    def __init__(self, new_claim_name: Callable[[str], str] = _default_claim_name,
                 filter_timeout: float = FILTER_TIMEOUT_SECONDS) -> None:
        # Names the special claim of DRA-backed extended resources from its generateName (the API server's
        # name generation).
        self.new_claim_name = new_claim_name
        # DynamicResourcesArgs.filterTimeout (0: none), in upstream search steps at the assumed cost per step
        self.filter_timeout_steps = timeout_steps(filter_timeout)
        # The scheduler's claims, for PreEnqueue (which sees no cycle): set by the framework that runs the
        # plugin; None lets every pod in.
        self.claims_of: Callable[[], Mapping[ClaimKey, ResourceClaim]] | None = None

    # ------------------------------------------------------------------ PreEnqueue
    def pre_enqueue(self, pod: PodInfo) -> Status | None:
        """Keep a pod out of the active queue while one of its claims is missing, being deleted or not made
        for it (PreFilter's first check, run before any attempt: such a pod is not tried at all)."""
        if self.claims_of is None:
            return None
        found = pod_claims(self.claims_of(), pod)
        return found if isinstance(found, Status) else None

    # ------------------------------------------------------------------ PreFilter
    def pre_filter(self, cycle: Cycle) -> Status | set[str] | None:
        st = DraCycle()
        cycle.data[NAME] = st
        snap = cycle.snapshot
        pod = cycle.pod
        found = pod_claims(snap.claims, pod)
        if isinstance(found, Status):
            return found
        claims = found
        extended: list[str] = []
        if snap.gates.enabled("DRAExtendedResource"):
            extended = sorted(r for r in pod.request if r in snap.extended_mapping)
        if not claims and not extended:
            return SKIP
        if extended:
            key = snap.extended_claims.get(pod.uid)
            earlier = snap.claims.get(key) if key is not None else None
            if earlier is not None and is_allocated(earlier):
                st.stale_extended = earlier
        # Like upstream, the claims are only recorded once PreFilter passes: a rejected pod's PostFilter
        # finds none ("no new claims to deallocate").
        check_binding = snap.gates.enabled("DRADeviceBindingConditions") and \
            snap.gates.enabled("DRAResourceClaimDeviceStatus")
        for index, claim in enumerate(claims):
            if is_allocated(claim):
                assert claim.status is not None and claim.status.allocation is not None
                st.available_on.append(claim.status.allocation.node_selector)
                if check_binding and binding_conditions.unavailable(claim, snap.now):
                    st.binding_failed.add(index)  # unavailable on every node: PostFilter deallocates it
                continue
            st.available_on.append(None)
            st.to_allocate.append(claim)
            status = self._check_requests(cycle, claim)
            if status is not None:
                return status
        st.signature = snap.dra.claims_signature(st.to_allocate)
        snap.dra.admit_claims(st.to_allocate, st.signature)
        st.claims, st.extended = claims, extended
        return None

    def _check_requests(self, cycle: Cycle, claim: ResourceClaim) -> Status | None:
        snap = cycle.snapshot
        devices = claim.spec.devices
        for request in (devices.requests or ()) if devices is not None else ():
            if request.exactly is not None:
                status = self._check_class(cycle, request.exactly.device_class_name, request.name)
            elif request.first_available:
                if not snap.gates.enabled("DRAPrioritizedList"):
                    return unresolvable(NAME, f"resource claim {claim_ref(claim)}, request {request.name}: has "
                                              f"subrequests, but the DRAPrioritizedList feature is disabled")
                status = None
                for sub in request.first_available:
                    status = self._check_class(cycle, sub.device_class_name, f"{request.name}/{sub.name}")
                    if status is not None:
                        break
            else:
                return unresolvable(NAME, f"resource claim {claim_ref(claim)}, request {request.name}: "
                                          f"unknown request type")
            if status is not None:
                return status
        return None

    @staticmethod
    def _check_class(cycle: Cycle, class_name: str, request: str) -> Status | None:
        if not class_name:
            return error(NAME, f"request {request}: unsupported request type")
        if class_name not in cycle.snapshot.classes:
            return unresolvable(NAME, f"request {request}: device class {class_name} does not exist")
        return None

    # ------------------------------------------------------------------ Filter
    def filter(self, cycle: Cycle, node: NodeInfo) -> Status | None:
        st: DraCycle | None = cycle.data.get(NAME)
        if st is None or st.empty:
            return None
        if st.stale_extended is not None:
            return unresolvable(NAME, STALE_EXTENDED)
        snap = cycle.snapshot
        ext_claim = None
        mappings: list[extended_resources.RequestMapping] = []
        if st.extended:
            missing = [r for r in st.extended if node.allocatable.get(r, 0) == 0]
            if missing:
                requests, mappings = extended_resources.requests_and_mappings(
                    cycle.pod.pod, missing, snap.extended_mapping)
                if requests:
                    ext_claim = extended_resources.special_claim(cycle.pod.pod, requests)
        if ext_claim is None and not st.claims:
            return None
        available_on = st.available_on
        # Pending claims have no node selector: skip the per-claim pass (this runs for every node filtered).
        unavailable = [i for i, sel in enumerate(available_on)
                       if i in st.binding_failed or (sel is not None and not selector_matches(sel, node))] \
            if st.binding_failed or available_on.count(None) != len(available_on) else []
        to_allocate = st.to_allocate + ([ext_claim] if ext_claim is not None else [])
        results: list[AllocationResult] = []
        footprint: dict[str, int] = {}
        if to_allocate:
            signature = st.signature
            if ext_claim is not None:
                signature += snap.dra.claims_signature([ext_claim])
            try:
                # (the timeout applies while DRASchedulerFilterTimeout is on, as kube-scheduler reads the args)
                timeout = self.filter_timeout_steps if snap.gates.enabled("DRASchedulerFilterTimeout") else None
                found = snap.dra.allocate(node.node, to_allocate, signature, timeout_steps=timeout)
            except AllocationTimeout as exc:  # an Error since 1.36 (the pod is retried with backoff)
                return error(NAME, exc.filter_message)
            except AllocationError as exc:
                return error(NAME, str(exc))
            if found.message is not None:
                return interned(Code.UNRESOLVABLE, (found.message,), NAME)
            if found.results is None:
                return CANNOT_ALLOCATE_STATUS
            results = found.results
            footprint = found.footprint
        if unavailable:
            st.unavailable.update(unavailable)
            return unresolvable(NAME, NOT_AVAILABLE)
        if footprint:
            status = self._check_footprint(cycle, node, footprint)
            if status is not None:
                return status
        st.nodes[node.name] = NodeAllocation(results, ext_claim, mappings, footprint)
        return None

    @staticmethod
    def _check_footprint(cycle: Cycle, node: NodeInfo, footprint: dict[str, int]) -> Status | None:
        """KEP-5517 (gate DRANodeAllocatableResources): the claims' node-allocatable footprint, on top of the
        pod's own requests, must fit the node — NodeResourcesFit's texts and codes."""
        reasons = []
        hard = False
        request = cycle.pod.request
        for name, extra in sorted(footprint.items()):
            want = request.get(name, 0) + extra
            have = node.allocatable.get(name, 0)
            if want > have - node.requested.get(name, 0):
                reasons.append(f"Insufficient {name}")
                hard |= want > have
        if not reasons:
            return None
        return Status(Code.UNRESOLVABLE if hard else Code.UNSCHEDULABLE, tuple(reasons), NAME)

    # ------------------------------------------------------------------ PostFilter
    def post_filter(self, cycle: Cycle) -> Status:
        st: DraCycle | None = cycle.data.get(NAME)
        if st is None or st.empty:
            return Status(Code.UNSCHEDULABLE, (NO_CLAIMS,), NAME)
        if st.stale_extended is not None:  # a new one is made next cycle
            cycle.snapshot.delete_claim(st.stale_extended)
            return Status(Code.UNSCHEDULABLE, (DELETED,), NAME)
        # Upstream picks one unavailable claim at random (map order); the lowest index is as good a choice.
        for index in sorted(st.unavailable):
            claim = st.claims[index]
            reserved = (claim.status.reserved_for or ()) if claim.status is not None else ()
            if not reserved or (len(reserved) == 1 and reserved[0].uid == cycle.pod.uid):
                cycle.snapshot.deallocate(claim)
                return Status(Code.UNSCHEDULABLE, (DEALLOCATED,), NAME)
        return Status(Code.UNSCHEDULABLE, (STILL_NOT,), NAME)

    # ------------------------------------------------------------------ Score
    def pre_score(self, cycle: Cycle, nodes: list[NodeInfo]) -> Status | None:
        st: DraCycle | None = cycle.data.get(NAME)
        if st is None or st.empty:
            return SKIP
        st.prioritized = any(req.first_available for claim in st.to_allocate if claim.spec.devices is not None
                             for req in claim.spec.devices.requests or ())
        return None

    def score(self, cycle: Cycle, node: NodeInfo) -> int:
        st: DraCycle = cycle.data[NAME]
        if not st.prioritized:  # only a request with firstAvailable subrequests scores
            return 0
        found = st.nodes.get(node.name)
        if found is None:
            return 0
        score = 0
        for claim, result in zip(st.to_allocate, found.results):
            chosen = {r.request for r in (result.devices.results or ()) if "/" in r.request} \
                if result.devices is not None else set()
            for req in (claim.spec.devices.requests or ()) if claim.spec.devices is not None else ():
                for i, sub in enumerate(req.first_available or ()):
                    if f"{req.name}/{sub.name}" in chosen:
                        score += FIRST_AVAILABLE_MAX - i
        return score

    def normalize(self, cycle: Cycle, scores: dict[K, int]) -> dict[K, int]:
        return default_normalize(scores, reverse=False)

    # ------------------------------------------------------------------ Reserve / Unreserve
    def reserve(self, cycle: Cycle, node: NodeInfo) -> Status | None:
        """Allocate the unallocated claims (and the special claim, named now) on the chosen node, and count
        their node-allocatable footprint on it. The devices count as taken once PreBind writes them: nothing
        runs in between here."""
        st: DraCycle | None = cycle.data.get(NAME)
        if st is None or st.empty:
            return None
        snap = cycle.snapshot
        found = st.nodes.get(node.name)
        to_allocate = list(st.to_allocate)
        ext = found.extended_claim if found is not None else None
        mappings: list[extended_resources.RequestMapping] = []
        if ext is not None:
            ext = replace(ext, metadata=replace(ext.metadata, name=self.new_claim_name(
                ext.metadata.generate_name or "")))
            to_allocate.append(ext)
            mappings = list(found.mappings) if found is not None else []
        results = found.results if found is not None else []
        footprint: dict[str, int] = {}
        if to_allocate:
            # Filter may have shared another node's answer (same devices, other names): allocate here.
            signature = snap.dra.claims_signature(to_allocate)
            # (no timeout: the node passed Filter, whose answer upstream's Reserve uses as it is)
            found_here = snap.dra.allocate(node.node, to_allocate, signature, device_order=cycle.device_order,
                                           timeout_steps=None)
            moved = snap.dra.results_for(found_here, node.name)
            if moved is None:
                found_here = snap.dra.allocate(node.node, to_allocate, signature, exact=True, timeout_steps=None)
                moved = found_here.results
            if moved is None:  # cannot happen: the class answer was checked on this node
                return unresolvable(NAME, CANNOT_ALLOCATE)
            results = moved
            footprint = found_here.footprint
        st.reservation = Reservation(to_allocate, results, ext, mappings)
        if footprint:
            node.set_footprint(cycle.pod, footprint)
        return None

    def unreserve(self, cycle: Cycle, node: NodeInfo) -> None:
        """Drop the reservation; after PreBind (a later PreBind plugin or the binding failed) also take the pod
        out of ``reservedFor`` of its claims (their allocations stay: the resourceclaim controller frees a
        claim nobody uses) and delete the claim made for its extended resources."""
        st: DraCycle | None = cycle.data.get(NAME)
        if st is None or st.reservation is None:
            return
        if st.bound:
            self._unbind(cycle, st.reservation)
            st.bound = False
        st.reservation = None
        if cycle.pod.claim_footprint and cycle.pod in node.pods:
            node.set_footprint(cycle.pod, {})

    @staticmethod
    def _unbind(cycle: Cycle, reservation: Reservation) -> None:
        snap = cycle.snapshot
        pod = cycle.pod
        ext = reservation.extended_claim
        if ext is not None:
            created = snap.claims.get(claim_key(ext))
            if created is not None:
                snap.delete_claim(created)
        st: DraCycle = cycle.data[NAME]
        for claim in st.claims:
            current = snap.claims.get(claim_key(claim))
            if current is None or current.status is None or not is_allocated(current) \
                    or group_consumer(current, pod.pod) is not None:  # (a PodGroup's entry stays for the group)
                continue
            reserved = current.status.reserved_for or []
            kept = [r for r in reserved if r.uid != pod.uid]
            if len(kept) != len(reserved):
                snap.set_claim(replace(current, status=replace(current.status, reserved_for=kept)))

    # ------------------------------------------------------------------ PreBind
    def pre_bind(self, cycle: Cycle, node: NodeInfo) -> Status | None:
        """Write the allocations (with the delete-protection finalizer) and the pod in ``reservedFor`` of each
        claim not yet reserved for it; record the special claim in ``status.extendedResourceClaimStatus``."""
        st: DraCycle | None = cycle.data.get(NAME)
        if st is None or st.empty or st.reservation is None:
            return None
        snap = cycle.snapshot
        pod = cycle.pod
        reservation = st.reservation
        # The consumers added to claims already allocated, each write checked first as kube-apiserver checks
        # it (a full reservedFor refuses one more): a refusal fails PreBind before anything is written.
        added: list[tuple[ResourceClaim, list[ResourceClaimConsumerReference]]] = []
        for claim in st.claims:
            current = snap.claims.get(claim_key(claim), claim)
            if current.status is None or current.status.allocation is None or claim in st.to_allocate \
                    or is_reserved_for_pod(current, pod.pod):
                continue
            reserved = [*(current.status.reserved_for or ()), consumer(current, pod.pod)]
            refused = reservation_refused(current, reserved)
            if refused is not None:
                return error(NAME, refused)
            added.append((current, reserved))
        for claim, result in zip(reservation.claims, reservation.results):
            status = claim.status or ResourceClaimStatus()
            finalizers = list(claim.metadata.finalizers or ())
            if DELETE_PROTECTION_FINALIZER not in finalizers:
                finalizers.append(DELETE_PROTECTION_FINALIZER)
            # (a PodGroup's claim is reserved for the group)
            snap.set_claim(replace(claim, metadata=replace(claim.metadata, finalizers=finalizers),
                                   status=replace(status, allocation=result, reserved_for=[consumer(claim, pod.pod)])))
        for current, reserved in added:
            assert current.status is not None
            snap.set_claim(replace(current, status=replace(current.status, reserved_for=reserved)))
        ext = reservation.extended_claim
        if ext is not None:
            pod_status = pod.pod.status or PodStatus()
            mappings = [{"containerName": m.container_name, "resourceName": m.resource_name,
                         "requestName": m.request_name} for m in reservation.mappings]
            pod.pod = replace(pod.pod, status=replace(pod_status, extended_resource_claim_status={
                "requestMappings": mappings, "resourceClaimName": ext.metadata.name}))
        st.bound = True
        return None
