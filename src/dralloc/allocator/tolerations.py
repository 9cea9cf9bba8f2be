"""Whether a request's tolerations leave a device taint blocking (NoSchedule / NoExecute only)."""

from __future__ import annotations

from collections.abc import Sequence

from dralloc.api.tolerations import TaintLike, TolerationLike, tolerates


def taint_blocks(taints: Sequence[TaintLike], tolerations: Sequence[TolerationLike] | None) -> bool:
    """True when one of the (blocking) taints is not tolerated."""
    for taint in taints:
        if not tolerations or not any(tolerates(t, taint) for t in tolerations):
            return True
    return False
