"""Explanations say, per claim and request, what each filter removed and what came closest."""

from __future__ import annotations

from cases_loader import expand

from dralloc.allocator import Allocator
from dralloc.api import codec

DRIVER = "d.example.com"


def _outcome(objs):
    objs = [codec.decode(expand(o)) for o in objs]
    node = next(o for o in objs if type(o).__name__ == "Node")
    pending = [o for o in objs if type(o).__name__ == "ResourceClaim" and o.status is None]
    return Allocator.from_objects(objs).allocate(node, pending)


def test_explanation_counts_each_filter_and_names_the_near_miss():
    out = _outcome([
        {"kind": "DeviceClass", "name": "gpu", "driver": DRIVER},
        {"kind": "Node", "name": "node-1"},
        {"kind": "ResourceSlice", "name": "s1", "driver": DRIVER, "pool": "p", "nodeName": "node-1",
         "devices": [{"name": "a", "taints": [{"key": "broken", "effect": "NoSchedule"}]}, "b", "c"]},
        {"kind": "ResourceSlice", "name": "s2", "driver": "other.example.com", "pool": "q", "nodeName": "node-1",
         "devices": ["x"]},
        {"kind": "ResourceClaim", "name": "old", "requests": [{"name": "r", "class": "gpu"}],
         "allocated": [f"r {DRIVER}/p/b"]},
        {"kind": "ResourceClaim", "name": "c1", "requests": [{"name": "r", "class": "gpu", "count": 2}]},
    ])
    assert out.status == "unschedulable"
    ex = out.explanation
    [req] = ex.requests
    assert (req.claim, req.request, req.needed, req.offered, req.usable) == ("default/c1", "r", 2, 4, 1)
    assert req.removed["class_selector"] == 1
    assert req.removed["allocated"] == 1
    assert req.removed["taint"] == 1
    assert "lacks 1 device(s)" in ex.near_miss and f"{DRIVER}/p/a (taint not tolerated)" in ex.near_miss
    assert "taint not tolerated" in ex.text()
    assert ex.to_dict()["requests"][0]["removed"] == {"class_selector": 1, "allocated": 1, "taint": 1}


def test_explanation_reports_constraints_and_invalid_pools():
    out = _outcome([
        {"kind": "DeviceClass", "name": "any"},
        {"kind": "Node", "name": "node-1"},
        {"kind": "ResourceSlice", "name": "s1", "driver": DRIVER, "pool": "p", "nodeName": "node-1",
         "devices": [{"name": "a", "attributes": {"m": {"string": "X"}}}, {"name": "b", "attributes": {"m": {"string": "Y"}}}]},
        {"kind": "ResourceSlice", "name": "t1", "driver": DRIVER, "pool": "bad", "count": 2, "nodeName": "node-1", "devices": ["z"]},
        {"kind": "ResourceSlice", "name": "t2", "driver": DRIVER, "pool": "bad", "count": 2, "nodeName": "node-1", "devices": ["z"]},
        {"kind": "ResourceClaim", "name": "c1", "requests": [{"name": "r", "class": "any", "count": 2}],
         "constraints": [{"matchAttribute": f"{DRIVER}/m"}]},
    ])
    assert out.status == "unschedulable" and out.invalid_pools
    assert out.message == "invalid resource pools were encountered"
    ex = out.explanation
    assert ex.invalid_pools == [f"{DRIVER}/bad"]
    assert ex.requests[0].removed["pool_unusable"] == 2
    assert any("at most 1 usable devices share a value" in n for n in ex.requests[0].constraint_notes)
