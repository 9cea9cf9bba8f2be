"""The resourceclaim controller's release of claims: what happens to a claim when consumers stop using it.

* Consumers that are gone or done leave ``status.reservedFor``; while any remain, nothing else changes.
* When the last one leaves, the claim is deallocated: on the *transition* from used to unused only, since a
  DRA driver may allocate a claim without reserving it, and such a claim must not lose its devices just
  because nobody reserves it. A claim being deleted, or whose owning pod is gone, is deallocated too.
* A claim generated for a pod (the pod is its controller) is deleted once that pod is gone, unless its
  deletion is already under way.

The rule is over the entries of ``reservedFor`` whatever form they take (typed references in the simulator,
stored objects in ``dralloc serve``): the caller says which entries leave.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

__all__ = ["ClaimRelease", "release"]

Consumer = TypeVar("Consumer")


@dataclass(frozen=True, slots=True)
class ClaimRelease(Generic[Consumer]):
    """A claim after its leaving consumers are taken out."""

    reserved_for: list[Consumer]  # the consumers that stay
    changed: bool  # some consumer left
    deallocate: bool  # nobody uses the claim any more: its allocation goes
    delete: bool  # it was made for a pod that is gone: the claim goes too


def release(reserved_for: Sequence[Consumer], leaves: Callable[[Consumer], bool], *, owner_gone: bool = False,
            deleting: bool = False) -> ClaimRelease[Consumer]:
    """The claim whose ``reservedFor`` is ``reserved_for`` once the entries ``leaves`` picks are gone.
    ``owner_gone``: the pod the claim was generated for no longer exists; ``deleting``: the claim carries a
    deletionTimestamp."""
    staying = [consumer for consumer in reserved_for if not leaves(consumer)]
    changed = len(staying) != len(reserved_for)
    if staying:
        return ClaimRelease(staying, changed, False, False)
    return ClaimRelease(staying, changed, changed or owner_gone or deleting, owner_gone and not deleting)
