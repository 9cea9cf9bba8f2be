"""adminAccess requests in Hall's condition: the devices they hold are their own towards their claim and
towards later requests without adminAccess.

An adminAccess request may take a device an earlier claim holds, and a later adminAccess request may take
its devices again, but it never takes a device of its own claim, and a later request without adminAccess
never takes one it holds. So its claim's requests and the later requests without adminAccess need devices
of their own: the look-ahead counts them together.
"""

from __future__ import annotations

import pytest
from helpers import answer_and_steps as _run
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

GPU = "g.example.com"
NIC = "n.example.com"


def _cluster(gpus: int, first: int, nic_numa: list[int], pairs: list[tuple[int, int | None, bool]]) -> list[dict]:
    """``gpus`` GPUs with distinct PCI addresses, claim ``a`` takes ``first`` of them (distinct addresses:
    the failure memo then keeps device names); NICs on the given NUMA nodes; per pair claim: how many NICs
    it wants, the NUMA node whose NICs it takes all of with adminAccess (None: no such request), and whether
    it also wants one NIC with adminAccess."""
    objs: list[dict] = [
        {"kind": "DeviceClass", "name": "gpu", "driver": GPU}, {"kind": "DeviceClass", "name": "nic", "driver": NIC},
        {"kind": "Node", "name": "node-1"},
        {"kind": "ResourceSlice", "name": "g", "driver": GPU, "pool": "g", "nodeName": "node-1",
         "devices": [{"name": f"gpu-{i}", "attributes": {"pci": {"int": i}}} for i in range(gpus)]},
        {"kind": "ResourceSlice", "name": "n", "driver": NIC, "pool": "n", "nodeName": "node-1",
         "devices": [{"name": f"nic-{i}", "attributes": {"numa": {"int": v}}} for i, v in enumerate(nic_numa)]},
        {"kind": "ResourceClaim", "name": "a", "requests": [{"name": "r", "class": "gpu", "count": first}],
         "constraints": [{"distinctAttribute": f"{GPU}/pci"}]},
    ]
    for p, (count, all_numa, one_admin) in enumerate(pairs):
        requests: list[dict] = [{"name": "nic", "class": "nic", "count": count}]
        if all_numa is not None:
            requests.append({"name": "all-nics", "class": "nic", "mode": "All", "adminAccess": True,
                             "selectors": [f'device.attributes["{NIC}"].numa == {all_numa}']})
        if one_admin:
            requests.append({"name": "watch", "class": "nic", "count": 1, "adminAccess": True})
        objs.append({"kind": "ResourceClaim", "name": f"pair-{p}", "requests": requests})
    return objs


def test_nics_held_with_admin_access_are_not_left_for_a_later_claim():
    # 6 NICs: pair-0 takes 2 and, with adminAccess, the 2 of NUMA node 2 (never one of its own two), so 2
    # are left where pair-1 needs 4. Upstream tries all 120 ways of serving claim a first.
    objs = _cluster(10, 3, [0, 1, 2, 0, 1, 2], [(2, 2, False), (4, None, False)])
    plain, plain_steps = _run(objs, prune=False)
    eager, eager_steps = _run(objs, hard_after=0)
    assert plain == eager == "unschedulable"
    assert plain_steps is not None and plain_steps > 5_000
    assert eager_steps is not None and eager_steps < 50


def test_a_later_admin_request_may_share_the_nics_an_earlier_one_holds():
    # pair-1 wants one NIC with adminAccess besides 4 of its own: the NICs that pair-0 holds with
    # adminAccess serve it, so all three claims fit on 8 NICs
    objs = _cluster(4, 1, [0, 1, 2, 0, 1, 2, 0, 1], [(2, 2, False), (4, None, True)])
    plain, _ = _run(objs, prune=False)
    assert plain.startswith("[")
    assert _run(objs, hard_after=0)[0] == plain


@pytest.mark.slow
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(1, 3), st.lists(st.integers(0, 2), min_size=2, max_size=8),
       st.lists(st.tuples(st.integers(1, 4), st.one_of(st.none(), st.integers(0, 2)), st.booleans()),
                min_size=1, max_size=3))
def test_admin_requests_in_halls_condition_give_the_plain_search_answer(first, nic_numa, pairs):
    objs = _cluster(4, first, nic_numa, pairs)
    assert _run(objs, hard_after=0)[0] == _run(objs, prune=False)[0]
