"""The structured allocator: pick exactly the devices kube-scheduler would pick, and explain failures.

    from dralloc.allocator import Allocator
    alloc = Allocator(slices, classes, allocated_claims)
    outcome = alloc.allocate(node, pending_claims)   # .status "allocated" (.results) / "unschedulable"
    outcome.steps                                     # search nodes visited (work done, machine-independent)
    alloc.claim_allocated(claim); alloc.claim_released(claim)   # allocated state, no rebuild
    alloc.add_slices(slices); alloc.remove_slices(slices)       # what-if: a node joins or leaves

Hard errors raise :class:`dralloc.errors.AllocationError` subclasses (see :mod:`dralloc.allocator.errors`),
among them :class:`AllocationTimeout` where the search proves that kube-scheduler's own allocator would run
past its DRA filter timeout on the node before it answers (its answer is then that timeout).

Differences from upstream, on purpose:

* ``shareID`` (devices with allowMultipleAllocations) is deterministic: ``uuid5(SHARE_ID_NAMESPACE,
  "<claim uid or namespace/name>|<request>|<driver/pool/device>|<index of the result in the claim>")``
  instead of a random UUID, so the same input gives byte-identical output.
* kubernetes#140436 is fixed as upstream fixed it (PR #140431): a rejected candidate releases every
  reservation (counters, constraint state) and backtracking an allow-multiple device releases its counters.
* The search prunes branches that provably cannot succeed (too few free devices left for the requests still
  to fill, shared counters the cheapest of them would exceed, no matchAttribute value shared by enough
  devices) and remembers failed subtrees (see :mod:`dralloc.allocator.search`). The answer (first solution,
  or error) is the same as upstream's exhaustive search, only faster; ``Allocator(..., prune=False)`` runs
  the plain search.
"""

from dralloc.allocator.allocator import Allocator
from dralloc.allocator.claims import MAX_DEVICES_PER_CLAIM
from dralloc.allocator.errors import (
    AllocationError,
    AllocationInternalError,
    AllocationTimeout,
    ClaimError,
    ConstraintError,
    SelectorError,
)
from dralloc.allocator.outcome import INVALID_POOLS_MESSAGE, AllocationOutcome
from dralloc.allocator.results import SHARE_ID_NAMESPACE
from dralloc.allocator.state import AllocatedState
from dralloc.allocator.views import DeviceInfoCache

__all__ = [
    "INVALID_POOLS_MESSAGE",
    "MAX_DEVICES_PER_CLAIM",
    "SHARE_ID_NAMESPACE",
    "AllocatedState",
    "DeviceInfoCache",
    "AllocationError",
    "AllocationInternalError",
    "AllocationOutcome",
    "AllocationTimeout",
    "Allocator",
    "ClaimError",
    "ConstraintError",
    "SelectorError",
]
