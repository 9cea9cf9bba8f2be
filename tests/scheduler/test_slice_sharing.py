"""Identical devices share one copy of their attributes, capacity and counters; nothing else changes."""

from __future__ import annotations

import json

import pytest

from dralloc.api import codec
from dralloc.simulator import perf
from dralloc.simulator.generate import iter_cluster_documents
from dralloc.simulator.sharing import SliceSharing, share_slices
from dralloc.simulator.simulator import Scheduler


def _slice(devices: list[dict], name: str = "s", pool: str = "p") -> dict:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": name},
            "spec": {"driver": "d.example.com", "nodeName": "n", "pool": {"name": pool, "resourceSliceCount": 1},
                     "devices": devices}}


def _decoded_h100(nodes: int) -> list:
    return [codec.decode(doc) for doc in iter_cluster_documents(nodes, "gpu-h100")]


def test_the_same_gpu_on_two_nodes_shares_its_parts_but_not_its_uuid() -> None:
    slices = [o for o in share_slices(_decoded_h100(2)) if type(o).__name__ == "ResourceSlice" and o.spec.devices]
    first, second = slices[0].spec.devices[1], slices[8].spec.devices[1]  # gpu-0's first MIG slot, node 0 and 1
    assert first.name == second.name and first.name is second.name
    assert first.capacity is second.capacity and first.consumes_counters is second.consumes_counters
    assert first.attributes["profile"] is second.attributes["profile"]
    assert first.attributes["parentUUID"] is not second.attributes["parentUUID"]
    assert first.attributes["parentUUID"] != second.attributes["parentUUID"]


def test_sharing_changes_no_value() -> None:
    plain = _decoded_h100(3)
    shared = share_slices(_decoded_h100(3))
    assert [codec.encode_json(o) for o in shared] == [codec.encode_json(o) for o in plain]


def test_values_that_only_compare_equal_stay_apart() -> None:
    # True == 1 in Python, but a bool attribute is not an int one, nor a list one
    sharing = SliceSharing()
    s = sharing.share(codec.decode(_slice([
        {"name": "a", "attributes": {"x": {"bool": True}}, "capacity": {"m": {"value": "1"}}},
        {"name": "b", "attributes": {"x": {"int": 1}}, "capacity": {"m": {"value": "2"}}},
        {"name": "c", "attributes": {"x": {"ints": [1]}}},
        {"name": "d", "attributes": {"x": {"bools": [True]}}},
        {"name": "e", "attributes": {"x": {"int": 1}}, "capacity": {"m": {"value": "1"}}},
    ])))
    a, b, c, d, e = s.spec.devices
    assert a.attributes["x"].bool_ is True and b.attributes["x"].int_ == 1 and b.attributes["x"].bool_ is None
    assert c.attributes["x"].ints == [1] and d.attributes["x"].bools == [True]
    assert str(b.capacity["m"].value) == "2" and str(a.capacity["m"].value) == "1"
    assert e.attributes["x"] is b.attributes["x"] and e.capacity is a.capacity


@pytest.mark.slow
def test_placements_are_the_same_with_and_without_sharing() -> None:
    def placements(objects: list) -> str:
        result = Scheduler.from_objects(objects).schedule()
        return json.dumps(result.to_dict(), sort_keys=True)

    pods = [o for o in perf.h100_mig(0, 60) if type(o).__name__ in ("Pod", "ResourceClaimTemplate")]
    plain = placements([*_decoded_h100(6), *pods])
    assert plain == placements([*share_slices(_decoded_h100(6)), *pods])
    assert '"scheduled"' in plain
