"""The plugin interface (kube-scheduler's extension points) and the per-attempt cycle state.

A plugin overrides the extension points it implements; the framework runs, at each point, only the plugins
whose class overrides it (:func:`implements`), in profile order. The points, in the order one attempt meets
them: PreEnqueue (before the queue), PreFilter (+ its extensions AddPod/RemovePod), Filter, PostFilter,
PreScore, Score + NormalizeScore, Reserve (Unreserve on a later failure), Permit, PreBind, Bind.
"""

from __future__ import annotations

from collections.abc import Hashable
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
    # A plugin keeps its PreFilter state under its name. State that AddPod/RemovePod change must have a
    # ``clone()`` returning the same type, so that a cloned cycle can be changed without touching this one.
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
    # Plugins whose Filter or Score for this pod reads more of a node than the framework's node keys hold:
    # their ``node_key`` joins each node's key, and the group-table fast path is off for the pod.
    keyed: list[Plugin] = field(default_factory=list)

    def clone(self) -> Cycle:
        """``CycleState.Clone``: state with a ``clone()`` is cloned, the rest shared; the skip sets and
        ``keyed`` are copied. The framework's own bookkeeping of node keys stays shared."""
        data = {}
        for key, value in self.data.items():
            clone = getattr(value, "clone", None)
            data[key] = clone() if clone is not None else value
        return Cycle(self.pod, self.snapshot, data, set(self.skip_filter), set(self.skip_score),
                     self.node_keys, self.representatives, self.window, self.feasible_gids, list(self.keyed))


class Plugin:
    """A plugin does nothing at an extension point it does not override. ``weight`` is its score weight."""

    name = ""
    weight = 0
    has_filter = False
    has_score = False
    # Whether ``add_pod`` / ``remove_pod`` keep this plugin's PreFilter state right when the framework
    # adds nominated pods to a node or the preemption dry run removes victims (PreFilterExtensions).
    has_pre_filter_extensions = False

    def pre_enqueue(self, pod: PodInfo) -> Status | None:
        """A gate before the active queue: None lets the pod in, a rejection keeps it out."""
        return None

    def pre_filter(self, cycle: Cycle) -> Status | set[str] | None:
        """None to go on, a set of node names to narrow the candidates, SKIP (turns this plugin's Filter
        and PreFilter extensions off for the pod), or a rejection."""
        return None

    def add_pod(self, cycle: Cycle, pod: PodInfo, node: NodeInfo) -> Status | None:
        """PreFilter extension: ``pod`` now counts on ``node`` (already added to it) for this cycle."""
        return None

    def remove_pod(self, cycle: Cycle, pod: PodInfo, node: NodeInfo) -> Status | None:
        """PreFilter extension: ``pod`` no longer counts on ``node`` (already removed from it)."""
        return None

    def filter(self, cycle: Cycle, node: NodeInfo) -> Status | None:
        return None

    def pre_score(self, cycle: Cycle, nodes: list[NodeInfo]) -> Status | None:
        """SKIP: no score from this plugin for the pod."""
        return None

    def score(self, cycle: Cycle, node: NodeInfo) -> int:
        return 0

    def normalize(self, cycle: Cycle, scores: dict[K, int]) -> dict[K, int]:
        return scores

    def reserve(self, cycle: Cycle, node: NodeInfo) -> Status | None:
        """The pod is assumed on ``node``: claim what it needs there before binding."""
        return None

    def unreserve(self, cycle: Cycle, node: NodeInfo) -> None:
        """Undo ``reserve`` (called for every Reserve plugin, in reverse order, when a later point fails)."""
        return None

    def permit(self, cycle: Cycle, node: NodeInfo) -> Status | None:
        """None to bind, a rejection, or ``Code.WAIT`` to hold the assumed pod until it is allowed."""
        return None

    def pre_bind(self, cycle: Cycle, node: NodeInfo) -> Status | None:
        """Write what binding needs (e.g. claim allocations) before the pod is bound."""
        return None

    def bind(self, cycle: Cycle, node: NodeInfo) -> Status | None:
        """Bind the pod; SKIP hands it to the next Bind plugin."""
        return None

    def node_key(self, cycle: Cycle, node: NodeInfo) -> Hashable:
        """For a plugin in ``cycle.keyed``: what its verdict and score for the pod read of ``node`` beyond
        the framework's node keys (``node.name`` opts the node out of sharing)."""
        return node.name


def implements(plugin: Plugin, point: str) -> bool:
    """Whether the plugin's class overrides extension point ``point`` (a method name of :class:`Plugin`)."""
    return getattr(type(plugin), point) is not getattr(Plugin, point)
