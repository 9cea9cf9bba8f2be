"""Hard allocation errors, worded as upstream's structured allocator words them.

    AllocationError (dralloc.errors)
    ├── ClaimError             invalid claim: unknown class, empty selector, too many devices, ...
    ├── SelectorError          CEL compile or runtime error on a device that was reached
    ├── ConstraintError        an All-mode request whose devices violate a claim constraint
    └── AllocationInternalError node selection / node selector building problems
"""

from __future__ import annotations

from dralloc.errors import AllocationError

__all__ = ["AllocationError", "ClaimError", "SelectorError", "ConstraintError", "AllocationInternalError"]


class ClaimError(AllocationError):
    """A pending claim that the allocator cannot handle at all."""


class SelectorError(AllocationError):
    """A CEL selector failed to compile or to evaluate on a device the search reached."""


class ConstraintError(AllocationError):
    """A device of an All-mode request would violate a claim constraint."""


class AllocationInternalError(AllocationError):
    """Node selection or result node selector problems (malformed selectors)."""
