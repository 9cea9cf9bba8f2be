"""The writes a store committed lately, in memory: what a reader of the change feed in the same process
(``dralloc serve``'s controllers) takes instead of reading the event log back from the database.

A reader that follows the log asks for the changes after its position. Every write this store object commits
is here (kept once its COMMIT is done, until ``keep`` newer resourceVersions push it out), with its object's
text as stored, so while nobody else writes to the database the answer needs no event row read and no text
fetched again. Other writers (another process on the same SQLite file, PostgreSQL replicas) leave gaps in
the resourceVersions here: a read that meets one the store cannot account for reads the database instead.

The store reports, before each group's COMMIT, the resourceVersions the group takes (:meth:`RecentWrites.begins`):
a group that does not start right after the previous one of this store means that someone else wrote the ones
in between. A read up to the database's committed resourceVersion is answered from memory when every version
after the reader's position is here, or when the ones that are missing are only this store's own writes still
on their way (committed, their writers not yet answered: they are in the next read, as if the read had come a
moment earlier).
"""

from __future__ import annotations

import threading
from typing import cast

# One committed write: the event it made, as the log holds it: (type: ADDED, MODIFIED or DELETED, resource,
# namespace, name, the object's text as stored). (A plain tuple: a named one's constructor is a Python call,
# made for every write on the thread that commits.)
Written = tuple[str, str, str, str, str]


class RecentWrites:
    """See the module docstring. Written by the threads that commit (under a lock of its own), read by any
    thread without one (a dict look-up is atomic; an entry once in is never changed)."""

    def __init__(self, keep: int) -> None:
        self.keep = max(0, keep)
        self._by_rv: dict[int, Written] = {}
        self._lock = threading.Lock()
        self._own_through = -1  # the last resourceVersion of this store's newest group (-1: unknown)
        self._others_through = 0  # every version up to this one may be another writer's (never decreases)
        self._dropped_through = 0  # the versions up to this one are no longer kept (never decreases)
        self._newest = 0  # the newest version kept

    def begins(self, first: int, last: int) -> None:
        """(Before its COMMIT) this store's next group writes the versions ``first`` to ``last``."""
        if first != self._own_through + 1:  # versions in between (or before the first group) are someone else's
            self._others_through = max(self._others_through, first - 1)
        self._own_through = last

    def lost_track(self) -> None:
        """A group failed (rolled back, or its COMMIT refused): which versions are whose is not known until the
        next group begins."""
        self._own_through = -1

    def add(self, committed: list[tuple[int, Written]]) -> None:
        """(After the COMMIT) the writes of a group, by resourceVersion."""
        if not self.keep or not committed:
            return
        with self._lock:
            by_rv = self._by_rv
            by_rv.update(committed)
            self._newest = max(self._newest, committed[-1][0])  # (a group's versions ascend)
            # (the old ones go a quarter of ``keep`` at a time: a look through every kept entry per commit would
            # cost more than the commit)
            if len(by_rv) > self.keep + self.keep // 4:
                floor = self._newest - self.keep
                self._dropped_through = max(self._dropped_through, floor)  # (before they go: see since)
                for rv in [rv for rv in by_rv if rv <= floor]:
                    del by_rv[rv]

    def since(self, position: int, committed: int, limit: int) -> list[Written] | None:
        """The writes after ``position`` up to ``committed`` (the database's committed resourceVersion), at most
        ``limit``, in order: the first one's resourceVersion is ``position + 1``, and so on. None when memory
        cannot tell them all (read the database)."""
        if committed <= position:
            return []  # (nothing new: the common answer of a reader that looks again and again)
        if committed - position > min(limit, self.keep):
            return None  # (a reader that far behind may find the log compacted: the database says so)
        get = self._by_rv.get
        out = [get(rv) for rv in range(position + 1, committed + 1)]
        if None not in out:
            return cast(list[Written], out)
        first_missing = position + 1 + out.index(None)
        # the rest must be this store's own writes, committed but not yet here (not ones let go)
        if committed <= self._own_through and self._others_through < first_missing \
                and self._dropped_through < first_missing:
            return cast(list[Written], out[:first_missing - position - 1])
        return None
