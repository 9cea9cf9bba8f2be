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
    # Plugins whose verdict or score for this pod reads more of a node than the framework's node keys
    # (they add themselves in PreFilter; their ``node_key`` joins each node's key).
    keyed: list[Plugin] = field(default_factory=list)


class Plugin:
    """A plugin does nothing at an extension point it does not override. ``weight`` is its score weight."""

    name = ""
    weight = 0

    def pre_filter(self, cycle: Cycle) -> Status | set[str] | None:
        """None to go on, a set of node names to narrow the candidates, SKIP, or a rejection."""
        return None

    def filter(self, cycle: Cycle, node: NodeInfo) -> Status | None:
        return None

    def pre_score(self, cycle: Cycle, nodes: list[NodeInfo]) -> Status | None:
        return None

    def score(self, cycle: Cycle, node: NodeInfo) -> int:
        return 0

    def normalize(self, cycle: Cycle, scores: dict[K, int]) -> dict[K, int]:
        return scores

    def node_key(self, cycle: Cycle, node: NodeInfo) -> Hashable:
        """For a plugin in ``cycle.keyed``: what its verdict and score read of the node beyond the framework's
        keys (the node's name: never share)."""
        return node.name

    def device_order(self, cycle: Cycle, node: NodeInfo) -> Callable[[str, str, str], Any] | None:
        """Not upstream (DRA scores nodes only): a score plugin's preference among the node's devices for
        the pod's claims, as a sort key over (driver, pool, device name); the allocator then tries devices
        in that order. None (every default plugin) keeps upstream's device order."""
        return None

    has_filter = False
    has_score = False
