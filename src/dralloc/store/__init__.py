"""Object storage for the API server: objects by (resource, namespace, name), one resourceVersion counter,
and an event log that gives watch its history."""

from typing import Any

from dralloc.store.sqlite import (
    Change,
    Conflict,
    Event,
    Gone,
    NotFound,
    Outcome,
    SQLiteStore,
    SQLStore,
    StoreError,
)

__all__ = ["Change", "Conflict", "Event", "Gone", "NotFound", "Outcome", "SQLStore", "SQLiteStore", "StoreError", "open_store"]


def open_store(url: str, **kw: Any) -> SQLStore:
    """A store from ``--db``: ``postgresql://...`` (or ``postgres://``) for PostgreSQL, else a SQLite path."""
    if url.startswith(("postgresql://", "postgres://")):
        from dralloc.store.postgres import PostgresStore

        return PostgresStore(url, **kw)
    return SQLiteStore(url, **kw)
