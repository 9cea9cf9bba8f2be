"""Extended resources backed by DRA in resource scoring (DRAExtendedResource; ``resource_allocation.go``).

When a pod requests an extended resource that the node does not advertise (allocatable 0) but a DeviceClass
maps, NodeResourcesFit's scoring strategies and BalancedAllocation read the node's devices instead: the
resource's allocatable is the number of devices on the node that match the class (every device when the class
has no selectors), and its requested amount the number of those already allocated, plus the pod's request.

A device is on the node when its ResourceSlice is: the slice names the node, is for all nodes, or its node
selector selects the node — a slice that names no node and has no selector counts for every node, as upstream's
loop lets it. With ``perDeviceNodeSelection`` each device says so itself (its node name, ``allNodes`` or node
selector). A node selector that does not parse, or a class selector that fails to compile or to evaluate,
makes the resource count as absent on the node (upstream logs the error and leaves the resource out).
"""

from __future__ import annotations

from dralloc.allocator.nodes import NodeSelectorError, node_selector_matches
from dralloc.allocator.state import device_id
from dralloc.api.core_v1 import NodeSelector
from dralloc.api.resource_v1 import Device, DeviceClass, ResourceSlice
from dralloc.cel.device import compile_selector
from dralloc.cel.errors import CELCompileError, CELRuntimeError
from dralloc.scheduler.nodeinfo import NodeInfo
from dralloc.scheduler.snapshot import ClusterSnapshot


class _Unreadable(Exception):
    """A selector that cannot be read: the resource counts as absent on the node."""


def _node_matches(node: NodeInfo, node_name: str | None, all_nodes: bool | None,
                  selector: NodeSelector | None) -> bool:
    """structured's nodeMatches: a named node, all nodes, or the nodes a selector selects."""
    if node_name:
        return node_name == node.name
    if all_nodes:
        return True
    if selector is not None:
        try:
            return node_selector_matches(selector, node.name, node.labels)
        except NodeSelectorError as exc:
            raise _Unreadable(str(exc)) from None
    return False


def _devices_on(node: NodeInfo, s: ResourceSlice) -> list[Device]:
    spec = s.spec
    devices = spec.devices or []
    if spec.per_device_node_selection:
        return [d for d in devices
                if d.all_nodes or (d.node_name and d.node_name == node.name)
                or (d.node_selector is not None and _node_matches(node, d.node_name, d.all_nodes, d.node_selector))]
    if not spec.all_nodes and spec.node_name != node.name and spec.node_selector is not None:
        return devices if _node_matches(node, spec.node_name, spec.all_nodes, spec.node_selector) else []
    if not spec.all_nodes and spec.node_name and spec.node_name != node.name:
        return []
    return devices


def _in_class(device: Device, driver: str, device_class: DeviceClass) -> bool:
    for selector in (device_class.spec.selectors if device_class.spec is not None else None) or ():
        if selector.cel is None:
            continue
        try:
            if not compile_selector(selector.cel.expression).matches(device, driver):
                return False
        except (CELCompileError, CELRuntimeError) as exc:
            raise _Unreadable(str(exc)) from None
    return True


class _SliceIndex:
    """The snapshot's slices by the node they name, and the others (all nodes, a node selector, devices
    that say their node each): a node reads its own and the others, not every slice of the cluster."""

    def __init__(self, slices: list[ResourceSlice]) -> None:
        self.slices = slices
        self.by_node: dict[str, list[ResourceSlice]] = {}
        self.others: list[ResourceSlice] = []
        for s in slices:
            spec = s.spec
            if spec.node_name and not spec.per_device_node_selection and not spec.all_nodes:
                self.by_node.setdefault(spec.node_name, []).append(s)
            else:
                self.others.append(s)

    def for_node(self, name: str) -> list[ResourceSlice]:
        return self.by_node.get(name, []) + self.others


_INDEX_KEY = "NodeResourcesFit.dra_extended"


def _slices_for(snapshot: ClusterSnapshot, node: NodeInfo) -> list[ResourceSlice]:
    index = snapshot.plugin_state.get(_INDEX_KEY)
    if not isinstance(index, _SliceIndex) or index.slices is not snapshot.slices:  # new slices
        index = snapshot.plugin_state[_INDEX_KEY] = _SliceIndex(snapshot.slices)
    return index.for_node(node.name)


def device_totals(snapshot: ClusterSnapshot, node: NodeInfo, class_name: str) -> tuple[int, int]:
    """(devices on the node that the class selects, how many of them are allocated); (0, 0) when the class
    is unknown or a selector cannot be read."""
    device_class = snapshot.classes.get(class_name)
    if device_class is None:
        return 0, 0
    state = snapshot.dra.allocator.state
    capacity = allocated = 0
    try:
        for s in _slices_for(snapshot, node):
            driver, pool = s.spec.driver, s.spec.pool.name
            for device in _devices_on(node, s):
                if _in_class(device, driver, device_class):
                    capacity += 1
                    allocated += state.is_allocated(device_id(driver, pool, device.name))
    except _Unreadable:
        return 0, 0
    return capacity, allocated
