"""Resource scoring of extended resources backed by DRA (DRAExtendedResource): a node that does not advertise
the resource offers the devices of the DeviceClass that maps it, and the allocated ones count as requested.
The upstream tables cover a cluster without allocations; these cases pin the other rules of the count."""

from __future__ import annotations

from typing import Any

from test_upstream_tables import Case, run_case

RESOURCE = "example.com/gpu"
CLASS = {"metadata": {"name": "gpu"}, "spec": {"extendedResourceName": RESOURCE}}
LEAST = {"scoringStrategy": {"type": "LeastAllocated", "resources": [{"name": RESOURCE, "weight": 1}]}}
POD = {"metadata": {"name": "incoming"},
       "spec": {"containers": [{"name": "c", "resources": {"requests": {RESOURCE: "1"}}}]}}
NODES = [{"metadata": {"name": "node1"}}, {"metadata": {"name": "node2"}}]


def _slice(node: str, devices: int, driver: str = "gpu.example.com", **spec: Any) -> dict[str, Any]:
    return {"metadata": {"name": f"{node}-{driver}"},
            "spec": {"driver": driver, "nodeName": node, "pool": {"name": node, "generation": 1,
                                                                  "resourceSliceCount": 1},
                     "devices": [{"name": f"dev-{i}"} for i in range(devices)], **spec}}


def _scores(**data: Any) -> dict[str, int]:
    case = Case("inline", "NodeResourcesFit", "inline", "inline",
                {"args": LEAST, "gates": {"DRAExtendedResource": True}, "deviceClasses": [CLASS], "pod": POD,
                 "nodes": NODES, "wantScores": {}, **data})
    return run_case(case).scores


def test_allocated_devices_count_as_requested() -> None:
    claim = {"metadata": {"name": "used", "namespace": "default"},
             "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu"}}]}},
             "status": {"allocation": {"devices": {"results": [
                 {"request": "gpu", "driver": "gpu.example.com", "pool": "node1", "device": "dev-0"}]}}}}
    slices = [_slice("node1", 4), _slice("node2", 4)]
    # node1: (4 - (1 allocated + 1 requested)) / 4; node2: (4 - 1) / 4
    assert _scores(resourceSlices=slices, resourceClaims=[claim]) == {"node1": 50, "node2": 75}


def test_only_devices_the_class_selects_are_counted() -> None:
    selective = {"metadata": {"name": "gpu"}, "spec": {
        "extendedResourceName": RESOURCE,
        "selectors": [{"cel": {"expression": 'device.driver == "gpu.example.com"'}}]}}
    slices = [_slice("node1", 2), _slice("node1", 2, driver="nic.example.com"), _slice("node2", 4)]
    assert _scores(deviceClasses=[selective], resourceSlices=slices) == {"node1": 50, "node2": 75}


def test_devices_selected_per_device_for_the_node() -> None:
    shared = {"metadata": {"name": "shared"},
              "spec": {"driver": "gpu.example.com", "perDeviceNodeSelection": True,
                       "pool": {"name": "shared", "generation": 1, "resourceSliceCount": 1},
                       "devices": [{"name": "a", "nodeName": "node1"}, {"name": "b", "nodeName": "node1"},
                                   {"name": "c", "allNodes": True}, {"name": "d", "nodeName": "node2"}]}}
    # node1 sees a, b, c: (3 - 1) / 3; node2 sees c, d: (2 - 1) / 2
    assert _scores(resourceSlices=[shared]) == {"node1": 66, "node2": 50}


def test_without_the_gate_the_resource_is_left_out() -> None:
    assert _scores(gates={"DRAExtendedResource": False}, resourceSlices=[_slice("node1", 4)]) == \
        {"node1": 0, "node2": 0}
