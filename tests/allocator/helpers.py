"""Loading manifests and running the allocator the way the CLI does."""

from __future__ import annotations

import json
from typing import Any

from dralloc.allocator import Allocator
from dralloc.allocator.inputs import Inputs, error_dict, load_inputs, pick_nodes, result_dict
from dralloc.errors import AllocationError


def load(path: Any) -> Inputs:
    return load_inputs([str(path)])[0]


def oracle_json(inputs: Inputs, node_name: str | None = None) -> str:
    """The allocator's answer in the oracle's JSON shape (as ``dralloc allocate -o results`` prints it)."""
    node = pick_nodes(inputs, node_name)[0]
    alloc = Allocator(inputs.slices, inputs.classes, inputs.allocated)
    try:
        outcome = alloc.allocate(node, inputs.pending)
    except AllocationError as exc:
        return json.dumps(error_dict(exc), indent=2) + "\n"
    return json.dumps(result_dict(outcome), indent=2) + "\n"
