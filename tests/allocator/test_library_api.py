"""The library API: one Allocator, allocated state updated incrementally without a rebuild."""

from __future__ import annotations

from cases_loader import expand
from msgspec.structs import replace

from dralloc.allocator import Allocator
from dralloc.api import codec
from dralloc.api.resource_v1 import ResourceClaimStatus

DRIVER = "d.example.com"


def _objs():
    objs = [{"kind": "DeviceClass", "name": "any"}, {"kind": "Node", "name": "node-1"},
            {"kind": "ResourceSlice", "name": "a", "driver": DRIVER, "pool": "p", "count": 2, "nodeName": "node-1",
             "sharedCounters": [{"name": "cs", "counters": {"mem": {"value": "2"}}}]},
            {"kind": "ResourceSlice", "name": "b", "driver": DRIVER, "pool": "p", "count": 2, "nodeName": "node-1",
             "devices": [{"name": f"part-{i}", "consumesCounters": [{"counterSet": "cs", "counters": {"mem": {"value": "1"}}}]}
                         for i in range(3)]},
            {"kind": "ResourceClaim", "name": "c", "requests": [{"name": "r", "class": "any"}]}]
    return [codec.decode(expand(o)) for o in objs]


def test_claim_allocated_and_released_update_devices_and_counters():
    objs = _objs()
    node, claim = objs[1], objs[-1]
    alloc = Allocator(objs[2:4], [objs[0]])
    first = alloc.allocate(node, [claim])
    assert [r.device for r in first.results[0].devices.results] == ["part-0"]
    done = replace(claim, status=ResourceClaimStatus(allocation=first.results[0]))
    alloc.claim_allocated(done)
    second = alloc.allocate(node, [claim])
    assert [r.device for r in second.results[0].devices.results] == ["part-1"]
    done2 = replace(claim, metadata=replace(claim.metadata, name="c2"),
                    status=ResourceClaimStatus(allocation=second.results[0]))
    alloc.claim_allocated(done2)
    # counters (2) are now used up by part-0 and part-1, although part-2 itself is free
    third = alloc.allocate(node, [claim])
    assert third.status == "unschedulable"
    assert third.explanation.requests[0].removed["counters"] == 1
    alloc.claim_released(done)
    assert [r.device for r in alloc.allocate(node, [claim]).results[0].devices.results] == ["part-0"]


def test_allocate_does_not_mutate_its_inputs():
    objs = _objs()
    before = [codec.to_dict(o) for o in objs]
    alloc = Allocator.from_objects(objs)
    alloc.allocate(objs[1], [objs[-1]])
    assert [codec.to_dict(o) for o in objs] == before


def _two_nodes():
    objs = [{"kind": "DeviceClass", "name": "any"}, {"kind": "Node", "name": "node-1"}, {"kind": "Node", "name": "node-2"},
            {"kind": "ResourceSlice", "name": "shared", "driver": DRIVER, "pool": "net", "allNodes": True,
             "devices": ["nic-0"]}]
    for n in (1, 2):
        objs.append({"kind": "ResourceSlice", "name": f"node-{n}", "driver": DRIVER, "pool": f"node-{n}",
                     "nodeName": f"node-{n}", "devices": [f"gpu-{i}" for i in range(2)]})
    objs.append({"kind": "ResourceClaim", "name": "c", "requests": [{"name": "r", "class": "any", "count": 3}]})
    return [codec.decode(expand(o)) for o in objs]


def _picked(outcome):
    return outcome.status, [[(r.pool, r.device) for r in res.devices.results] for res in outcome.results]


def test_adding_and_removing_slices_gives_what_a_fresh_allocator_gives():
    objs = _two_nodes()
    classes, nodes, shared, slice1, slice2, claim = [objs[0]], objs[1:3], objs[3], objs[4], objs[5], objs[6]
    alloc = Allocator([shared], classes)
    assert alloc.allocate(nodes[0], [claim]).status == "unschedulable"
    alloc.add_slices([slice1, slice2])
    fresh = Allocator([shared, slice1, slice2], classes)
    for node in nodes:
        assert _picked(alloc.allocate(node, [claim])) == _picked(fresh.allocate(node, [claim]))
    assert _picked(alloc.allocate(nodes[0], [claim]))[0] == "allocated"
    alloc.remove_slices([slice1])
    fresh = Allocator([shared, slice2], classes)
    for node in nodes:
        assert _picked(alloc.allocate(node, [claim])) == _picked(fresh.allocate(node, [claim]))
    assert alloc.allocate(nodes[0], [claim]).status == "unschedulable"


def test_removed_slices_leave_the_device_cache_and_allocators_share_no_cache():
    objs = _two_nodes()
    classes, nodes, slices, claim = [objs[0]], objs[1:3], objs[3:6], objs[6]
    alloc = Allocator(slices, classes)
    for node in nodes:
        alloc.allocate(node, [claim])
    assert len(alloc._infos) == 5
    other = Allocator(slices, classes)
    assert len(other._infos) == 0
    alloc.remove_slices([slices[1]])
    assert len(alloc._infos) == 3


def test_one_claim_plan_serves_every_node():
    objs = _two_nodes()
    alloc = Allocator(objs[3:6], [objs[0]])
    claim = objs[6]
    first = alloc.allocate(objs[1], [claim])
    plan = alloc._plans[id(claim)]
    second = alloc.allocate(objs[2], [claim])
    assert alloc._plans[id(claim)] is plan
    assert [r.pool for r in first.results[0].devices.results] == ["net", "node-1", "node-1"]
    assert [r.pool for r in second.results[0].devices.results] == ["net", "node-2", "node-2"]


def test_outcome_reports_the_search_steps():
    objs = _two_nodes()
    out = Allocator(objs[3:6], [objs[0]]).allocate(objs[1], [objs[6]])
    # claim start, three slots, the end of the request, the end of the claims
    assert out.steps == 6
