"""Hard allocation errors, worded as upstream's structured allocator words them.

    AllocationError (dralloc.errors)
    ├── ClaimError             invalid claim: unknown class, empty selector, too many devices, ...
    ├── SelectorError          CEL compile or runtime error on a device that was reached
    ├── ConstraintError        an All-mode request whose devices violate a claim constraint
    ├── AllocationInternalError node selection / node selector building problems
    └── AllocationTimeout      upstream's search provably runs past kube-scheduler's DRA filter timeout
"""

from __future__ import annotations

from dralloc.allocator.upstream_cost import (
    FILTER_TIMEOUT_SECONDS,
    TIMEOUT_MESSAGE,
    UPSTREAM_ABORTED_ERROR,
    UPSTREAM_SECONDS_PER_STEP,
)
from dralloc.errors import AllocationError

__all__ = ["AllocationError", "ClaimError", "SelectorError", "ConstraintError", "AllocationInternalError",
           "AllocationTimeout"]


class ClaimError(AllocationError):
    """A pending claim that the allocator cannot handle at all."""


class SelectorError(AllocationError):
    """A CEL selector failed to compile or to evaluate on a device the search reached."""


class ConstraintError(AllocationError):
    """A device of an All-mode request would violate a claim constraint."""


class AllocationInternalError(AllocationError):
    """Node selection or result node selector problems (malformed selectors)."""


class AllocationTimeout(AllocationError):
    """kube-scheduler's allocator would run past its DRA filter timeout on this node before it answers.

    Raised only on proof: ``steps`` is a lower bound on the steps (allocateOne calls) upstream's search takes
    before its first solution or its end, and it exceeds the timeout at the assumed cost per step
    (:data:`~dralloc.allocator.upstream_cost.UPSTREAM_SECONDS_PER_STEP`). The text is the error upstream's
    allocator returns when its context's deadline passes; kube-scheduler's DynamicResources plugin reports
    it as :attr:`filter_message` (an Error status: the scheduling attempt fails and the pod is retried
    with backoff).
    """

    def __init__(self, node_name: str, steps: int) -> None:
        super().__init__(UPSTREAM_ABORTED_ERROR)
        self.node_name = node_name
        self.steps = steps

    @property
    def filter_message(self) -> str:
        """The DynamicResources plugin's Filter message for this node, as kube-scheduler 1.36 words it."""
        return f"node {self.node_name}: {TIMEOUT_MESSAGE}"

    def note(self) -> str:
        """One line for ``--explain``: why this is the answer."""
        return (f"kube-scheduler's allocator would search more than {self.steps:,} steps here before any answer "
                f"(over {self.steps * UPSTREAM_SECONDS_PER_STEP:.0f} s at an assumed "
                f"{UPSTREAM_SECONDS_PER_STEP * 1e6:.0f} µs a step), past its {FILTER_TIMEOUT_SECONDS:.0f} s DRA "
                f"filter timeout: it reports \"{self.filter_message}\"; dralloc stops there too")
