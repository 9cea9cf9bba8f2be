"""The resourceclaim controller: a ResourceClaim per ``resourceClaimTemplateName`` entry of a pod (named as
upstream names them, owned by the pod, recorded in ``pod.status.resourceClaimStatuses``), and the cleanup of
``reservedFor`` when pods finish or go: a claim nobody reserves any more is deallocated, and a claim made for
a pod that is gone is deleted."""

from __future__ import annotations

from collections.abc import Iterable
from functools import partial
from typing import Any

from dralloc.api.core_v1 import Pod
from dralloc.api.resource_v1 import ResourceClaim, ResourceClaimTemplate
from dralloc.controllers.claim_release import ClaimRelease, release
from dralloc.controllers.resourceclaims import (
    POD_CLAIM_NAME_ANNOTATION,
    template_claim,
    unresolved_template_entries,
)
from dralloc.server.controllers.claim_statuses import make_claims, record_claim_statuses
from dralloc.server.controllers.group_claims import group_entries, pod_group_of
from dralloc.server.controllers.snapshot import Snapshot
from dralloc.server.controllers.writes import Writer
from dralloc.store import Outcome

DELETE_PROTECTION = "resource.kubernetes.io/delete-protection"  # the scheduler's finalizer on allocated claims
TERMINAL = ("Succeeded", "Failed")

Obj = dict[str, Any]


def _meta(obj: Obj) -> Obj:
    return obj.get("metadata") or {}


def pod_needs_claims(pod: Obj | None) -> bool:
    """A pod keeps its claims reserved unless it is gone, finished, or being deleted before it ever ran."""
    if pod is None:
        return False
    if (pod.get("status") or {}).get("phase") in TERMINAL:
        return False
    return not (_meta(pod).get("deletionTimestamp") and not (pod.get("spec") or {}).get("nodeName"))


def owner_pod_uid(claim: Obj) -> str | None:
    for ref in _meta(claim).get("ownerReferences") or []:
        if isinstance(ref, dict) and ref.get("kind") == "Pod" and ref.get("apiVersion") == "v1" \
                and ref.get("controller"):
            return ref.get("uid")
    return None


def needs_claims_made(snap: Snapshot, pod: Obj) -> bool:
    """Whether the pod has template entries the resourceclaim controller has not made claims for yet (or not
    recorded its PodGroup's claim for)."""
    typed = snap.cache.typed("pods", pod)
    return isinstance(typed, Pod) and bool(unresolved_template_entries(typed))


def _group_entries(snap: Snapshot, pod: Pod, groups: bool) -> dict[str, str | None]:
    group = pod_group_of(snap, pod) if groups else None
    return group_entries(pod, group) if group is not None else {}


def create_pod_claims(writer: Writer, pod: Obj, snap: Snapshot, groups: bool = False) -> bool:
    """Create the claims of the pod's unresolved template entries (``controllers.resourceclaims``' claims)
    and record them in the pod's status. A claim this controller made before (found by owner and
    annotation, e.g. before a restart) is reused. With ``groups``, an entry that is its PodGroup's claim
    records the group's claim instead, once the group has it. False when a template (or the group's claim)
    is missing: the pod waits."""
    typed = snap.cache.typed("pods", pod)
    if not isinstance(typed, Pod):
        return True  # (an object the scheduler cannot read either)
    shared = _group_entries(snap, typed, groups)
    meta = _meta(pod)
    namespace, name, uid = meta.get("namespace") or "default", meta.get("name") or "", meta.get("uid")
    existing: dict[str, str] = {}
    for c in snap.claims:
        cmeta = _meta(c)
        if owner_pod_uid(c) == uid and cmeta.get("namespace") == namespace:
            existing[str((cmeta.get("annotations") or {}).get(POD_CLAIM_NAME_ANNOTATION))] = str(cmeta.get("name"))
    recorded: dict[str, str] = {}
    complete = True
    own: list[tuple[str, str]] = []
    for entry in unresolved_template_entries(typed):
        if entry.name not in shared:
            own.append((entry.name, entry.resource_claim_template_name or ""))
        elif shared[entry.name] is None:
            complete = False  # the group's claim is not made yet
        else:
            recorded[entry.name] = str(shared[entry.name])
    entries = {e.name: e for e in typed.spec.resource_claims or ()}

    def build(template: ResourceClaimTemplate, entry: str, claim_name: str, base: str) -> ResourceClaim:
        return template_claim(typed, entries[entry], template, claim_name)

    made, made_all = make_claims(writer, snap, namespace, name, own, existing, build)
    recorded.update(made)
    complete = complete and made_all
    if recorded:
        order = [e.name for e in typed.spec.resource_claims or ()]
        writer.update("pods", namespace, name, partial(record_claim_statuses, recorded, order), uid=uid)
    return complete


def _released(ref: Any, pods_by_uid: dict[str, Obj]) -> bool:
    return (isinstance(ref, dict) and ref.get("resource") == "pods" and not ref.get("apiGroup")
            and not pod_needs_claims(pods_by_uid.get(ref.get("uid") or "")))


def release_claims(writer: Writer, claims: Iterable[Obj], pods_by_uid: dict[str, Obj]) -> int:
    """Drop pods that no longer need their claims from ``reservedFor``; deallocate a claim nobody reserves
    any more (dropping the delete-protection finalizer), as well as an unreserved claim being deleted;
    delete a claim whose owning pod is gone (the rule: ``dralloc.controllers.claim_release``). Returns the
    number of claims deallocated or deleted."""
    freed = 0
    for claim in claims:
        meta = _meta(claim)
        owner = owner_pod_uid(claim)
        orphan = owner is not None and owner not in pods_by_uid

        decided: list[ClaimRelease[Any]] = []  # the rule's outcome on the version last read

        def change(current: Obj, orphan: bool = orphan, decided: list[ClaimRelease[Any]] = decided
                   ) -> Obj | Outcome | None:
            status = current.get("status") or {}
            cmeta = current["metadata"]
            before = status.get("reservedFor") or []
            outcome = release(before, lambda ref: _released(ref, pods_by_uid), owner_gone=orphan,
                              deleting=bool(cmeta.get("deletionTimestamp")))
            decided.append(outcome)
            if outcome.reserved_for:
                if not outcome.changed:
                    return None
                status["reservedFor"] = outcome.reserved_for
                return current
            protected = DELETE_PROTECTION in (cmeta.get("finalizers") or [])
            if not outcome.deallocate or (status.get("allocation") is None and not before and not protected):
                return None
            for key in ("reservedFor", "allocation", "devices"):
                status.pop(key, None)
            if status:
                current["status"] = status
            else:
                current.pop("status", None)
            finalizers = [f for f in cmeta.get("finalizers") or [] if f != DELETE_PROTECTION]
            if finalizers:
                cmeta["finalizers"] = finalizers
            else:
                cmeta.pop("finalizers", None)
                if cmeta.get("deletionTimestamp"):
                    return Outcome(current, "DELETED")  # the last finalizer went: the deletion completes
            return current

        before = claim.get("status") or {}
        needs = (any(_released(r, pods_by_uid) for r in before.get("reservedFor") or [])
                 or (not before.get("reservedFor") and (orphan or meta.get("deletionTimestamp"))))
        if not needs:
            continue
        namespace, name, uid = meta.get("namespace") or "", meta.get("name") or "", meta.get("uid")
        result = writer.update("resourceclaims", namespace, name, change, uid=uid)
        if result is None or (result.get("status") or {}).get("reservedFor"):
            continue
        # Counted only when something was written: a claim held by another finalizer stays as it is.
        changed = _meta(result).get("resourceVersion") != meta.get("resourceVersion")
        if decided and decided[-1].delete:
            writer.delete("resourceclaims", namespace, name, uid=uid)
            changed = True
        freed += changed
    return freed


def unreserve(writer: Writer, claim: Obj, uid: str) -> None:
    """Take one pod out of a claim's ``reservedFor`` (a placement that could not be completed); a claim left
    unreserved is deallocated."""
    def change(current: Obj) -> Obj | None:
        status = current.get("status") or {}
        outcome = release(status.get("reservedFor") or [], lambda ref: isinstance(ref, dict) and ref.get("uid") == uid)
        if not outcome.changed:
            return None
        if outcome.reserved_for:
            status["reservedFor"] = outcome.reserved_for
            return current
        for key in ("reservedFor", "allocation", "devices"):
            status.pop(key, None)
        finalizers = [f for f in current["metadata"].get("finalizers") or [] if f != DELETE_PROTECTION]
        if finalizers:
            current["metadata"]["finalizers"] = finalizers
        else:
            current["metadata"].pop("finalizers", None)
        return current

    meta = _meta(claim)
    writer.update("resourceclaims", meta.get("namespace") or "", meta.get("name") or "", change, uid=meta.get("uid"))
