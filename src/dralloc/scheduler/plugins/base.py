"""The plugin interface and the per-attempt cycle state."""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from dralloc.scheduler.framework import K, Status
from dralloc.scheduler.nodeinfo import NodeInfo
from dralloc.scheduler.podinfo import PodInfo

if TYPE_CHECKING:
    from dralloc.scheduler.snapshot import ClusterSnapshot


@dataclass(eq=False)
class Cycle:
    """One scheduling attempt of one pod: plugins keep their PreFilter results here (``CycleState``)."""

    pod: PodInfo
    snapshot: ClusterSnapshot
    data: dict[str, Any] = field(default_factory=dict)
    skip_filter: set[str] = field(default_factory=set)
    skip_score: set[str] = field(default_factory=set)
    # Filter results are shared by nodes in the same state: each node's state key, and the node that
    # was actually filtered for each key (plugins keep per-node data for it, e.g. DRA allocations).
    node_keys: dict[str, tuple[object, ...]] = field(default_factory=dict)
    representatives: dict[tuple[object, ...], NodeInfo] = field(default_factory=dict)
    # A grouped search's examined window: (group id per examined node, start index),
    # and which groups passed.
    window: tuple[bytes, int] | None = None
    feasible_gids: bytes = b""
    # Plugins whose verdict or score reads a node's pods, name or labels (their node_key joins the node's key).
    keyed: list[Plugin] = field(default_factory=list)
    # A grouped search's key of each group id (what ``representatives`` is keyed by).
    group_key: Callable[[int], tuple[object, ...]] | None = None

    def clone(self) -> Cycle:
        """``CycleState.Clone``: data values that have a ``clone()`` are cloned, the rest shared."""
        data = {k: v.clone() if hasattr(v, "clone") else v for k, v in self.data.items()}
        return Cycle(self.pod, self.snapshot, data, self.skip_filter, self.skip_score, self.node_keys,
                     self.representatives, self.window, self.feasible_gids, self.keyed, self.group_key)


class Plugin:
    """A plugin does nothing at an extension point it does not override. ``weight`` is its score weight."""

    name = ""
    weight = 0

    def pre_filter(self, cycle: Cycle) -> Status | set[str] | None:
        """None to go on, a set of node names to narrow the candidates, SKIP, or a rejection."""
        return None

    # PreFilterExtensions: keep the cycle state right when the preemption dry run removes victims or
    # nominated pods are added (only called when has_pre_filter_extensions).
    has_pre_filter_extensions = False

    def add_pod(self, cycle: Cycle, pod: PodInfo, node: NodeInfo) -> Status | None:
        return None

    def remove_pod(self, cycle: Cycle, pod: PodInfo, node: NodeInfo) -> Status | None:
        return None

    def filter(self, cycle: Cycle, node: NodeInfo) -> Status | None:
        return None

    def node_key(self, cycle: Cycle, node: NodeInfo) -> Hashable:
        """What this plugin's Filter and Score read of ``node`` for this pod (plugins in ``cycle.keyed``)."""
        return node.name

    def node_classes(self, cycle: Cycle) -> tuple[bytes, int] | None:
        """Optional, for a keyed plugin: a class (0..n-1) per node of the snapshot's list, and n, such that
        nodes of one class have equal node keys for this pod (lets the grouped search run); None: no such
        classes."""
        return None

    def pre_score(self, cycle: Cycle, nodes: list[NodeInfo]) -> Status | None:
        return None

    def score(self, cycle: Cycle, node: NodeInfo) -> int:
        return 0

    def normalize(self, cycle: Cycle, scores: dict[K, int]) -> dict[K, int]:
        return scores

    has_filter = False
    has_score = False
