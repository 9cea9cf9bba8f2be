"""The scheduler framework every plugin codes against: the extension points (:class:`Plugin`), the
per-attempt state (:class:`Cycle`, kube-scheduler's CycleState), status codes and statuses, the cycle's
diagnosis and kube-scheduler's texts.

A plugin overrides the extension points it implements; the framework runs, at each point, only the plugins
whose class overrides it (:func:`implements`), in profile order. The points, in the order one attempt meets
them: PreEnqueue (before the queue), PreFilter (+ its extensions AddPod/RemovePod), Filter, PostFilter,
PreScore, Score + NormalizeScore, Reserve (Unreserve on a later failure), Permit, PreBind, Bind.

A filter returns ``None`` for success or a :class:`Status`. The codes are kube-scheduler's:
``UNSCHEDULABLE`` (preemption might help), ``UNRESOLVABLE`` (UnschedulableAndUnresolvable: preemption
skips the node), ``ERROR`` (aborts the attempt), ``SKIP`` (a PreFilter that turns its plugin off for the pod).
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from enum import IntEnum
from typing import TYPE_CHECKING, Any, TypeVar

from dralloc.scheduler.nodeinfo import NodeInfo
from dralloc.scheduler.podinfo import PodInfo

if TYPE_CHECKING:
    from dralloc.scheduler.snapshot import ClusterSnapshot

NO_NODES_AVAILABLE = "no nodes available to schedule pods"
MAX_NODE_SCORE = 100


class Code(IntEnum):
    SUCCESS = 0
    ERROR = 1
    UNSCHEDULABLE = 2
    UNRESOLVABLE = 3
    WAIT = 4
    SKIP = 5


@dataclass(frozen=True, slots=True)
class Status:
    """A plugin's verdict: a code, its reasons (the texts counted in the FitError histogram) and the plugin."""

    code: Code
    reasons: tuple[str, ...] = ()
    plugin: str = ""

    @property
    def message(self) -> str:
        return ", ".join(self.reasons)

    @property
    def rejected(self) -> bool:
        return self.code in (Code.UNSCHEDULABLE, Code.UNRESOLVABLE)


def unschedulable(plugin: str, *reasons: str) -> Status:
    return Status(Code.UNSCHEDULABLE, reasons, plugin)


def unresolvable(plugin: str, *reasons: str) -> Status:
    return Status(Code.UNRESOLVABLE, reasons, plugin)


@functools.lru_cache(maxsize=4096)
def interned(code: Code, reasons: tuple[str, ...], plugin: str) -> Status:
    """One shared Status per verdict, for filters that reject many nodes alike: a FitError over a thousand
    nodes then counts a handful of objects (see :func:`fit_error_message`). (A Status is never changed once
    made, so sharing one is safe.)"""
    return Status(code, reasons, plugin)


def error(plugin: str, message: str) -> Status:
    return Status(Code.ERROR, (message,), plugin)


SKIP = Status(Code.SKIP)


class PreScoreError(Exception):
    """A PreScore plugin answered with an error: the pod's cycle ends in that error, as kube-scheduler's
    RunPreScorePlugins stops at the first plugin that neither succeeds nor skips."""

    def __init__(self, status: Status) -> None:
        super().__init__(status.message)
        self.status = status


def scoring_plugins(scorers: list[Plugin], cycle: Cycle, nodes: list[NodeInfo]) -> list[Plugin]:
    """The score plugins whose PreScore did not skip the pod; PreScoreError at the first that fails, worded
    ``running PreScore plugin "NAME": ...``."""
    active = []
    for plugin in scorers:
        status = plugin.pre_score(cycle, nodes)
        if status is None or status.code == Code.SUCCESS:
            active.append(plugin)
        elif status.code != Code.SKIP:
            raise PreScoreError(error(plugin.name, f'running PreScore plugin "{plugin.name}": {status.message}'))
    return active


@dataclass(slots=True)
class Diagnosis:
    """Why a pod found no node: each examined node's status, the absent nodes' status, the PreFilter and
    PostFilter messages (kube-scheduler's ``framework.Diagnosis``)."""

    node_statuses: dict[str, Status] = field(default_factory=dict)
    absent_status: Status | None = None
    pre_filter_msg: str = ""
    post_filter_msg: str = ""


def fit_error_message(num_all_nodes: int, diagnosis: Diagnosis) -> str:
    """``FitError.Error()``: ``0/N nodes are available: <histogram>. <post filter>``.

    The histogram counts each reason once per node, adds the absent-node reasons for every node not
    examined, and sorts the ``"<count> <reason>"`` strings byte-wise (so ``10 x`` sorts before ``2 y``).
    A PreFilter rejection replaces the histogram. The PostFilter text follows after a space, no period.
    """
    msg = f"0/{num_all_nodes} nodes are available:"
    if diagnosis.pre_filter_msg:
        msg += f" {diagnosis.pre_filter_msg}."
    else:
        # Nodes mostly share Status objects (memo answers, interned verdicts): count the objects in C,
        # then each one's reasons.
        statuses = diagnosis.node_statuses.values()
        by_id = dict(zip(map(id, statuses), statuses))
        counts: dict[str, int] = {}
        for status_id, nodes in Counter(map(id, statuses)).items():
            for reason in by_id[status_id].reasons:
                counts[reason] = counts.get(reason, 0) + nodes
        absent = num_all_nodes - len(diagnosis.node_statuses)
        if absent > 0 and diagnosis.absent_status is not None:
            for reason in diagnosis.absent_status.reasons:
                counts[reason] = counts.get(reason, 0) + absent
        if counts:
            msg += " " + ", ".join(sorted(f"{n} {reason}" for reason, n in counts.items())) + "."
    if diagnosis.post_filter_msg:
        msg += f" {diagnosis.post_filter_msg}"
    return msg


def truncate_message(message: str, limit: int = 1024) -> str:
    """Events and conditions keep at most 1024 bytes; a longer text ends in `` ...`` (``truncateMessage``)."""
    if len(message) <= limit:
        return message
    suffix = " ..."
    return message[: limit - len(suffix)] + suffix


K = TypeVar("K")


def default_normalize(scores: dict[K, int], reverse: bool) -> dict[K, int]:
    """``helper.DefaultNormalizeScore(100, reverse, scores)``."""
    if not scores:
        return scores
    top = max(scores.values())
    if top == 0:
        return {k: MAX_NODE_SCORE for k in scores} if reverse else dict(scores)
    out = {}
    for k, s in scores.items():
        s = MAX_NODE_SCORE * s // top
        out[k] = MAX_NODE_SCORE - s if reverse else s
    return out


# ---------------------------------------------------------------------- the extension points
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
    # A grouped search's key of each group id (what ``representatives`` is keyed by).
    group_key: Callable[[int], tuple[object, ...]] | None = None
    # The device preference of a score plugin for the chosen node (sort key over driver, pool, device).
    device_order: Callable[[str, str, str], Any] | None = None

    def clone(self) -> Cycle:
        """``CycleState.Clone``: state with a ``clone()`` is cloned, the rest shared; the skip sets and
        ``keyed`` are copied. The framework's own bookkeeping of node keys stays shared."""
        data = {}
        for key, value in self.data.items():
            clone = getattr(value, "clone", None)
            data[key] = clone() if clone is not None else value
        return Cycle(self.pod, self.snapshot, data, set(self.skip_filter), set(self.skip_score),
                     self.node_keys, self.representatives, self.window, self.feasible_gids, list(self.keyed),
                     self.group_key)


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

    def device_order(self, cycle: Cycle, node: NodeInfo) -> Callable[[str, str, str], Any] | None:
        """Optional, for a score plugin: a sort key over (driver, pool, device name) for the devices of the
        chosen node — which fitting devices DynamicResources tries first (not upstream: kube-scheduler's
        DRA scores nodes only; None keeps upstream's device order)."""
        return None

    def node_classes(self, cycle: Cycle) -> tuple[bytes, int] | None:
        """Optional, for a keyed plugin: a class (0..n-1) per node of the snapshot's list, and n, such that
        nodes of one class have equal node keys for this pod (lets the grouped search run); None: no such
        classes."""
        return None


def implements(plugin: Plugin, point: str) -> bool:
    """Whether the plugin's class overrides extension point ``point`` (a method name of :class:`Plugin`)."""
    return getattr(type(plugin), point) is not getattr(Plugin, point)
