"""Searches that upstream explores exhaustively finish at once here, with the same answer."""

from __future__ import annotations

import time

from cases_loader import expand

from dralloc.allocator import Allocator
from dralloc.api import codec

DRIVER = "d.example.com"


def _cluster(groups: int, per_group: int, claims: int, count: int):
    devices = [{"name": f"dev-{i}", "attributes": {"numa": {"int": i % groups}}} for i in range(groups * per_group)]
    objs = [{"kind": "DeviceClass", "name": "any"}, {"kind": "Node", "name": "node-1"},
            {"kind": "ResourceSlice", "name": "s", "driver": DRIVER, "pool": "p", "nodeName": "node-1",
             "devices": devices}]
    for c in range(claims):
        objs.append({"kind": "ResourceClaim", "name": f"c{c}", "requests": [{"name": "r", "class": "any", "count": count}],
                     "constraints": [{"matchAttribute": f"{DRIVER}/numa"}]})
    objs = [codec.decode(expand(o)) for o in objs]
    node = objs[1]
    return Allocator.from_objects(objs), node, [o for o in objs if type(o).__name__ == "ResourceClaim"]


def test_unsatisfiable_match_attribute_groups_are_detected_by_counting():
    # 4 claims x 8 devices with the same numa, but each numa has only 7 devices: upstream walks every
    # combination; counting devices per value proves it impossible at once.
    alloc, node, claims = _cluster(groups=4, per_group=7, claims=4, count=8)
    t = time.perf_counter()
    assert alloc.allocate(node, claims).status == "unschedulable"
    assert time.perf_counter() - t < 1.0


def test_satisfiable_groups_get_the_first_solution():
    alloc, node, claims = _cluster(groups=3, per_group=4, claims=3, count=4)
    out = alloc.allocate(node, claims)
    assert out.status == "allocated"
    picked = [[r.device for r in res.devices.results] for res in out.results]
    assert picked == [["dev-0", "dev-3", "dev-6", "dev-9"], ["dev-1", "dev-4", "dev-7", "dev-10"],
                      ["dev-2", "dev-5", "dev-8", "dev-11"]]


def test_counters_that_the_cheapest_devices_exceed_prune_the_search():
    # 24 partitions of 3 each from a counter of 50; 17 wanted (needs 51): impossible, found without search.
    devices = [{"name": f"part-{i}", "consumesCounters": [{"counterSet": "cs", "counters": {"mem": {"value": "3"}}}]}
               for i in range(24)]
    objs = [{"kind": "DeviceClass", "name": "any"}, {"kind": "Node", "name": "node-1"},
            {"kind": "ResourceSlice", "name": "a", "driver": DRIVER, "pool": "p", "count": 2, "nodeName": "node-1",
             "sharedCounters": [{"name": "cs", "counters": {"mem": {"value": "50"}}}]},
            {"kind": "ResourceSlice", "name": "b", "driver": DRIVER, "pool": "p", "count": 2, "nodeName": "node-1",
             "devices": devices},
            {"kind": "ResourceClaim", "name": "c", "requests": [{"name": "r", "class": "any", "count": 17}]}]
    objs = [codec.decode(expand(o)) for o in objs]
    t = time.perf_counter()
    out = Allocator.from_objects(objs).allocate(objs[1], [objs[-1]])
    assert out.status == "unschedulable"
    assert time.perf_counter() - t < 1.0


def _claims_cluster(devices: int, first_count: int, second_class_devices: int, second_count: int):
    objs = [{"kind": "DeviceClass", "name": "any"},
            {"kind": "DeviceClass", "name": "special", "driver": "s.example.com"},
            {"kind": "Node", "name": "node-1"},
            {"kind": "ResourceSlice", "name": "s", "driver": DRIVER, "pool": "p", "nodeName": "node-1",
             "devices": [f"dev-{i}" for i in range(devices)]},
            {"kind": "ResourceSlice", "name": "t", "driver": "s.example.com", "pool": "q", "nodeName": "node-1",
             "devices": [f"special-{i}" for i in range(second_class_devices)]},
            {"kind": "ResourceClaim", "name": "a", "requests": [{"name": "r", "class": "any", "count": first_count}]},
            {"kind": "ResourceClaim", "name": "b", "requests": [{"name": "r", "class": "special", "count": second_count}]}]
    objs = [codec.decode(expand(o)) for o in objs]
    return objs, objs[2], objs[-2:]


def test_a_later_claim_that_cannot_be_served_stops_the_search_early():
    # claim a may take 4 of 30 devices in 27 405 ways; claim b wants 3 "special" devices of the 2 there are:
    # upstream tries every way for claim a, the look-ahead sees at once that claim b cannot be served
    objs, node, claims = _claims_cluster(30, 4, 2, 3)
    plain = Allocator.from_objects(objs, prune=False).allocate(node, claims)
    eager = Allocator.from_objects(objs, hard_after=0).allocate(node, claims)
    assert plain.status == eager.status == "unschedulable"
    assert plain.steps > 10_000
    assert eager.steps < 10


def test_claims_whose_cheapest_partitions_exceed_the_shared_memory_are_cut_early():
    # counters family: partitions with their own core counter and a share of one memory counter, spread over
    # several claims; the plain search needs more than 50 000 steps to find that no split fits
    from hard_inputs import HardCase

    case = HardCase(6)
    out = Allocator(case.slices, case.classes, case.allocated).allocate(case.node, case.pending)
    assert out.status == "unschedulable"
    assert out.steps < 5_000


def test_distinct_attribute_requests_are_bounded_by_runs_of_allowed_values():
    # two NUMA values only: once request r0 has a last device, request r1 (7 devices) can only alternate
    # against r0's value, so it gets at most one device; upstream tries every r0 combination first
    from hard_inputs import HardCase

    case = HardCase(157)
    out = Allocator(case.slices, case.classes, case.allocated).allocate(case.node, case.pending)
    assert out.status == "unschedulable"
    assert out.steps < 5_000
