"""Pods the controllers delete, and the end of their grace period.

A controller deletes a pod as a client of kube-apiserver does with default DeleteOptions: a bound pod that
has not finished is only marked terminating (deletionTimestamp = now + its terminationGracePeriodSeconds,
default 30) for its kubelet to stop; anything else goes at once. No kubelet runs pods here, so
:class:`TerminatingPods` stands in for them: it removes a terminating pod once its deletionTimestamp has
passed (finalizers still hold it), and reports when the next one is due so that the controllers' thread
wakes for it. With ``--fake-kubelet`` a terminating pod is removed at once, as a kubelet whose containers
stop promptly would let it go.

A pod that finalizers still hold when its time comes is not removed but reported stopped, as the kubelet
does before its final delete: a terminal phase (``Failed``: its containers were killed at the end of the grace
period; ``Succeeded`` with ``--fake-kubelet``: they stopped when asked) and no grace left. That releases its
claims (a finished pod needs them no more), which a foreground deletion of the pod waits for: its generated
claims block their owner's deletion until they are gone.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import partial
from typing import Any

from dralloc.server.clock import now
from dralloc.server.controllers.snapshot import Snapshot
from dralloc.server.controllers.writes import Writer
from dralloc.server.registry import pods as pod_registry
from dralloc.store import Outcome

Obj = dict[str, Any]


def set_condition(pod: Obj, condition: Obj) -> bool:
    """Put ``condition`` into the pod's status as ``UpdatePodCondition`` does: a condition of that type is
    replaced, keeping its lastTransitionTime while its status stays. False when nothing changes."""
    status = pod.setdefault("status", {})
    conds = [c for c in status.get("conditions") or [] if isinstance(c, dict)]
    old = next((c for c in conds if c.get("type") == condition["type"]), None)
    if old is not None and all(old.get(k) == v for k, v in condition.items()):
        return False
    since = old.get("lastTransitionTime") if old is not None and old.get("status") == condition["status"] else None
    new = {"lastProbeTime": None, **condition, "lastTransitionTime": since or now()}
    status["conditions"] = [new if c is old else c for c in conds] if old is not None else [*conds, new]
    return True


def _seconds(stamp: str) -> float | None:
    try:
        return datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC).timestamp()
    except ValueError:
        return None


@dataclass
class TerminatingPods:
    """Removes terminating pods whose grace period is over (``at_once``: every terminating pod).

    A pod deleted through :meth:`delete` goes its whole grace period after that moment, as a kubelet counts
    it from when it starts stopping the pod (deletionTimestamp has whole seconds only); any other
    terminating pod goes at its deletionTimestamp."""

    writer: Writer
    at_once: bool = False
    next_due: float | None = None  # the earliest removal still ahead (seconds since the epoch)
    clock: Callable[[], float] = time.time
    # uid -> when a pod deleted here goes; entries of pods no longer in the store are dropped by cycle().
    deadlines: dict[str, float] = field(default_factory=dict)

    def due(self) -> bool:
        return self.next_due is not None and self.next_due <= self.clock()

    def delete(self, namespace: str, name: str, uid: str | None) -> Obj | None:
        """Delete with default options: the pod marked terminating (and its removal due), or None when it
        went at once (or was gone)."""
        removed: list[bool] = []

        def delete(current: Obj) -> Obj | Outcome | None:
            removed.clear()
            marked = pod_registry.mark_terminating(current, pod_registry.grace_period(current, {}, {}))
            if marked is None:
                removed.append(True)
                return Outcome(current, "DELETED")
            return marked.object if marked.object is not current else None

        result = self.writer.update("pods", namespace, name, delete, uid=uid)
        if result is None or removed:
            return None
        meta = result["metadata"]
        when = self.clock() + (0 if self.at_once else int(meta.get("deletionGracePeriodSeconds") or 0))
        self.deadlines[str(meta.get("uid"))] = when
        self.next_due = when if self.next_due is None else min(self.next_due, when)
        return result

    def cycle(self, snap: Snapshot) -> bool:
        """Remove the pods whose time has come (or report them stopped); True when one was removed or
        stopped."""
        self.next_due = None
        clock = self.clock()
        removed = False
        present = set()
        for pod in snap.terminating_pods:
            meta = pod.get("metadata") or {}
            stamp = meta.get("deletionTimestamp")
            held = bool(meta.get("finalizers"))
            if not stamp or (held and (pod.get("status") or {}).get("phase") in pod_registry.TERMINAL_PHASES):
                continue
            present.add(str(meta.get("uid")))
            when = self.deadlines.get(str(meta.get("uid"))) or _seconds(str(stamp))
            if not self.at_once and when is not None and when > clock:
                self.next_due = when if self.next_due is None else min(self.next_due, when)
                continue
            namespace, name = meta.get("namespace") or "default", meta.get("name") or ""
            if held:  # stopped: its claims are released now, which the finalizers may be waiting for
                phase = "Succeeded" if self.at_once else "Failed"
                stopped: list[bool] = []
                self.writer.update("pods", namespace, name, partial(_stopped, phase=phase, done=stopped),
                                   uid=meta.get("uid"))
                removed = removed or bool(stopped)
                continue
            gone: list[bool] = []
            self.writer.update("pods", namespace, name, partial(_remove_if_terminating, gone=gone),
                               uid=meta.get("uid"))
            removed = removed or bool(gone)
        self.deadlines = {uid: when for uid, when in self.deadlines.items() if uid in present}
        return removed


def _stopped(current: Obj, phase: str, done: list[bool]) -> Obj | None:
    """The kubelet's last word on a deleted pod that finalizers hold: its terminal phase, then its final delete
    (no grace left)."""
    done.clear()
    meta = current.get("metadata") or {}
    status = current.setdefault("status", {})
    if not meta.get("deletionTimestamp") or not meta.get("finalizers") \
            or status.get("phase") in pod_registry.TERMINAL_PHASES:
        return None
    status["phase"] = phase
    meta["deletionGracePeriodSeconds"] = 0
    done.append(True)
    return current


def _remove_if_terminating(current: Obj, gone: list[bool]) -> Outcome | None:
    gone.clear()
    meta = current.get("metadata") or {}
    if not meta.get("deletionTimestamp") or meta.get("finalizers"):
        return None
    gone.append(True)
    return Outcome(current, "DELETED")
