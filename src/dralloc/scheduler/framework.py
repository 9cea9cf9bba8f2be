"""The pieces every plugin shares: status codes, statuses, the cycle's diagnosis and kube-scheduler's texts.

A filter returns ``None`` for success or a :class:`Status`. The codes are kube-scheduler's:
``UNSCHEDULABLE`` (preemption might help), ``UNRESOLVABLE`` (UnschedulableAndUnresolvable: preemption
skips the node), ``ERROR`` (aborts the attempt), ``SKIP`` (a PreFilter that turns its plugin off for the pod).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import IntEnum
from typing import TypeVar

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


def error(plugin: str, message: str) -> Status:
    return Status(Code.ERROR, (message,), plugin)


SKIP = Status(Code.SKIP)


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
        counts: dict[str, int] = {}
        for status in diagnosis.node_statuses.values():
            for reason in status.reasons:
                counts[reason] = counts.get(reason, 0) + 1
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
