"""Consumable capacity: request rounding and request-policy checks, rule by rule."""

from __future__ import annotations

import pytest

from dralloc.allocator.capacity import _amount, _violates
from dralloc.allocator.numbers import to_num
from dralloc.allocator.pools import CapacityInfo
from dralloc.api.quantity import Quantity
from dralloc.api.resource_v1 import CapacityRequestPolicy, CapacityRequestPolicyRange, DeviceCapacity

Q = Quantity


def _cap(value, policy=None):
    return CapacityInfo(DeviceCapacity(value=Q(value), request_policy=policy))


def _range(min_=None, max_=None, step=None):
    return CapacityRequestPolicyRange(min=Q(min_) if min_ else None, max=Q(max_) if max_ else None,
                                      step=Q(step) if step else None)


@pytest.mark.parametrize("requested,value,policy,expected", [
    (None, "1", CapacityRequestPolicy(), 1),  # no default: the whole capacity
    (None, "2", CapacityRequestPolicy(default=Q("1"), valid_range=_range("1")), 1),
    (None, "2", CapacityRequestPolicy(default=Q("1"), valid_values=[Q("1")]), 1),
    ("2", "2", CapacityRequestPolicy(default=Q("1"), valid_range=_range("1")), 2),
    ("1", "2", CapacityRequestPolicy(default=Q("1"), valid_range=_range("2")), 2),  # below min: min
    ("2", "3", CapacityRequestPolicy(default=Q("1"), valid_range=_range("1", step="2")), 3),  # step rounds up
    ("2", "2", CapacityRequestPolicy(default=Q("1"), valid_range=_range("1", step="1")), 2),
    ("2", "3", CapacityRequestPolicy(default=Q("1"), valid_values=[Q("1"), Q("2"), Q("3")]), 2),
    ("2", "3", CapacityRequestPolicy(default=Q("1"), valid_values=[Q("1"), Q("3")]), 3),  # next valid value
    ("3", "3", CapacityRequestPolicy(default=Q("1"), valid_values=[Q("1"), Q("2")]), 3),  # none larger: as is
    ("5", "9", None, 5),  # no policy: as requested
])
def test_consumed_amount_follows_the_request_policy(requested, value, policy, expected):
    _, num = _amount(Q(requested) if requested else None, _cap(value, policy))
    assert num == expected


@pytest.mark.parametrize("amount,policy,violates", [
    ("1", None, False),
    ("1", CapacityRequestPolicy(default=Q("1"), valid_range=_range("1", "2")), False),
    ("2", CapacityRequestPolicy(default=Q("1"), valid_range=_range("1", "1")), True),  # over max
    ("1", CapacityRequestPolicy(default=Q("1"), valid_values=[Q("1")]), False),
    ("2", CapacityRequestPolicy(default=Q("1"), valid_values=[Q("1")]), True),  # not a valid value
    ("4", CapacityRequestPolicy(default=Q("1"), valid_range=_range("1", step="2")), True),  # off step
    ("5", CapacityRequestPolicy(default=Q("1"), valid_range=_range("1", step="2")), False),
    ("9", CapacityRequestPolicy(default=Q("9"), valid_range=_range("1", "2")), False),  # equal to default
])
def test_policy_violations(amount, policy, violates):
    assert _violates(to_num(Q(amount)), _cap("100", policy)) is violates
