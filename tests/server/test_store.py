"""The store's group commit: concurrent writers share commits, and a write that fails is rolled back alone."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from dralloc.store import Conflict, SQLiteStore


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
