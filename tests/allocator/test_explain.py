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


def _nics_short(other_devices: int, taken: int) -> list[dict]:
    """Claim a: ``taken`` of ``other_devices`` devices (upstream tries every choice); claims b and c: 3 and 2
    of the 4 NICs, which never fit together (unschedulable)."""
    return [{"kind": "DeviceClass", "name": "other", "driver": DRIVER},
            {"kind": "DeviceClass", "name": "nic", "driver": "n.example.com"},
            {"kind": "Node", "name": "node-1"},
            {"kind": "ResourceSlice", "name": "s", "driver": DRIVER, "pool": "p", "nodeName": "node-1",
             "devices": [f"o-{i:02d}" for i in range(other_devices)]},
            {"kind": "ResourceSlice", "name": "t", "driver": "n.example.com", "pool": "q", "nodeName": "node-1",
             "devices": [f"nic-{i}" for i in range(4)]},
            {"kind": "ResourceClaim", "name": "a", "requests": [{"name": "r", "class": "other", "count": taken}]},
            {"kind": "ResourceClaim", "name": "b", "requests": [{"name": "r", "class": "nic", "count": 3}]},
            {"kind": "ResourceClaim", "name": "c", "requests": [{"name": "r", "class": "nic", "count": 2}]}]


def test_explanation_says_when_upstream_would_run_past_the_filter_timeout():
    # upstream walks every choice of 6 of 30 devices for claim a (593 775), each with every choice of NICs
    # for claim b: millions of steps, over 10 s at ~5 µs a step. dralloc answers at once and says so.
    out = _outcome(_nics_short(30, 6))
    assert out.status == "unschedulable" and out.steps < 5_000
    ex = out.explanation
    assert ex.upstream is not None and ex.upstream.times_out
    assert "past its 10 s DRA filter timeout" in ex.text() and "timed out trying to allocate devices" in ex.text()
    assert ex.to_dict()["upstream"]["timesOut"] is True


def test_no_timeout_note_where_upstream_finishes_in_time():
    objs = _nics_short(12, 3)
    decoded = [codec.decode(expand(o)) for o in objs]
    node = next(o for o in decoded if type(o).__name__ == "Node")
    pending = [o for o in decoded if type(o).__name__ == "ResourceClaim"]
    plain = Allocator.from_objects(decoded, prune=False).allocate(node, pending)
    out = _outcome(objs)
    assert out.status == plain.status == "unschedulable"
    estimate = out.explanation.upstream
    assert not estimate.times_out and "upstream" not in out.explanation.text()
    assert plain.steps / 20 <= estimate.steps <= plain.steps * 20  # an estimate of the order of upstream's count
    assert plain.upstream.steps == plain.steps  # the plain search is upstream's: its count is exact
