"""The PostgreSQL store, for several ``dralloc serve`` replicas sharing one database.

Same tables and transactions as SQLite; the counter row is read ``FOR UPDATE`` so writers in different
processes take turns, and each commit sends ``NOTIFY dralloc_events`` so every replica's watchers wake at
once (they also poll, so a lost notification only delays an event by up to a second).
Needs the ``postgres`` extra (psycopg).
"""

from __future__ import annotations

import threading
from typing import Any

from dralloc.store.sqlite import SQLStore

CHANNEL = "dralloc_events"


class PostgresStore(SQLStore):
    placeholder = "%s"
    begin_write = "BEGIN"
    lock_counter = "FOR UPDATE"
    text_contains = "strpos(data, ?) > 0"

    def __init__(self, dsn: str, *, history: int = 100_000) -> None:
        self.dsn = dsn
        super().__init__(history=history)
        self._closed = threading.Event()
        self._listener = threading.Thread(target=self._listen, name="dralloc-pg-listen", daemon=True)
        self._listener.start()

    def _connect(self) -> Any:
        try:
            import psycopg
        except ImportError as exc:  # pragma: no cover - depends on the install
            raise RuntimeError("PostgreSQL support needs psycopg: pip install 'dralloc[postgres]'") from exc
        return psycopg.connect(self.dsn, autocommit=True)

    def _after_commit(self) -> None:
        self._db.execute(f"NOTIFY {CHANNEL}")

    def _listen(self) -> None:
        import psycopg

        try:
            with psycopg.connect(self.dsn, autocommit=True) as conn:
                conn.execute(f"LISTEN {CHANNEL}")
                while not self._closed.is_set():
                    for _ in conn.notifies(timeout=1.0):
                        for listener in list(self._listeners):
                            listener()
        except psycopg.Error:
            return  # watchers still poll the event log

    def close(self) -> None:
        self._closed.set()
        super().close()
