"""The StatefulSet controller of ``dralloc serve``: pods ``<set>-<ordinal>`` for the ordinals from
``spec.ordinals.start``, each labelled with its name, index and the set's revision, with its hostname (and the
set's service as subdomain) and, for each volumeClaimTemplate, a volume on its own claim
``<template>-<set>-<ordinal>``, which the controller creates.

OrderedReady (the default) creates the lowest missing ordinal once every lower one is running and ready, and
removes the highest one beyond ``replicas`` once the others are ready; Parallel creates and removes them all at
once. A new template rolls out from the highest ordinal down (to ``partition``), one pod at a time once the
others are ready. ControllerRevisions are not written: the revision is the template's hash."""

from __future__ import annotations

import copy
import re

from dralloc.api import apps_v1
from dralloc.controllers.names import pod_template_hash
from dralloc.controllers.workloads import REVISION_HASH
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
    spec_of,
    status_of,
    without_zeros,
    write_status,
)
from dralloc.server.controllers.writes import Writer
from dralloc.store import Conflict

POD_NAME = "statefulset.kubernetes.io/pod-name"
POD_INDEX = "apps.kubernetes.io/pod-index"


def revision(snap: Snapshot, sts: Obj) -> str:
    typed = snap.cache.typed("statefulsets", sts)
    template = typed.spec.template if isinstance(typed, apps_v1.StatefulSet) else apps_v1.StatefulSetSpec().template
    collisions = status_of(sts).get("collisionCount")
    return f"{meta(sts).get('name')}-{pod_template_hash(template, collisions if isinstance(collisions, int) else None)}"


def _ordinal(sts: Obj, pod: Obj) -> int | None:
    match = re.fullmatch(re.escape(str(meta(sts).get("name"))) + r"-(\d+)", str(meta(pod).get("name")))
    return int(match.group(1)) if match else None


def is_member(sts: Obj, pod: Obj) -> bool:
    """isMemberOf: the pod is named after the set (``<set>-<ordinal>``): only such pods are adopted."""
    return _ordinal(sts, pod) is not None


def _claim_templates(sts: Obj) -> list[Obj]:
    return [t for t in spec_of(sts).get("volumeClaimTemplates") or [] if isinstance(t, dict)]


def _pod(sts: Obj, ordinal: int, rev: str) -> Obj:
    name = f"{meta(sts).get('name')}-{ordinal}"
    pod = pod_from_template(spec_of(sts).get("template") or {}, sts, name=name,
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
                 "spec": copy.deepcopy(template.get("spec") or {}), "status": {"phase": "Pending"}}
        try:
            writer.create("persistentvolumeclaims", namespace, claim)
        except Conflict:
            pass


COMPONENT = "statefulset-controller"


def sync_stateful_set(control: PodControl, snap: Snapshot, sts: Obj, pods: list[Obj]) -> bool:
    rev = revision(snap, sts)
    start = int((spec_of(sts).get("ordinals") or {}).get("start") or 0)
    want = replicas(sts)
    wanted = range(start, start + want)
    parallel = spec_of(sts).get("podManagementPolicy") == "Parallel"
    by_ordinal = {o: p for p in pods if (o := _ordinal(sts, p)) is not None}
    active = {o: p for o, p in by_ordinal.items() if is_active(p)}
    changed = False
    if not meta(sts).get("deletionTimestamp"):
        changed = _step(control, sts, rev, wanted, by_ordinal, active, parallel)
    seconds = min_ready_seconds(sts)
    current = [p for p in active.values()]
    updated = sum(1 for p in current if (meta(p).get("labels") or {}).get(REVISION_HASH) == rev)
    ready = sum(1 for p in current if is_ready(p))
    old_status = status_of(sts)
    current_rev = old_status.get("currentRevision") or rev
    if updated == want and ready == want:
        current_rev = rev
    status = without_zeros({
        "observedGeneration": meta(sts).get("generation"), "replicas": len(current), "readyReplicas": ready,
        "currentReplicas": updated if current_rev == rev else len(current) - updated, "updatedReplicas": updated,
        "currentRevision": current_rev, "updateRevision": rev, "collisionCount": old_status.get("collisionCount", 0),
        "availableReplicas": sum(1 for p in current if is_available(p, seconds))},
        "readyReplicas", "currentReplicas", "updatedReplicas")
    status["availableReplicas"] = status.get("availableReplicas", 0)
    return write_status(control.writer, "statefulsets", sts, status) or changed


def _step(control: PodControl, sts: Obj, rev: str, wanted: range, by_ordinal: dict[int, Obj],
          active: dict[int, Obj], parallel: bool) -> bool:
    """One step towards the wanted pods: create missing ordinals, remove the ones beyond, roll out the
    template."""
    set_name = meta(sts).get("name")

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
        changed |= control.create(sts, _pod(sts, ordinal, rev), COMPONENT,
                                  f"create Pod {{}} in StatefulSet {set_name} successful")
        if not parallel:
            return changed
    extra = sorted((o for o in active if o not in wanted), reverse=True)
    for ordinal in extra[:None if parallel else 1]:
        changed |= gone(active[ordinal])
    if extra or changed:
        return changed
    partition = int(((spec_of(sts).get("updateStrategy") or {}).get("rollingUpdate") or {}).get("partition") or 0)
    if (spec_of(sts).get("updateStrategy") or {}).get("type", "RollingUpdate") != "RollingUpdate":
        return False
    outdated = [o for o in sorted(wanted, reverse=True) if o >= wanted.start + partition and o in active
                and (meta(active[o]).get("labels") or {}).get(REVISION_HASH) != rev]
    if outdated and all(is_ready(p) for p in active.values()):
        changed |= gone(active[outdated[0]])
    return changed
