"""What the resourceclaim controller does alike for a pod and a PodGroup: the claims of their template entries
made (or found again), and ``status.resourceClaimStatuses`` recording them."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import partial
from typing import Any

from dralloc.api.codec import to_dict
from dralloc.api.resource_v1 import ResourceClaim, ResourceClaimTemplate
from dralloc.controllers.resourceclaims import claim_generate_name
from dralloc.server.controllers.snapshot import Snapshot
from dralloc.server.controllers.writes import Writer
from dralloc.server.names import generated_name

Obj = dict[str, Any]
# (template, entry name, the claim's name, its generateName) -> the claim
ClaimBuilder = Callable[[ResourceClaimTemplate, str, str, str], ResourceClaim]


def make_claims(writer: Writer, snap: Snapshot, namespace: str, owner_name: str,
                entries: Iterable[tuple[str, str]], existing: dict[str, str],
                build: ClaimBuilder) -> tuple[dict[str, str], bool]:
    """For each (entry name, template name): the claim made before (``existing``, by entry name), else one
    created from the template, named from ``<owner>-<entry>-`` (a new name when another object took it).
    Returns entry name -> claim name, and False when a template is missing (the owner waits for it)."""
    recorded: dict[str, str] = {}
    complete = True
    for entry, template_name in entries:
        if entry in existing:
            recorded[entry] = existing[entry]
            continue
        template = snap.template(namespace, template_name)
        if template is None:
            complete = False
            continue
        base = claim_generate_name(owner_name, entry)
        claim: Obj = to_dict(build(template, entry, generated_name(base), base))
        claim["metadata"]["generation"] = 1
        created = writer.create("resourceclaims", namespace, claim, new_name=partial(generated_name, base))
        recorded[entry] = created["metadata"]["name"]
    return recorded, complete


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
