"""Hall's condition over the value groups of matchAttribute claims together with the other requests, and
free lists without the values a distinctAttribute claim's finished requests remember.

A claim under matchAttribute takes all its devices from one value group, so for some choice of groups the
claims and every request outside them must find devices of their own: a request that may only use NUMA
nodes 0 and 1 and a claim that needs one whole NUMA node compete for those nodes, although the claim could
also use NUMA node 2 as far as its free devices go (but not as far as its groups go).
"""

from __future__ import annotations

import pytest
from helpers import answer_and_steps as _run
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

DRIVER = "d.example.com"


def _objects(numa: list[int], claims: list[dict]) -> list[dict]:
    return [{"kind": "DeviceClass", "name": "any"}, {"kind": "Node", "name": "node-1"},
            {"kind": "ResourceSlice", "name": "s", "driver": DRIVER, "pool": "p", "nodeName": "node-1",
             "devices": [{"name": f"dev-{i:02}", "attributes": {"numa": {"int": n}, "pci": {"int": i}}}
                         for i, n in enumerate(numa)]},
            *claims]


def _first(count: int) -> dict:
    # distinct PCI addresses (all are): the failure memo keeps device names for this claim
    return {"kind": "ResourceClaim", "name": "a", "requests": [{"name": "r", "class": "any", "count": count}],
            "constraints": [{"distinctAttribute": f"{DRIVER}/pci"}]}


def test_a_request_and_a_claim_that_compete_for_two_numa_nodes_are_cut_before_any_pick():
    # NUMA nodes 0 and 1 hold 5 devices each, node 2 holds 4. Claim b wants 7 devices off node 2, claim c
    # 5 devices of one node: only nodes 0 and 1 have 5, so b and c need 12 of their 10 devices. Counted
    # over all of c's free devices (14) they fit, and upstream tries each way of serving claims a and b.
    objs = _objects([0] * 5 + [1] * 5 + [2] * 4, [
        _first(2),
        {"kind": "ResourceClaim", "name": "b", "requests": [
            {"name": "r", "class": "any", "count": 7, "selectors": ['device.attributes["d.example.com"].numa != 2']}]},
        {"kind": "ResourceClaim", "name": "c", "requests": [{"name": "r", "class": "any", "count": 5}],
         "constraints": [{"matchAttribute": f"{DRIVER}/numa"}]}])
    plain, plain_steps = _run(objs, prune=False)
    eager, eager_steps = _run(objs, hard_after=0)
    assert plain == eager == "unschedulable"
    assert plain_steps is not None and plain_steps > 5_000
    assert eager_steps is not None and eager_steps < 10


@pytest.mark.slow
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.integers(0, 2), min_size=4, max_size=10),
       st.integers(0, 2),
       st.lists(st.integers(1, 3), min_size=1, max_size=2),
       st.integers(1, 4), st.one_of(st.none(), st.integers(0, 2)),
       st.integers(1, 4))
def test_groups_and_remembered_values_give_the_plain_search_answer(numa, first, distinct_counts, count, avoid,
                                                                   group):
    # claim a (optional), claim d alternating NUMA nodes over one or two requests, claim b off one node,
    # claim c on one node
    claims = [_first(first)] if first else []
    claims.append({"kind": "ResourceClaim", "name": "d", "requests": [
        {"name": f"r{i}", "class": "any", "count": n} for i, n in enumerate(distinct_counts)],
        "constraints": [{"distinctAttribute": f"{DRIVER}/numa"}]})
    b: dict = {"name": "r", "class": "any", "count": count}
    if avoid is not None:
        b["selectors"] = [f'device.attributes["d.example.com"].numa != {avoid}']
    claims.append({"kind": "ResourceClaim", "name": "b", "requests": [b]})
    claims.append({"kind": "ResourceClaim", "name": "c", "requests": [{"name": "r", "class": "any", "count": group}],
                   "constraints": [{"matchAttribute": f"{DRIVER}/numa"}]})
    objs = _objects(numa, claims)
    assert _run(objs, hard_after=0)[0] == _run(objs, prune=False)[0]
