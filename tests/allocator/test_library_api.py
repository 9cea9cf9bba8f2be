"""The library API: one Allocator, allocated state updated incrementally without a rebuild."""

from __future__ import annotations

from msgspec.structs import replace

from cases_loader import expand
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
