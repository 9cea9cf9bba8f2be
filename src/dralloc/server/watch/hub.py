"""Watch fan-out off the write path, as kube-apiserver's watch cache does it.

A write only wakes the hub (one call, whatever the number of watches). The hub reads the new events from the
store once, in a worker thread (not at all while no watch is open), and hands each to the queues of the
watches on its resource; each watch filters (namespace, selectors) and encodes on its own. An event's object
is decoded only for a watch that needs it (selectors, another version); the others write its stored text. A
watch that starts from an older resourceVersion first replays the store's history up to the hub's position,
then follows the hub. A watch whose queue overflows (a client that does not read) is ended, as
kube-apiserver ends slow watchers; its client re-watches. A watch that shows every event as it is (no
selector, no table) may instead take the events as the hub hands them out (``follow``) and write them to its
connection at once: no queue, no task wake-up. The hub hands out what it read in one round, every watch's
share at once (a watch gets all its events of the round in one write), and lets the loop answer requests
between every few watches, so a thousand watches do not hold up the writes that feed them.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Callable
from typing import Any

from dralloc.store import Event, Gone, SQLStore

QUEUE_LIMIT = 10_000
POLL_SECONDS = 1.0  # other processes may share the database (PostgreSQL): look for their writes this often
# The loop answers requests between slices of a fan-out: a write's answer takes several turns of the loop
# (read, handle, commit, wake), each of which waits for the slice in progress.
FAN_OUT_SLICE_SECONDS = 0.0003
FAN_OUT_CLOCK_EVERY = 8  # watches served between two looks at the clock


Consumer = Callable[[list[Any]], None]


class Subscription:
    """One watch's inbox: events from the hub and its timers' ticks, taken in batches."""

    def __init__(self, resource: str, namespace: str | None, position: int) -> None:
        self.resource = resource
        self.namespace = namespace
        self.items: deque[Any] = deque()
        self.overflowed = False
        self.delivered = position  # every event up to this resourceVersion was handed to this watch
        self._waiter: asyncio.Future[None] | None = None
        self._consumer: Consumer | None = None

    def follow(self, consumer: Consumer) -> None:
        """From now on hand events and ticks to ``consumer`` (a list at a time) as they come, instead of
        queueing them (nothing may be queued). ``consumer`` must not unsubscribe (the hub may be iterating)."""
        assert not self.items
        self._consumer = consumer

    def offer_many(self, events: list[Event], upto: int) -> None:
        """This watch's events of one round of the hub, which read everything up to ``upto``."""
        if events:
            if self._consumer is not None:
                self._consumer(events)
            else:
                for event in events:
                    self.offer(event)
        self.delivered = upto

    def _wake(self) -> None:
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)

    def offer(self, event: Event | None) -> None:
        """An event (None: the watch must end). A watch more than QUEUE_LIMIT events behind is ended."""
        if self._consumer is not None:
            self._consumer([event])
            return
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
        if self._consumer is not None:
            self._consumer([marker])
        elif not self.overflowed:
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
        sub = Subscription(resource, namespace, self.position)
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
            if not self.subscriptions:  # nobody to hand events to (a watch opened later replays the store's log)
                self.position = self.store.current_rv()
                continue
            while True:
                try:
                    events = await asyncio.to_thread(self.store.events_since, self.position)
                except Gone:  # fell behind compaction: every watch must start over
                    self.position = self.store.current_rv()
                    for sub in list(self.subscriptions):
                        sub.offer(None)
                    break
                if events:
                    await self._fan_out(events)
                if len(events) < 1000:
                    break

    async def _fan_out(self, events: list[Event]) -> None:
        """Hand one round's events to the watches that were open when it was read (a watch opened meanwhile
        starts from the new position and replays these from the store's history)."""
        upto = self.position = events[-1].rv
        by_resource: dict[str, list[Event]] = {}
        for event in events:
            by_resource.setdefault(event.resource, []).append(event)
        clock = time.perf_counter
        slice_ends = clock() + FAN_OUT_SLICE_SECONDS
        for i, sub in enumerate(list(self.subscriptions)):
            mine = by_resource.get(sub.resource) or []
            if mine and sub.namespace is not None:
                mine = [e for e in mine if e.namespace == sub.namespace]
            sub.offer_many(mine, upto)
            if i % FAN_OUT_CLOCK_EVERY == FAN_OUT_CLOCK_EVERY - 1 and clock() >= slice_ends:
                time.sleep(0)  # threads waiting for the interpreter (the store's syncer) go first
                await asyncio.sleep(0)  # then requests waiting on the loop
                slice_ends = clock() + FAN_OUT_SLICE_SECONDS

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

