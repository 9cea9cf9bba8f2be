"""Devices whose decoded counters and capacity are the same objects share what the allocator derives from
them, without one device's facts leaking into another's."""

from __future__ import annotations

from dralloc.allocator import Allocator
from dralloc.allocator.views import DeviceInfoCache
from dralloc.api import codec
from dralloc.simulator.sharing import share_slices

V1 = "resource.k8s.io/v1"


def _slice(driver: str, node: str, devices: list[dict]) -> dict:
    return {"apiVersion": V1, "kind": "ResourceSlice", "metadata": {"name": f"{node}-{driver}"},
            "spec": {"driver": driver, "nodeName": node, "pool": {"name": node, "resourceSliceCount": 1},
                     "devices": devices}}


def _device(name: str, memory: str = "80Gi", version: str = "1.2.3") -> dict:
    return {"name": name, "attributes": {"v": {"version": version}}, "capacity": {"memory": {"value": memory}}}


def _claim(name: str, expression: str) -> object:
    return codec.decode({"apiVersion": V1, "kind": "ResourceClaim", "metadata": {"name": name, "namespace": "ns"},
                         "spec": {"devices": {"requests": [{"name": "r", "exactly": {
                             "deviceClassName": "any", "selectors": [{"cel": {"expression": expression}}]}}]}}})


def _node(name: str) -> object:
    return codec.decode({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}})


ANY = codec.decode({"apiVersion": V1, "kind": "DeviceClass", "metadata": {"name": "any"}, "spec": {}})


def test_devices_with_the_same_decoded_parts_share_the_derived_ones() -> None:
    a, b = share_slices([codec.decode(_slice("a.example.com", n, [_device("gpu")])) for n in ("n1", "n2")])
    cache = DeviceInfoCache()
    first, second = cache.get(a, a.spec.devices[0]), cache.get(b, b.spec.devices[0])
    assert first is not second and first.id != second.id
    assert first.parts is second.parts and first.capacity is second.capacity
    assert first.capacity_cache is second.capacity_cache
    act1, act2 = first.cel_input()["device"], second.cel_input()["device"]
    assert act1["capacity"] is act2["capacity"]
    assert act1["attributes"]["a.example.com"]["v"] is act2["attributes"]["a.example.com"]["v"]


def test_unshared_parts_stay_apart() -> None:
    a, b = (codec.decode(_slice("a.example.com", "n1", [_device("gpu")])),
            codec.decode(_slice("a.example.com", "n2", [_device("gpu", memory="40Gi")])))
    cache = DeviceInfoCache()
    first, second = cache.get(a, a.spec.devices[0]), cache.get(b, b.spec.devices[0])
    assert first.parts is not second.parts
    assert first.capacity["memory"].value != second.capacity["memory"].value


def test_the_same_capacity_under_two_drivers_is_seen_in_each_drivers_domain() -> None:
    # Sharing makes both devices use one capacity map object, but selectors see capacities in the domain of
    # the device's own driver: the first driver's view must not be handed to the second.
    slices = share_slices([codec.decode(_slice(driver, "n1", [_device(f"gpu-{driver[0]}")]))
                           for driver in ("a.example.com", "b.example.com")])
    assert slices[0].spec.devices[0].capacity is slices[1].spec.devices[0].capacity
    alloc = Allocator(slices, [ANY])
    node = _node("n1")
    first = alloc.allocate(node, [_claim("first", 'device.capacity["a.example.com"].memory.isGreaterThan('
                                                  'quantity("1Gi"))')])
    assert first.status == "allocated" and first.results[0].devices.results[0].device == "gpu-a"
    second = alloc.allocate(node, [_claim("second", 'device.driver == "b.example.com" && '
                                                   'device.capacity["b.example.com"].memory.isGreaterThan('
                                                   'quantity("1Gi"))')])
    assert second.status == "allocated" and second.results[0].devices.results[0].device == "gpu-b"
