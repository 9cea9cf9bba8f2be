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


def answer_and_steps(objs: list[dict[str, Any]], **options: Any) -> tuple[str, int | None]:
    """Compact objects (``cases_loader.expand``'s shape) allocated on their one node, all their claims: the
    results as sorted JSON (or ``error: ...``, or the status), and the search's steps (None on an error)."""
    from cases_loader import expand

    from dralloc.api import codec

    decoded = [codec.decode(expand(o)) for o in objs]
    node = next(o for o in decoded if type(o).__name__ == "Node")
    claims = [o for o in decoded if type(o).__name__ == "ResourceClaim"]
    try:
        out = Allocator.from_objects(decoded, **options).allocate(node, claims)
    except AllocationError as exc:
        return f"error: {exc}", None
    if out.status != "allocated":
        return out.status, out.steps
    return json.dumps([codec.to_dict(r) for r in out.results], sort_keys=True), out.steps
