"""The active queue ordered by PrioritySort: higher priority first, then the earlier queue timestamp
(a pod's creationTimestamp when it enters with the input batch, a later tick each time it re-enters),
then input order."""

from __future__ import annotations

import heapq
from itertools import count

from dralloc.scheduler.podinfo import PodInfo


class SchedulingQueue:
    def __init__(self) -> None:
        self._heap: list[tuple[int, str, int, int, PodInfo]] = []
        self._tick = count()
        self._requeue = 0

    def add(self, pod: PodInfo) -> None:
        """A pod of the input batch: its creation time is its queue time."""
        stamp = pod.pod.metadata.creation_timestamp or ""
        heapq.heappush(self._heap, (-pod.priority, "0" + stamp, 0, next(self._tick), pod))

    def requeue(self, pod: PodInfo) -> None:
        """A pod back from a failed attempt: queued now, behind everything of its priority already queued."""
        self._requeue += 1
        heapq.heappush(self._heap, (-pod.priority, "1", self._requeue, next(self._tick), pod))

    def pop(self) -> PodInfo:
        return heapq.heappop(self._heap)[-1]

    def __len__(self) -> int:
        return len(self._heap)
