"""dralloc — Kubernetes Dynamic Resource Allocation (resource.k8s.io) without a cluster.

The public namespace is flat (``from dralloc import Quantity, load``); the implementation lives in
private-ish subpackages, one per concern (see DESIGN in the README):

    api/          typed models, Quantity, codecs, version conversion
    validation/   kube-apiserver validation rules, field-path error lists
    cel/          CEL for device selectors, compiled to Python
    resources/    ResourceList, the nine comparisons, node-allocatable footprint, node fit
    allocator/    the structured allocator (same devices as kube-scheduler) and explanations
    scheduler/    cluster snapshot, scheduling loop, what-if simulation
    store/        persistence for the API server (memory, SQLite, PostgreSQL)
    server/       the resource.k8s.io HTTP API server
    cli/          the ``dralloc`` command
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

__all__ = ["Quantity", "load", "__version__"]

if TYPE_CHECKING:  # pragma: no cover
    from dralloc.api.codec import load
    from dralloc.api.quantity import Quantity


def __getattr__(name: str) -> Any:
    # Lazy so that `import dralloc` stays cheap for the CLI's fast paths.
    if name == "Quantity":
        from dralloc.api.quantity import Quantity

        return Quantity
    if name == "load":
        from dralloc.api.codec import load

        return load
    raise AttributeError(f"module 'dralloc' has no attribute {name!r}")
