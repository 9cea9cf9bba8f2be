"""What one allocation takes from some manifests: the slices, classes, allocated and pending claims, nodes and
DeviceTaintRules, sorted out of the loaded objects (``dralloc allocate`` and ``dralloc bench allocate``)."""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Any

from dralloc.allocator.outcome import AllocationOutcome
from dralloc.api.core_v1 import Node
from dralloc.api.resource_v1 import DeviceClass, DeviceTaintRule, ResourceClaim, ResourceSlice
from dralloc.errors import InputError


@dataclass
class Inputs:
    slices: list[ResourceSlice] = field(default_factory=list)
    classes: list[DeviceClass] = field(default_factory=list)
    allocated: list[ResourceClaim] = field(default_factory=list)
    pending: list[ResourceClaim] = field(default_factory=list)
    nodes: list[Node] = field(default_factory=list)
    taint_rules: list[DeviceTaintRule] = field(default_factory=list)


def load_inputs(files: list[str]) -> tuple[Inputs, list[str]]:
    """Load and sort the objects of the input files, with the loader's warnings (raises InputError on bad
    input)."""
    from dralloc.api import codec

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        objects, problems = codec.load_checked(files)
    notes = [str(w.message) for w in caught] + [str(p) for p in problems]
    return sort_inputs(objects), notes


def sort_inputs(objects: list[Any]) -> Inputs:
    """The objects sorted by role; DeviceTaintRules applied to the slices, as kube-scheduler does."""
    inputs = Inputs()
    for o in objects:
        if isinstance(o, ResourceSlice):
            inputs.slices.append(o)
        elif isinstance(o, DeviceClass):
            inputs.classes.append(o)
        elif isinstance(o, ResourceClaim):
            if o.status is not None and o.status.allocation is not None:
                inputs.allocated.append(o)
            else:
                inputs.pending.append(o)
        elif isinstance(o, Node):
            inputs.nodes.append(o)
        elif isinstance(o, DeviceTaintRule):
            inputs.taint_rules.append(o)
    if inputs.taint_rules:
        from dralloc.allocator.taintrules import apply_taint_rules

        inputs.slices = apply_taint_rules(inputs.slices, inputs.taint_rules)
    for c in inputs.pending + inputs.allocated:
        if not c.metadata.name:
            raise InputError("ResourceClaim: metadata.name: Required value")
    return inputs


def pick_nodes(inputs: Inputs, node_name: str | None) -> list[Node]:
    """The node named (a bare Node when the input has none), else every Node of the input."""
    from dralloc.api.meta import ObjectMeta

    if node_name:
        for n in inputs.nodes:
            if n.metadata.name == node_name:
                return [n]
        if inputs.nodes:
            raise InputError(f"--node: node {node_name!r} is not in the input")
        return [Node(metadata=ObjectMeta(name=node_name))]
    if not inputs.nodes:
        raise InputError("no Node in the input: add one or name it with --node")
    return inputs.nodes


def result_dict(outcome: AllocationOutcome) -> dict[str, Any]:
    """The oracle's JSON shape for an outcome."""
    from dralloc.api import codec

    if outcome.status == "allocated":
        return {"ok": True, "status": "allocated", "results": [codec.to_dict(r) for r in outcome.results]}
    d: dict[str, Any] = {"ok": False, "status": "unschedulable", "unschedulable": True}
    if outcome.invalid_pools:
        d["error"] = outcome.message
    return d


def error_dict(exc: Exception) -> dict[str, Any]:
    return {"ok": False, "status": "error", "error": str(exc)}
