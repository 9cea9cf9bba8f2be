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

Adopting orphan pods or ReplicaSets that match a selector, rollbacks, pausing and the progress deadline are
left out: objects are controlled only by the controller that made them.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from dralloc.api import apps_v1
from dralloc.controllers.names import pod_template_hash
from dralloc.controllers.workloads import POD_TEMPLATE_HASH, rollout_fenceposts
from dralloc.server.controllers.snapshot import Snapshot
from dralloc.server.controllers.workload_pods import (
    Obj,
    PodControl,
    PodSummary,
    condition,
    controller_ref,
    deletion_order,
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

RS_COMPONENT = "replicaset-controller"
DEPLOYMENT_COMPONENT = "deployment-controller"
REVISION = "deployment.kubernetes.io/revision"
DESIRED = "deployment.kubernetes.io/desired-replicas"
MAX_REPLICAS = "deployment.kubernetes.io/max-replicas"
_NOT_COPIED = frozenset({"kubectl.kubernetes.io/last-applied-configuration", REVISION,
                         "deployment.kubernetes.io/revision-history", DESIRED, MAX_REPLICAS,
                         "deprecated.deployment.rollback.to"})


# --- ReplicaSet -------------------------------------------------------------------------------------


def sync_replica_set(control: PodControl, rs: Obj, pods: PodSummary) -> bool:
    """Create or delete pods towards ``spec.replicas``, then write the status; True when it wrote."""
    active = pods.active
    want = replicas(rs)
    changed = False
    if not meta(rs).get("deletionTimestamp"):
        template = spec_of(rs).get("template")
        if len(active) < want and isinstance(template, dict):
            for _ in range(want - len(active)):
                pod = pod_from_template(template, rs, generate_name=f"{meta(rs).get('name')}-")
                changed |= control.create(rs, pod, RS_COMPONENT)
        elif len(active) > want:
            for pod in deletion_order(active)[:len(active) - want]:
                changed |= control.delete(rs, pod, RS_COMPONENT)
    status = without_zeros({"replicas": len(active), "fullyLabeledReplicas": len(active), "readyReplicas": pods.ready,
                            "availableReplicas": pods.available(min_ready_seconds(rs)),
                            "observedGeneration": meta(rs).get("generation")},
                           "fullyLabeledReplicas", "readyReplicas", "availableReplicas")
    return write_status(control.writer, "replicasets", rs, status) or changed


# --- Deployment -------------------------------------------------------------------------------------


def surge_and_unavailable(deploy: Obj) -> tuple[int, int]:
    """The Deployment's maxSurge and maxUnavailable, resolved for its replicas."""
    return rollout_fenceposts(spec_of(deploy).get("strategy"), replicas(deploy))


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


def _revision(rs: Obj) -> int:
    try:
        return int((meta(rs).get("annotations") or {}).get(REVISION) or 0)
    except ValueError:
        return 0


def _new_replica_set(snap: Snapshot, deploy: Obj, revision: int, start: int) -> Obj:
    """getNewReplicaSet: the template labelled with its hash, the selector too, and the revision."""
    typed = snap.cache.typed("deployments", deploy)
    collisions = status_of(deploy).get("collisionCount")
    template_hash = pod_template_hash(typed.spec.template if isinstance(typed, apps_v1.Deployment) else
                                      apps_v1.DeploymentSpec().template, collisions if isinstance(collisions, int) else None)
    spec = spec_of(deploy)
    template = copy.deepcopy(spec.get("template") or {})
    template.setdefault("metadata", {}).setdefault("labels", {})[POD_TEMPLATE_HASH] = template_hash
    selector = copy.deepcopy(spec.get("selector") or {})
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


def _set_replicas(control: PodControl, rs: Obj, count: int, deploy: Obj) -> bool:
    """Scale a ReplicaSet (event ScalingReplicaSet on the Deployment)."""
    before = replicas(rs)
    if before == count:
        return False
    writer = control.writer
    want = replicas(deploy)
    surge, _ = surge_and_unavailable(deploy)

    def mutate(current: Obj) -> Obj:
        current.setdefault("spec", {})["replicas"] = count
        annotations = current["metadata"].setdefault("annotations", {})
        annotations[DESIRED], annotations[MAX_REPLICAS] = str(want), str(want + surge)
        current["metadata"]["generation"] = int(current["metadata"].get("generation") or 1) + 1
        return current

    writer.update("replicasets", meta(rs).get("namespace") or "", meta(rs).get("name") or "", mutate,
                  uid=str(meta(rs).get("uid")))
    way = "up" if count > before else "down"
    control.event(deploy, "ScalingReplicaSet", f"Scaled {way} replica set {meta(rs).get('name')} from {before} to {count}",
                  DEPLOYMENT_COMPONENT)
    return True


def sync_deployment(control: PodControl, snap: Snapshot, deploy: Obj, sets: list[Obj],
                    pods_of: Callable[[Obj], PodSummary]) -> bool:
    """One sync of a Deployment over its ReplicaSets (``sets``) and their pods; True when it wrote."""
    writer = control.writer
    if meta(deploy).get("deletionTimestamp"):
        return False
    sets = sorted(sets, key=lambda r: (str(meta(r).get("creationTimestamp") or ""), str(meta(r).get("name"))))
    template = _without_hash(spec_of(deploy).get("template"))
    new = next((r for r in sets if _without_hash(spec_of(r).get("template")) == template), None)
    old = [r for r in sets if r is not new]
    want = replicas(deploy)
    surge, unavailable = surge_and_unavailable(deploy)
    rolling = (spec_of(deploy).get("strategy") or {}).get("type", "RollingUpdate") == "RollingUpdate"

    def active(rs: Obj) -> list[Obj]:
        return pods_of(rs).active

    def available(rs: Obj) -> int:
        return pods_of(rs).available(min_ready_seconds(deploy))

    old_total = sum(replicas(r) for r in old)
    if new is None:
        if old_total and rolling:
            start = max(min(want + surge - old_total, want), 0)
        else:
            start = 0 if old_total or any(active(r) for r in old) else want
        revision = max((_revision(r) for r in sets), default=0) + 1
        try:
            created = writer.create("replicasets", meta(deploy).get("namespace") or "default",
                                    _new_replica_set(snap, deploy, revision, start))
        except Conflict:  # a ReplicaSet of that name not ours: a hash collision, counted as upstream does
            status = {**status_of(deploy), "collisionCount": int(status_of(deploy).get("collisionCount") or 0) + 1}
            return write_status(writer, "deployments", deploy, status)
        _note_revision(writer, deploy, revision)
        if start:
            control.event(deploy, "ScalingReplicaSet",
                          f"Scaled up replica set {meta(created).get('name')} from 0 to {start}", DEPLOYMENT_COMPONENT)
        _write_deployment_status(writer, deploy, [*old, created], created, pods_of, created=True)
        return True
    changed = False
    if _revision(new) < max((_revision(r) for r in old), default=0):  # back to an older template: latest again
        changed |= _note_revision(writer, deploy, max(_revision(r) for r in sets) + 1, new)
    elif (meta(deploy).get("annotations") or {}).get(REVISION) != str(_revision(new)):
        changed |= _note_revision(writer, deploy, _revision(new))
    if not rolling:
        for rs in old:
            changed |= _set_replicas(control, rs, 0, deploy)
        if not any(active(r) for r in old):
            changed |= _set_replicas(control, new, want, deploy)
    else:
        total = sum(replicas(r) for r in sets)
        new_count = replicas(new)
        if new_count > want or not old_total:
            new_count = want
        elif new_count < want and total < want + surge:
            new_count = min(want, new_count + want + surge - total)
        changed |= _set_replicas(control, new, new_count, deploy)
        if old_total:
            # reconcileOldReplicaSets: as many old pods go as keep replicas - maxUnavailable available
            total = old_total + new_count
            new_unavailable = max(new_count - available(new), 0)
            room = max(total - (want - unavailable) - new_unavailable, 0)
            for rs in old:
                cut = min(room, replicas(rs))
                if cut:
                    changed |= _set_replicas(control, rs, replicas(rs) - cut, deploy)
                    room -= cut
    return _write_deployment_status(writer, deploy, sets, new, pods_of) or changed


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


def _write_deployment_status(writer: Writer, deploy: Obj, sets: list[Obj], new: Obj,
                             pods_of: Callable[[Obj], PodSummary], created: bool = False) -> bool:
    """calculateStatus and syncRolloutStatus: the counts over every ReplicaSet's pods, and the conditions."""
    summaries = [pods_of(r) for r in sets if r is not new] + [pods_of(new)]
    total = sum(len(x.active) for x in summaries)
    want = replicas(deploy)
    _, unavailable = surge_and_unavailable(deploy)
    seconds = min_ready_seconds(deploy)
    available = sum(x.available(seconds) for x in summaries)
    updated = len(pods_of(new).active)
    old_conditions = status_of(deploy).get("conditions") or []
    conditions = [condition("Available", "True", "MinimumReplicasAvailable", "Deployment has minimum availability.",
                            old_conditions, update_time=True)
                  if available >= want - unavailable else
                  condition("Available", "False", "MinimumReplicasUnavailable",
                            "Deployment does not have minimum availability.", old_conditions, update_time=True)]
    name = meta(new).get("name")
    complete = updated == want and total == want and available == want
    if created:
        progressing = ("NewReplicaSetCreated", f'Created new replica set "{name}"')
    elif complete:
        progressing = ("NewReplicaSetAvailable", f'ReplicaSet "{name}" has successfully progressed.')
    else:
        progressing = ("ReplicaSetUpdated", f'ReplicaSet "{name}" is progressing.')
    conditions.append(condition("Progressing", "True", *progressing, old_conditions, update_time=True))
    status = without_zeros({
        "observedGeneration": meta(deploy).get("generation"), "replicas": total, "updatedReplicas": updated,
        "readyReplicas": sum(x.ready for x in summaries), "availableReplicas": available,
        "unavailableReplicas": max(want - available, 0), "conditions": conditions,
        "collisionCount": status_of(deploy).get("collisionCount")},
        "replicas", "updatedReplicas", "readyReplicas", "availableReplicas", "unavailableReplicas", "collisionCount")
    return write_status(writer, "deployments", deploy, status)
