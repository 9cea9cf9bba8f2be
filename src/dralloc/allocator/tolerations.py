"""Whether a request's tolerations leave a device taint blocking (NoSchedule / NoExecute only)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def taint_blocks(taints: Sequence[Any], tolerations: list[Any] | None) -> bool:
    """True when one of the (blocking) taints is not tolerated."""
    for taint in taints:
        if not tolerations or not any(tolerates(t, taint) for t in tolerations):
            return True
    return False


def tolerates(tol: Any, taint: Any) -> bool:
    if tol.effect and tol.effect != taint.effect:
        return False
    if tol.key and tol.key != taint.key:
        return False
    op = tol.operator or "Equal"
    if op == "Exists":
        return True
    if op == "Equal":
        return (tol.value or "") == (taint.value or "")
    return False
