"""DRA admin access (KEP-5018, GA): a request with ``adminAccess: true``, and an allocation result granting it,
only in a namespace labelled ``resource.kubernetes.io/admin-access: "true"``.

kube-apiserver's ResourceClaim and ResourceClaimTemplate strategies look the namespace up on every create (the
spec is immutable afterwards) and on every status write that grants admin access for the first time; the
refusal is a field error of the object's validation (422), at the first request or result asking for it.
"""

from __future__ import annotations

from typing import Any

from dralloc.server.views import ObjectView
from dralloc.store import NotFound, SQLStore
from dralloc.validation import field as f

LABEL = "resource.kubernetes.io/admin-access"
REFUSED = f"admin access to devices requires the `{LABEL}: true` label on the containing namespace"


def _labelled(store: SQLStore, namespace: str) -> bool:
    try:
        ns = store.get("namespaces", "", namespace)
    except NotFound:
        return False
    return ObjectView(ns).labels.get(LABEL) == "true"


def _first(items: Any, granted: Any) -> int | None:
    for i, item in enumerate(items if isinstance(items, list) else ()):
        if isinstance(item, dict) and granted(item) is True:
            return i
    return None


def spec_errors(store: SQLStore, namespace: str, obj: dict[str, Any], template: bool) -> list[f.FieldError]:
    """The refusal of a claim's (or a template's claim's) admin-access request in an unlabelled namespace."""
    spec = obj.get("spec") or {}
    if template:
        spec = spec.get("spec") or {}
    requests = (spec.get("devices") or {}).get("requests")
    index = _first(requests, lambda r: (r.get("exactly") or {}).get("adminAccess"))
    if index is None or _labelled(store, namespace):
        return []
    return [f.forbidden(f"spec.devices.requests[{index}].adminAccess", REFUSED)]


def _results(claim: dict[str, Any]) -> Any:
    return (((claim.get("status") or {}).get("allocation") or {}).get("devices") or {}).get("results")


def status_errors(store: SQLStore, namespace: str, new: dict[str, Any], old: dict[str, Any]) -> list[f.FieldError]:
    """The refusal of an allocation granting admin access in an unlabelled namespace (an allocation that
    granted it already stays: it cannot change)."""
    if _first(_results(old), lambda r: r.get("adminAccess")) is not None:
        return []
    index = _first(_results(new), lambda r: r.get("adminAccess"))
    if index is None or _labelled(store, namespace):
        return []
    return [f.forbidden(f"status.allocation.devices.results[{index}].adminAccess", REFUSED)]
