"""Group gathering (store/gather.py): when fsyncs are slow, the next group waits for the writers just answered,
so all concurrent writers share one fsync instead of taking turns in two halves; and a kill -9 in the middle
of gathered groups loses no acknowledged write."""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import signal
import time
from pathlib import Path
from typing import Any

import pytest

from dralloc.store import SQLiteStore
from dralloc.store.gather import MAX_WAIT, Gate


def _obj(name: str, rv: str) -> dict[str, Any]:
    return {"metadata": {"name": name, "resourceVersion": rv}}


def _gate(commit_seconds: float, loop_seconds: float) -> Gate:
    gate = Gate()
    gate.commit_seconds, gate.loop_seconds = commit_seconds, loop_seconds
    return gate


def test_a_slow_fsync_makes_the_next_group_wait_for_the_writers_just_answered() -> None:
    gate = _gate(commit_seconds=0.004, loop_seconds=0.0002)  # 4 ms fsyncs, 0.2 ms of loop work per write
    gate.committed(answered=4, waiting=4)
    assert not gate.ready(4) and not gate.ready(7)
    assert 0 < gate.wait_left() <= 0.004
    assert gate.ready(8)  # every writer is back: the group starts at once
    assert gate.ready(1)  # and the next group does not wait until it is committed


def test_the_wait_ends_after_a_commits_time_with_the_writes_there_are() -> None:
    gate = _gate(commit_seconds=0.002, loop_seconds=0.0001)
    gate.committed(answered=3, waiting=1)
    assert not gate.ready(1)
    time.sleep(0.003)
    assert gate.ready(1)


def test_a_lone_writer_never_waits() -> None:
    gate = _gate(commit_seconds=0.004, loop_seconds=0.0001)
    gate.committed(answered=1, waiting=0)
    assert gate.ready(1)


def test_no_wait_while_the_loop_needs_more_time_for_a_group_than_an_fsync_takes() -> None:
    # Two halves taking turns keep the loop busy during each other's fsync: waiting would only lose time.
    gate = _gate(commit_seconds=0.001, loop_seconds=0.0002)  # 8 writes: 1.6 ms of loop work > 1 ms fsync
    gate.committed(answered=4, waiting=4)
    assert gate.ready(4)


def test_a_stalled_disk_holds_writes_back_no_longer_than_the_cap() -> None:
    gate = _gate(commit_seconds=5.0, loop_seconds=0.0001)
    gate.committed(answered=4, waiting=0)
    assert gate.wait_left() <= MAX_WAIT


def test_the_estimates_follow_commits_and_the_loops_work_as_moving_averages() -> None:
    gate = Gate()
    for _ in range(40):
        gate.timed(0.004)
    assert gate.commit_seconds == pytest.approx(0.004, rel=0.01)
    gate.timed(0.1)  # one slow fsync moves the estimate by a fifth of the difference only
    assert gate.commit_seconds < 0.025
    gate.starts(0)
    deadline = time.thread_time() + 0.002
    while time.thread_time() < deadline:  # 2 ms of this thread's CPU for a group of 4 writes
        pass
    gate.starts(4)
    assert gate.loop_seconds > 0.0001


class _SlowCommits(SQLiteStore):
    """A store whose COMMITs take ``seconds`` (an fsync on a slow or shared disk; the interpreter lock is
    free meanwhile, as during a real one)."""

    seconds = 0.02

    def _end_group(self, batch: Any, written: int) -> int:
        if written > 0:
            time.sleep(self.seconds)
        return super()._end_group(batch, written)


async def _staggered_writers(store: SQLiteStore, writers: int, writes: int, acknowledged: Any = None) -> None:
    """``writers`` clients, each sending its next write 1 ms after the answer to its last (a network round
    trip), the first writes 2 ms apart, so that without gathering they fall into groups that take turns."""

    async def writer(w: int) -> None:
        await asyncio.sleep(0.002 * w)
        for i in range(writes):
            name = f"c-{w}-{i}"
            await store.create_async("deviceclasses", "", name, lambda _o, rv, n=name: _obj(n, rv))
            if acknowledged is not None:
                acknowledged.send(name)
            await asyncio.sleep(0.001)

    await asyncio.gather(*(writer(w) for w in range(writers)))


def _writes_per_commit(path: Path, gather: bool) -> float:
    store = _SlowCommits(str(path))
    store.gather = gather
    asyncio.run(_staggered_writers(store, writers=8, writes=12))
    assert store.writes == 96
    per_commit = store.writes / store.commits
    store.close()
    return per_commit


@pytest.mark.slow
def test_with_slow_fsyncs_all_writers_share_each_fsync(tmp_path: Path) -> None:
    gathered = _writes_per_commit(tmp_path / "a.db", gather=True)
    taking_turns = _writes_per_commit(tmp_path / "b.db", gather=False)
    assert gathered >= 6, gathered  # nearly all 8 writers in each group
    assert gathered > taking_turns, (gathered, taking_turns)  # without: about half of them (4)


def _write_until_killed(path: str, acknowledged: Any) -> None:
    store = _SlowCommits(path)
    store.seconds = 0.005
    asyncio.run(_staggered_writers(store, writers=8, writes=10_000, acknowledged=acknowledged))


@pytest.mark.slow
def test_kill_9_during_gathered_groups_loses_no_acknowledged_write(tmp_path: Path) -> None:
    path = str(tmp_path / "crash.db")
    receiving, sending = multiprocessing.get_context("fork").Pipe(duplex=False)
    child = multiprocessing.get_context("fork").Process(target=_write_until_killed, args=(path, sending))
    child.start()
    sending.close()
    acknowledged: list[str] = []
    deadline = time.monotonic() + 1.5
    while time.monotonic() < deadline:
        if receiving.poll(0.05):
            acknowledged.append(receiving.recv())
    assert child.pid is not None
    os.kill(child.pid, signal.SIGKILL)
    child.join(10)
    while receiving.poll():  # acknowledged before the kill, read after it
        try:
            acknowledged.append(receiving.recv())
        except EOFError:
            break
    assert len(acknowledged) > 50
    store = SQLiteStore(path)
    stored = {o["metadata"]["name"] for o in store.list("deviceclasses")[0]}
    assert store.writes == 0
    store.close()
    assert set(acknowledged) <= stored
