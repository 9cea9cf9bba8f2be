"""One copy of what identical devices have in common, for clusters of thousands of alike nodes.

A cluster of 5000 nodes with 8 H100 GPUs each publishes 760 000 devices, and decoding gives every one its own
attribute, capacity and counter objects although most of them are equal from node to node: only a few
attributes (the GPU's UUID) tell one GPU from the same GPU of another node. :class:`SliceSharing` replaces
each such part of a decoded ResourceSlice by the first equal one it has seen, so all nodes share one copy:

* attribute values (``DeviceAttribute``), one per distinct value;
* a device's ``capacity`` map and its ``consumesCounters`` list, one per distinct content;
* a slice's ``sharedCounters``, and device and counter names (equal strings become one string).

The objects stay what they were, only shared, so everything that reads them sees the same values. Shared
parts must not be changed in place; nothing in a simulation does (copies are made with
``msgspec.structs.replace``). The table lives as long as the sharing object: one per load.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from dralloc.api.codec import encode_json
from dralloc.api.resource_v1 import DeviceAttribute, ResourceSlice


def _attribute_key(attr: DeviceAttribute) -> tuple[Any, ...] | bytes:
    if attr.ints is None and attr.bools is None and attr.strings is None and attr.versions is None:
        # bool before int: True == 1 must not make a bool attribute share an int one
        return (attr.bool_, type(attr.int_) is int, attr.int_, attr.string, attr.version)
    return encode_json(attr)


class SliceSharing:
    """The table of parts seen so far; :meth:`share` makes a slice use them."""

    __slots__ = ("_attributes", "_parts", "_strings")

    def __init__(self) -> None:
        self._attributes: dict[tuple[Any, ...] | bytes, DeviceAttribute] = {}
        self._parts: dict[bytes, Any] = {}
        self._strings: dict[str, str] = {}

    def _part(self, value: Any) -> Any:
        """The first part seen that encodes to the same JSON as ``value`` (the same content)."""
        if value is None:
            return None
        return self._parts.setdefault(encode_json(value), value)

    def share(self, slice_: ResourceSlice) -> ResourceSlice:
        """Replace the parts of ``slice_`` that equal earlier ones by those; returns ``slice_``."""
        spec = slice_.spec
        if spec.shared_counters:
            spec.shared_counters = self._part(spec.shared_counters)
        strings = self._strings
        attributes = self._attributes
        for device in spec.devices or ():
            device.name = strings.setdefault(device.name, device.name)
            attrs = device.attributes
            if attrs:
                for name, attr in attrs.items():
                    shared = attributes.setdefault(_attribute_key(attr), attr)
                    if shared is not attr:
                        attrs[name] = shared
            if device.capacity:
                device.capacity = self._part(device.capacity)
            if device.consumes_counters:
                device.consumes_counters = self._part(device.consumes_counters)
        return slice_


def share_slices(objects: Iterable[Any]) -> list[Any]:
    """``objects`` as a list, the ResourceSlices among them sharing their identical parts (one table for
    all of them). Other objects pass unchanged."""
    sharing = SliceSharing()
    return [sharing.share(o) if type(o) is ResourceSlice else o for o in objects]
