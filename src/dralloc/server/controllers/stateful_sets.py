"""The StatefulSet controller of ``dralloc serve``: pods ``<set>-<ordinal>`` for the ordinals from
``spec.ordinals.start``, each labelled with its name, index and the set's revision, with its hostname (and the
set's service as subdomain) and, for each volumeClaimTemplate, a volume on its own claim
``<template>-<set>-<ordinal>``, which the controller creates.

OrderedReady (the default) creates the lowest missing ordinal once every lower one is running and ready, and
removes the highest one beyond ``replicas`` once the others are ready; Parallel creates and removes them all at
once. A new template rolls out from the highest ordinal down (to ``partition``): as many outdated pods are
deleted at once as ``rollingUpdate.maxUnavailable`` (a count or a share of ``replicas`` rounded down, at least
1; the MaxUnavailableStatefulSet gate is on by default in 1.36) leaves room for beside the pods already
unavailable (missing, terminating, not ready or not yet ``minReadySeconds`` ready); OnDelete replaces only the
pods deleted. Each template is kept in a ControllerRevision
(``revisions.py``): a template that returns reuses (and renumbers) its revision, the pods carry the revision's
name, pods below the partition are made from the current revision, and beyond ``revisionHistoryLimit`` the
oldest revisions no pod uses go."""

from __future__ import annotations

from dralloc.controllers.workloads import REVISION_HASH
from dralloc.server.controllers import revisions
from dralloc.server.controllers.snapshot import Snapshot
from dralloc.server.controllers.workload_pods import (
    Obj,
    PodControl,
    is_active,
    is_available,
    is_ready,
    meta,
    min_ready_seconds,
    pod_from_template,
    replicas,
    scaled_value,
    spec_of,
    status_of,
    without_zeros,
    write_status,
)
from dralloc.server.controllers.writes import Writer
from dralloc.server.json_copy import json_copy
from dralloc.store import Conflict

POD_NAME = "statefulset.kubernetes.io/pod-name"
POD_INDEX = "apps.kubernetes.io/pod-index"


def sync_revisions(writer: Writer, sts: Obj, owned: list[Obj]) -> tuple[Obj, Obj, int]:
    """getStatefulSetRevisions: the current and update revisions and the collision count. The template's
    revision is the newest when it is; an older one of the same data is renumbered the newest (a rollback);
    otherwise a new one is made."""
    owned = revisions.sort_revisions(owned)
    collisions = status_of(sts).get("collisionCount")
    collision_count = collisions if isinstance(collisions, int) else 0
    next_number = revisions.number(owned[-1]) + 1 if owned else 1
    data = revisions.go_json(revisions.template_patch(sts))
    probe = revisions.new_revision(sts, next_number, "", revisions.revision_hash(data, collision_count))
    same = [r for r in owned if revisions.equal(r, probe)]
    if same and revisions.equal(owned[-1], same[-1]):
        update = owned[-1]
    elif same:
        update = revisions.renumber(writer, same[-1], next_number)
    else:
        update, collision_count = revisions.create(writer, sts, probe, collision_count)
    current_name = status_of(sts).get("currentRevision")
    current = next((r for r in owned if meta(r).get("name") == current_name), update)
    return current, update, collision_count


def truncate_history(writer: Writer, sts: Obj, owned: list[Obj], live: set[str]) -> None:
    """truncateHistory: beyond revisionHistoryLimit, the oldest revisions that are neither current, update nor
    any pod's go."""
    history = [r for r in revisions.sort_revisions(owned) if meta(r).get("name") not in live]
    for old in history[:max(len(history) - revisions.history_limit(sts), 0)]:
        revisions.delete(writer, old)


def _ordinal(sts: Obj, pod: Obj) -> int | None:
    """getParentNameAndOrdinal: the ordinal of a pod named ``<set>-<digits>`` (None for any other name)."""
    prefix, name = f"{meta(sts).get('name')}-", str(meta(pod).get("name"))
    digits = name[len(prefix):] if name.startswith(prefix) else ""
    return int(digits) if digits.isascii() and digits.isdigit() else None


def is_member(sts: Obj, pod: Obj) -> bool:
    """isMemberOf: the pod is named after the set (``<set>-<ordinal>``): only such pods are adopted."""
    return _ordinal(sts, pod) is not None


def _claim_templates(sts: Obj) -> list[Obj]:
    return [t for t in spec_of(sts).get("volumeClaimTemplates") or [] if isinstance(t, dict)]


def _pod(sts: Obj, ordinal: int, revision: Obj) -> Obj:
    """newStatefulSetPod of the set as the revision has it (its template)."""
    rev = str(meta(revision).get("name"))
    name = f"{meta(sts).get('name')}-{ordinal}"
    pod = pod_from_template(revisions.template_of(revision), sts, name=name,
                            labels={POD_NAME: name, POD_INDEX: str(ordinal), REVISION_HASH: rev})
    spec = pod["spec"]
    spec["hostname"] = name
    if spec_of(sts).get("serviceName"):
        spec["subdomain"] = spec_of(sts)["serviceName"]
    claims = [str(meta(t).get("name")) for t in _claim_templates(sts)]
    if claims:
        volumes = [v for v in spec.get("volumes") or [] if isinstance(v, dict) and v.get("name") not in claims]
        spec["volumes"] = volumes + [{"name": c, "persistentVolumeClaim": {
            "claimName": f"{c}-{meta(sts).get('name')}-{ordinal}"}} for c in claims]
    return pod


def _create_claims(writer: Writer, sts: Obj, ordinal: int) -> None:
    """getPersistentVolumeClaims: each template's claim for the ordinal, labelled with the set's selector
    labels; one that exists already is kept."""
    namespace = meta(sts).get("namespace") or "default"
    selector = (spec_of(sts).get("selector") or {}).get("matchLabels") or {}
    for template in _claim_templates(sts):
        claim_meta: Obj = {"name": f"{meta(template).get('name')}-{meta(sts).get('name')}-{ordinal}",
                           "namespace": namespace}
        labels = {**(meta(template).get("labels") or {}), **selector}
        if labels:
            claim_meta["labels"] = labels
        if meta(template).get("annotations"):
            claim_meta["annotations"] = dict(meta(template)["annotations"])
        claim = {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": claim_meta,
                 "spec": json_copy(template.get("spec") or {}), "status": {"phase": "Pending"}}
        try:
            writer.create("persistentvolumeclaims", namespace, claim)
        except Conflict:
            pass


COMPONENT = "statefulset-controller"


def sync_stateful_set(control: PodControl, snap: Snapshot, sts: Obj, pods: list[Obj], owned: list[Obj]) -> bool:
    """One sync of a StatefulSet over its pods and its ControllerRevisions (``owned``); True when it wrote."""
    writer = control.writer
    live = not meta(sts).get("deletionTimestamp")
    if live:
        current, update, collision_count = sync_revisions(writer, sts, owned)
    else:  # (a set being deleted makes nothing, not even a revision)
        known = revisions.sort_revisions(owned)
        if not known:
            return False
        update = known[-1]
        current = next((r for r in known if meta(r).get("name") == status_of(sts).get("currentRevision")), update)
        collision_count = int(status_of(sts).get("collisionCount") or 0)
    rev, current_rev = str(meta(update).get("name")), str(meta(current).get("name"))
    start = int((spec_of(sts).get("ordinals") or {}).get("start") or 0)
    want = replicas(sts)
    wanted = range(start, start + want)
    parallel = spec_of(sts).get("podManagementPolicy") == "Parallel"
    by_ordinal = {o: p for p in pods if (o := _ordinal(sts, p)) is not None}
    active = {o: p for o, p in by_ordinal.items() if is_active(p)}
    changed = False
    if live:
        changed = _step(control, sts, (current, update), wanted, by_ordinal, active, parallel)
    seconds = min_ready_seconds(sts)
    current_pods = list(active.values())

    def revision_of(pod: Obj) -> str | None:
        return (meta(pod).get("labels") or {}).get(REVISION_HASH)

    updated = sum(1 for p in current_pods if revision_of(p) == rev)
    ready = sum(1 for p in current_pods if is_ready(p))
    on_current = sum(1 for p in current_pods if revision_of(p) == current_rev)
    rolling = (spec_of(sts).get("updateStrategy") or {}).get("type", "RollingUpdate") == "RollingUpdate"
    if rolling and updated == len(current_pods) == want and ready == want:  # completeRollingUpdate
        current_rev, on_current = rev, updated
    status = without_zeros({
        "observedGeneration": meta(sts).get("generation"), "replicas": len(current_pods), "readyReplicas": ready,
        "currentReplicas": on_current, "updatedReplicas": updated,
        "currentRevision": current_rev, "updateRevision": rev, "collisionCount": collision_count,
        "availableReplicas": sum(1 for p in current_pods if is_available(p, seconds))},
        "readyReplicas", "currentReplicas", "updatedReplicas")
    status["availableReplicas"] = status.get("availableReplicas", 0)
    if live:
        truncate_history(writer, sts, owned, {rev, current_rev} | {r for p in pods if (r := revision_of(p))})
    return write_status(writer, "statefulsets", sts, status) or changed


def max_unavailable(sts: Obj) -> int:
    """getStatefulSetMaxUnavailable: ``rollingUpdate.maxUnavailable`` (1 when unset) of ``replicas``, rounded
    down and at least 1."""
    rolling = (spec_of(sts).get("updateStrategy") or {}).get("rollingUpdate") or {}
    value = scaled_value(rolling.get("maxUnavailable", 1), replicas(sts), round_up=False)
    return max(value if value is not None else 1, 1)


def _step(control: PodControl, sts: Obj, current_and_update: tuple[Obj, Obj], wanted: range,
          by_ordinal: dict[int, Obj], active: dict[int, Obj], parallel: bool) -> bool:
    """One step towards the wanted pods: create missing ordinals (below the partition from the current
    revision), remove the ones beyond, roll out the update revision."""
    current, update = current_and_update
    rev = str(meta(update).get("name"))
    set_name = meta(sts).get("name")
    strategy = spec_of(sts).get("updateStrategy") or {}
    rolling = strategy.get("type", "RollingUpdate") == "RollingUpdate"
    partition = int((strategy.get("rollingUpdate") or {}).get("partition") or 0)

    def versioned(ordinal: int) -> Obj:
        """newVersionedStatefulSetPod: below the partition, a RollingUpdate set's pods stay at the current
        revision."""
        if rolling and ordinal < wanted.start + partition:
            return _pod(sts, ordinal, current)
        return _pod(sts, ordinal, update)

    def gone(pod: Obj) -> bool:
        return control.delete(sts, pod, COMPONENT, f"delete Pod {{}} in StatefulSet {set_name} successful")

    changed = False
    for ordinal in wanted:
        if ordinal in by_ordinal:
            pod = by_ordinal[ordinal]
            if is_active(pod) and is_ready(pod):
                continue
            if not is_active(pod) and not meta(pod).get("deletionTimestamp"):
                changed |= gone(pod)  # a finished pod is replaced
            if not parallel:
                return changed  # OrderedReady: wait for this one
            continue
        _create_claims(control.writer, sts, ordinal)
        changed |= control.create(sts, versioned(ordinal), COMPONENT,
                                  f"create Pod {{}} in StatefulSet {set_name} successful")
        if not parallel:
            return changed
    extra = sorted((o for o in active if o not in wanted), reverse=True)
    for ordinal in extra[:None if parallel else 1]:
        changed |= gone(active[ordinal])
    if extra or changed or not rolling:
        return changed
    # updateStatefulSetAfterInvariantEstablished: within the maxUnavailable budget, highest ordinals first
    seconds = min_ready_seconds(sts)
    unavailable = sum(1 for o in wanted if o not in active or not is_available(active[o], seconds))
    budget = max_unavailable(sts) - unavailable
    outdated = [o for o in sorted(wanted, reverse=True) if o >= wanted.start + partition and o in active
                and (meta(active[o]).get("labels") or {}).get(REVISION_HASH) != rev]
    for ordinal in outdated[:max(budget, 0)]:
        changed |= gone(active[ordinal])
    return changed
