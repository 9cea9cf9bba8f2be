"""``status.resourceClaimStatuses`` as the resourceclaim controller writes it, for a pod or a PodGroup."""

from __future__ import annotations

from typing import Any

Obj = dict[str, Any]


def record_claim_statuses(recorded: dict[str, str], order: list[str], current: Obj) -> Obj | None:
    """``current`` with an entry per claim made (entry name → claim name) it does not list yet, all in
    ``spec.resourceClaims`` order (``order``); None when nothing is added."""
    status = current.setdefault("status", {})
    statuses = [s for s in status.get("resourceClaimStatuses") or [] if isinstance(s, dict)]
    have = {s.get("name") for s in statuses}
    added = [{"name": k, "resourceClaimName": v} for k, v in recorded.items() if k not in have]
    if not added:
        return None
    statuses += added
    statuses.sort(key=lambda s: order.index(s["name"]) if s["name"] in order else len(order))
    status["resourceClaimStatuses"] = statuses
    return current
