"""The ReplicaSet and Deployment controllers of ``dralloc serve``, as kube-controller-manager's.

* A ReplicaSet keeps ``spec.replicas`` active pods: it creates the missing ones (``<replicaset>-`` + 5
  characters) and deletes the excess in upstream's order (pods not on a node, pending, not ready, newest
  first), and reports replicas, ready and available pods.
* A Deployment keeps one ReplicaSet per pod template, ``<deployment>-<pod-template-hash>``, the template
  labelled and selected by that hash. A new template makes a new ReplicaSet; RollingUpdate then grows it while
  the total stays within ``replicas + maxSurge`` and shrinks the old ones (oldest first) while ``replicas -
  maxUnavailable`` pods stay available; Recreate shrinks the old ones to 0 and starts the new one once their
  pods are gone. Its status (replicas, updated, ready, available; Available and Progressing conditions) is what
  ``kubectl rollout status`` and ``kubectl wait --for=condition=Available`` read.

A scaling event (an active ReplicaSet made for another replica count) and every sync of a paused Deployment
only scale (``deployment_scale.py``): the active ReplicaSets grow or shrink in proportion, no new one is made
and no rollout moves. Old ReplicaSets beyond ``revisionHistoryLimit`` that have scaled to nothing are deleted,
the lowest revisions first, once a rollout is complete (or while paused). The status and its conditions
(paused, progressing, the progress deadline) are ``deployment_status.py``'s.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import msgspec

from dralloc.api.core_v1 import PodTemplateSpec
from dralloc.api.quantity import quantity_dec_hook
from dralloc.controllers.names import pod_template_hash
from dralloc.controllers.workloads import POD_TEMPLATE_HASH
from dralloc.server.controllers.deployment_scale import (
    DEPLOYMENT_COMPONENT,
    DESIRED,
    MAX_REPLICAS,
    by_age,
    is_scaling_event,
    scale,
    set_replicas,
    surge_and_unavailable,
)
from dralloc.server.controllers.deployment_status import (
    FOUND_NEW_RS,
    NEW_RS_CREATED,
    calculate_status,
    complete,
    find,
    new_condition,
    paused_conditions,
    progress_deadline,
    recheck_at,
    rollout_conditions,
    set_condition,
)
from dralloc.server.controllers.workload_pods import (
    Obj,
    PodControl,
    PodSummary,
    controller_ref,
    deletion_order,
    meta,
    min_ready_seconds,
    pod_from_template,
    replicas,
    spec_of,
    stamp,
    status_of,
    without_zeros,
    write_status,
)
from dralloc.server.controllers.writes import Writer
from dralloc.server.json_copy import json_copy
from dralloc.store import Conflict

RS_COMPONENT = "replicaset-controller"
REVISION = "deployment.kubernetes.io/revision"
_NOT_COPIED = frozenset({"kubectl.kubernetes.io/last-applied-configuration", REVISION,
                         "deployment.kubernetes.io/revision-history", DESIRED, MAX_REPLICAS,
                         "deprecated.deployment.rollback.to"})


# --- ReplicaSet -------------------------------------------------------------------------------------


def sync_replica_set(control: PodControl, rs: Obj, pods: PodSummary, resource: str = "replicasets",
                     component: str = RS_COMPONENT) -> bool:
    """Create or delete pods towards ``spec.replicas``, then write the status; True when it wrote. A
    ReplicationController is synced by the same rule (``resource`` "replicationcontrollers", with the
    replication controller's component), as upstream's ReplicationManager wraps the ReplicaSet controller."""
    active = pods.active
    want = replicas(rs)
    changed = False
    if not meta(rs).get("deletionTimestamp"):
        template = spec_of(rs).get("template")
        if len(active) < want and isinstance(template, dict):
            for _ in range(want - len(active)):
                pod = pod_from_template(template, rs, generate_name=f"{meta(rs).get('name')}-")
                changed |= control.create(rs, pod, component)
        elif len(active) > want:
            for pod in deletion_order(active)[:len(active) - want]:
                changed |= control.delete(rs, pod, component)
    status = without_zeros({"replicas": len(active), "fullyLabeledReplicas": len(active), "readyReplicas": pods.ready,
                            "availableReplicas": pods.available(min_ready_seconds(rs)),
                            "observedGeneration": meta(rs).get("generation")},
                           "fullyLabeledReplicas", "readyReplicas", "availableReplicas")
    return write_status(control.writer, resource, rs, status) or changed


# --- Deployment -------------------------------------------------------------------------------------


def _semantic(value: Any) -> Any:
    """A JSON value as Go's semantic equality sees it: null, empty maps and empty lists are unset (kubectl
    rollout undo sends a template with ``creationTimestamp: null``)."""
    if isinstance(value, dict):
        kept = {k: _semantic(v) for k, v in value.items()}
        return {k: v for k, v in kept.items() if v is not None and v != {} and v != []}
    if isinstance(value, list):
        return [_semantic(v) for v in value]
    return value


def _without_hash(template: Any) -> Any:
    """EqualIgnoreHash's form of a pod template: without the pod-template-hash label, semantically."""
    template = _semantic(template) if isinstance(template, dict) else {}
    labels = (template.get("metadata") or {}).get("labels")
    if isinstance(labels, dict):
        labels.pop(POD_TEMPLATE_HASH, None)
    return _semantic(template)


def _unhashed(template: Obj) -> Obj:
    """The template as it is but for the pod-template-hash label (the same dict when it has none)."""
    metadata = template.get("metadata")
    if not isinstance(metadata, dict):
        return template
    labels = metadata.get("labels")
    if not isinstance(labels, dict) or POD_TEMPLATE_HASH not in labels:
        return template
    return {**template, "metadata": {**metadata, "labels": {k: v for k, v in labels.items() if k != POD_TEMPLATE_HASH}}}


class TemplateMatch:
    """EqualIgnoreHash of one Deployment's template against its ReplicaSets' (the form of :func:`_without_hash`,
    built only when needed). A ReplicaSet's template is the Deployment's copied with the hash label added, so
    the two are most often equal as they are once that label is set aside: that costs one comparison of the
    parsed JSON. Otherwise (a null, an empty map or list on one side only: ``kubectl rollout undo`` sends
    ``creationTimestamp: null``) the semantic forms decide."""

    def __init__(self, template: Any) -> None:
        self._raw = _unhashed(template) if isinstance(template, dict) else None
        self._form: Any = None
        self._template = template

    def __call__(self, other: Any) -> bool:
        if self._raw is not None and isinstance(other, dict) and _unhashed(other) == self._raw:
            return True
        if self._form is None:
            self._form = _without_hash(self._template)
        return bool(_without_hash(other) == self._form)


def _revision(rs: Obj) -> int:
    try:
        return int((meta(rs).get("annotations") or {}).get(REVISION) or 0)
    except ValueError:
        return 0


def typed_template(deploy: Obj) -> PodTemplateSpec:
    """The Deployment's pod template as the typed decode of the whole Deployment reads it (the same model and
    hook; the default template when it does not decode): what its pod-template-hash is taken over. Only
    ``spec.template`` is decoded: a stored Deployment passed validation, so the rest of it decodes too."""
    raw = spec_of(deploy).get("template")
    if raw is None:
        return PodTemplateSpec()
    try:
        return msgspec.convert(raw, PodTemplateSpec, dec_hook=quantity_dec_hook, str_keys=True)
    except (msgspec.ValidationError, ValueError, TypeError):
        return PodTemplateSpec()


def _new_replica_set(deploy: Obj, revision: int, start: int) -> Obj:
    """getNewReplicaSet: the template labelled with its hash, the selector too, and the revision."""
    collisions = status_of(deploy).get("collisionCount")
    template_hash = pod_template_hash(typed_template(deploy), collisions if isinstance(collisions, int) else None)
    spec = spec_of(deploy)
    template = json_copy(spec.get("template") or {})
    template.setdefault("metadata", {}).setdefault("labels", {})[POD_TEMPLATE_HASH] = template_hash
    selector = json_copy(spec.get("selector") or {})
    selector.setdefault("matchLabels", {})[POD_TEMPLATE_HASH] = template_hash
    want = replicas(deploy)
    surge, _ = surge_and_unavailable(deploy)
    annotations = {k: v for k, v in (meta(deploy).get("annotations") or {}).items() if k not in _NOT_COPIED}
    annotations.update({DESIRED: str(want), MAX_REPLICAS: str(want + surge), REVISION: str(revision)})
    rs_meta = {"name": f"{meta(deploy).get('name')}-{template_hash}", "namespace": meta(deploy).get("namespace"),
               "labels": dict(template["metadata"]["labels"]), "annotations": annotations,
               "ownerReferences": [controller_ref(deploy)], "generation": 1}
    rs_spec: Obj = {"replicas": start, "minReadySeconds": spec.get("minReadySeconds", 0), "selector": selector,
                    "template": template}
    return {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": rs_meta, "spec": rs_spec,
            "status": {"replicas": 0}}


def _sync_revision(writer: Writer, deploy: Obj, new: Obj, sets: list[Obj]) -> bool:
    """getNewReplicaSet's revision sync: a template brought back becomes the newest revision, and the
    Deployment carries its new ReplicaSet's revision."""
    old_revisions = [_revision(r) for r in sets if r is not new]
    if _revision(new) < max(old_revisions, default=0):
        return _note_revision(writer, deploy, max(_revision(r) for r in sets) + 1, new)
    if (meta(deploy).get("annotations") or {}).get(REVISION) != str(_revision(new)):
        return _note_revision(writer, deploy, _revision(new))
    return False


def sync_deployment(control: PodControl, deploy: Obj, sets: list[Obj],
                    pods_of: Callable[[Obj], PodSummary], now: float) -> tuple[bool, float | None]:
    """One sync of a Deployment over its ReplicaSets (``sets``) and their pods at ``now`` (the controller's
    clock): whether it wrote, and when to look again for a progress deadline (None: no need)."""
    writer = control.writer
    if meta(deploy).get("deletionTimestamp"):
        return False, None
    at = stamp(now)
    conditions = paused_conditions(deploy, list(status_of(deploy).get("conditions") or []), at)
    sets = by_age(sets)
    same_template = TemplateMatch(spec_of(deploy).get("template"))
    new = next((r for r in sets if same_template(spec_of(r).get("template"))), None)
    old = [r for r in sets if r is not new]
    changed = False
    if new is not None:
        changed |= _sync_revision(writer, deploy, new, sets)
        if progress_deadline(deploy) is not None and find(conditions, "Progressing") is None:
            conditions = set_condition(conditions, new_condition(
                "Progressing", "True", FOUND_NEW_RS, f'Found new replica set "{meta(new).get("name")}"', at))
    paused = spec_of(deploy).get("paused") is True
    if paused or is_scaling_event(deploy, sets):
        # (sync: no new ReplicaSet, no rollout; the counts and Available, Progressing as it is)
        changed |= scale(control, deploy, new, old)
        if paused:
            changed |= clean_up(writer, deploy, old)
        status = calculate_status(deploy, sets, new, pods_of, conditions, at)
        return write_status(writer, "deployments", deploy, status) or changed, None
    if new is None:
        made = _create_new_replica_set(control, deploy, old, pods_of)
        if made is None:  # a ReplicaSet of that name not ours: a hash collision, counted as upstream does
            status = {**status_of(deploy), "collisionCount": int(status_of(deploy).get("collisionCount") or 0) + 1}
            return write_status(writer, "deployments", deploy, status), None
        if progress_deadline(deploy) is not None:
            conditions = set_condition(conditions, new_condition(
                "Progressing", "True", NEW_RS_CREATED, f'Created new replica set "{meta(made).get("name")}"', at))
        new, sets, changed = made, [*old, made], True
    else:
        changed |= _roll(control, deploy, new, old, pods_of)
        if complete(deploy, status_of(deploy)):
            changed |= clean_up(writer, deploy, old)
    status = rollout_conditions(deploy, calculate_status(deploy, sets, new, pods_of, conditions, at), new, now)
    return write_status(writer, "deployments", deploy, status) or changed, recheck_at(deploy, status)


def clean_up(writer: Writer, deploy: Obj, old: list[Obj]) -> bool:
    """cleanupDeployment: the old ReplicaSets beyond ``revisionHistoryLimit``, lowest revision first, are
    deleted when nothing is left in them (no replicas wanted or running, their last change observed)."""
    limit = spec_of(deploy).get("revisionHistoryLimit")
    if not isinstance(limit, int):
        return False
    alive = sorted((r for r in old if not meta(r).get("deletionTimestamp")),
                   key=lambda r: (_revision(r), str(meta(r).get("creationTimestamp") or ""), str(meta(r).get("name"))))
    deleted = False
    for rs in alive[:max(len(alive) - limit, 0)]:
        observed = status_of(rs).get("observedGeneration")
        if status_of(rs).get("replicas") or replicas(rs) or int(meta(rs).get("generation") or 0) > (
                observed if isinstance(observed, int) else 0):
            continue
        writer.delete("replicasets", str(meta(rs).get("namespace") or ""), str(meta(rs).get("name")),
                      uid=str(meta(rs).get("uid")))
        deleted = True
    return deleted


def _create_new_replica_set(control: PodControl, deploy: Obj, old: list[Obj],
                            pods_of: Callable[[Obj], PodSummary]) -> Obj | None:
    """The new template's ReplicaSet, made at the size a rollout starts it with (None: its name is taken)."""
    want = replicas(deploy)
    surge, _ = surge_and_unavailable(deploy)
    rolling = (spec_of(deploy).get("strategy") or {}).get("type", "RollingUpdate") == "RollingUpdate"
    old_total = sum(replicas(r) for r in old)
    if old_total and rolling:
        start = max(min(want + surge - old_total, want), 0)
    else:
        start = 0 if old_total or any(pods_of(r).active for r in old) else want
    revision = max((_revision(r) for r in old), default=0) + 1
    try:
        created = control.writer.create("replicasets", meta(deploy).get("namespace") or "default",
                                        _new_replica_set(deploy, revision, start))
    except Conflict:
        return None
    _note_revision(control.writer, deploy, revision)
    if start:
        control.event(deploy, "ScalingReplicaSet",
                      f"Scaled up replica set {meta(created).get('name')} from 0 to {start}", DEPLOYMENT_COMPONENT)
    return created


def _roll(control: PodControl, deploy: Obj, new: Obj, old: list[Obj], pods_of: Callable[[Obj], PodSummary]) -> bool:
    """rolloutRolling or rolloutRecreate's steps over the new ReplicaSet and the old ones."""
    want = replicas(deploy)
    surge, unavailable = surge_and_unavailable(deploy)
    changed = False
    if (spec_of(deploy).get("strategy") or {}).get("type", "RollingUpdate") != "RollingUpdate":
        for rs in old:
            changed |= set_replicas(control, rs, 0, deploy)
        if not any(pods_of(r).active for r in old):
            changed |= set_replicas(control, new, want, deploy)
        return changed
    old_total = sum(replicas(r) for r in old)
    total = old_total + replicas(new)
    new_count = replicas(new)
    if new_count > want or not old_total:
        new_count = want
    elif new_count < want and total < want + surge:
        new_count = min(want, new_count + want + surge - total)
    changed |= set_replicas(control, new, new_count, deploy)
    if old_total:
        # reconcileOldReplicaSets: as many old pods go as keep replicas - maxUnavailable available
        total = old_total + new_count
        new_unavailable = max(new_count - pods_of(new).available(min_ready_seconds(deploy)), 0)
        room = max(total - (want - unavailable) - new_unavailable, 0)
        for rs in old:
            cut = min(room, replicas(rs))
            if cut:
                changed |= set_replicas(control, rs, replicas(rs) - cut, deploy)
                room -= cut
    return changed


def _note_revision(writer: Writer, deploy: Obj, revision: int, rs: Obj | None = None) -> bool:
    """The Deployment's revision annotation is its newest ReplicaSet's (and a ReplicaSet brought back becomes the
    newest revision)."""
    text = str(revision)
    if rs is not None:
        def mark(current: Obj) -> Obj:
            current["metadata"].setdefault("annotations", {})[REVISION] = text
            return current
        writer.update("replicasets", meta(rs).get("namespace") or "", meta(rs).get("name") or "", mark,
                      uid=str(meta(rs).get("uid")))

    def note(current: Obj) -> Obj | None:
        annotations = current["metadata"].setdefault("annotations", {})
        if annotations.get(REVISION) == text:
            return None
        annotations[REVISION] = text
        return current

    writer.update("deployments", meta(deploy).get("namespace") or "", meta(deploy).get("name") or "", note,
                  uid=str(meta(deploy).get("uid")))
    return True
