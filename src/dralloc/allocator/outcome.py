"""What :meth:`Allocator.allocate` returns for one node."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dralloc.api.resource_v1 import AllocationResult, ResourceClaim

INVALID_POOLS_MESSAGE = "invalid resource pools were encountered"


class AllocationOutcome:
    """The answer for one node: ``status`` is "allocated" (``results``) or "unschedulable" (``explanation``).

    ``steps`` is the number of search nodes visited (upstream's allocateOne calls, fewer with pruning): a
    machine-independent measure of the work done.
    """

    __slots__ = ("_explain", "_explanation", "_upstream", "_upstream_cost", "claims", "invalid_pools", "node_name",
                 "results", "status", "steps")

    def __init__(self, status: str, results: list[AllocationResult] | None, node_name: str, *,
                 invalid_pools: bool = False, explain: Callable[[], Any] | None = None,
                 claims: list[ResourceClaim] | None = None, steps: int = 0,
                 upstream: Callable[[], Any] | None = None) -> None:
        self.status = status
        self.results = results or []
        self.node_name = node_name
        self.invalid_pools = invalid_pools
        self.claims = claims or []
        self.steps = steps
        self._explain = explain
        self._explanation: Any = None
        self._upstream = upstream
        self._upstream_cost: Any = None

    @property
    def allocated(self) -> bool:
        return self.status == "allocated"

    @property
    def message(self) -> str | None:
        """Upstream's error value for the unschedulable-with-invalid-pools variant."""
        return INVALID_POOLS_MESSAGE if self.invalid_pools else None

    @property
    def explanation(self) -> Any:
        """Why the node cannot take the claims (computed on first access, off the hot path)."""
        if self._explanation is None and self._explain is not None:
            self._explanation = self._explain()
        return self._explanation

    @property
    def upstream(self) -> Any:
        """Upstream's search steps for this call, estimated (an ``UpstreamCost``; computed on first access by
        searching again): whether kube-scheduler would have timed out before reaching this answer."""
        if self._upstream_cost is None and self._upstream is not None:
            self._upstream_cost = self._upstream()
        return self._upstream_cost

    def __repr__(self) -> str:
        return (f"AllocationOutcome(status={self.status!r}, node={self.node_name!r}, results={len(self.results)}, "
                f"steps={self.steps})")
