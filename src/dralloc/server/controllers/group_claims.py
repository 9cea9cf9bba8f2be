"""The resourceclaim controller's part for PodGroups in ``dralloc serve`` (DRAWorkloadResourceClaims): a
ResourceClaim per PodGroup claim that names a ResourceClaimTemplate — built by the rule the simulator follows
(``dralloc.controllers.resourceclaims.claim_from_template``, owned by the PodGroup, annotated with the group's
claim name) — recorded in the PodGroup's ``status.resourceClaimStatuses``. A member pod's template entry that
matches a group claim exactly gets no claim of its own: it waits for the group's, then its own
``status.resourceClaimStatuses`` names it."""

from __future__ import annotations

from functools import partial
from typing import Any

from dralloc.api.core_v1 import Pod
from dralloc.api.meta import OwnerReference
from dralloc.api.resource_v1 import ResourceClaim, ResourceClaimTemplate
from dralloc.api.scheduling_v1alpha2 import GROUP_VERSION, PodGroup
from dralloc.controllers.resourceclaims import claim_from_template
from dralloc.scheduler.plugins.dynamic_resources.group_claims import PODGROUP_CLAIM_NAME_ANNOTATION
from dralloc.server.controllers.claim_statuses import make_claims, record_claim_statuses
from dralloc.server.controllers.snapshot import Snapshot
from dralloc.server.controllers.writes import Writer

PODGROUPS = "podgroups"
Obj = dict[str, Any]


def pod_group_of(snap: Snapshot, pod: Pod) -> PodGroup | None:
    """The PodGroup the pod names, when it exists and can be read."""
    group = pod.spec.scheduling_group
    if group is None or not group.pod_group_name:
        return None
    stored = snap.mirror.get(PODGROUPS, (pod.metadata.namespace or "default", group.pod_group_name))
    typed = snap.cache.typed(PODGROUPS, stored) if stored is not None else None
    return typed if isinstance(typed, PodGroup) else None


def group_entries(pod: Pod, group: PodGroup) -> dict[str, str | None]:
    """The pod's template entries that are the group's claim (same name, same template): entry name → the
    group's generated claim, None while the group has none yet."""
    made = {s.name: s.resource_claim_name
            for s in (group.status.resource_claim_statuses if group.status else None) or ()}
    shared = {c.name: c for c in group.spec.resource_claims or ()}
    out: dict[str, str | None] = {}
    for entry in pod.spec.resource_claims or ():
        match = shared.get(entry.name)
        if match is not None and entry.resource_claim_template_name is not None \
                and match.resource_claim_name is None \
                and match.resource_claim_template_name == entry.resource_claim_template_name:
            out[entry.name] = made.get(entry.name)
    return out


def needs_group_claims_made(snap: Snapshot, group_obj: Obj) -> bool:
    group = snap.cache.typed(PODGROUPS, group_obj)
    return isinstance(group, PodGroup) and bool(_unresolved(group))


def _unresolved(group: PodGroup) -> list[Any]:
    resolved = {s.name for s in (group.status.resource_claim_statuses if group.status else None) or ()}
    return [c for c in group.spec.resource_claims or ()
            if c.resource_claim_template_name is not None and c.name not in resolved]


def create_pod_group_claims(writer: Writer, group_obj: Obj, snap: Snapshot) -> bool:
    """Create the claims of the group's unresolved template entries and record them in its status; a claim
    made before (found by owner and annotation) is reused. False when a template is missing (it waits)."""
    group = snap.cache.typed(PODGROUPS, group_obj)
    if not isinstance(group, PodGroup):
        return True
    meta = group.metadata
    namespace, name, uid = meta.namespace or "default", meta.name or "", meta.uid or ""
    existing: dict[str, str] = {}
    for c in snap.claims:
        cmeta = c.get("metadata") or {}
        owned = any(isinstance(o, dict) and o.get("uid") == uid and o.get("controller")
                    for o in cmeta.get("ownerReferences") or ())
        if owned and cmeta.get("namespace") == namespace:
            existing[str((cmeta.get("annotations") or {}).get(PODGROUP_CLAIM_NAME_ANNOTATION))] = str(cmeta.get("name"))
    owner = OwnerReference(api_version=GROUP_VERSION, kind="PodGroup", name=name, uid=uid, controller=True,
                           block_owner_deletion=True)

    def build(template: ResourceClaimTemplate, entry: str, claim_name: str, base: str) -> ResourceClaim:
        return claim_from_template(template, claim_name, base, namespace, None, owner,
                                   (PODGROUP_CLAIM_NAME_ANNOTATION, entry))

    recorded, complete = make_claims(
        writer, snap, namespace, name,
        [(c.name, c.resource_claim_template_name or "") for c in _unresolved(group)], existing, build)
    if recorded:
        order = [c.name for c in group.spec.resource_claims or ()]
        writer.update(PODGROUPS, namespace, name, partial(record_claim_statuses, recorded, order), uid=uid)
    return complete

