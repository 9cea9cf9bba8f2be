"""SQL stores: SQLite (default; durable with WAL and synchronous=FULL) and the shared base PostgreSQL uses.

Every write bumps the global resourceVersion, writes the object row and appends an event row, and is
acknowledged only once committed, so an acknowledged write survives ``kill -9`` and watchers see every change
in order. Writes are committed in groups: one committer thread takes every write waiting at that moment,
checks and builds each before writing it (a refused write leaves nothing behind) and commits them
together, so concurrent writers share one fsync. Writers on an asyncio loop (the API server) on SQLite commit on
the loop itself: the writes of one turn of the loop form a group, committed at the end of the turn with no
thread in between (every hand-over between two busy threads costs both of them a GIL switch, which on SQLite
cost more than the commit; PostgreSQL, whose statements wait on the network, keeps the committer thread for
them too). On a SQLite file only the COMMIT itself (the fsync) leaves the loop, for a syncer thread: the
loop answers requests meanwhile, and the writes they make form the next group, begun once that COMMIT is
done (one transaction at a time; the larger groups share an fsync each). Once a server attaches its loop (:meth:`SQLStore.attach_loop`), other threads' writes (the
controllers') join the loop's groups too, so there is one stream of commits, not two taking turns. SQLite
readers use their own connections (WAL lets them read while the committer writes). Old events are compacted
(the newest ``history`` are kept); a watch from before the oldest kept event gets 410 Gone, as from etcd. The SQL is the same for both databases; a dialect only says how to open a connection, start
a write transaction and wake watchers.
"""

from __future__ import annotations

import asyncio
import builtins
import logging
import queue
import sqlite3
import threading
import time
from dataclasses import dataclass
from functools import partial
from typing import Any, NamedTuple

import msgspec

from dralloc.store.gather import Gate
from dralloc.store.recent import RecentWrites, Written

log = logging.getLogger(__name__)
_encode_bytes = msgspec.json.Encoder().encode
_decode = msgspec.json.Decoder(dict[str, Any]).decode  # stored text: always what _encode wrote


def _encode(obj: Any) -> str:
    """An object's row text."""
    return _encode_bytes(obj).decode("utf-8")


# What the garbage collector asks of every changed object: does its text name owners, a deletion?
_OWNED, _DELETING = '"ownerReferences"', '"deletionTimestamp"'
# The newest writes kept in memory for readers of the change feed in this process (store/recent.py): many
# times what the controllers take in one pass, a few megabytes of text.
RECENT_WRITES = 4096


SCHEMA = [
    """CREATE TABLE IF NOT EXISTS objects (
        resource TEXT NOT NULL, namespace TEXT NOT NULL, name TEXT NOT NULL,
        rv BIGINT NOT NULL, data TEXT NOT NULL,
        PRIMARY KEY (resource, namespace, name))""",
    """CREATE TABLE IF NOT EXISTS events (
        rv BIGINT PRIMARY KEY, type TEXT NOT NULL,
        resource TEXT NOT NULL, namespace TEXT NOT NULL, name TEXT NOT NULL, data TEXT NOT NULL, prev TEXT)""",
    "CREATE TABLE IF NOT EXISTS counters (name TEXT PRIMARY KEY, value BIGINT NOT NULL)",
    "INSERT INTO counters VALUES ('rv', 1) ON CONFLICT (name) DO NOTHING",
    "INSERT INTO counters VALUES ('compacted', 0) ON CONFLICT (name) DO NOTHING",
]


class StoreError(Exception):
    pass


class NotFound(StoreError):
    pass


class Conflict(StoreError):
    """The object exists (create) or changed since the given resourceVersion (update/delete)."""


class Gone(StoreError):
    """The requested resourceVersion is older than the kept history."""


@dataclass(frozen=True, slots=True)
class Outcome:
    """What a ``build`` callback may return instead of the new object to choose the kind of write: an update
    that removes the object (the last finalizer of a deleted object went) or a delete that only marks it
    (finalizers remain)."""

    object: dict[str, Any]
    type: str  # "MODIFIED" or "DELETED"


class Event:
    """A change of the log. Its object is decoded when first asked for: ``text`` is the object as stored,
    which a watch that shows it unchanged writes as it is (and a reader that skips it never decodes)."""

    __slots__ = ("rv", "type", "resource", "namespace", "name", "text", "prev_json", "_object")

    def __init__(self, rv: int, type: str, resource: str, namespace: str, name: str, text: str,
                 prev_json: str | None = None) -> None:
        self.rv = rv
        self.type = type  # ADDED, MODIFIED, DELETED
        self.resource = resource
        self.namespace = namespace
        self.name = name
        self.text = text
        self.prev_json = prev_json  # MODIFIED: the object before the change (for watch selectors)
        self._object: dict[str, Any] | None = None

    @property
    def object(self) -> dict[str, Any]:
        """The object (decoded once: every reader of this event shares it, and must not change it)."""
        if self._object is None:
            self._object = _decode(self.text)
        return self._object

    @property
    def prev(self) -> dict[str, Any] | None:
        return _decode(self.prev_json) if self.prev_json is not None else None

    def __repr__(self) -> str:
        return f"Event({self.rv}, {self.type}, {self.resource}, {self.namespace}/{self.name})"


class Change(NamedTuple):
    """An event, with its object's stored JSON text only where asked for (see :meth:`SQLStore.changes_since`).
    (A named tuple: the controllers read one per write, and a frozen dataclass's ``__init__`` sets each field
    through ``object.__setattr__``, several times a tuple's cost.)"""

    rv: int
    type: str
    resource: str
    namespace: str
    name: str
    owned: bool  # the object has ownerReferences
    deleting: bool  # the object has a deletionTimestamp
    data: str | None = None  # the object as stored, for the resources named in ``changes_since(with_data=...)``


# A Change from a tuple of its fields, made in C (a named tuple's own constructor is a Python function).
_change = partial(tuple.__new__, Change)


@dataclass(eq=False)
class _Write:
    """One write waiting for the committer."""

    kind: str
    resource: str
    namespace: str
    name: str
    build: Any
    expect_rv: str | None
    must_exist: bool | None
    done: threading.Event | None = None  # a waiting thread's wake-up (synchronous writers)
    future: asyncio.Future[dict[str, Any]] | None = None  # an asyncio writer's result (on its loop)
    result: Any = None
    error: BaseException | None = None
    taken: bool = False  # a committer has it (set under the store's take lock: a write is committed once)
    rv: int = 0  # the resourceVersion it was written at (0: nothing written)
    encoded: bytes = b""  # the object's JSON as written (its row's text)
    event: str = ""  # the type of the event it made (a delete that only marks the object: MODIFIED)
    text: str = ""  # ``encoded`` as the row's text

    def settle(self) -> None:
        """Hand the result or error to the asyncio writer (on its loop's thread); it may have gone."""
        future = self.future
        if future is None or future.done():
            return
        if self.error is not None:
            future.set_exception(self.error)
        else:
            future.set_result(self.result)


class _Group:
    """A group of writes a loop wrote, handed to the syncer thread for its COMMIT."""

    __slots__ = ("loop", "batch", "written", "begun")

    def __init__(self, loop: asyncio.AbstractEventLoop, batch: builtins.list[_Write], written: int) -> None:
        self.loop = loop
        self.batch = batch
        self.written = written
        self.begun = threading.Lock()  # held until the syncer begins the COMMIT (the loop's thread waits)
        self.begun.acquire()


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


class SQLStore:
    """Objects, counters and the event log in three tables; subclasses supply the connection."""

    placeholder = "?"
    begin_write = "BEGIN"
    lock_counter = ""  # appended to the counter read that starts every write (PostgreSQL: FOR UPDATE)
    text_contains = "instr(data, ?) > 0"  # an object's stored text holds a string (case-sensitive, no wildcards)
    separate_readers = False  # readers open their own connections (SQLite files, in WAL mode)
    commit_on_loop = False  # asyncio writers commit on their loop (a local database, no network wait)
    max_group = 256  # writes committed together at most
    gather = True  # (SQLite files) a group may wait for more writers when fsyncs are slow: see store/gather.py

    def __init__(self, *, history: int = 100_000) -> None:
        self.history = history
        self._lock = threading.RLock()
        self._db = self._connect()
        for statement in SCHEMA:
            self._run(statement)
        self._migrate()
        self._listeners: list[Any] = []
        self.writes = 0
        self.commits = 0
        # resource -> the resourceVersion of its newest write committed here (see written(); read-only to others)
        self.newest_writes: dict[str, int] = {}
        self._recent = RecentWrites(min(history, RECENT_WRITES))  # (for changes_since)
        self._local = threading.local()
        self._readers: list[Any] = []
        self._on_loop: dict[asyncio.AbstractEventLoop, builtins.list[_Write]] = {}
        self._home_loop: asyncio.AbstractEventLoop | None = None
        self._take_lock = threading.Lock()
        # The write connection is in a transaction: held from BEGIN to COMMIT, which may end on another
        # thread than the one that began it (a plain lock: any thread may release it).
        self._txn = threading.Lock()
        self._in_flight: set[asyncio.AbstractEventLoop] = set()  # loops whose group is being committed
        self._gates: dict[asyncio.AbstractEventLoop, Gate] = {}  # when each loop's next group starts
        # (SQLite files) the thread that makes the loop's groups durable: COMMIT, then wake their writers
        self._to_syncer: queue.SimpleQueue[_Group | None] = queue.SimpleQueue()
        self._syncer: threading.Thread | None = None
        self._syncer_stopped = False
        if self.commit_on_loop and self.separate_readers:
            self._syncer = threading.Thread(target=self._sync_loop, name="dralloc-store-sync", daemon=True)
            self._syncer.start()
        self._queue: queue.SimpleQueue[_Write | None] = queue.SimpleQueue()
        self._committer = threading.Thread(target=self._commit_loop, name="dralloc-store-commit", daemon=True)
        self._committer.start()

    def _connect(self) -> Any:
        raise NotImplementedError

    def _migrate(self) -> None:
        """Databases written before the event log kept the previous object get the column added."""
        columns = [d[0] for d in self._run("SELECT * FROM events WHERE 1 = 0").description]
        if "prev" not in columns:
            self._run("ALTER TABLE events ADD COLUMN prev TEXT")

    def _run(self, sql: str, args: tuple[Any, ...] | list[Any] = ()) -> Any:
        if self.placeholder != "?":
            sql = sql.replace("?", self.placeholder)
        return self._db.execute(sql, args)

    def _after_commit(self) -> None:
        """Hook: tell other processes that share the database (PostgreSQL NOTIFY)."""

    def close(self) -> None:
        self._queue.put(None)
        self._committer.join(10)
        with self._txn:  # (after the group in flight, if any: nothing is handed to the syncer after its stop)
            self._syncer_stopped = True
        if self._syncer is not None:
            self._to_syncer.put(None)
            self._syncer.join(10)
        with self._txn, self._lock:
            self._db.close()
            for reader in self._readers:
                reader.close()

    # --- reads --------------------------------------------------------------------------------------

    def _connect_reader(self) -> Any:
        raise NotImplementedError

    def _read(self, sql: str, args: tuple[Any, ...] | builtins.list[Any] = ()) -> builtins.list[Any]:
        """Rows of one read statement, on this thread's reader connection (or the shared one, locked)."""
        if not self.separate_readers:
            with self._lock:
                return self._run(sql, args).fetchall()
        return self._reader().execute(sql, args).fetchall()

    def _reader(self) -> Any:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = self._local.conn = self._connect_reader()
            with self._lock:
                self._readers.append(conn)
        return conn

    def current_rv(self) -> int:
        return self._read("SELECT value FROM counters WHERE name = 'rv'")[0][0]

    def _counter(self, name: str, lock: bool = False) -> int:
        sql = "SELECT value FROM counters WHERE name = ?" + (" " + self.lock_counter if lock else "")
        return self._run(sql, (name,)).fetchone()[0]

    def get(self, resource: str, namespace: str, name: str) -> dict[str, Any]:
        rows = self._read("SELECT data FROM objects WHERE resource=? AND namespace=? AND name=?",
                          (resource, namespace, name))
        row = rows[0] if rows else None
        if row is None:
            raise NotFound(name)
        return _decode(row[0])

    def list(self, resource: str, namespace: str | None = None, *, after: tuple[str, str] | None = None,
             limit: int = 0, containing: str | None = None) -> tuple[builtins.list[dict[str, Any]], int]:
        """Objects in (namespace, name) order, starting after the key ``after``; and the list's resourceVersion.
        ``containing``: only the objects whose stored JSON text holds it (the database tests the texts: a few
        objects among thousands are found without decoding the others)."""
        rows, rv = self.list_raw(resource, namespace, after=after, limit=limit, containing=containing)
        return [_decode(r) for r in rows], rv

    def list_raw(self, resource: str, namespace: str | None = None, *, after: tuple[str, str] | None = None,
                 limit: int = 0, containing: str | None = None) -> tuple[builtins.list[str], int]:
        """Like :meth:`list`, but each object as its stored JSON text (for responses that need no parsing)."""
        sql = "SELECT data FROM objects WHERE resource=?"
        args: list[Any] = [resource]
        if namespace is not None:
            sql += " AND namespace=?"
            args.append(namespace)
        if containing is not None:
            sql += f" AND {self.text_contains}"
            args.append(containing)
        if after is not None:
            sql += " AND (namespace, name) > (?, ?)"
            args.extend(after)
        sql += " ORDER BY namespace, name"
        if limit > 0:
            sql += f" LIMIT {int(limit)}"
        if not self.separate_readers:
            with self._lock:
                self._db.execute("BEGIN")
                try:
                    rows = self._run(sql, args).fetchall()
                    rv = self._counter("rv")
                finally:
                    self._db.execute("COMMIT")
            return [r[0] for r in rows], rv
        conn = self._reader()
        conn.execute("BEGIN")  # one snapshot for the rows and the counter
        try:
            rows = conn.execute(sql, args).fetchall()
            rv = conn.execute("SELECT value FROM counters WHERE name = 'rv'").fetchone()[0]
        finally:
            conn.execute("COMMIT")
        return [r[0] for r in rows], rv

    def events_since(self, rv: int, limit: int = 1000) -> builtins.list[Event]:
        """Events with resourceVersion > rv. Raises Gone if history before rv was compacted."""
        compacted = self._read("SELECT value FROM counters WHERE name = 'compacted'")[0][0]
        if rv < compacted:
            raise Gone(f"too old resource version: {rv} ({compacted + 1})")
        rows = self._read("SELECT rv, type, resource, namespace, name, data, prev FROM events WHERE rv > ? "
                          "ORDER BY rv LIMIT ?", (rv, limit))
        return [Event(r[0], r[1], r[2], r[3], r[4], r[5], r[6]) for r in rows]

    def changes_since(self, rv: int, limit: int = 10_000,
                      with_data: tuple[str, ...] = ()) -> builtins.list[Change]:
        """The events after rv, each with whether its object names owners or is being deleted (for the garbage
        collector: a substring test of the stored text), and the object's JSON text only
        for the resources in ``with_data`` (cheap for callers that only need to know what changed and where,
        and for those that mirror a few resources). Raises Gone as :meth:`events_since`."""
        recent = self._recent.since(rv, self.current_rv(), limit)
        if recent is not None:  # (this store wrote them all: no event row read back)
            return [_change((at, kind, resource, namespace, name, _OWNED in text, _DELETING in text,
                             text if resource in with_data else None))
                    for at, (kind, resource, namespace, name, text) in enumerate(recent, rv + 1)]
        compacted = self._read("SELECT value FROM counters WHERE name = 'compacted'")[0][0]
        if rv < compacted:
            raise Gone(f"too old resource version: {rv} ({compacted + 1})")
        # The texts are searched here, not by the database: Python's substring search is several times faster
        # than LIKE's, which on a pod costs more than reading the row, and the one plain statement needs no
        # table made for an IN list on every read.
        rows = self._read("SELECT rv, type, resource, namespace, name, data FROM events WHERE rv > ? ORDER BY rv "
                          "LIMIT ?", (rv, limit))
        return [_change((r[0], r[1], r[2], r[3], r[4], _OWNED in r[5], _DELETING in r[5],
                         r[5] if r[2] in with_data else None)) for r in rows]

    def written(self, resource: str) -> int:
        """The resourceVersion of the newest write of ``resource`` committed through this store (0: none since
        it was opened). Other processes that share the database are not counted: their writes are in the
        event log (:meth:`resource_events`)."""
        return self.newest_writes.get(resource, 0)

    def resource_events(self, resources: tuple[str, ...], rv: int) -> tuple[builtins.list[Event], int]:
        """The events of a few resources after ``rv``, and the resourceVersion the log was read at (every event
        of those resources up to it is in the answer). A scan of the newest events that decodes only those
        resources'. Raises Gone as :meth:`events_since`."""
        committed = self.current_rv()
        recent = self._recent.since(rv, committed, 10_000)
        if recent is not None:  # (this store wrote them all: no event row read back)
            return [Event(at, kind, resource, namespace, name, text)
                    for at, (kind, resource, namespace, name, text) in enumerate(recent, rv + 1)
                    if resource in resources], rv + len(recent)
        sql = (f"SELECT rv, type, resource, namespace, name, data FROM events WHERE rv > ? AND resource IN "
               f"({', '.join('?' * len(resources))}) ORDER BY rv")
        if not self.separate_readers:
            with self._lock:
                begin = not getattr(self._db, "in_transaction", False)  # (a write's own checks may read in it)
                if begin:
                    self._db.execute("BEGIN")
                try:
                    compacted, at = self._counter("compacted"), self._counter("rv")
                    rows = self._run(sql, (rv, *resources)).fetchall() if rv >= compacted else []
                finally:
                    if begin:
                        self._db.execute("COMMIT")
        else:
            conn = self._reader()
            conn.execute("BEGIN")  # one snapshot for the rows and the counters
            try:
                compacted, at = (r[0] for r in conn.execute(
                    "SELECT value FROM counters WHERE name IN ('compacted', 'rv') ORDER BY name").fetchall())
                rows = conn.execute(sql, (rv, *resources)).fetchall() if rv >= compacted else []
            finally:
                conn.execute("COMMIT")
        if rv < compacted:
            raise Gone(f"too old resource version: {rv} ({compacted + 1})")
        return [Event(r[0], r[1], r[2], r[3], r[4], r[5]) for r in rows], at

    # --- writes -------------------------------------------------------------------------------------

    def _write(self, kind: str, resource: str, namespace: str, name: str, build: Any,
               expect_rv: str | None, must_exist: bool | None) -> dict[str, Any]:
        """Hand the write to a committer and wait until it is committed (or refused): the home loop when one
        is attached (so a controller's writes share the groups of the requests'), else the committer thread."""
        job = _Write(kind, resource, namespace, name, build, expect_rv, must_exist, done=threading.Event())
        loop = self._home_loop
        if loop is None:
            self._queue.put(job)
        elif _running_loop() is loop:  # a synchronous write on the loop itself: it cannot wait for the loop
            self._commit([job])
        else:
            try:
                loop.call_soon_threadsafe(self._join_turn, loop, job)
            except RuntimeError:  # the loop is closed
                self._queue.put(job)
        while not job.done.wait(0.1):  # type: ignore[union-attr]
            if loop is not None and (self._home_loop is not loop or not loop.is_running()):
                self._queue.put(job)  # detached or stopped (shutdown): the committer thread takes it
                loop = None
        if job.error is not None:
            raise job.error
        return job.result

    def attach_loop(self, loop: asyncio.AbstractEventLoop | None) -> None:
        """Commit the writes of other threads (the controllers) on ``loop`` too, in the groups of its own
        writes, instead of in a second stream of commits on the committer thread (two streams take turns on
        the database and pay an fsync each). None: back to the committer thread."""
        self._home_loop = loop if self.commit_on_loop else None

    def _join_turn(self, loop: asyncio.AbstractEventLoop, job: _Write) -> None:
        """Add ``job`` to the group ``loop`` commits at the end of its current turn (on the loop's thread)."""
        waiting = self._on_loop.get(loop)
        first = waiting is None  # the first write of this turn: commit the turn's writes once it is over
        if waiting is None:
            waiting = self._on_loop[loop] = []
        waiting.append(job)
        if loop in self._in_flight:
            return  # the commit in flight starts the next group when it is done
        gate = self._gates.get(loop)
        if first or (gate is not None and len(waiting) == gate.expected):  # (or: all the group waits for is there)
            loop.call_soon(self._commit_turn, loop)

    async def _write_async(self, kind: str, resource: str, namespace: str, name: str, build: Any,
                           expect_rv: str | None, must_exist: bool | None) -> dict[str, Any]:
        """As :meth:`_write`, for a coroutine: no thread waits. On SQLite the write joins the group its loop
        commits at the end of the current turn; otherwise the committer thread wakes the loop once per group.
        A cancelled caller does not cancel the write (it may already be committed)."""
        job = _Write(kind, resource, namespace, name, build, expect_rv, must_exist)
        return await self._submitted(job)

    async def _submitted(self, job: _Write) -> dict[str, Any]:
        return await self._submit(job)

    def _submit(self, job: _Write) -> asyncio.Future[dict[str, Any]]:
        loop = asyncio.get_running_loop()
        future: asyncio.Future[dict[str, Any]] = loop.create_future()
        job.future = future
        if self.commit_on_loop:
            self._join_turn(loop, job)
        else:
            self._queue.put(job)
        return future

    def submit_update(self, resource: str, namespace: str, name: str, build: Any) -> asyncio.Future[dict[str, Any]]:
        """:meth:`update_async`'s write, queued at once (from a coroutine): the writes the caller queues after
        it are written after it, in its group commit or a later one. Its result (or error) as a future."""
        return self._submit(_Write("MODIFIED", resource, namespace, name, build, None, True))

    def _commit_turn(self, loop: asyncio.AbstractEventLoop) -> None:
        """Commit, on the loop's own thread, the writes its coroutines made during the turn that just ended.

        On a SQLite file the statements run here but the COMMIT (the fsync) runs on the syncer thread, so the
        loop goes on answering requests meanwhile; the writes that come in during an fsync form the next
        group, which starts once that COMMIT is done. (An in-memory database has no fsync to wait for, and
        its readers share the writer's connection: it commits here, at once.)"""
        if loop in self._in_flight:
            return  # the commit in flight starts this group when it is done
        gate = self._gates.get(loop)
        if gate is not None:
            if not gate.ready(len(self._on_loop.get(loop) or ())):
                if gate.timer is None:
                    gate.timer = loop.call_later(gate.wait_left(), self._gate_opens, loop, gate)
                return  # the writers of the last group are on their way (see store/gather.py)
            if gate.timer is not None:
                gate.timer.cancel()
                gate.timer = None
        batch = self._on_loop.pop(loop, [])
        if not self.separate_readers:
            for start in range(0, len(batch), self.max_group):
                self._commit(batch[start:start + self.max_group])
            return
        if len(batch) > self.max_group:
            self._on_loop[loop], batch = batch[self.max_group:], batch[:self.max_group]
        batch = self._take(batch)
        if not batch:  # (the committer thread took them: their loop had been detached)
            if self._on_loop.get(loop):
                loop.call_soon(self._commit_turn, loop)
            return
        self._txn.acquire()
        written = self._write_group(batch)
        if written <= 0:  # nothing to make durable (refused, no-op or failed writes): no need to leave the loop
            written = self._end_group(batch, written)
            self._txn.release()
            self._settle(batch, written)
            if self._on_loop.get(loop):
                loop.call_soon(self._commit_turn, loop)
            return
        self._in_flight.add(loop)
        if self.gather:
            gate = self._gates.get(loop)
            if gate is None:  # (not setdefault: a Gate made per group only to be dropped reads the CPU clock)
                gate = self._gates[loop] = Gate()
            gate.starts(len(batch))
        group = _Group(loop, batch, written)
        if self._syncer is None or self._syncer_stopped:  # the store is closing: commit here
            self._commit_in_background(group)
            return
        # The loop's thread waits (without the interpreter lock) until the syncer thread has begun the COMMIT.
        # Left to itself, the syncer would get the lock only when the loop next sleeps: a busy loop holds it
        # through every request it parses, and the fsync would start a millisecond late, every group.
        self._to_syncer.put(group)
        group.begun.acquire(timeout=1.0)

    def _sync_loop(self) -> None:
        while (group := self._to_syncer.get()) is not None:
            try:
                self._commit_in_background(group)
            except Exception:  # noqa: BLE001 - a listener's bug must not stop every later commit
                log.exception("after a commit, waking its writers or the store's listeners failed")

    def _commit_in_background(self, group: _Group) -> None:
        """(The syncer thread) COMMIT the group the loop wrote, settle its writes, let the loop go on."""
        loop, batch, written = group.loop, group.batch, group.written
        group.begun.release()
        started = time.monotonic()
        try:
            written = self._end_group(batch, written)
        finally:
            self._txn.release()
        gate = self._gates.get(loop)
        if gate is not None:
            gate.timed(time.monotonic() - started)
        self._settle(batch, written, committed_on=loop)

    def _committed(self, loop: asyncio.AbstractEventLoop) -> None:
        self._in_flight.discard(loop)
        if self._on_loop.get(loop):  # the writes that came in meanwhile, joined by those of this turn (and maybe more: Gate)
            loop.call_soon(self._commit_turn, loop)

    def _gate_opens(self, loop: asyncio.AbstractEventLoop, gate: Gate) -> None:
        """(On ``loop``) the wait for more writes is over: the group starts with those there are."""
        gate.timer = None
        self._commit_turn(loop)

    def _commit_loop(self) -> None:
        while True:
            job = self._queue.get()
            if job is None:
                return
            batch = [job]
            stop = False
            while len(batch) < self.max_group:  # everything already waiting joins this commit
                try:
                    nxt = self._queue.get_nowait()
                except queue.Empty:
                    break
                if nxt is None:
                    stop = True
                    break
                batch.append(nxt)
            self._commit(batch)
            if stop:
                return

    def _take(self, batch: builtins.list[_Write]) -> builtins.list[_Write]:
        """The writes of ``batch`` no other committer has taken (a synchronous write whose loop stopped is
        handed to the committer thread too; whichever comes first commits it)."""
        with self._take_lock:
            mine = [job for job in batch if not job.taken]
            for job in mine:
                job.taken = True
        return mine

    def _commit(self, batch: builtins.list[_Write]) -> None:
        """One transaction for the group, committed before returning (see :meth:`_write_group`)."""
        batch = self._take(batch)
        if not batch:
            return
        with self._txn, self._lock:  # (readers of an in-memory database share the connection: not before COMMIT)
            written = self._end_group(batch, self._write_group(batch))
        self._settle(batch, written)

    def _write_group(self, batch: builtins.list[_Write]) -> int:
        """Begin the group's transaction and write it; the number of writes made (COMMIT is left to
        :meth:`_end_group`). The counter is read (locked, for PostgreSQL) once and written once; each write
        reads its row and builds the new object before writing anything, so a write refused by its checks
        (NotFound, Conflict, validation in ``build``) leaves nothing to roll back; a create whose name is taken
        is refused by its INSERT, which then writes nothing. An error once a write has
        started (the database itself failing) undoes the whole group. Needs ``_txn`` held."""
        written = 0
        with self._lock:
            try:
                self._db.execute(self.begin_write)
                rv = first = self._counter("rv", lock=True)
                for job in batch:
                    try:
                        prepared = self._prepare(job, rv + 1)
                    except BaseException as exc:  # noqa: BLE001 - handed to the waiting writer
                        job.error = exc
                        continue
                    if prepared is not None:
                        if not self._store(job, rv + 1, *prepared):
                            job.error = Conflict("exists")
                            continue
                        rv += 1
                        job.rv = rv
                        written += 1
                if rv != first:
                    self._recent.begins(first + 1, rv)
                    self._run("UPDATE counters SET value=? WHERE name='rv'", (rv,))
                    if rv // 1000 != first // 1000:
                        self._compact(rv)
            except BaseException as exc:  # noqa: BLE001 - no write of the group happens
                self._fail_group(batch, exc)
                return -1
        return written

    def _end_group(self, batch: builtins.list[_Write], written: int) -> int:
        """COMMIT the group :meth:`_write_group` wrote (-1: it failed and is rolled back already); the number
        of writes made durable. Needs ``_txn`` held."""
        if written < 0:
            return 0
        with self._lock:
            try:
                self._db.execute("COMMIT")
            except BaseException as exc:  # noqa: BLE001 - the commit failed: no write of the group happened
                self._fail_group(batch, exc)
                return 0
        return written

    def _fail_group(self, batch: builtins.list[_Write], exc: BaseException) -> None:
        self._recent.lost_track()
        try:
            self._db.execute("ROLLBACK")
        except Exception:  # noqa: BLE001 - already rolled back
            pass
        for job in batch:
            job.error = job.error or exc

    def _settle(self, batch: builtins.list[_Write], written: int,
                committed_on: asyncio.AbstractEventLoop | None = None) -> None:
        """Wake the group's writers (each on its own thread or loop) and the store's listeners;
        ``committed_on``: the loop whose group this was learns that its commit is over."""
        self.writes += written
        self.commits += 1
        if written:
            newest, kept = self.newest_writes, builtins.list[tuple[int, Written]]()
            # (before any writer hears back: what it wrote is then in every cache's reach, and in the change
            # feed's memory: a controller reads its own writes back at once)
            for job in batch:
                if job.rv and job.error is None:
                    newest[job.resource] = job.rv
                    kept.append((job.rv, (job.event, job.resource, job.namespace, job.name, job.text)))
            self._recent.add(kept)
            self._after_commit()
        by_loop: dict[asyncio.AbstractEventLoop, builtins.list[_Write]] = {}
        if committed_on is not None:
            by_loop[committed_on] = []
        for job in batch:
            if job.done is not None:
                job.done.set()
            elif job.future is not None:
                by_loop.setdefault(job.future.get_loop(), []).append(job)
        for loop, jobs in by_loop.items():
            committed = loop is committed_on
            if loop is _running_loop():
                self._settle_on_loop(loop, jobs, committed)
                continue
            try:
                loop.call_soon_threadsafe(self._settle_on_loop, loop, jobs, committed)
            except RuntimeError:  # the writer's loop is closed: nobody waits (nothing more to commit on it)
                pass
        if written:
            for listener in list(self._listeners):
                listener()

    def _settle_on_loop(self, loop: asyncio.AbstractEventLoop, jobs: builtins.list[_Write], committed: bool) -> None:
        """(On ``loop``) hand the writers their results; ``committed``: the loop's own group, whose commit is
        over: then :meth:`_committed`, after the writers' tasks, which the results queued first, so their
        answers are on their way before the next group's statements run."""
        if committed and (gate := self._gates.get(loop)) is not None:
            gate.committed(len(jobs), len(self._on_loop.get(loop) or ()))  # (before the writers write again)
        for job in jobs:
            job.settle()
        if committed:
            loop.call_soon(self._committed, loop)

    def _prepare(self, job: _Write, rv: int) -> tuple[str, dict[str, Any], str | None] | None:
        """Check one write against its row and build the object it writes at ``rv``: (event type, object,
        the previous object's JSON). None: a no-op update (nothing written, no new version); ``job.result``
        holds the object either way."""
        kind, name = job.kind, job.name
        if job.must_exist is False:  # a create: its INSERT finds out whether the name is taken (see _store)
            row = None
        else:
            row = self._run("SELECT rv, data FROM objects WHERE resource=? AND namespace=? AND name=?",
                            (job.resource, job.namespace, name)).fetchone()
        if job.must_exist is True and row is None:
            raise NotFound(name)
        if job.expect_rv and row is not None and str(row[0]) != str(job.expect_rv):
            raise Conflict("modified")
        old = _decode(row[1]) if row is not None else None
        built = job.build(old, str(rv))
        obj: dict[str, Any] = built.object if isinstance(built, Outcome) else built
        if isinstance(built, Outcome):
            kind = built.type
        job.result = obj
        if obj is old and kind == "MODIFIED":
            return None
        return kind, obj, row[1] if row is not None and kind == "MODIFIED" else None

    def _store(self, job: _Write, rv: int, kind: str, obj: dict[str, Any], prev: str | None) -> bool:
        """Write the row and its event at ``rv``; False (nothing written) when a create finds its name taken."""
        job.encoded = encoded = _encode_bytes(obj)
        job.text = data = encoded.decode("utf-8")  # (as _encode, keeping the bytes for the writer's answer)
        job.event = kind
        key = (job.resource, job.namespace, job.name)
        if kind == "DELETED":
            self._run("DELETE FROM objects WHERE resource=? AND namespace=? AND name=?", key)
        elif job.must_exist is False:  # one statement for a create, instead of a read of the row and a write
            inserted = self._run("INSERT INTO objects VALUES (?, ?, ?, ?, ?) "
                                 "ON CONFLICT (resource, namespace, name) DO NOTHING", (*key, rv, data))
            if inserted.rowcount == 0:
                return False
        else:
            self._run("INSERT INTO objects VALUES (?, ?, ?, ?, ?) ON CONFLICT (resource, namespace, name) "
                      "DO UPDATE SET rv = excluded.rv, data = excluded.data", (*key, rv, data))
        self._run("INSERT INTO events (rv, type, resource, namespace, name, data, prev) VALUES (?, ?, ?, ?, ?, ?, ?)",
                  (rv, kind, *key, data, prev))
        return True

    def _compact(self, rv: int) -> None:
        floor = rv - self.history
        if floor > self._counter("compacted"):
            self._run("DELETE FROM events WHERE rv <= ?", (floor,))
            self._run("UPDATE counters SET value=? WHERE name='compacted'", (floor,))

    def create(self, resource: str, namespace: str, name: str, build: Any) -> dict[str, Any]:
        """Store ``build(None, rv)``; Conflict if the object exists."""
        return self._write("ADDED", resource, namespace, name, build, None, False)

    async def create_async(self, resource: str, namespace: str, name: str, build: Any) -> dict[str, Any]:
        """:meth:`create` for a coroutine."""
        return await self._write_async("ADDED", resource, namespace, name, build, None, False)

    async def create_async_encoded(self, resource: str, namespace: str, name: str,
                                   build: Any) -> tuple[dict[str, Any], bytes]:
        """:meth:`create_async`, and the object's compact JSON as stored (msgspec's encoding of the object
        returned: an answer made of the object can send these bytes instead of encoding it again)."""
        job = _Write("ADDED", resource, namespace, name, build, None, False)
        result = await self._submitted(job)
        return result, job.encoded

    def update(self, resource: str, namespace: str, name: str, build: Any, expect_rv: str | None = None) -> dict[str, Any]:
        """Replace the object with ``build(old, rv)``; NotFound, or Conflict on a stale ``expect_rv``.
        When ``build`` returns ``old`` itself nothing is written (kube-apiserver skips no-op updates)."""
        return self._write("MODIFIED", resource, namespace, name, build, expect_rv, True)

    async def update_async(self, resource: str, namespace: str, name: str, build: Any,
                           expect_rv: str | None = None) -> dict[str, Any]:
        """:meth:`update` for a coroutine."""
        return await self._write_async("MODIFIED", resource, namespace, name, build, expect_rv, True)

    def delete(self, resource: str, namespace: str, name: str, expect_rv: str | None = None,
               check: Any = None) -> dict[str, Any]:
        """Remove the object; ``check(old)`` may raise to refuse (preconditions) or return an :class:`Outcome`
        to write something else instead (finalizers: the object is only marked as being deleted)."""
        return self._write("DELETED", resource, namespace, name, _delete_build(check), expect_rv, True)

    async def delete_async(self, resource: str, namespace: str, name: str, expect_rv: str | None = None,
                           check: Any = None) -> dict[str, Any]:
        """:meth:`delete` for a coroutine."""
        return await self._write_async("DELETED", resource, namespace, name, _delete_build(check), expect_rv, True)

    def subscribe(self, listener: Any) -> None:
        self._listeners.append(listener)

    def unsubscribe(self, listener: Any) -> None:
        if listener in self._listeners:
            self._listeners.remove(listener)


def _delete_build(check: Any) -> Any:
    """The ``build`` of a delete: the removed object at the new version, or what ``check`` writes instead."""
    def build(old: dict[str, Any], rv: str) -> Any:
        if check is not None:
            instead = check(old)
            if instead is not None:
                if instead.object is old:
                    return instead
                meta = {**(instead.object.get("metadata") or {}), "resourceVersion": rv}
                return Outcome({**instead.object, "metadata": meta}, instead.type)
        meta = dict(old.get("metadata") or {})
        meta["resourceVersion"] = rv
        return {**old, "metadata": meta}

    return build


class SQLiteStore(SQLStore):
    """The default store: one SQLite file (or ``:memory:``), WAL journal, fsync on every commit."""

    begin_write = "BEGIN IMMEDIATE"
    commit_on_loop = True

    def __init__(self, path: str = ":memory:", *, history: int = 100_000) -> None:
        self.path = path
        self.separate_readers = path != ":memory:"  # an in-memory database exists on one connection only
        super().__init__(history=history)

    def _connect_reader(self) -> Any:
        return sqlite3.connect(self.path, check_same_thread=False, isolation_level=None, timeout=30)

    def _connect(self) -> Any:
        db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None, timeout=30)
        if self.path != ":memory:":
            db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=FULL")
        return db
