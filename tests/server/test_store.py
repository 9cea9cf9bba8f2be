"""The store's group commit: concurrent writers share commits, and a write that fails is rolled back alone."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

import pytest

from dralloc.store import Conflict, NotFound, SQLiteStore


def _obj(name: str, rv: str) -> dict[str, Any]:
    return {"metadata": {"name": name, "resourceVersion": rv}}


def test_concurrent_writers_share_commits_and_every_acknowledged_write_is_stored(tmp_path: Path) -> None:
    store = SQLiteStore(str(tmp_path / "s.db"))
    errors: list[BaseException] = []

    def writer(w: int) -> None:
        for i in range(40):
            try:
                store.create("deviceclasses", "", f"c-{w}-{i}", lambda _old, rv, n=f"c-{w}-{i}": _obj(n, rv))
                store.create("deviceclasses", "", f"c-{w}-{i}", lambda _old, rv: _obj("dup", rv))
            except Conflict as exc:  # the second create of each name
                errors.append(exc)

    threads = [threading.Thread(target=writer, args=(w,)) for w in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    objs, rv = store.list("deviceclasses")
    assert len(objs) == 320 and len(errors) == 320
    assert rv == 1 + 320 and [e.rv for e in store.events_since(1, limit=1000)] == list(range(2, 322))
    assert store.writes == 320 and store.commits < 640  # failed writes rolled back, groups shared commits
    store.close()


@pytest.mark.slow
def test_readers_of_an_in_memory_store_never_meet_a_transaction_in_flight() -> None:
    store = SQLiteStore(":memory:")  # one connection for the writes and every reader
    errors: list[BaseException] = []
    writing = threading.Event()

    def writer(w: int) -> None:
        for i in range(300):
            store.create("deviceclasses", "", f"c-{w}-{i}", lambda _old, rv, n=f"c-{w}-{i}": _obj(n, rv))
        writing.set()

    def reader() -> None:
        while not writing.is_set():
            try:
                store.list("deviceclasses")
                store.current_rv()
            except BaseException as exc:  # noqa: BLE001 - collected for the assertion
                errors.append(exc)
                return

    threads = [threading.Thread(target=writer, args=(w,)) for w in range(4)] + \
        [threading.Thread(target=reader) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == [] and store.writes == 1200
    store.close()


def test_a_write_whose_build_fails_leaves_nothing_behind(tmp_path: Path) -> None:
    store = SQLiteStore(str(tmp_path / "s.db"))
    store.create("deviceclasses", "", "a", lambda _old, rv: _obj("a", rv))

    def broken(_old: Any, _rv: str) -> dict[str, Any]:
        raise ValueError("refused")

    with pytest.raises(ValueError):
        store.update("deviceclasses", "", "a", broken)
    assert store.current_rv() == 2 and len(store.events_since(0)) == 1
    reopened = SQLiteStore(str(tmp_path / "s.db"))  # what is on disk
    assert reopened.get("deviceclasses", "", "a")["metadata"]["resourceVersion"] == "2"
    store.close()
    reopened.close()


# --- commits on the event loop (SQLite) --------------------------------------------------------------------


def test_two_creates_of_one_name_in_one_group_the_first_is_stored_the_second_conflicts(tmp_path: Path) -> None:
    store = SQLiteStore(str(tmp_path / "s.db"))

    async def creates() -> list[Any]:
        return await asyncio.gather(*(store.create_async("deviceclasses", "", name, lambda _o, rv, n=n: _obj(n, rv))
                                      for n, name in [("first", "c"), ("second", "c"), ("other", "d")]),
                                    return_exceptions=True)

    first, second, other = asyncio.run(creates())
    assert store.commits == 1  # one group
    assert isinstance(second, Conflict)
    assert first["metadata"] == {"name": "first", "resourceVersion": "2"}
    assert other["metadata"] == {"name": "other", "resourceVersion": "3"}  # no version lost to the refused one
    assert store.get("deviceclasses", "", "c")["metadata"]["name"] == "first"
    assert [(e.rv, e.name) for e in store.events_since(0)] == [(2, "c"), (3, "d")]
    assert store.create("deviceclasses", "", "e", lambda _o, rv: _obj("e", rv))["metadata"]["resourceVersion"] == "4"
    store.close()


def test_a_group_larger_than_one_events_insert_logs_every_event_in_order(tmp_path: Path) -> None:
    store = SQLiteStore(str(tmp_path / "s.db"))
    names = [f"c-{i}" for i in range(store.max_group + 10)]

    async def creates() -> None:
        await asyncio.gather(*(store.create_async("deviceclasses", "", n, lambda _o, rv, n=n: _obj(n, rv))
                               for n in names))

    asyncio.run(creates())
    assert store.commits == 2  # max_group writes, then the rest
    events = store.events_since(0, limit=10_000)
    assert [e.name for e in events] == names and [e.rv for e in events] == list(range(2, len(names) + 2))
    assert all(e.object["metadata"]["resourceVersion"] == str(e.rv) for e in events)
    store.close()


def _recording(name: str, threads: list[str]) -> Any:
    def build(_old: Any, rv: str) -> dict[str, Any]:
        threads.append(threading.current_thread().name)
        return _obj(name, rv)

    return build


def test_asyncio_writers_of_one_loop_turn_share_one_commit_made_on_the_loop(tmp_path: Path) -> None:
    store = SQLiteStore(str(tmp_path / "s.db"))
    threads: list[str] = []

    async def writes() -> None:
        await asyncio.gather(*(store.create_async("deviceclasses", "", f"c-{i}", _recording(f"c-{i}", threads))
                               for i in range(16)))

    asyncio.run(writes())
    assert store.writes == 16 and store.commits == 1
    assert set(threads) == {threading.current_thread().name}  # built and committed on the loop's thread
    store.close()


class _SlowDisk(SQLiteStore):
    """A store whose first COMMIT waits until the test lets it finish (an fsync that takes its time)."""

    def __init__(self, path: str) -> None:
        super().__init__(path)
        self.disk = threading.Event()
        self.slow = True

    def _end_group(self, batch: Any, written: int) -> int:
        if self.slow:
            self.slow = False
            self.disk.wait(5)
        return super()._end_group(batch, written)


def test_the_loop_goes_on_during_an_fsync_and_the_writes_made_meanwhile_form_the_next_group(tmp_path: Path) -> None:
    store = _SlowDisk(str(tmp_path / "s.db"))

    async def scenario() -> None:
        first = asyncio.ensure_future(store.create_async("deviceclasses", "", "a", lambda _o, rv: _obj("a", rv)))
        for _ in range(200):
            if store._in_flight:  # the group of "a" is being made durable
                break
            await asyncio.sleep(0.001)
        later = [asyncio.ensure_future(store.create_async("deviceclasses", "", n, lambda _o, rv, n=n: _obj(n, rv)))
                 for n in "bc"]
        for _ in range(20):
            await asyncio.sleep(0)  # the loop is free: these turns run while the COMMIT waits for the disk
        assert not first.done() and not any(w.done() for w in later)
        with pytest.raises(NotFound):  # not visible to readers before it is durable
            store.get("deviceclasses", "", "a")
        store.disk.set()
        created = [await first, *[await w for w in later]]
        assert [c["metadata"]["resourceVersion"] for c in created] == ["2", "3", "4"]

    asyncio.run(scenario())
    assert store.writes == 3 and store.commits == 2  # "b" and "c" shared the commit after "a"'s
    store.close()


class _Watched(SQLiteStore):
    """A store that notes when a COMMIT begins, when a group's statements run, and what the loop's thread
    saw when it handed a group over."""

    def __init__(self, path: str) -> None:
        super().__init__(path)
        self.begun = threading.Event()
        self.seen_after_hand_over: list[bool] = []
        self.order: list[str] = []

    def _end_group(self, batch: Any, written: int) -> int:
        self.begun.set()
        return super()._end_group(batch, written)

    def _write_group(self, batch: Any) -> int:
        self.order.append("statements of " + ",".join(job.name for job in batch))
        return super()._write_group(batch)

    def _commit_turn(self, loop: asyncio.AbstractEventLoop) -> None:
        self.begun.clear()
        super()._commit_turn(loop)
        self.seen_after_hand_over.append(self.begun.is_set())


def test_the_loop_goes_on_only_once_the_syncer_has_begun_the_commit(tmp_path: Path) -> None:
    """The syncer thread needs the interpreter lock to start the COMMIT; a busy loop would keep it until it
    next sleeps (and the fsync would start that much later), so the loop's thread lets it go first."""
    store = _Watched(str(tmp_path / "s.db"))

    async def writes() -> None:
        for i in range(5):
            await store.create_async("deviceclasses", "", f"c-{i}", lambda _o, rv, i=i: _obj(f"c-{i}", rv))

    asyncio.run(writes())
    assert store.seen_after_hand_over == [True] * 5
    store.close()


def test_a_groups_answers_leave_before_the_next_groups_statements_run(tmp_path: Path) -> None:
    """Once a COMMIT is over its writers answer (their responses are written in the next turn, as the
    server's transport sends them) before the writes that waited form the next group."""
    store = _Watched(str(tmp_path / "s.db"))

    async def write(name: str) -> None:
        await store.create_async("deviceclasses", "", name, lambda _o, rv: _obj(name, rv))
        asyncio.get_running_loop().call_soon(store.order.append, f"{name} answered")

    async def scenario() -> None:
        first = asyncio.ensure_future(write("a"))
        for _ in range(200):
            if store._in_flight:  # the group of "a" is being committed
                break
            await asyncio.sleep(0)
        await asyncio.gather(first, write("b"))

    asyncio.run(scenario())
    assert store.order[:3] == ["statements of a", "a answered", "statements of b"], store.order
    store.close()


def test_another_threads_write_commits_on_the_attached_loop(tmp_path: Path) -> None:
    store = SQLiteStore(str(tmp_path / "s.db"))
    loop = asyncio.new_event_loop()
    runner = threading.Thread(target=loop.run_forever, name="the-loop")
    runner.start()
    try:
        store.attach_loop(loop)
        threads: list[str] = []
        created = store.create("deviceclasses", "", "c", _recording("c", threads))
        assert created["metadata"]["name"] == "c" and threads == ["the-loop"]
        store.attach_loop(None)
        store.create("deviceclasses", "", "d", _recording("d", threads))
        assert threads[1] == "dralloc-store-commit"  # detached: the committer thread again
    finally:
        loop.call_soon_threadsafe(loop.stop)
        runner.join()
        loop.close()
        store.close()


def test_a_synchronous_write_on_the_attached_loop_itself_commits_at_once(tmp_path: Path) -> None:
    store = SQLiteStore(str(tmp_path / "s.db"))

    async def on_the_loop() -> dict[str, Any]:
        store.attach_loop(asyncio.get_running_loop())
        return store.create("deviceclasses", "", "c", lambda _old, rv: _obj("c", rv))  # must not wait for itself

    assert asyncio.run(on_the_loop())["metadata"]["name"] == "c"
    store.close()


def test_a_write_handed_to_a_loop_that_is_not_running_is_committed_once_by_the_committer_thread(
        tmp_path: Path) -> None:
    store = SQLiteStore(str(tmp_path / "s.db"))
    store.create("deviceclasses", "", "c", lambda _old, rv: _obj("c", rv))
    loop = asyncio.new_event_loop()  # never running: as a server's loop after it stopped
    store.attach_loop(loop)
    threads: list[str] = []
    store.update("deviceclasses", "", "c", _recording("c", threads))
    loop.run_until_complete(asyncio.sleep(0.01))  # the loop now runs the hand-over it was sent: nothing to do
    loop.close()
    assert threads == ["dralloc-store-commit"]
    assert [e.type for e in store.events_since(0)] == ["ADDED", "MODIFIED"]  # the update happened once
    store.close()


@pytest.mark.parametrize("with_data", [(), ("pods",)])
def test_the_change_feed_tells_which_objects_name_owners_or_a_deletion_whether_or_not_their_text_is_read(
        tmp_path: Path, with_data: tuple[str, ...]) -> None:
    store = SQLiteStore(str(tmp_path / "s.db"))
    owner = {"ownerReferences": [{"apiVersion": "v1", "kind": "Node", "name": "n", "uid": "u"}]}
    for resource in ("pods", "configmaps"):  # one whose text the reader asks for (or not), one whose it never does
        store.create(resource, "ns", "plain", lambda _old, rv: _obj("plain", rv))
        store.create(resource, "ns", "owned", lambda _old, rv: {"metadata": {**_obj("owned", rv)["metadata"], **owner}})
        store.update(resource, "ns", "plain", lambda old, rv: {"metadata": {**old["metadata"], "resourceVersion": rv,
                                                                            "deletionTimestamp": "2026-01-01T00:00:00Z"}})
    changes = store.changes_since(1, with_data=with_data)
    assert [(c.resource, c.name, c.owned, c.deleting, c.data is not None) for c in changes] == [
        (resource, name, owned, deleting, resource in with_data)
        for resource in ("pods", "configmaps")
        for name, owned, deleting in (("plain", False, False), ("owned", True, False), ("plain", False, True))]
    store.close()
