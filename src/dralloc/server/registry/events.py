"""events.k8s.io/v1 Events: a second view of the core/v1 Events, as kube-apiserver serves them (one stored
resource, two API versions converted field by field).

events.k8s.io/v1 ↔ core/v1: ``regarding`` ↔ ``involvedObject``, ``note`` ↔ ``message``, ``reportingController``
↔ ``reportingComponent``, ``deprecatedSource`` ↔ ``source``, ``deprecatedFirstTimestamp`` ↔ ``firstTimestamp``,
``deprecatedLastTimestamp`` ↔ ``lastTimestamp``, ``deprecatedCount`` ↔ ``count``; ``eventTime``, ``series``,
``reportingInstance``, ``action``, ``reason``, ``related`` and ``type`` have the same names. Creates through
events.k8s.io/v1 are validated strictly (kube-apiserver's ``ValidateEventCreate`` for the new API: an event
time, a reporting controller and instance, an action and a reason, no deprecated fields), creates through
core/v1 keep the legacy rules (both in ``dralloc.validation.event``).
"""

from __future__ import annotations

from typing import Any

from dralloc.server.http.errors import ApiError
from dralloc.server.registry.strategy import CoreStrategy, managed_field_errors
from dralloc.server.types import Obj
from dralloc.store import SQLStore
from dralloc.validation.event import (
    event_create_errors,
    events_v1_create_errors,
    events_v1_update_errors,
    is_empty,
    legacy_errors,
)
from dralloc.validation.field import FieldError
from dralloc.validation.meta import finalizers_added_while_deleting

EVENTS_GROUP = "events.k8s.io"
EVENTS_API_VERSION = "events.k8s.io/v1"
# (events.k8s.io/v1 name, core/v1 name) of the fields whose names differ
RENAMED = (("regarding", "involvedObject"), ("note", "message"), ("reportingController", "reportingComponent"),
           ("deprecatedSource", "source"), ("deprecatedFirstTimestamp", "firstTimestamp"),
           ("deprecatedLastTimestamp", "lastTimestamp"), ("deprecatedCount", "count"))
_TO_V1 = {core: new for new, core in RENAMED}
_TO_CORE = dict(RENAMED)
# The field selectors events.k8s.io/v1 takes, and the stored (core/v1) field each reads.
EVENTS_FIELD_LABELS = {
    "metadata.name": "metadata.name", "metadata.namespace": "metadata.namespace", "reason": "reason",
    "reportingController": "reportingComponent", "type": "type",
    **{f"regarding.{name}": f"involvedObject.{name}"
       for name in ("kind", "namespace", "name", "uid", "apiVersion", "resourceVersion", "fieldPath")},
}
def to_events_v1(event: dict[str, Any]) -> dict[str, Any]:
    """A stored core/v1 Event as events.k8s.io/v1 shows it (empty values are left out, as Go's omitempty)."""
    out: dict[str, Any] = {}
    for key, value in event.items():
        if key == "apiVersion":
            out[key] = EVENTS_API_VERSION
        elif key in _TO_V1:
            if not is_empty(value) and value != {"component": "", "host": ""}:
                out[_TO_V1[key]] = value
        else:
            out[key] = value
    return out


def to_core(event: dict[str, Any]) -> dict[str, Any]:
    """An events.k8s.io/v1 Event in its stored core/v1 form."""
    out: dict[str, Any] = {}
    for key, value in event.items():
        if key == "apiVersion":
            out[key] = "v1"
        else:
            out[_TO_CORE.get(key, key)] = value
    return out


class errors_of:  # lower case: used as a function, ``with errors_of(t):``
    """Failures of a write through events.k8s.io (handled as a core/v1 Event) name that group's resource and
    kind, as kube-apiserver's do (``events.events.k8s.io "x" not found``, ``Event.events.k8s.io "x" is
    invalid``). A class rather than a generator-based context manager: every write goes through one, and
    this costs a fifth of one."""

    __slots__ = ("_target",)

    def __init__(self, t: Any) -> None:
        self._target = t

    def __enter__(self) -> None:
        return None

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: Any) -> None:
        if isinstance(exc, ApiError) and self._target.resource.group == EVENTS_GROUP:
            _as_events_k8s_io(exc)


def _as_events_k8s_io(exc: ApiError) -> None:
    for core, shown in (('events "', 'events.events.k8s.io "'), ('Event "', 'Event.events.k8s.io "')):
        if exc.message.startswith(core) or f"on {core}" in exc.message:
            exc.message = exc.message.replace(core, shown, 1)
            exc.args = (exc.message,)
            break
    if exc.details and exc.details.get("group") == "":
        exc.details["group"] = EVENTS_GROUP


# --- the strategies ---------------------------------------------------------------------------------


class EventStrategy(CoreStrategy):
    """core/v1 Events: the legacy rules on every write."""

    def create_errors(self, typed: Any, stored: Obj | None, namespaced: bool) -> list[FieldError]:
        return event_create_errors(stored or {}, typed.metadata)

    def update_errors(self, merged: Obj, old: Obj, sub: str, typed_meta: Any) -> list[FieldError]:
        return (finalizers_added_while_deleting(merged["metadata"], old["metadata"]) + legacy_errors(merged)
                + managed_field_errors(merged))


class EventsV1Strategy(EventStrategy):
    """events.k8s.io/v1 Events: stored as core/v1 Events (the resource table's ``stored_as``), converted both
    ways, with the stricter rules of that API on create and update."""

    field_labels = EVENTS_FIELD_LABELS

    def to_storage(self, sent: Obj) -> Obj:
        return to_core(sent)

    def to_view(self, stored: Obj) -> Obj:
        return to_events_v1(stored)

    def view_create_errors(self, stored: Obj) -> list[FieldError]:
        return events_v1_create_errors(stored)

    def update_admission_errors(self, store: SQLStore, namespace: str, merged: Obj, old: Obj,
                                sub: str) -> list[FieldError]:
        return events_v1_update_errors(merged, old)  # the rules events.k8s.io adds to the legacy ones


STRATEGY = EventStrategy()
EVENTS_V1_STRATEGY = EventsV1Strategy()
