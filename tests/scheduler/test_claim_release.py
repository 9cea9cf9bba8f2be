"""The resourceclaim controller's release of claims (dralloc.controllers.claim_release), which the simulator
and ``dralloc serve`` both follow."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from dralloc.controllers.claim_release import release


def test_a_consumer_leaving_while_others_stay_only_shrinks_reserved_for() -> None:
    outcome = release(["a", "b"], lambda uid: uid == "a")
    assert (outcome.reserved_for, outcome.changed, outcome.deallocate, outcome.delete) == (["b"], True, False, False)


def test_the_last_consumer_leaving_deallocates() -> None:
    outcome = release(["a"], lambda uid: uid == "a")
    assert (outcome.reserved_for, outcome.deallocate, outcome.delete) == ([], True, False)


def test_a_claim_nobody_reserved_keeps_its_allocation() -> None:
    # a driver may allocate without reserving: only the transition from used to unused deallocates
    outcome = release([], lambda uid: True)
    assert (outcome.changed, outcome.deallocate, outcome.delete) == (False, False, False)


def test_a_claim_whose_owning_pod_is_gone_is_deallocated_and_deleted_unless_already_being_deleted() -> None:
    assert (release([], bool, owner_gone=True).deallocate, release([], bool, owner_gone=True).delete) == (True, True)
    deleting = release([], bool, owner_gone=True, deleting=True)
    assert (deleting.deallocate, deleting.delete) == (True, False)
    assert release([], bool, deleting=True).deallocate


@given(st.lists(st.integers(0, 5), max_size=6), st.sets(st.integers(0, 5)), st.booleans(), st.booleans())
def test_consumers_that_stay_keep_the_claim_as_it_is(reserved: list[int], leaving: set[int], owner_gone: bool,
                                                    deleting: bool) -> None:
    outcome = release(reserved, leaving.__contains__, owner_gone=owner_gone, deleting=deleting)
    assert outcome.reserved_for == [c for c in reserved if c not in leaving]
    assert outcome.changed == (len(outcome.reserved_for) != len(reserved))
    if outcome.reserved_for:
        assert not outcome.deallocate and not outcome.delete
    assert not outcome.delete or outcome.deallocate
