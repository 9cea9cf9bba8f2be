"""The scheduling queue (kube-scheduler's ``PriorityQueue``): activeQ, backoffQ and the unschedulable pool,
with PreEnqueue gating.

* activeQ is ordered by PrioritySort: higher priority first, then the earlier queue timestamp (a pod's
  creationTimestamp when it enters with the input batch, a later tick each time it re-enters), then input order.
* A pod a PreEnqueue plugin rejects is kept aside (gated) and never reaches activeQ until :meth:`activate`
  finds the gate open.
* A pod whose attempt failed waits in the unschedulable pool until a cluster change moves it back
  (:meth:`move_all_to_active`). Moved back, it waits out its backoff — 1 s × 2^(attempts − 1), at most 10 s —
  in backoffQ when the queue has a clock (``now``); a simulation without a clock sees every backoff expired.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable
from itertools import count

from dralloc.scheduler.framework import Status
from dralloc.scheduler.podinfo import PodInfo

INITIAL_BACKOFF_SECONDS = 1.0
MAX_BACKOFF_SECONDS = 10.0

PreEnqueue = Callable[[PodInfo], "Status | None"]


def backoff_seconds(attempts: int) -> float:
    """``calculateBackoffDuration``: doubling from 1 s per attempt, capped at 10 s."""
    duration = INITIAL_BACKOFF_SECONDS
    for _ in range(1, attempts):
        duration *= 2
        if duration >= MAX_BACKOFF_SECONDS:
            return MAX_BACKOFF_SECONDS
    return duration


class SchedulingQueue:
    def __init__(self, pre_enqueue: PreEnqueue | None = None) -> None:
        self._heap: list[tuple[int, str, int, int, PodInfo]] = []
        self._tick = count()
        self._requeue = 0
        self.pre_enqueue = pre_enqueue
        self.gated: dict[str, tuple[PodInfo, Status]] = {}  # by pod key, with the rejecting status
        self.unschedulable: dict[str, PodInfo] = {}  # the pool, in the order the pods failed
        self.backoff: list[tuple[float, int, PodInfo]] = []  # (ready at, tick, pod)
        self.attempts: dict[str, int] = {}
        # The tick of each pod's live activeQ entry: a pod taken out of turn (a pod group's siblings, taken
        # with the first of them) leaves a dead entry behind that ``pop`` skips.
        self._live: dict[str, int] = {}

    # ------------------------------------------------------------------ entering
    def _gate(self, pod: PodInfo) -> Status | None:
        status = self.pre_enqueue(pod) if self.pre_enqueue is not None else None
        if status is not None:
            self.gated[pod.key] = (pod, status)
        return status

    def add(self, pod: PodInfo) -> Status | None:
        """A pod of the input batch, queued by its creation time; the PreEnqueue status when gated."""
        status = self._gate(pod)
        if status is None:
            stamp = pod.pod.metadata.creation_timestamp or ""
            tick = self._live[pod.key] = next(self._tick)
            heapq.heappush(self._heap, (-pod.priority, "0" + stamp, 0, tick, pod))
        return status

    def requeue(self, pod: PodInfo) -> None:
        """A pod back in activeQ: queued now, behind everything of its priority already queued."""
        self._requeue += 1
        tick = self._live[pod.key] = next(self._tick)
        heapq.heappush(self._heap, (-pod.priority, "1", self._requeue, tick, pod))

    def activate(self, pod: PodInfo) -> Status | None:
        """A gated pod changed: queue it if the gate is open now; else the status that still holds it."""
        if pod.key not in self.gated:
            return None
        del self.gated[pod.key]
        status = self._gate(pod)
        if status is None:
            self.requeue(pod)
        return status

    # ------------------------------------------------------------------ after an attempt
    def add_unschedulable(self, pod: PodInfo) -> None:
        """The pod's attempt failed: it waits in the unschedulable pool."""
        self.attempts[pod.key] = self.attempts.get(pod.key, 0) + 1
        self.unschedulable[pod.key] = pod

    def move_all_to_active(self, now: float | None = None) -> None:
        """A cluster change: every pod of the unschedulable pool goes back, to activeQ when its backoff is
        over (always, without a clock), else to backoffQ."""
        for key, pod in list(self.unschedulable.items()):
            del self.unschedulable[key]
            if now is None:
                self.requeue(pod)
            else:
                ready = now + backoff_seconds(self.attempts.get(key, 1))
                heapq.heappush(self.backoff, (ready, next(self._tick), pod))

    def flush_backoff(self, now: float) -> None:
        """Pods whose backoff is over move to activeQ."""
        while self.backoff and self.backoff[0][0] <= now:
            self.requeue(heapq.heappop(self.backoff)[2])

    # ------------------------------------------------------------------ leaving
    def pop(self) -> PodInfo:
        while True:
            entry = heapq.heappop(self._heap)
            pod = entry[-1]
            if self._live.get(pod.key) == entry[3]:
                del self._live[pod.key]
                return pod

    def take(self, pod: PodInfo) -> bool:
        """Take a pod out of activeQ out of turn (False when it is not there)."""
        return self._live.pop(pod.key, None) is not None

    def __contains__(self, pod: PodInfo) -> bool:
        """Whether the pod waits in activeQ."""
        return pod.key in self._live

    def __len__(self) -> int:
        """Pods in activeQ."""
        return len(self._live)
