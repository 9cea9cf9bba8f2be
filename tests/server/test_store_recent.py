"""The change feed answered from the writes a store committed lately (store/recent.py): the same changes as
the event log holds, without reading it back, and the log read again wherever someone else wrote."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dralloc.store import Change, Conflict, NotFound, Outcome, SQLiteStore, SQLStore
from dralloc.store.recent import RecentWrites, Written

ALL = ("pods", "configmaps")


def _obj(name: str, rv: str, **meta: Any) -> dict[str, Any]:
    return {"metadata": {"name": name, "resourceVersion": rv, **meta}}


def _write(store: SQLStore, op: str, resource: str, name: str) -> None:
    """One write of the feed's kinds: a create, an update that changes or keeps the object, a delete that removes
    it or only marks it (a finalizer), an object that names an owner."""
    try:
        if op == "create":
            store.create(resource, "ns", name, lambda _o, rv: _obj(name, rv, ownerReferences=[{"name": "o"}]))
        elif op == "update":
            store.update(resource, "ns", name, lambda old, rv: {**old, "metadata": {**old["metadata"],
                                                                                  "resourceVersion": rv}})
        elif op == "same":
            store.update(resource, "ns", name, lambda old, _rv: old)  # a no-op: no version, no event
        elif op == "mark":
            store.delete(resource, "ns", name, check=lambda old: Outcome(
                {**old, "metadata": {**old["metadata"], "deletionTimestamp": "2026-01-01T00:00:00Z"}}, "MODIFIED"))
        else:
            store.delete(resource, "ns", name)
    except (NotFound, Conflict):
        pass


def _from_the_log(path: str, position: int, with_data: tuple[str, ...]) -> list[Change]:
    """The feed as a store that wrote nothing reads it: every change from the event log."""
    reader = SQLiteStore(path)
    try:
        return reader.changes_since(position, with_data=with_data)
    finally:
        reader.close()


@contextmanager
def _written(ops: list[tuple[str, str, str]], cut: int) -> Iterator[tuple[SQLStore, str, int]]:
    """A store on a file that made these writes, its path, and a position ``cut`` writes after its start."""
    with tempfile.TemporaryDirectory() as tmp:
        path = str(Path(tmp) / "s.db")
        store = SQLiteStore(path)
        start = store.current_rv()
        for op in ops:
            _write(store, *op)
        try:
            yield store, path, min(start + cut, store.current_rv())
        finally:
            store.close()


writes = st.lists(st.tuples(st.sampled_from(["create", "update", "same", "mark", "delete"]), st.sampled_from(ALL),
                            st.sampled_from("ab")), min_size=1, max_size=25)


@settings(max_examples=40, deadline=None)
@given(writes=writes, cut=st.integers(0, 30), with_data=st.sampled_from([(), ("pods",), ALL]))
def test_the_feed_from_memory_is_the_feed_from_the_log(writes: list[tuple[str, str, str]], cut: int,
                                                       with_data: tuple[str, ...]) -> None:
    with _written(writes, cut) as (store, path, position):
        assert store.changes_since(position, with_data=with_data) == _from_the_log(path, position, with_data)


def _event_reads(store: SQLStore) -> list[str]:
    """The statements ``store`` sends that read the event log, from here on."""
    seen: list[str] = []
    read = store._read

    def recording(sql: str, args: Any = ()) -> Any:
        if "FROM events" in sql:
            seen.append(sql)
        return read(sql, args)

    store._read = recording  # type: ignore[method-assign]
    return seen


def test_a_store_that_wrote_every_change_reads_no_event_back(tmp_path: Path) -> None:
    store = SQLiteStore(str(tmp_path / "s.db"))
    start = store.current_rv()
    for name in "abc":
        _write(store, "create", "pods", name)
    reads = _event_reads(store)
    assert [c.name for c in store.changes_since(start, with_data=("pods",))] == ["a", "b", "c"]
    assert reads == []
    store.close()


def test_another_processes_writes_are_read_from_the_log_before_after_and_between_this_stores(tmp_path: Path) -> None:
    path = str(tmp_path / "s.db")
    store, other = SQLiteStore(path), SQLiteStore(path)
    start = store.current_rv()
    _write(other, "create", "pods", "before")
    _write(store, "create", "pods", "mine-1")
    _write(other, "create", "pods", "between")
    _write(store, "create", "pods", "mine-2")
    _write(other, "create", "configmaps", "after")  # nothing of this store's comes after it
    reads = _event_reads(store)
    assert [c.name for c in store.changes_since(start, with_data=ALL)] == ["before", "mine-1", "between", "mine-2",
                                                                          "after"]
    assert [c.name for c in store.changes_since(store.current_rv() - 1)] == ["after"]
    assert reads  # (from the log: memory does not hold them)
    store.close()
    other.close()


def test_after_another_processes_write_this_stores_own_writes_come_from_memory_again(tmp_path: Path) -> None:
    path = str(tmp_path / "s.db")
    store, other = SQLiteStore(path), SQLiteStore(path)
    _write(other, "create", "pods", "theirs")
    _write(store, "create", "pods", "mine-1")
    position = store.current_rv()
    _write(store, "create", "pods", "mine-2")
    reads = _event_reads(store)
    assert [c.name for c in store.changes_since(position)] == ["mine-2"] and reads == []
    store.close()
    other.close()


def _w(name: str) -> Written:
    return ("ADDED", "pods", "ns", name, "{}")


def _names(writes: list[Written] | None) -> list[str] | None:
    return None if writes is None else [w[3] for w in writes]


def test_own_writes_committed_but_not_yet_kept_are_left_for_the_next_read() -> None:
    recent = RecentWrites(100)
    recent.begins(2, 3)
    recent.add([(2, _w("a")), (3, _w("b"))])
    recent.begins(4, 5)  # committed (the database says 5), its writers not yet answered
    assert _names(recent.since(1, 5, 1000)) == ["a", "b"]
    recent.add([(4, _w("c")), (5, _w("d"))])
    assert _names(recent.since(3, 5, 1000)) == ["c", "d"]


def test_a_version_this_store_did_not_write_is_never_taken_for_one_on_its_way() -> None:
    recent = RecentWrites(100)
    recent.begins(2, 2)
    recent.add([(2, _w("a"))])
    recent.begins(4, 4)  # 3 is someone else's
    assert recent.since(1, 4, 1000) is None
    assert recent.since(2, 3, 1000) is None
    recent.add([(4, _w("b"))])
    assert recent.since(1, 4, 1000) is None and _names(recent.since(3, 4, 1000)) == ["b"]


def test_after_a_failed_group_memory_does_not_vouch_for_what_it_is_missing() -> None:
    recent = RecentWrites(100)
    recent.begins(2, 2)
    recent.add([(2, _w("a"))])
    recent.begins(3, 3)
    recent.lost_track()  # its COMMIT failed: 3 may be written by someone else
    assert recent.since(2, 3, 1000) is None


@pytest.mark.parametrize("behind", [5, 6])
def test_a_reader_further_behind_than_memory_reaches_reads_the_log(behind: int) -> None:
    recent = RecentWrites(5)
    for rv in range(2, 12):
        recent.begins(rv, rv)
        recent.add([(rv, _w(str(rv)))])
    answer = recent.since(11 - behind, 11, 1000)
    assert (answer is None) == (behind > 5)
    assert recent.since(11 - 3, 11, 2) is None  # (more than the reader takes at once)


def test_versions_let_go_are_not_taken_for_own_writes_on_their_way() -> None:
    recent = RecentWrites(3)
    recent.begins(2, 4)
    recent.add([(2, _w("a")), (3, _w("b")), (4, _w("c"))])
    recent.begins(5, 7)  # a reader learnt that 4 is committed; meanwhile 5 to 7 come and push 2 to 4 out
    recent.add([(5, _w("d")), (6, _w("e")), (7, _w("f"))])
    assert recent.since(1, 4, 1000) is None


def _events_from_the_log(path: str, resources: tuple[str, ...], position: int) -> list[tuple[Any, ...]]:
    reader = SQLiteStore(path)
    try:
        events, _ = reader.resource_events(resources, position)
        return [(e.rv, e.type, e.resource, e.namespace, e.name, e.text) for e in events]
    finally:
        reader.close()


@settings(max_examples=40, deadline=None)
@given(writes=writes, cut=st.integers(0, 30), resources=st.sampled_from([("pods",), ALL, ("nothing",)]))
def test_the_caches_events_from_memory_are_the_events_from_the_log(writes: list[tuple[str, str, str]], cut: int,
                                                                   resources: tuple[str, ...]) -> None:
    """The events a store's caches take in (resource_events) come from its memory of its own writes when it
    wrote them all: the same events, and up to the same resourceVersion, as the log gives."""
    with _written(writes, cut) as (store, path, position):
        events, at = store.resource_events(resources, position)
        assert at == store.current_rv()
        assert [(e.rv, e.type, e.resource, e.namespace, e.name, e.text) for e in events] == \
            _events_from_the_log(path, resources, position)


def test_a_cache_of_a_store_that_wrote_every_change_reads_no_event_back(tmp_path: Path) -> None:
    store = SQLiteStore(str(tmp_path / "s.db"))
    start = store.current_rv()
    for name in "abc":
        _write(store, "create", "pods", name)
    reads: list[str] = []
    reader = store._reader

    def recording() -> Any:
        conn = reader()

        class Recording:
            def execute(self, sql: str, args: Any = ()) -> Any:
                if "FROM events" in sql:
                    reads.append(sql)
                return conn.execute(sql, args)

        return Recording()

    store._reader = recording  # type: ignore[method-assign]
    recorded = _event_reads(store)
    assert [e.name for e in store.resource_events(("pods",), start)[0]] == ["a", "b", "c"]
    assert reads == [] and recorded == []
    store.close()
