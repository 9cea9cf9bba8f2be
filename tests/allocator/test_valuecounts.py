"""The per-value count of the look-ahead: demands under one attribute's constraints against free devices."""

from __future__ import annotations

from dralloc.allocator.valuecounts import ValueDemand, values_short


def _alternating_then_one_value(node0: int) -> bool:
    # an alternating request of 8 (at most 4 of a value), then a claim wanting 7 of one value
    alternating = ValueDemand(8, {0: 4, 1: 2, 2: 2})
    one_value = ValueDemand(7, {0: node0, 5: 3}, claim=1)
    return values_short([alternating, one_value], {0: node0, 1: 2, 2: 2, 5: 3})


def test_a_value_both_need_is_counted_once():
    assert _alternating_then_one_value(10)  # 4 + 7 > 10
    assert not _alternating_then_one_value(11)


def test_match_claims_choose_their_values_together():
    # two claims each want 3 of one value; values 0 and 1 have 3 each: they take one each, never the same
    a = ValueDemand(3, {0: 3, 1: 3}, claim=0)
    b = ValueDemand(3, {0: 3, 1: 3}, claim=1)
    assert not values_short([a, b], {0: 3, 1: 3})
    c = ValueDemand(3, {0: 3, 1: 3}, claim=2)
    assert values_short([a, b, c], {0: 3, 1: 3})
