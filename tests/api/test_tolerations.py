"""The toleration rule shared by node taints (core/v1) and device taints (resource.k8s.io)."""

from __future__ import annotations

import pytest

from dralloc.api.core_v1 import Taint, Toleration
from dralloc.api.resource_v1 import DeviceTaint, DeviceToleration
from dralloc.api.tolerations import tolerates

CASES = [
    # (toleration fields, taint fields, tolerated)
    ({"key": "gpu", "operator": "Exists"}, {"key": "gpu", "value": "x", "effect": "NoSchedule"}, True),
    ({"operator": "Exists"}, {"key": "any", "effect": "NoExecute"}, True),  # empty key and Exists: everything
    ({"key": "gpu", "value": "x"}, {"key": "gpu", "value": "x", "effect": "NoSchedule"}, True),  # "" is Equal
    ({"key": "gpu", "operator": "Equal", "value": "y"}, {"key": "gpu", "value": "x", "effect": "NoSchedule"}, False),
    ({"key": "gpu", "operator": "Equal"}, {"key": "gpu", "effect": "NoSchedule"}, True),  # no value equals no value
    ({"key": "gpu", "operator": "Exists", "effect": "NoExecute"}, {"key": "gpu", "effect": "NoSchedule"}, False),
    ({"key": "other", "operator": "Exists"}, {"key": "gpu", "effect": "NoSchedule"}, False),
    ({"key": "gpu", "operator": "Gt", "value": "1"}, {"key": "gpu", "value": "2", "effect": "NoSchedule"}, False),
]


@pytest.mark.parametrize(("toleration", "taint", "expected"), CASES)
def test_node_and_device_taints_follow_one_rule(toleration: dict[str, str], taint: dict[str, str],
                                                expected: bool) -> None:
    assert tolerates(Toleration(**toleration), Taint(**taint)) is expected
    assert tolerates(DeviceToleration(**toleration), DeviceTaint(**taint)) is expected
