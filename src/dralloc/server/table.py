"""``meta.k8s.io/v1`` Table responses, which kubectl asks for to print ``get`` output."""

from __future__ import annotations

from typing import Any

from dralloc.server import pods
from dralloc.server.ages import human_age
from dralloc.server.registry import Resource


def _dig(obj: dict[str, Any], path: str) -> Any:
    cur: Any = obj
    for part in path.split("."):
        cur = cur.get(part) if isinstance(cur, dict) else None
    return cur


def claim_state(claim: dict[str, Any]) -> str:
    """kubectl's STATE of a ResourceClaim: deleted, pending, allocated, reserved (comma-joined)."""
    states = []
    deleting = bool((claim.get("metadata") or {}).get("deletionTimestamp"))
    status = claim.get("status") or {}
    if deleting:
        states.append("deleted")
    if not status.get("allocation"):
        if not deleting:
            states.append("pending")
    else:
        states.append("allocated")
        if status.get("reservedFor"):
            states.append("reserved")
    return ",".join(states)


COMPUTED = {"=claimState": claim_state, "=podReady": pods.pod_ready, "=podStatus": pods.pod_status,
            "=podRestarts": pods.pod_restarts, "=readinessGates": pods.readiness_gates,
            "=eventLastSeen": pods.event_last_seen, "=eventObject": pods.event_object}


def _cell(obj: dict[str, Any], path: str) -> Any:
    if path in COMPUTED:
        return COMPUTED[path](obj)
    value = _dig(obj, path)
    return "" if value is None else value


def to_table(resource: Resource, items: list[dict[str, Any]], rv: str) -> dict[str, Any]:
    columns = [{"name": "Name", "type": "string", "format": "name", "description": "Name of the object",
                "priority": 0}]
    columns += [{"name": header.title(), "type": "string", "format": "", "description": path.lstrip("="),
                 "priority": 0}
                for header, path in resource.columns]
    columns.append({"name": "Age", "type": "string", "format": "", "description": "creationTimestamp",
                    "priority": 0})
    columns += [{"name": header.title(), "type": "string", "format": "", "description": path.lstrip("="),
                 "priority": 1}  # shown by -o wide
                for header, path in resource.wide_columns]
    rows = []
    for obj in items:
        meta = obj.get("metadata") or {}
        cells: list[Any] = [meta.get("name", "")]
        cells += [_cell(obj, path) for _, path in resource.columns]
        cells.append(human_age(meta.get("creationTimestamp")))
        cells += [_cell(obj, path) or "<none>" for _, path in resource.wide_columns]
        rows.append({"cells": cells, "object": {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1",
                                                "metadata": meta}})
    return {"kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": {"resourceVersion": rv},
            "columnDefinitions": columns, "rows": rows}
