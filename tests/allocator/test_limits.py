"""The 32-devices-per-claim limit during the search (upstream's errAllocationResultMaxSizeExceeded)."""

from __future__ import annotations

from cases_loader import expand

from dralloc.allocator import Allocator
from dralloc.api import codec

DRIVER = "d.example.com"


def _run(requests, n_devices=64):
    objs = [{"kind": "DeviceClass", "name": "any"}, {"kind": "Node", "name": "node-1"},
            {"kind": "ResourceSlice", "name": "s", "driver": DRIVER, "pool": "p", "nodeName": "node-1",
             "devices": [f"dev-{i:02d}" for i in range(n_devices)]},
            {"kind": "ResourceClaim", "name": "c", "requests": requests}]
    objs = [codec.decode(expand(o)) for o in objs]
    return Allocator.from_objects(objs).allocate(objs[1], [objs[-1]])


def test_subrequest_over_the_limit_moves_on_to_a_smaller_subrequest():
    def req(name):
        return {"name": name, "firstAvailable": [{"name": "big", "class": "any", "count": 32},
                                                  {"name": "small", "class": "any", "count": 16}]}

    out = _run([req("r0"), req("r1")])
    assert out.status == "allocated"
    results = out.results[0].devices.results
    assert [r.request for r in results] == ["r0/small"] * 16 + ["r1/small"] * 16
    assert [r.device for r in results] == [f"dev-{i:02d}" for i in range(32)]


def test_first_subrequest_needing_too_many_devices_is_skipped():
    out = _run([{"name": "r", "firstAvailable": [{"name": "huge", "class": "any", "count": 500},
                                                 {"name": "one", "class": "any", "count": 1}]}], n_devices=2)
    assert out.status == "allocated"
    assert [r.request for r in out.results[0].devices.results] == ["r/one"]
