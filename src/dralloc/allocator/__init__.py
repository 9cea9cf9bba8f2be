"""The structured allocator: pick exactly the devices kube-scheduler would pick, and explain failures.

    from dralloc.allocator import Allocator
    alloc = Allocator(slices, classes, allocated_claims)
    outcome = alloc.allocate(node, pending_claims)   # .status "allocated" (.results) / "unschedulable"
    alloc.claim_allocated(claim); alloc.claim_released(claim)

Hard errors raise :class:`dralloc.errors.AllocationError` subclasses (see :mod:`dralloc.allocator.errors`).

Differences from upstream, on purpose:

* ``shareID`` (devices with allowMultipleAllocations) is deterministic: ``uuid5(SHARE_ID_NAMESPACE,
  "<claim uid or namespace/name>|<request>|<driver/pool/device>|<index of the result in the claim>")``
  instead of a random UUID, so the same input gives byte-identical output.
* kubernetes#140436 is fixed as upstream fixed it (PR #140431): a rejected candidate releases every
  reservation (counters, constraint state) and backtracking an allow-multiple device releases its counters.
* The search prunes branches that provably cannot succeed (too few candidates left, shared counters the
  cheapest remaining devices would exceed, no matchAttribute value shared by enough devices). The answer
  (first solution, or error) is the same as upstream's exhaustive search, only faster.
"""

from dralloc.allocator.allocator import (
    INVALID_POOLS_MESSAGE,
    MAX_DEVICES_PER_CLAIM,
    SHARE_ID_NAMESPACE,
    AllocationOutcome,
    Allocator,
)
from dralloc.allocator.errors import (
    AllocationError,
    AllocationInternalError,
    ClaimError,
    ConstraintError,
    SelectorError,
)
from dralloc.allocator.state import AllocatedState

__all__ = [
    "INVALID_POOLS_MESSAGE",
    "MAX_DEVICES_PER_CLAIM",
    "SHARE_ID_NAMESPACE",
    "AllocatedState",
    "AllocationError",
    "AllocationInternalError",
    "AllocationOutcome",
    "Allocator",
    "ClaimError",
    "ConstraintError",
    "SelectorError",
]
