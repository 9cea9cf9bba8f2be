"""The SQLite store: durable (WAL, synchronous=FULL), one writer at a time, watch history in an event log.

Every write is one transaction that bumps the global resourceVersion, writes the object row and appends an
event row, so an acknowledged write survives ``kill -9`` and watchers see every change in order. Old events
are compacted (the newest ``history`` are kept); a watch from before the oldest kept event gets 410 Gone,
as from etcd.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from dataclasses import dataclass
from typing import Any

import msgspec

_encode_bytes = msgspec.json.Encoder().encode


def _encode(obj: Any) -> str:
    return _encode_bytes(obj).decode("utf-8")


SCHEMA = """
CREATE TABLE IF NOT EXISTS objects (
    resource TEXT NOT NULL, namespace TEXT NOT NULL, name TEXT NOT NULL,
    rv INTEGER NOT NULL, data TEXT NOT NULL,
    PRIMARY KEY (resource, namespace, name)
);
CREATE TABLE IF NOT EXISTS events (
    rv INTEGER PRIMARY KEY, type TEXT NOT NULL,
    resource TEXT NOT NULL, namespace TEXT NOT NULL, name TEXT NOT NULL, data TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS counters (name TEXT PRIMARY KEY, value INTEGER NOT NULL);
INSERT OR IGNORE INTO counters VALUES ('rv', 1), ('compacted', 0);
"""


class StoreError(Exception):
    pass


class NotFound(StoreError):
    pass


class Conflict(StoreError):
    """The object exists (create) or changed since the given resourceVersion (update/delete)."""


class Gone(StoreError):
    """The requested resourceVersion is older than the kept history."""


@dataclass(frozen=True, slots=True)
class Event:
    rv: int
    type: str  # ADDED, MODIFIED, DELETED
    resource: str
    namespace: str
    name: str
    object: dict[str, Any]


class SQLiteStore:
    def __init__(self, path: str = ":memory:", *, history: int = 100_000) -> None:
        self.path = path
        self.history = history
        self._lock = threading.RLock()
        self._db = sqlite3.connect(path, check_same_thread=False, isolation_level=None, timeout=30)
        if path != ":memory:":
            self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=FULL")
        self._db.executescript(SCHEMA)
        self._listeners: list[Any] = []
        self.writes = 0

    def close(self) -> None:
        with self._lock:
            self._db.close()

    # --- reads --------------------------------------------------------------------------------------

    def current_rv(self) -> int:
        with self._lock:
            return self._counter("rv")

    def _counter(self, name: str) -> int:
        return self._db.execute("SELECT value FROM counters WHERE name = ?", (name,)).fetchone()[0]

    def get(self, resource: str, namespace: str, name: str) -> dict[str, Any]:
        with self._lock:
            row = self._db.execute("SELECT data FROM objects WHERE resource=? AND namespace=? AND name=?",
                                   (resource, namespace, name)).fetchone()
        if row is None:
            raise NotFound(name)
        return json.loads(row[0])

    def list(self, resource: str, namespace: str | None = None, *, after: tuple[str, str] | None = None,
             limit: int = 0) -> tuple[list[dict[str, Any]], int]:
        """Objects in (namespace, name) order, starting after the key ``after``; and the list's resourceVersion."""
        rows, rv = self.list_raw(resource, namespace, after=after, limit=limit)
        return [json.loads(r) for r in rows], rv

    def list_raw(self, resource: str, namespace: str | None = None, *, after: tuple[str, str] | None = None,
                 limit: int = 0) -> tuple[list[str], int]:
        """Like :meth:`list`, but each object as its stored JSON text (for responses that need no parsing)."""
        sql = "SELECT data FROM objects WHERE resource=?"
        args: list[Any] = [resource]
        if namespace is not None:
            sql += " AND namespace=?"
            args.append(namespace)
        if after is not None:
            sql += " AND (namespace, name) > (?, ?)"
            args.extend(after)
        sql += " ORDER BY namespace, name"
        if limit > 0:
            sql += f" LIMIT {int(limit)}"
        with self._lock:
            self._db.execute("BEGIN")
            try:
                rows = self._db.execute(sql, args).fetchall()
                rv = self._counter("rv")
            finally:
                self._db.execute("COMMIT")
        return [r[0] for r in rows], rv

    def events_since(self, rv: int, limit: int = 1000) -> list[Event]:
        """Events with resourceVersion > rv. Raises Gone if history before rv was compacted."""
        with self._lock:
            compacted = self._counter("compacted")
            if rv < compacted:
                raise Gone(f"too old resource version: {rv} ({compacted + 1})")
            rows = self._db.execute("SELECT rv, type, resource, namespace, name, data FROM events WHERE rv > ? "
                                    "ORDER BY rv LIMIT ?", (rv, limit)).fetchall()
        return [Event(r[0], r[1], r[2], r[3], r[4], json.loads(r[5])) for r in rows]

    # --- writes -------------------------------------------------------------------------------------

    def _write(self, kind: str, resource: str, namespace: str, name: str, build: Any,
               expect_rv: str | None, must_exist: bool | None) -> dict[str, Any]:
        with self._lock:
            db = self._db
            db.execute("BEGIN IMMEDIATE")
            try:
                row = db.execute("SELECT rv, data FROM objects WHERE resource=? AND namespace=? AND name=?",
                                 (resource, namespace, name)).fetchone()
                if must_exist is True and row is None:
                    raise NotFound(name)
                if must_exist is False and row is not None:
                    raise Conflict("exists")
                if expect_rv and row is not None and str(row[0]) != str(expect_rv):
                    raise Conflict("modified")
                rv = self._counter("rv") + 1
                old = json.loads(row[1]) if row is not None else None
                obj = build(old, str(rv))
                if obj is old and kind == "MODIFIED":  # a no-op update: nothing written, no new version
                    db.execute("COMMIT")
                    return obj
                data = _encode(obj)
                if kind == "DELETED":
                    db.execute("DELETE FROM objects WHERE resource=? AND namespace=? AND name=?",
                               (resource, namespace, name))
                else:
                    db.execute("INSERT OR REPLACE INTO objects VALUES (?, ?, ?, ?, ?)",
                               (resource, namespace, name, rv, data))
                db.execute("INSERT INTO events VALUES (?, ?, ?, ?, ?, ?)", (rv, kind, resource, namespace, name, data))
                db.execute("UPDATE counters SET value=? WHERE name='rv'", (rv,))
                if rv % 1000 == 0:
                    self._compact(rv)
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise
            self.writes += 1
        for listener in list(self._listeners):
            listener()
        return obj

    def _compact(self, rv: int) -> None:
        floor = rv - self.history
        if floor > self._counter("compacted"):
            self._db.execute("DELETE FROM events WHERE rv <= ?", (floor,))
            self._db.execute("UPDATE counters SET value=? WHERE name='compacted'", (floor,))

    def create(self, resource: str, namespace: str, name: str, build: Any) -> dict[str, Any]:
        """Store ``build(None, rv)``; Conflict if the object exists."""
        return self._write("ADDED", resource, namespace, name, build, None, False)

    def update(self, resource: str, namespace: str, name: str, build: Any, expect_rv: str | None = None) -> dict[str, Any]:
        """Replace the object with ``build(old, rv)``; NotFound, or Conflict on a stale ``expect_rv``.
        When ``build`` returns ``old`` itself nothing is written (kube-apiserver skips no-op updates)."""
        return self._write("MODIFIED", resource, namespace, name, build, expect_rv, True)

    def delete(self, resource: str, namespace: str, name: str, expect_rv: str | None = None,
               check: Any = None) -> dict[str, Any]:
        """Remove the object; ``check(old)`` may raise to refuse (preconditions)."""
        def build(old: dict[str, Any], rv: str) -> dict[str, Any]:
            if check is not None:
                check(old)
            meta = dict(old.get("metadata") or {})
            meta["resourceVersion"] = rv
            return {**old, "metadata": meta}

        return self._write("DELETED", resource, namespace, name, build, expect_rv, True)

    def subscribe(self, listener: Any) -> None:
        self._listeners.append(listener)

    def unsubscribe(self, listener: Any) -> None:
        if listener in self._listeners:
            self._listeners.remove(listener)
