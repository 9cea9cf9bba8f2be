"""Required pod (anti-)affinity terms added to a pod's affinity, as the JobSet and LeaderWorkerSet pod webhooks
add them for exclusive placement."""

from __future__ import annotations

from typing import Any

from msgspec.structs import replace

from dralloc.api.core_v1 import Affinity

REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"


def with_required_terms(affinity: Affinity | None, together: dict[str, Any], apart: dict[str, Any] | None) -> Affinity:
    """``affinity`` with a required pod affinity term ``together`` (and a required anti-affinity term
    ``apart``) appended after the terms it already has."""
    affinity = affinity or Affinity()
    pod_affinity = dict(affinity.pod_affinity or {})
    pod_affinity[REQUIRED] = [*(pod_affinity.get(REQUIRED) or []), together]
    anti = affinity.pod_anti_affinity
    if apart is not None:
        anti = dict(anti or {})
        anti[REQUIRED] = [*(anti.get(REQUIRED) or []), apart]
    return replace(affinity, pod_affinity=pod_affinity, pod_anti_affinity=anti)
