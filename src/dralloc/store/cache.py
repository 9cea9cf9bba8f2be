"""A few resources' objects in memory, kept current from the store's event log, as kube-apiserver's admission
plugins read an informer's cache instead of the database on every request.

A :class:`ResourceCache` lists its resource once, then takes in the resource's events from the log. The
:class:`Feed` of a store reads the log for all of its caches at once: at once after a write of a cached
resource committed through the same store (so a request that follows a write sees it, as the clients of a
single server expect), and at most every ``POLL_SECONDS`` otherwise, which brings the writes of other
processes that share the database (PostgreSQL replicas). A read costs a dict look-up while nothing changed;
the log read takes only the cached resources' events.
"""

from __future__ import annotations

import threading
import time
import weakref
from collections.abc import Callable
from typing import Any, Protocol, TypeVar

from dralloc.store.sqlite import Event, Gone, SQLStore

POLL_SECONDS = 1.0  # others' writes (other processes on the same database) are seen this late at most

Obj = dict[str, Any]
Key = tuple[str, str]  # (namespace, name); "" for a cluster-scoped object's namespace
T = TypeVar("T")


class Index(Protocol):
    """What an index of a cache's objects is told: each object that comes in and each that goes (an update is
    the old one going, then the new one coming)."""

    def add(self, key: Key, obj: Obj) -> None: ...

    def remove(self, key: Key, obj: Obj) -> None: ...


IndexT = TypeVar("IndexT", bound=Index)


class ResourceCache:
    """The objects of one resource (see the module docstring). Safe to read from any thread: a change replaces
    the mapping, so a reader never sees one half made. Made by its store's :class:`Feed`."""

    def __init__(self, feed: Feed, resource: str) -> None:
        self.feed = feed
        self.resource = resource
        self._objects: dict[Key, Obj] = {}
        self.position = -1  # every event of the resource up to this resourceVersion is in (-1: not listed)
        # compute -> (the objects it was computed from, its value)
        self._derived: dict[Callable[[dict[Key, Obj]], Any], tuple[dict[Key, Obj], Any]] = {}
        self._indexes: dict[Callable[[], Index], Index] = {}  # make -> the index it made, kept up to date

    def get(self, namespace: str, name: str) -> Obj | None:
        """The object as last seen (not a copy: do not change it), None when the cache has none."""
        return self.objects().get((namespace, name))

    def objects(self) -> dict[Key, Obj]:
        """Every object by (namespace, name), as last seen (do not change them)."""
        feed = self.feed
        # (the store's written(), without a call: admission reads a few caches on every request)
        if feed.newest_writes.get(self.resource, 0) > self.position or time.monotonic() >= feed.next_poll:
            feed.sync()
        return self._objects

    def derived(self, compute: Callable[[dict[Key, Obj]], T]) -> T:
        """``compute(objects)``, computed again only when the objects changed (``compute`` must be a
        function of them alone, and the same function object each time)."""
        objects = self.objects()
        found = self._derived.get(compute)
        if found is not None and found[0] is objects:
            value: T = found[1]
            return value
        value = compute(objects)
        self._derived[compute] = (objects, value)
        return value

    def index(self, make: Callable[[], IndexT]) -> IndexT:
        """The index ``make()`` gives (an empty one), filled with every object once and then told of each change
        as it comes in: for what :meth:`derived` would compute again over every object after each write (the
        free addresses of thousands of Services). ``make`` must be the same function each time. Read it under
        ``with cache.feed.locked():``, which changes wait for."""
        self.objects()
        with self.feed.locked():
            found = self._indexes.get(make)
            if found is None:
                found = make()
                for key, obj in self._objects.items():
                    found.add(key, obj)
                self._indexes[make] = found
            return found  # type: ignore[return-value]

    def _relist(self) -> None:
        self._indexes = {}  # (made again from the new list when next asked for)
        objects, at = self.feed.store.list(self.resource)
        self._objects = {((o.get("metadata") or {}).get("namespace") or "", o["metadata"]["name"]): o
                         for o in objects}
        self.position = at

    def _take(self, events: list[Event], upto: int) -> None:
        """This resource's events of a log read that went up to ``upto`` (those it had listed are skipped)."""
        events = [e for e in events if e.rv > self.position]
        if events:
            objects = dict(self._objects)
            indexes = self._indexes.values()
            for event in events:
                key = (event.namespace, event.name)
                if indexes:
                    if (gone := objects.get(key)) is not None:
                        for index in indexes:
                            index.remove(key, gone)
                    if event.type != "DELETED":
                        for index in indexes:
                            index.add(key, event.object)
                if event.type == "DELETED":
                    objects.pop(key, None)
                else:
                    objects[key] = event.object
            self._objects = objects
        self.position = max(self.position, upto)


class Feed:
    """The caches of one store, and their one read of its event log (see the module docstring)."""

    def __init__(self, store: SQLStore, poll_seconds: float = POLL_SECONDS) -> None:
        self.store = store
        self.newest_writes = store.newest_writes
        self.poll_seconds = poll_seconds
        self.next_poll = 0.0
        self._caches: dict[str, ResourceCache] = {}
        self._position = 0  # the log is read up to here
        self._lock = threading.RLock()

    def cache(self, resource: str) -> ResourceCache:
        """The cache of ``resource``, made (and listed) on first use."""
        cache = self._caches.get(resource)
        if cache is None:
            with self._lock:
                cache = self._caches.get(resource)
                if cache is None:
                    cache = ResourceCache(self, resource)
                    cache._relist()
                    if not self._caches:
                        self._position = cache.position
                    self._caches = {**self._caches, resource: cache}
        return cache

    def locked(self) -> threading.RLock:
        """The lock changes are taken in under (a context manager): readers of an index hold it."""
        return self._lock

    def sync(self) -> None:
        """Take in the events of every cached resource since the last read."""
        with self._lock:
            caches = self._caches
            if not caches:
                return
            self.next_poll = time.monotonic() + self.poll_seconds
            try:
                events, at = self.store.resource_events(tuple(caches), self._position)
            except Gone:  # history the log no longer has: list again
                for cache in caches.values():
                    cache._relist()
                self._position = min(cache.position for cache in caches.values())
                return
            by_resource: dict[str, list[Event]] = {}
            for event in events:
                by_resource.setdefault(event.resource, []).append(event)
            for resource, cache in caches.items():
                cache._take(by_resource.get(resource, []), at)
            self._position = at


_FEEDS: weakref.WeakKeyDictionary[SQLStore, Feed] = weakref.WeakKeyDictionary()
_FEEDS_LOCK = threading.Lock()
# The store asked for last and its feed (a server has one store: no weak reference made per look-up, as a
# WeakKeyDictionary's get makes one)
_last: tuple[weakref.ref[SQLStore], Feed] | None = None


def feed_of(store: SQLStore) -> Feed:
    """The store's feed, made on first use and then shared."""
    global _last
    last = _last
    if last is not None and last[0]() is store:
        return last[1]
    feed = _FEEDS.get(store)
    if feed is None:
        with _FEEDS_LOCK:
            feed = _FEEDS.get(store)
            if feed is None:
                feed = _FEEDS[store] = Feed(store)
    _last = (weakref.ref(store), feed)
    return feed


def cached(store: SQLStore, resource: str) -> ResourceCache:
    """The cache of ``resource`` in ``store``, made on first use and then shared (one per store and resource,
    as an informer factory shares its informers)."""
    return feed_of(store).cache(resource)
