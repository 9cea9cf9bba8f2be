"""core/v1 Events as client-go's event recorder writes them: named ``<object>.<unix nanoseconds in hex>``,
with the source component, and an identical event (same object, type, reason, message and source) is not
written again: its ``count`` goes up and ``lastTimestamp`` moves, as the recorder's correlator does."""

from __future__ import annotations

import time
from typing import Any

from dralloc.server.clock import now
from dralloc.server.controllers.writes import Writer
from dralloc.store import Conflict

EventKey = tuple[str, str, str, str, str, str]  # namespace, object uid, type, reason, message, component


class EventRecorder:
    def __init__(self, writer: Writer) -> None:
        self.writer = writer
        self._names: dict[EventKey, str] | None = None  # built from the store on first use

    def _index(self) -> dict[EventKey, str]:
        if self._names is None:
            self._names = {}
            events, _ = self.writer.store.list("events")
            for e in events:
                self._names[_key_of(e)] = e["metadata"]["name"]
        return self._names

    def record(self, obj: dict[str, Any], type_: str, reason: str, message: str, component: str,
               action: str | None = None, related: dict[str, Any] | None = None) -> None:
        meta = obj.get("metadata") or {}
        namespace = meta.get("namespace") or "default"
        involved = _reference(obj)
        key: EventKey = (namespace, str(meta.get("uid")), type_, reason, message, component)
        index = self._index()
        stamp = now()
        name = index.get(key)
        if name is not None:
            def bump(event: dict[str, Any]) -> dict[str, Any]:
                event["count"] = int(event.get("count") or 1) + 1
                event["lastTimestamp"] = stamp
                return event

            if self.writer.update("events", namespace, name, bump) is not None:
                return
        event = {"kind": "Event", "apiVersion": "v1",
                 "metadata": {"name": f"{meta.get('name')}.{time.time_ns():x}", "namespace": namespace},
                 "involvedObject": involved, "reason": reason, "message": message, "type": type_,
                 "source": {"component": component}, "firstTimestamp": stamp, "lastTimestamp": stamp,
                 "count": 1, "reportingComponent": component, "reportingInstance": ""}
        if action:
            event["action"] = action
        if related is not None:
            event["related"] = _reference(related)
        try:
            created = self.writer.create("events", namespace, event,
                                         new_name=lambda: f"{meta.get('name')}.{time.time_ns():x}")
        except Conflict:
            return
        index[key] = created["metadata"]["name"]


def _reference(obj: dict[str, Any]) -> dict[str, Any]:
    """The ObjectReference an event names its object (or related object) with."""
    meta = obj.get("metadata") or {}
    return {"kind": obj.get("kind") or "Pod", "namespace": meta.get("namespace") or "default",
            "name": meta.get("name"), "uid": meta.get("uid"), "apiVersion": obj.get("apiVersion") or "v1",
            "resourceVersion": meta.get("resourceVersion")}


def _key_of(event: dict[str, Any]) -> EventKey:
    involved = event.get("involvedObject") or {}
    return ((event.get("metadata") or {}).get("namespace") or "", str(involved.get("uid")), event.get("type") or "",
            event.get("reason") or "", event.get("message") or "", (event.get("source") or {}).get("component") or "")
