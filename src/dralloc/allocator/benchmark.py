"""Timing allocate calls: a fresh Allocator per call and one reused (``dralloc bench allocate``)."""

from __future__ import annotations

import statistics
import time
from typing import Any

from dralloc.allocator.inputs import Inputs
from dralloc.api.core_v1 import Node
from dralloc.errors import AllocationError


def measure(inputs: Inputs, node: Node, iterations: int = 0) -> dict[str, Any]:
    """Median µs per allocate: fresh allocator each call, and one reused allocator."""
    from dralloc.allocator import AllocatedState, Allocator, DeviceInfoCache

    # What a scheduler keeps across cycles with its cluster snapshot: the allocated state and the per-device
    # cache (selector outcomes) for the snapshot's slice objects.
    state = AllocatedState(inputs.allocated)
    devices = DeviceInfoCache()
    status = "allocated"

    steps: int | None = None

    def once(alloc: Any) -> str:
        nonlocal steps
        try:
            out = alloc.allocate(node, inputs.pending)
        except AllocationError:
            return "error"
        steps = out.steps
        status: str = out.status
        return status

    # warm-up (process-wide CEL compile cache) and status
    status = once(Allocator(inputs.slices, inputs.classes, state=state, device_cache=devices))
    if iterations <= 0:
        t = time.perf_counter()
        once(Allocator(inputs.slices, inputs.classes, state=state, device_cache=devices))
        one = time.perf_counter() - t
        iterations = max(3, min(2000, int(1.0 / max(one, 1e-6))))
    fresh = []
    for _ in range(iterations):
        t = time.perf_counter()
        alloc = Allocator(inputs.slices, inputs.classes, state=state, device_cache=devices)
        once(alloc)
        fresh.append(time.perf_counter() - t)
    reused_alloc = Allocator(inputs.slices, inputs.classes, state=state, device_cache=devices)
    once(reused_alloc)
    reused = []
    for _ in range(iterations):
        t = time.perf_counter()
        once(reused_alloc)
        reused.append(time.perf_counter() - t)
    return {
        "status": status,
        "steps": steps,
        "fresh_us": round(statistics.median(fresh) * 1e6, 2),
        "reused_us": round(statistics.median(reused) * 1e6, 2),
        "iterations": iterations,
    }
