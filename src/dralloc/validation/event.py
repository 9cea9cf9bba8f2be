"""An Event's rules of kube-apiserver, on its core/v1 form (paths are the internal names upstream reports): the
legacy ones every event write is checked with, the stricter ones of a create through events.k8s.io/v1, and what
an update through events.k8s.io/v1 may not change."""

from __future__ import annotations

from typing import Any

from dralloc.validation import field as f
from dralloc.validation.formats import is_qualified_name
from dralloc.validation.meta import name_is_dns_subdomain, validate_object_meta

# kube-apiserver's limits on the fields of new-style events
REPORTING_INSTANCE_LIMIT = 128
ACTION_LIMIT = 128
REASON_LIMIT = 128
NOTE_LIMIT = 1024


def is_empty(value: Any) -> bool:
    return value is None or value == "" or value == 0 or value == {}


def _object(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def event_create_errors(event: dict[str, Any], typed_meta: Any) -> list[f.FieldError]:
    """A core/v1 Event: its metadata and kube-apiserver's legacy event rules (``legacy_errors``)."""
    return validate_object_meta(typed_meta, True, name_is_dns_subdomain, require_namespace=True) + legacy_errors(event)


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


def events_v1_create_errors(event: dict[str, Any]) -> list[f.FieldError]:
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
        if not is_empty(event.get(name)):
            errors.append(f.invalid(name, "", "needs to be unset"))
    source = _object(event.get("source"))
    if source.get("component") or source.get("host"):
        errors.append(f.invalid("source", "", "needs to be unset"))
    return errors


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


def events_v1_update_errors(new: dict[str, Any], old: dict[str, Any]) -> list[f.FieldError]:
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
