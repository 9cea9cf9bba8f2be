"""dralloc — Kubernetes Dynamic Resource Allocation (resource.k8s.io) without a cluster.

The public namespace is flat; everything else is reached through the package of its concern:

    from dralloc import Allocator, Quantity, Scheduler, compile_selector, load, validate

    api/          typed models, Quantity, codecs, version conversion
    validation/   kube-apiserver validation rules, field-path error lists
    cel/          CEL for device selectors: parse, check, plan, generate
    resources/    ResourceList, the nine comparisons, node-allocatable footprint, node fit
    allocator/    the structured allocator (same devices as kube-scheduler) and explanations
    scheduler/    cluster snapshot, kube-scheduler's default profile, what-if simulation, report
    store/        persistence for the API server (SQLite, PostgreSQL)
    server/       the HTTP API server
    cli/          the ``dralloc`` command
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

__all__ = ["Allocator", "Quantity", "Scheduler", "__version__", "compile_selector", "load", "validate"]

if TYPE_CHECKING:  # pragma: no cover
    from dralloc.allocator import Allocator
    from dralloc.api.codec import load
    from dralloc.api.quantity import Quantity
    from dralloc.cel import compile_selector
    from dralloc.simulator import Scheduler
    from dralloc.validation import validate

# Lazy, so that `import dralloc` stays cheap for the CLI's fast paths.
_WHERE = {
    "Allocator": "dralloc.allocator",
    "Quantity": "dralloc.api.quantity",
    "Scheduler": "dralloc.simulator",
    "compile_selector": "dralloc.cel",
    "load": "dralloc.api.codec",
    "validate": "dralloc.validation",
}


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'dralloc' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


def __dir__() -> list[str]:
    return sorted(__all__)
