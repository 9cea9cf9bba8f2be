"""The structured allocator: pick exactly the devices kube-scheduler would pick, and explain failures.

    from dralloc.allocator import Allocator
    alloc = Allocator(slices, classes, allocated_claims)
    outcome = alloc.allocate(node, pending_claims)   # .status "allocated" (.results) / "unschedulable"
    alloc.claim_allocated(claim); alloc.claim_released(claim)

Hard errors raise :class:`dralloc.errors.AllocationError` subclasses (see :mod:`dralloc.allocator.errors`).
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
