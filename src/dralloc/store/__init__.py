"""Object storage for the API server: objects by (resource, namespace, name), one resourceVersion counter,
and an event log that gives watch its history."""

from dralloc.store.sqlite import Conflict, Event, Gone, NotFound, SQLiteStore, StoreError

__all__ = ["Conflict", "Event", "Gone", "NotFound", "SQLiteStore", "StoreError"]
