"""events.k8s.io/v1 Events: a second view of the core/v1 Events, as kube-apiserver serves them (one stored
resource, two API versions converted field by field).

events.k8s.io/v1 ↔ core/v1: ``regarding`` ↔ ``involvedObject``, ``note`` ↔ ``message``, ``reportingController``
↔ ``reportingComponent``, ``deprecatedSource`` ↔ ``source``, ``deprecatedFirstTimestamp`` ↔ ``firstTimestamp``,
``deprecatedLastTimestamp`` ↔ ``lastTimestamp``, ``deprecatedCount`` ↔ ``count``; ``eventTime``, ``series``,
``reportingInstance``, ``action``, ``reason``, ``related`` and ``type`` have the same names. Creates through
events.k8s.io/v1 are validated strictly (kube-apiserver's ``ValidateEventCreate`` for the new API: an event
time, a reporting controller and instance, an action and a reason, no deprecated fields), creates through
core/v1 keep the legacy rules.
"""

from __future__ import annotations

from typing import Any

from dralloc.server.http.errors import ApiError
from dralloc.validation import field as f
from dralloc.validation.formats import is_qualified_name

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
# kube-apiserver's limits on the fields of new-style events
REPORTING_INSTANCE_LIMIT = 128
ACTION_LIMIT = 128
REASON_LIMIT = 128
NOTE_LIMIT = 1024


def _empty(value: Any) -> bool:
    return value is None or value == "" or value == 0 or value == {}


def _object(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def to_events_v1(event: dict[str, Any]) -> dict[str, Any]:
    """A stored core/v1 Event as events.k8s.io/v1 shows it (empty values are left out, as Go's omitempty)."""
    out: dict[str, Any] = {}
    for key, value in event.items():
        if key == "apiVersion":
            out[key] = EVENTS_API_VERSION
        elif key in _TO_V1:
            if not _empty(value) and value != {"component": "", "host": ""}:
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


def legacy_errors(event: dict[str, Any]) -> list[f.FieldError]:
    """kube-apiserver's checks of every Event, whichever API writes it (``event`` in core/v1 form; paths are the
    internal names upstream reports): an old-style event (no ``eventTime``) names an object of its own
    namespace (or of none, in ``default``); a new-style one says who reported it, what and why."""
    errors: list[f.FieldError] = []
    involved = _object(event.get("involvedObject"))
    involved_ns = str(involved.get("namespace") or "")
    namespace = str((event.get("metadata") or {}).get("namespace") or "")
    mismatch = f.invalid("involvedObject.namespace", involved_ns, "does not match event.namespace")
    if not event.get("eventTime"):
        if (not involved_ns and namespace not in ("", "default")) or (involved_ns and involved_ns != namespace):
            errors.append(mismatch)
        return errors
    if not involved_ns and namespace not in ("default", "kube-system"):
        errors.append(mismatch)
    controller = str(event.get("reportingComponent") or "")
    if not controller:
        errors.append(f.required("reportingController", ""))
    errors.extend(f.invalid("reportingController", controller, m) for m in is_qualified_name(controller))
    for name, limit in (("reportingInstance", REPORTING_INSTANCE_LIMIT), ("action", ACTION_LIMIT),
                        ("reason", REASON_LIMIT)):
        value = str(event.get(name) or "")
        if not value:
            errors.append(f.required(name, ""))
        if len(value) > limit:
            errors.append(f.invalid(name, "", f"can have at most {limit} characters"))
    if len(str(event.get("message") or "")) > NOTE_LIMIT:
        errors.append(f.invalid("message", "", f"can have at most {NOTE_LIMIT} characters"))
    return errors


def validate_create(event: dict[str, Any]) -> list[f.FieldError]:
    """The rules of an Event created through events.k8s.io/v1: the legacy ones, then the new API's own (an event
    time, a series of at least 2, a type, none of the deprecated fields)."""
    errors = legacy_errors(event)
    series = event.get("series")
    if isinstance(series, dict):
        if int(series.get("count") or 0) < 2:
            errors.append(f.invalid("series.count", "", "should be at least 2"))
        if not series.get("lastObservedTime"):
            errors.append(f.required("series.lastObservedTime", ""))
    if not event.get("eventTime"):
        errors.append(f.required("eventTime", ""))
    if event.get("type") not in ("Normal", "Warning"):
        errors.append(f.invalid("type", "", f"has invalid value: {event.get('type') or ''}"))
    for name in ("firstTimestamp", "lastTimestamp", "count"):
        if not _empty(event.get(name)):
            errors.append(f.invalid(name, "", "needs to be unset"))
    source = _object(event.get("source"))
    if source.get("component") or source.get("host"):
        errors.append(f.invalid("source", "", "needs to be unset"))
    return errors


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


# --- updates through events.k8s.io/v1 ------------------------------------------------------------------

# ValidateEventUpdate's immutable fields, in its order (it checks reason twice, so a changed reason is reported
# twice); reportingComponent is reported by its internal name.
_IMMUTABLE = ("involvedObject", "reason", "message", "source", "firstTimestamp", "lastTimestamp", "count", "reason",
              "type", "eventTime", "action", "related", "reportingComponent", "reportingInstance")
_INTERNAL_NAMES = {"reportingComponent": "reportingController"}
# Go's field order of the structs (how json.Marshal prints a bad value), empty fields left out
_STRUCT_FIELDS = {"involvedObject": ("kind", "namespace", "name", "uid", "apiVersion", "resourceVersion", "fieldPath"),
                  "related": ("kind", "namespace", "name", "uid", "apiVersion", "resourceVersion", "fieldPath"),
                  "source": ("component", "host")}


def _as_go(name: str, value: Any) -> Any:
    """An Event field's value as upstream's error prints it (json.Marshal of the internal field)."""
    if name in _STRUCT_FIELDS:
        if name == "related" and not isinstance(value, dict):
            return None
        struct = _object(value)
        return {k: struct[k] for k in _STRUCT_FIELDS[name] if struct.get(k)}
    if name == "count":
        return value if isinstance(value, int) else 0
    if name in ("firstTimestamp", "lastTimestamp", "eventTime"):
        return value or None
    return "" if value is None else value


def update_errors(new: dict[str, Any], old: dict[str, Any]) -> list[f.FieldError]:
    """The rules kube-apiserver adds to the legacy ones (checked on every event update) for an Event updated
    through events.k8s.io/v1 (both in core/v1 form): a changed series checked, and what an event may not
    change."""
    errors: list[f.FieldError] = []
    series = new.get("series")
    if series != old.get("series") and isinstance(series, dict):
        if int(series.get("count") or 0) < 2:
            errors.append(f.invalid("series.count", "", "should be at least 2"))
        if not series.get("lastObservedTime"):
            errors.append(f.required("series.lastObservedTime", ""))
    for name in _IMMUTABLE:
        value = _as_go(name, new.get(name))
        if value != _as_go(name, old.get(name)):
            errors.append(f.invalid(_INTERNAL_NAMES.get(name, name), value, "field is immutable"))
    return errors
