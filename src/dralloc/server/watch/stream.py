"""watch: the current state (when asked for), then every change from the store's event log, as kube-apiserver's
watch cache streams them: selectors see objects enter and leave, bookmarks, 410 Gone after compaction, and
the stream ends when the server shuts down."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import msgspec
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse

from dralloc.server.context import ApiContext
from dralloc.server.http import partial
from dralloc.server.http.errors import ApiError
from dralloc.server.http.options import int64_param, options_invalid, parse_resource_version, query_flag
from dralloc.server.http.responses import JSON, output_of
from dralloc.server.http.routing import Target
from dralloc.server.http.table import include_object, to_table
from dralloc.server.verbs.reads import matchers, too_large_resource_version
from dralloc.server.watch.hub import replay
from dralloc.store import Event, Gone
from dralloc.validation.field import forbidden

_DEADLINE, _BOOKMARK = object(), object()  # ticks a watch's timers put in its queue
FRESHNESS_WAIT = 3.0  # seconds kube-apiserver's watch cache waits for a resourceVersion it has not reached
BOOKMARK_EVERY = 10.0
MAX_TIMEOUT = 1 << 31  # seconds


def _watch_options(request: Request) -> tuple[float, bool, str, bool]:
    """timeoutSeconds, allowWatchBookmarks, resourceVersion and sendInitialEvents, checked as ListOptions."""
    q = request.query_params
    seconds = int64_param(q, "timeoutSeconds")
    # a NaN or a float beyond the event loop's timer range would break the stream after its 200; the cap
    # (about 68 years) changes no real watch
    timeout = float(min(seconds, MAX_TIMEOUT)) if seconds is not None else 1800.0
    bookmarks = bool(query_flag(q, "allowWatchBookmarks"))
    initial_param = q.get("sendInitialEvents")
    match = q.get("resourceVersionMatch") or ""
    errors = []
    if initial_param is not None:
        if match != "NotOlderThan":
            errors.append(forbidden("resourceVersionMatch", "sendInitialEvents requires setting "
                                                            "resourceVersionMatch to NotOlderThan"))
        if not bookmarks:
            errors.append(forbidden("allowWatchBookmarks", "sendInitialEvents requires setting "
                                                           "allowWatchBookmarks to true"))
    elif match:
        errors.append(forbidden("resourceVersionMatch", "resourceVersionMatch is forbidden for watch unless "
                                                        "sendInitialEvents is provided"))
    if errors:
        raise options_invalid("ListOptions", errors)
    return timeout, bookmarks, q.get("resourceVersion") or "", bool(query_flag(q, "sendInitialEvents"))


async def _wait_until_fresh(api: ApiContext, wanted: int) -> None:
    """Wait (briefly) until the store reaches ``wanted``; else kube-apiserver's "Too large resource version"."""
    loop = asyncio.get_running_loop()
    wake = asyncio.Event()
    deadline = loop.time() + FRESHNESS_WAIT
    api.watchers.add((loop, wake))
    try:
        while (current := api.store.current_rv()) < wanted:
            remaining = deadline - loop.time()
            if remaining <= 0 or api.closing:
                raise too_large_resource_version(wanted, current)
            wake.clear()
            try:
                await asyncio.wait_for(wake.wait(), min(remaining, 0.5))
            except TimeoutError:
                pass
    finally:
        api.watchers.discard((loop, wake))


async def watch(api: ApiContext, request: Request, t: Target) -> Response:
    labels, fields = matchers(request, t)
    timeout, bookmarks, rv_param, send_initial = _watch_options(request)
    selective = bool(request.query_params.get("labelSelector") or request.query_params.get("fieldSelector"))
    output = output_of(request)
    table = output.convert == "Table"
    metadata_only = output.convert in (partial.OBJECT, partial.LIST)  # (each event's object: its metadata)
    transformed = table or metadata_only
    include = include_object(request.query_params.get("includeObject")) if table else ""

    def match(obj: dict[str, Any]) -> bool:
        return labels(obj) and fields(obj)

    if rv_param not in ("", "0"):
        wanted = parse_resource_version(rv_param)
        if wanted > api.store.current_rv():
            await _wait_until_fresh(api, wanted)
    # sendInitialEvents (WatchList) asks for the current state first whatever resourceVersion says;
    # without it, only an unset or "0" resourceVersion starts with the current state (as ADDED events).
    initial: list[dict[str, Any]] = []
    explicit_initial = request.query_params.get("sendInitialEvents") is not None
    if send_initial or (not explicit_initial and rv_param in ("", "0")):
        objs, start = api.store.list(t.resource.name, t.list_namespace)
        initial = [o for o in objs if match(o)]
    elif rv_param in ("", "0"):
        start = api.store.current_rv()
    else:
        start = parse_resource_version(rv_param)

    def line(kind: str, obj: dict[str, Any]) -> bytes:
        shown = t.present(obj)
        if table:
            shown = to_table(t.resource, [shown], shown["metadata"].get("resourceVersion", ""), include)
        elif metadata_only:
            shown = partial.partial_object(shown, output.convert_version)
        return msgspec.json.encode({"type": kind, "object": shown}) + b"\n"

    def bookmark(rv: int, initial_end: bool = False) -> bytes:
        meta: dict[str, Any] = {"resourceVersion": str(rv)}
        if initial_end:  # WatchList: tells the client the initial state is complete
            meta["annotations"] = {"k8s.io/initial-events-end": "true"}
        mark = {"kind": t.resource.kind, "apiVersion": t.api_version, "metadata": meta}
        if metadata_only:
            mark = partial.partial_object(mark, output.convert_version)
        return json.dumps({"type": "BOOKMARK", "object": mark}).encode() + b"\n"

    api_version = t.api_version

    as_stored = t.shows_stored and not transformed

    def event_line(ev: Event, shown: tuple[str, dict[str, Any]] | None = None) -> bytes:
        """The line of ``ev`` as this watch shows it (``shown``: what a watch with selectors makes of it;
        None: the event as it is)."""
        kind = ev.type if shown is None else shown[0]
        if not transformed and (shown is None or shown[1] is ev.object):  # every such watch shares one encoding
            if as_stored:  # the object's JSON is its stored text (written by the same encoder): not decoded
                return api.hub.encoded((ev.rv, kind, api_version), lambda: _stored_line(kind, ev.text))
            return api.hub.encoded((ev.rv, kind, api_version), lambda: line(kind, ev.object))
        return line(*shown) if shown is not None else line(kind, ev.object)

    def shown_line(ev: Event) -> bytes | None:
        """The line of ``ev`` for this watch, None when its selectors leave the event out."""
        if not selective:
            return event_line(ev)
        shown = filtered_event(ev, match, selective)
        return event_line(ev, shown) if shown is not None else None

    async def stream() -> Any:
        sub, position = api.hub.subscribe(t.resource.name, t.list_namespace)
        last = start
        deadline = time.monotonic() + timeout
        timers: list[asyncio.TimerHandle] = []
        try:
            for obj in initial:
                if api.closing:
                    return
                yield line("ADDED", obj)
            if send_initial and bookmarks:
                yield bookmark(start, initial_end=True)
            if last < position:  # the history between the watch's start and the hub's position
                try:
                    history = await asyncio.to_thread(replay, api.store, last, position)
                except Gone as exc:
                    yield gone(exc)
                    return
                for ev in history:
                    if ev.resource == t.resource.name and (t.list_namespace is None
                                                           or ev.namespace == t.list_namespace):
                        if (shown_as := shown_line(ev)) is not None:
                            yield shown_as
                last = max(last, position)
            # Timers put ticks in the queue (deadline, bookmarks), so waiting is one plain get per wake.
            loop = asyncio.get_running_loop()
            timers.append(loop.call_later(max(deadline - time.monotonic(), 0.0), sub.tick, _DEADLINE))

            def schedule_bookmark() -> None:
                timers.append(loop.call_later(BOOKMARK_EVERY, sub.tick, _BOOKMARK))

            if bookmarks:
                schedule_bookmark()

            async def follow_directly(chunks: Any) -> None:
                """Everything so far went out through the stream: from here on the hub's events are written
                to the connection as the hub hands them out, until the watch ends."""
                ended: asyncio.Future[None] = loop.create_future()

                def consume(items: list[Any]) -> None:
                    nonlocal last
                    if ended.done():
                        return
                    parts: list[bytes] = []
                    finished = False
                    for item in items:
                        if item is None or item is _DEADLINE:
                            finished = True
                            break
                        if item is _BOOKMARK:
                            last = max(last, sub.delivered)  # the hub handed out everything up to there
                            parts.append(bookmark(last))
                            schedule_bookmark()
                        elif item.rv > last:
                            last = item.rv
                            parts.append(event_line(item))
                    if parts and not chunks.write(parts[0] if len(parts) == 1 else b"".join(parts)):
                        finished = True  # the client went away or stopped reading
                    if finished:
                        ended.set_result(None)

                sub.follow(consume)
                await ended

            chunks = (request.scope.get("extensions") or {}).get("dralloc.direct")
            while not api.closing:
                if chunks is not None and not selective and not transformed and sub.empty() and chunks.ready():
                    await follow_directly(chunks)
                    return
                chunk: list[bytes] = []
                for item in await sub.take():
                    if item is None or item is _DEADLINE:  # shutdown, overflow, lost history, or the timeout
                        if chunk:
                            yield b"".join(chunk)
                        return
                    if item is _BOOKMARK:
                        if sub.empty():  # everything the hub handed to this watch was written
                            last = max(last, sub.delivered)
                        chunk.append(bookmark(last))
                        schedule_bookmark()
                        continue
                    if item.rv <= last:
                        continue
                    last = item.rv
                    if (shown_as := shown_line(item)) is not None:
                        chunk.append(shown_as)
                if chunk:  # whatever was queued goes out in one chunk
                    yield b"".join(chunk)
        finally:
            api.hub.unsubscribe(sub)
            for timer in timers:
                timer.cancel()

    def gone(exc: Exception) -> bytes:
        err = ApiError(410, str(exc), "Expired").status()
        return json.dumps({"type": "ERROR", "object": err}).encode() + b"\n"

    return StreamingResponse(stream(), media_type=JSON)


def _stored_line(kind: str, text: str) -> bytes:
    """A watch event's line around the object's stored JSON text: the bytes ``{"type": kind, "object": obj}``
    encodes to."""
    return b'{"type":"' + kind.encode() + b'","object":' + text.encode() + b"}\n"


def filtered_event(ev: Any, match: Any, selective: bool) -> tuple[str, dict[str, Any]] | None:
    """The event a watcher with selectors sees: as kube-apiserver's watch cache, an object that starts
    matching is ADDED, one that stops matching is DELETED (its previous state at the new version)."""
    if not selective:
        return ev.type, ev.object
    now = match(ev.object)
    if ev.type == "MODIFIED" and ev.prev_json is not None:
        before = ev.prev
        was = match(before)
        if now:
            return ("MODIFIED" if was else "ADDED"), ev.object
        if was:
            meta = {**(before.get("metadata") or {}), "resourceVersion": str(ev.rv)}
            return "DELETED", {**before, "metadata": meta}
        return None
    return (ev.type, ev.object) if now else None
