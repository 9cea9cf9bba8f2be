"""When a loop's next group of writes starts its commit: at once, or a little later with more writes in it.

Every write waits for the fsync of its group, so N concurrent writers, each waiting for its last write before
sending the next, share the fsyncs: while one group's COMMIT runs, the writers that are not in it send their
next writes, which form the next group. Left to itself this settles into two groups that take turns, each
with about half the writers: N/2 writes per fsync, and the loop takes one group's requests while the other
group's fsync runs. That is the best there is while taking the requests costs the loop more time than an
fsync. When the disk is slow (a shared or throttled disk can take milliseconds per fsync, many times what the
server needs to take a write), the fsyncs bound the rate, and one group of all N writers per fsync does more:
N writes per fsync plus the time the loop takes them, against N per two fsyncs.

So, once a group is committed and the fsyncs take longer than the loop's work for the writes of one whole
group (both measured as the server runs), the next group waits for the writers just answered to send their
next writes: until as many writes wait as there were writers at the end of that commit (the group's plus
those already waiting), or at most as long as a COMMIT takes. A lone writer never waits (its group was all
there was).
"""

from __future__ import annotations

import asyncio
import time

# How much each new COMMIT duration moves the estimate (a moving average: one slow fsync must not set the wait).
COMMIT_TIME_WEIGHT = 0.2
# The longest wait, in seconds, whatever the COMMITs take (a stalled disk must not hold writes back longer).
MAX_WAIT = 0.010


class Gate:
    """The state of one loop's next group: how many writes it waits for, and until when."""

    __slots__ = ("commit_seconds", "loop_seconds", "expected", "until", "timer", "_cpu_mark")

    def __init__(self) -> None:
        self.commit_seconds = 0.0  # the recent COMMITs' duration (moving average)
        self.loop_seconds = 0.0  # the loop thread's CPU time per write, lately (moving average)
        self.expected = 0  # writes the next group waits for (0: none, it starts at once)
        self.until = 0.0  # (time.monotonic) when the next group starts however many writes wait
        self.timer: asyncio.TimerHandle | None = None
        self._cpu_mark = time.thread_time()

    def timed(self, seconds: float) -> None:
        """A COMMIT took ``seconds`` (any thread may tell: one float is written)."""
        self.commit_seconds += COMMIT_TIME_WEIGHT * (seconds - self.commit_seconds)

    def starts(self, writes: int) -> None:
        """(On the loop's thread) a group of ``writes`` begins: the loop's CPU time since the last group began
        went to taking these writes (and the rest of its work in that time)."""
        mark = time.thread_time()
        if writes:
            self.loop_seconds += COMMIT_TIME_WEIGHT * ((mark - self._cpu_mark) / writes - self.loop_seconds)
        self._cpu_mark = mark

    def committed(self, answered: int, waiting: int) -> None:
        """A group is committed and its ``answered`` writers have their answers; ``waiting`` writes came in
        meanwhile. The next group waits for the answered writers' next writes (if any are missing) when an
        fsync takes longer than the loop's work for all of them."""
        writers = answered + waiting
        if self.commit_seconds > writers * self.loop_seconds:
            self.expected = writers
            self.until = time.monotonic() + min(self.commit_seconds, MAX_WAIT)
        else:
            self.expected = 0

    def ready(self, waiting: int) -> bool:
        """Whether a group of ``waiting`` writes starts now."""
        if self.expected and waiting < self.expected and time.monotonic() < self.until:
            return False
        self.expected = 0
        return True

    def wait_left(self) -> float:
        """Seconds until the group starts with the writes it has."""
        return max(0.0, self.until - time.monotonic())
