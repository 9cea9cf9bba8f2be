"""Watch fan-out off the write path, as kube-apiserver's watch cache does it.

A write only wakes the hub (one call, whatever the number of watches). The hub reads the new events from the
store once, in a worker thread, and hands each to the queues of the watches on its resource; each watch
filters (namespace, selectors) and encodes on its own. A watch that starts from an older resourceVersion
first replays the store's history up to the hub's position, then follows the hub. A watch whose queue
overflows (a client that does not read) is ended, as kube-apiserver ends slow watchers; its client
re-watches.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable
from typing import Any

from dralloc.store import Event, Gone, SQLStore

QUEUE_LIMIT = 10_000
POLL_SECONDS = 1.0  # other processes may share the database (PostgreSQL): look for their writes this often


class Subscription:
    """One watch's inbox: events from the hub and its timers' ticks, taken in batches."""

    def __init__(self, resource: str, namespace: str | None) -> None:
        self.resource = resource
        self.namespace = namespace
        self.items: deque[Any] = deque()
        self.overflowed = False
        self._waiter: asyncio.Future[None] | None = None

    def _wake(self) -> None:
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)

    def offer(self, event: Event | None) -> None:
        """An event (None: the watch must end). A watch more than QUEUE_LIMIT events behind is ended."""
        if self.overflowed:
            return
        if len(self.items) >= QUEUE_LIMIT:
            self.overflowed = True
            self.items.clear()
            event = None
        self.items.append(event)
        self._wake()

    def tick(self, marker: object) -> None:
        """A timer's mark (the watch's deadline, a bookmark), queued behind the events."""
        if not self.overflowed:
            self.items.append(marker)
            self._wake()

    def empty(self) -> bool:
        return not self.items

    async def take(self) -> list[Any]:
        """Everything queued, waiting for something if nothing is."""
        while not self.items:
            self._waiter = asyncio.get_running_loop().create_future()
            await self._waiter
        batch = list(self.items)
        self.items.clear()
        return batch


class WatchHub:
    def __init__(self, store: SQLStore) -> None:
        self.store = store
        self.position = 0
        self.subscriptions: set[Subscription] = set()
        self._wake: asyncio.Event | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._task: asyncio.Task[None] | None = None
        self.closed = False
        self._lines: dict[tuple[Any, ...], bytes] = {}

    def _start(self) -> None:
        loop = asyncio.get_running_loop()
        if self._task is None or self._task.done() or self._loop is not loop:  # (tests run a loop per request)
            self._loop = loop
            self._wake = asyncio.Event()
            self.position = self.store.current_rv()
            self._task = self._loop.create_task(self._run())

    def notify(self) -> None:
        """Called by the store after a commit, from its committer thread."""
        loop, wake = self._loop, self._wake
        if loop is not None and wake is not None:
            try:
                loop.call_soon_threadsafe(wake.set)
            except RuntimeError:  # the loop is closed
                pass

    def subscribe(self, resource: str, namespace: str | None) -> tuple[Subscription, int]:
        """A new subscription and the position it follows from (events after it arrive in its queue)."""
        self._start()
        sub = Subscription(resource, namespace)
        self.subscriptions.add(sub)
        return sub, self.position

    def unsubscribe(self, sub: Subscription) -> None:
        self.subscriptions.discard(sub)

    def close(self) -> None:
        self.closed = True
        for sub in list(self.subscriptions):
            sub.offer(None)
        if self._wake is not None:
            self._wake.set()

    async def _run(self) -> None:
        assert self._wake is not None
        while not self.closed:
            try:
                await asyncio.wait_for(self._wake.wait(), POLL_SECONDS)
            except TimeoutError:
                pass
            self._wake.clear()
            while True:
                try:
                    events = await asyncio.to_thread(self.store.events_since, self.position)
                except Gone:  # fell behind compaction: every watch must start over
                    self.position = self.store.current_rv()
                    for sub in list(self.subscriptions):
                        sub.offer(None)
                    break
                for event in events:
                    self.position = event.rv
                    for sub in self.subscriptions:
                        if sub.resource == event.resource and (sub.namespace is None
                                                               or sub.namespace == event.namespace):
                            sub.offer(event)
                if len(events) < 1000:
                    break

    def encoded(self, key: tuple[Any, ...], encode: Callable[[], bytes]) -> bytes:
        """A watch event line shared by every watch that shows it the same way (encoded once, not per watch)."""
        line = self._lines.get(key)
        if line is None:
            if len(self._lines) > 4096:
                self._lines.clear()
            line = self._lines[key] = encode()
        return line


def replay(store: SQLStore, after: int, until: int) -> list[Event]:
    """Events in (after, until] from the store's history (Gone if compacted)."""
    out: list[Event] = []
    while after < until:
        batch = store.events_since(after)
        if not batch:
            break
        for event in batch:
            if event.rv > until:
                return out
            out.append(event)
            after = event.rv
    return out

