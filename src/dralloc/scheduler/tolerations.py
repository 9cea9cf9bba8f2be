"""Taints left untolerated, shared by TaintToleration, NodeUnschedulable and PodTopologySpread (the matching
rule itself is ``dralloc.api.tolerations``)."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from dralloc.api.core_v1 import Taint, Toleration
from dralloc.api.tolerations import tolerates


def tolerated(taint: Taint, tolerations: Iterable[Toleration]) -> bool:
    return any(tolerates(t, taint) for t in tolerations)


def first_untolerated(taints: Iterable[Taint], tolerations: list[Toleration],
                      applies: Callable[[Taint], bool]) -> Taint | None:
    for taint in taints:
        if applies(taint) and not tolerated(taint, tolerations):
            return taint
    return None
