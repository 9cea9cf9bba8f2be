"""Searches that upstream explores exhaustively finish at once here, with the same answer."""

from __future__ import annotations

import time
from typing import Any

import pytest
from cases_loader import expand

from dralloc.allocator import AllocationError, Allocator
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


def _allocate_both_ways(objs: list[dict]):
    """(plain outcome, pruned outcome with look-ahead from the first step) for compact objects."""
    decoded = [codec.decode(expand(o)) for o in objs]
    node = next(o for o in decoded if type(o).__name__ == "Node")
    claims = [o for o in decoded if type(o).__name__ == "ResourceClaim" and o.status is None]
    plain = Allocator.from_objects(decoded, prune=False).allocate(node, claims)
    eager = Allocator.from_objects(decoded, hard_after=0).allocate(node, claims)
    return plain, eager


def _answer(out) -> tuple[str, list[list[str]]]:
    return out.status, [[r.device for r in res.devices.results] for res in out.results]


def test_a_later_claim_whose_distinct_requests_must_alternate_over_two_values_is_seen_as_hopeless():
    # claim b wants 2 + 2 devices on pairwise different NUMA nodes, with only two NUMA nodes: its second
    # request must avoid the value its first request ended on, so it gets one device at most. Seen from
    # claim a, each request of b alone looks feasible; upstream tries every way of serving claim a first.
    objs = [{"kind": "DeviceClass", "name": "any"}, {"kind": "Node", "name": "node-1"},
            {"kind": "ResourceSlice", "name": "s", "driver": DRIVER, "pool": "p", "nodeName": "node-1",
             "devices": [{"name": f"dev-{i}", "attributes": {"numa": {"int": i % 2}}} for i in range(12)]},
            {"kind": "ResourceClaim", "name": "a", "requests": [{"name": "r", "class": "any", "count": 2}]},
            {"kind": "ResourceClaim", "name": "b", "requests": [{"name": "r0", "class": "any", "count": 2},
                                                                {"name": "r1", "class": "any", "count": 2}],
             "constraints": [{"distinctAttribute": f"{DRIVER}/numa"}]}]
    plain, eager = _allocate_both_ways(objs)
    assert _answer(plain) == _answer(eager) == ("unschedulable", [])
    assert plain.steps > 10_000
    assert eager.steps < 50


def _gpus(gpus: int, parts: int, memory: int, part_memory: int) -> list[dict]:
    """A pool of partitionable GPUs: each a whole device and ``parts`` partitions, on a per-GPU counter set."""
    sets = [{"name": f"gpu-{g}", "counters": {"memory": {"value": str(memory)}}} for g in range(gpus)]
    devices = []
    for g in range(gpus):
        devices.append({"name": f"gpu-{g}", "attributes": {"parent": {"string": f"gpu-{g}"}, "whole": {"bool": True}},
                        "consumesCounters": [{"counterSet": f"gpu-{g}", "counters": {"memory": {"value": str(memory)}}}]})
        devices += [{"name": f"gpu-{g}-part-{p}", "attributes": {"parent": {"string": f"gpu-{g}"}, "whole": {"bool": False}},
                     "consumesCounters": [{"counterSet": f"gpu-{g}", "counters": {"memory": {"value": str(part_memory)}}}]}
                    for p in range(parts)]
    return [{"kind": "ResourceSlice", "name": "counters", "driver": DRIVER, "pool": "gpus", "count": 2,
             "nodeName": "node-1", "sharedCounters": sets},
            {"kind": "ResourceSlice", "name": "devices", "driver": DRIVER, "pool": "gpus", "count": 2,
             "nodeName": "node-1", "devices": devices}]


def test_claims_needing_more_memory_than_all_gpus_together_have_left_are_cut_before_any_pick():
    # 3 GPUs with memory for 2 partitions each (6 in all) and 4 partitions each: claims a and b want
    # 2 + 5. Any single GPU's counter may be avoided, so only the sum over the GPUs shows it cannot fit;
    # upstream tries every spread of claim a's partitions and then of claim b's.
    part = f'device.attributes["{DRIVER}"].whole == false'
    objs = [{"kind": "DeviceClass", "name": "any"}, {"kind": "Node", "name": "node-1"}, *_gpus(3, 4, 40, 20),
            {"kind": "ResourceClaim", "name": "a", "requests": [{"name": "r", "class": "any", "count": 2,
                                                                 "selectors": [part]}]},
            {"kind": "ResourceClaim", "name": "b", "requests": [{"name": "r", "class": "any", "count": 5,
                                                                 "selectors": [part]}]}]
    plain, eager = _allocate_both_ways(objs)
    assert _answer(plain) == _answer(eager) == ("unschedulable", [])
    assert plain.steps > 1_000
    assert eager.steps < 10


def _partitions_then_all_of_gpu4(partition_memory: int) -> list[dict[str, Any]]:
    """Claim a: 3 partitions on different GPUs, then All whole GPUs named gpu-4, under one distinctAttribute;
    claim b: 3 of 2 special devices (never possible)."""
    whole_gpu4 = f'device.attributes["{DRIVER}"].whole == true && device.attributes["{DRIVER}"].parent == "gpu-4"'
    part = f'device.attributes["{DRIVER}"].whole == false'
    return [{"kind": "DeviceClass", "name": "gpu", "driver": DRIVER},
            {"kind": "DeviceClass", "name": "special", "driver": "s.example.com"},
            {"kind": "Node", "name": "node-1"}, *_gpus(5, 4, 80, partition_memory),
            {"kind": "ResourceSlice", "name": "t", "driver": "s.example.com", "pool": "q", "nodeName": "node-1",
             "devices": ["special-0", "special-1"]},
            {"kind": "ResourceClaim", "name": "a", "requests": [
                {"name": "r0", "class": "gpu", "count": 3, "selectors": [part]},
                {"name": "r1", "class": "gpu", "mode": "All", "selectors": [whole_gpu4]}],
             "constraints": [{"distinctAttribute": f"{DRIVER}/parent"}]},
            {"kind": "ResourceClaim", "name": "b", "requests": [{"name": "r", "class": "special", "count": 3}]}]


def test_an_all_request_that_can_only_conflict_with_partitions_of_its_own_gpu_lets_the_look_ahead_pass():
    # Claim a: 3 partitions on different GPUs one after another, then All whole GPUs with index >= 4
    # (gpu-4) under the same distinctAttribute. gpu-4 could only break the constraint after a partition
    # of gpu-4, whose memory it then cannot get: so the All request never raises, and the look-ahead may
    # see past it that claim b (3 of 2 special devices) can never be served.
    objs = _partitions_then_all_of_gpu4(20)
    plain, eager = _allocate_both_ways(objs)
    assert _answer(plain) == _answer(eager) == ("unschedulable", [])
    assert plain.steps > 1_000
    assert eager.steps < 10


def test_an_all_request_that_may_break_its_constraint_still_raises_upstreams_error():
    # The same claim a, but gpu-4's partitions draw no memory: after a gpu-4 partition the whole gpu-4
    # still fits, breaks distinctAttribute, and upstream fails the allocation with its error.
    objs = _partitions_then_all_of_gpu4(0)
    decoded = [codec.decode(expand(o)) for o in objs]
    node = decoded[2]
    claims = [o for o in decoded if type(o).__name__ == "ResourceClaim"]
    errors = []
    for options in ({"prune": False}, {"hard_after": 0}):
        try:
            Allocator.from_objects(decoded, **options).allocate(node, claims)
        except AllocationError as exc:
            errors.append(str(exc))
    assert len(errors) == 2 and errors[0] == errors[1]
    assert "cannot add device" in errors[0]


def _two_claims_on_one_numa_node(numa: list[int]) -> list[dict[str, Any]]:
    """Devices on the given NUMA nodes; claim a wants any 2, claims b and c 5 each from one NUMA node."""
    return [{"kind": "DeviceClass", "name": "any"}, {"kind": "Node", "name": "node-1"},
            {"kind": "ResourceSlice", "name": "s", "driver": DRIVER, "pool": "p", "nodeName": "node-1",
             "devices": [{"name": f"dev-{i}", "attributes": {"numa": {"int": n}}} for i, n in enumerate(numa)]},
            {"kind": "ResourceClaim", "name": "a", "requests": [{"name": "r", "class": "any", "count": 2}]},
            *({"kind": "ResourceClaim", "name": name, "requests": [{"name": "r", "class": "any", "count": 5}],
               "constraints": [{"matchAttribute": f"{DRIVER}/numa"}]} for name in ("b", "c"))]


def test_two_later_claims_that_both_need_the_one_big_numa_node_are_seen_to_collide():
    # claims b and c each want 5 devices of one NUMA node; only node 0 has 5 (it has 8): each claim alone
    # fits, both together do not. Upstream tries every way of serving claim a first, then every way of b.
    objs = _two_claims_on_one_numa_node([0, 1, 2, 0, 0, 1, 2, 0, 0, 1, 2, 0, 0, 1, 2, 0])
    plain, eager = _allocate_both_ways(objs)
    assert _answer(plain) == _answer(eager) == ("unschedulable", [])
    assert plain.steps > 1_000
    assert eager.steps < 10


def test_claims_that_fit_their_numa_nodes_side_by_side_are_not_cut():
    # the same claims with 10 devices on node 0: b and c fit together, and both searches give one answer
    objs = _two_claims_on_one_numa_node([0, 1, 2, 0, 0, 1, 2, 0, 0, 1, 2, 0, 0, 1, 2, 0, 0, 0])
    plain, eager = _allocate_both_ways(objs)
    assert _answer(plain) == _answer(eager)
    assert plain.status == "allocated"


def test_later_claims_that_together_want_more_nics_than_there_are_are_cut_before_any_pick():
    # claims b and c want 3 and 2 of the 4 NICs: each alone fits, and among all devices there are plenty,
    # so only the requests whose devices lie within the NICs, taken together, show the shortage (Hall's
    # condition). Claim d's adminAccess request may reuse devices; it is left out of the count.
    objs = [{"kind": "DeviceClass", "name": "any", "driver": DRIVER},
            {"kind": "DeviceClass", "name": "nic", "driver": "n.example.com"},
            {"kind": "Node", "name": "node-1"},
            {"kind": "ResourceSlice", "name": "s", "driver": DRIVER, "pool": "p", "nodeName": "node-1",
             "devices": [f"dev-{i}" for i in range(20)]},
            {"kind": "ResourceSlice", "name": "t", "driver": "n.example.com", "pool": "q", "nodeName": "node-1",
             "devices": [f"nic-{i}" for i in range(4)]},
            {"kind": "ResourceClaim", "name": "a", "requests": [{"name": "r", "class": "any", "count": 3}]},
            {"kind": "ResourceClaim", "name": "b", "requests": [{"name": "r", "class": "nic", "count": 3}]},
            {"kind": "ResourceClaim", "name": "c", "requests": [{"name": "r", "class": "nic", "count": 2}]},
            {"kind": "ResourceClaim", "name": "d", "requests": [{"name": "r", "class": "nic", "count": 4,
                                                                 "adminAccess": True}]}]
    plain, eager = _allocate_both_ways(objs)
    assert _answer(plain) == _answer(eager) == ("unschedulable", [])
    assert plain.steps > 1_000
    assert eager.steps < 10


def _identical_mig_gpus(gpus: int, claims: list[tuple[str, int, bool]]) -> list[dict[str, Any]]:
    """GPUs that differ only by name: each its own counter set (memory and eight memory slices) and the same
    MIG placements (1g on one slice, 2g on two, 3g on four); claims: (profile, count, same GPU)."""
    profiles = {"1g": (1, 10, range(7)), "2g": (2, 20, (0, 2, 4)), "3g": (4, 40, (0, 4))}
    sets, devices = [], []
    for g in range(gpus):
        sets.append({"name": f"gpu-{g}", "counters": {"memory": {"value": "80"},
                                                     **{f"slice{i}": {"value": "1"} for i in range(8)}}})
        for prof, (slices, memory, places) in profiles.items():
            devices += [{"name": f"gpu-{g}-{prof}-{p}",
                         "attributes": {"profile": {"string": prof}, "parent": {"string": f"gpu-{g}"}},
                         "consumesCounters": [{"counterSet": f"gpu-{g}", "counters": {
                             "memory": {"value": str(memory)}, **{f"slice{p + i}": {"value": "1"} for i in range(slices)}}}]}
                        for p in places]
    objs: list[dict[str, Any]] = [
        {"kind": "DeviceClass", "name": "mig", "driver": DRIVER}, {"kind": "Node", "name": "node-1"},
        {"kind": "ResourceSlice", "name": "counters", "driver": DRIVER, "pool": "gpus", "count": 2,
         "nodeName": "node-1", "sharedCounters": sets},
        {"kind": "ResourceSlice", "name": "devices", "driver": DRIVER, "pool": "gpus", "count": 2,
         "nodeName": "node-1", "devices": devices}]
    for i, (prof, count, same_gpu) in enumerate(claims):
        claim: dict[str, Any] = {"kind": "ResourceClaim", "name": f"c{i}", "requests": [
            {"name": "r", "class": "mig", "count": count,
             "selectors": [f'device.attributes["{DRIVER}"].profile == "{prof}"']}]}
        if same_gpu:
            claim["constraints"] = [{"matchAttribute": f"{DRIVER}/parent"}]
        objs.append(claim)
    return objs


def test_identical_gpus_are_one_kind_in_the_failure_memo():
    # three identical GPUs: two 1g partitions anywhere, two claims of two 3g on one GPU, one of three 2g on
    # one GPU (six slices: never possible beside the rest). Putting the 1g partitions on gpu-0 or on gpu-2
    # leads to the same failure; the memo sees one state where upstream (and a memo keyed by name) sees three.
    objs = _identical_mig_gpus(3, [("1g", 1, False), ("1g", 1, False), ("3g", 2, True), ("3g", 2, True),
                                   ("2g", 3, True)])
    plain, eager = _allocate_both_ways(objs)
    assert _answer(plain) == _answer(eager) == ("unschedulable", [])
    assert plain.steps > 5_000
    assert eager.steps < 1_000  # 2 105 with the GPUs told apart by name


@pytest.mark.slow
def test_identical_gpus_keep_upstreams_device_names():
    # the same GPUs with claims that fit: the symmetric memo must not change which GPU gets what
    objs = _identical_mig_gpus(4, [("1g", 1, False), ("1g", 1, False), ("3g", 2, True), ("3g", 2, True),
                                   ("2g", 3, True), ("2g", 3, True)])
    plain, eager = _allocate_both_ways(objs)
    assert plain.status == "allocated"
    assert _answer(plain) == _answer(eager)


def test_a_later_all_request_that_lists_no_device_ends_the_search_at_once():
    # claim b's All request lists no device (no device of its class): it can never be filled, but upstream
    # only finds out there, after each of the 495 ways of serving claim a and each choice of claim b's first
    # request; the look-ahead sees it before the first pick
    objs = [{"kind": "DeviceClass", "name": "any", "driver": DRIVER},
            {"kind": "DeviceClass", "name": "special", "driver": "s.example.com"},
            {"kind": "Node", "name": "node-1"},
            {"kind": "ResourceSlice", "name": "s", "driver": DRIVER, "pool": "p", "nodeName": "node-1",
             "devices": [{"name": f"dev-{i:02}", "attributes": {"pci": {"int": i}}} for i in range(12)]},
            {"kind": "ResourceClaim", "name": "a", "requests": [{"name": "r", "class": "any", "count": 4}],
             "constraints": [{"distinctAttribute": f"{DRIVER}/pci"}]},
            {"kind": "ResourceClaim", "name": "b", "requests": [{"name": "one", "class": "any", "count": 1},
                                                                 {"name": "all", "class": "special", "mode": "All"}]}]
    plain, eager = _allocate_both_ways(objs)
    assert plain.status == eager.status == "unschedulable"
    assert plain.steps > 5_000
    assert eager.steps < 10
