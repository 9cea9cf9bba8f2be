"""The DaemonSet controller of ``dralloc serve``: a pod on every node that should run the set
(``daemonset_should_run``: node name, selector, required affinity, untolerated taints), pinned to it by node
affinity (``matchFields metadata.name In [<node>]``) with the daemon tolerations, so that the scheduler places
it there; the pods of nodes that may no longer keep them are deleted. A new template rolls out within
``maxUnavailable`` unavailable nodes, or with ``maxSurge`` by starting the new pod beside the old one, which goes
once the new one is available (``daemon_rollout.py``; OnDelete: only pods deleted are replaced).

Each template is kept in a ControllerRevision ``<set>-<hash>`` (constructHistory, ``revisions.py``): the one
whose data is the set's template is current (renumbered the newest when an older template comes back, as
``kubectl rollout undo`` makes it), its hash labels the pods; beyond ``revisionHistoryLimit`` the oldest ones
no pod uses go (cleanupHistory)."""

from __future__ import annotations

from typing import Any

from dralloc.api import apps_v1, codec
from dralloc.api.core_v1 import Node
from dralloc.controllers.names import pod_template_hash
from dralloc.controllers.workloads import (
    DAEMON_TOLERATIONS,
    DS_TEMPLATE_GENERATION,
    REVISION_HASH,
    daemonset_should_run,
)
from dralloc.server.controllers import revisions
from dralloc.server.controllers.daemon_rollout import keep_on_node, oldest_first, rolling_update
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
    spec_of,
    status_of,
    without_zeros,
    write_status,
)
from dralloc.server.controllers.writes import Writer
from dralloc.store import Conflict

_NETWORK_UNAVAILABLE = {"key": "node.kubernetes.io/network-unavailable", "operator": "Exists",
                        "effect": "NoSchedule"}


def _tolerations(spec: Obj) -> list[Any]:
    """AddOrUpdateTolerationInPodSpec of each daemon toleration (the network one too, on the host network)."""
    tolerations = list(spec.get("tolerations") or [])
    added = [codec.to_dict(t) for t in DAEMON_TOLERATIONS]
    if spec.get("hostNetwork") is True:
        added.append(_NETWORK_UNAVAILABLE)
    for toleration in added:
        key = tuple(toleration.get(k) for k in ("key", "operator", "value", "effect"))
        same = [i for i, t in enumerate(tolerations)
                if isinstance(t, dict) and tuple(t.get(k) for k in ("key", "operator", "value", "effect")) == key]
        if same:
            tolerations[same[0]] = toleration
        else:
            tolerations.append(toleration)
    return tolerations


def _pinned(spec: Obj, node: str) -> None:
    """ReplaceDaemonSetPodNodeNameNodeAffinity: the required node affinity becomes the node alone."""
    affinity = spec.setdefault("affinity", {})
    node_affinity = affinity.setdefault("nodeAffinity", {})
    node_affinity["requiredDuringSchedulingIgnoredDuringExecution"] = {"nodeSelectorTerms": [
        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}]}


def pinned_node(pod: Obj) -> str | None:
    """The node a daemon pod is bound or pinned to."""
    if spec_of(pod).get("nodeName"):
        return str(spec_of(pod)["nodeName"])
    required = ((spec_of(pod).get("affinity") or {}).get("nodeAffinity") or {}).get(
        "requiredDuringSchedulingIgnoredDuringExecution") or {}
    for term in required.get("nodeSelectorTerms") or []:
        for req in (term or {}).get("matchFields") or []:
            if req.get("key") == "metadata.name" and req.get("operator") == "In" and len(req.get("values") or []) == 1:
                return str(req["values"][0])
    return None


def _template_hash(snap: Snapshot, ds: Obj) -> str:
    typed = snap.cache.typed("daemonsets", ds)
    template = typed.spec.template if isinstance(typed, apps_v1.DaemonSet) else apps_v1.DaemonSetSpec().template
    collisions = status_of(ds).get("collisionCount")
    return pod_template_hash(template, collisions if isinstance(collisions, int) else None)


def construct_history(writer: Writer, snap: Snapshot, ds: Obj, owned: list[Obj]) -> tuple[Obj | None, list[Obj]]:
    """constructHistory: the current revision (the set's template; made when missing, renumbered the newest
    when older ones are newer) and the old ones. None: its name is another template's (a collision, counted
    in the status; the next sync tries the next name)."""
    data = revisions.go_json(revisions.template_patch(ds))
    current = [r for r in owned if revisions.data_bytes(r) == data]
    old = [r for r in owned if revisions.data_bytes(r) != data]
    next_number = max((revisions.number(r) for r in old), default=0) + 1
    if not current:
        template_hash = _template_hash(snap, ds)
        name = f"{meta(ds).get('name')}-{template_hash}"
        revision = revisions.new_revision(ds, next_number, name, template_hash)
        try:
            return writer.create("controllerrevisions", str(meta(ds).get("namespace") or "default"), revision), old
        except Conflict:
            existing = writer.store.get("controllerrevisions", str(meta(ds).get("namespace") or ""), name)
            if revisions.data_bytes(existing) == data:
                return existing, old
            count = int(status_of(ds).get("collisionCount") or 0) + 1
            write_status(writer, "daemonsets", ds, {**status_of(ds), "collisionCount": count})
            return None, old
    keep = max(current, key=revisions.number)  # dedupCurHistories: the newest of equal ones stays
    for duplicate in current:
        if duplicate is not keep:
            revisions.delete(writer, duplicate)
    if revisions.number(keep) < next_number:
        keep = revisions.renumber(writer, keep, next_number)
    return keep, old


def cleanup_history(writer: Writer, ds: Obj, old: list[Obj], pods: list[Obj]) -> None:
    """cleanupHistory: beyond revisionHistoryLimit, the oldest old revisions whose hash no pod carries go."""
    extra = len(old) - revisions.history_limit(ds)
    live = {h for p in pods if (h := (meta(p).get("labels") or {}).get(REVISION_HASH))}
    for revision in revisions.sort_revisions(old):
        if extra <= 0:
            break
        if (meta(revision).get("labels") or {}).get(REVISION_HASH) in live:
            continue
        revisions.delete(writer, revision)
        extra -= 1


def _pod(ds: Obj, node: str, rev: str) -> Obj:
    pod = pod_from_template(spec_of(ds).get("template") or {}, ds, generate_name=f"{meta(ds).get('name')}-",
                            labels={DS_TEMPLATE_GENERATION: str(meta(ds).get("generation") or 1), REVISION_HASH: rev})
    spec = pod["spec"]
    spec["tolerations"] = _tolerations(spec)
    _pinned(spec, node)
    return pod


COMPONENT = "daemonset-controller"


def sync_daemon_set(control: PodControl, snap: Snapshot, ds: Obj, pods: list[Obj], owned: list[Obj]) -> bool:
    """One sync of a DaemonSet over its pods and its ControllerRevisions (``owned``); True when it wrote."""
    typed = snap.cache.typed("daemonsets", ds)
    if not isinstance(typed, apps_v1.DaemonSet):
        return False
    live = not meta(ds).get("deletionTimestamp")  # a set being deleted makes and rolls out nothing
    old: list[Obj] = []
    if live:
        current, old = construct_history(control.writer, snap, ds, owned)
        if current is None:
            return True  # (the collision counted: the next sync makes the revision)
        rev = str((meta(current).get("labels") or {}).get(REVISION_HASH) or _template_hash(snap, ds))
    else:
        rev = _template_hash(snap, ds)
    nodes = [n for n in snap.typed("nodes") if isinstance(n, Node)]
    verdicts = {n.metadata.name or "": daemonset_should_run(typed, n) for n in nodes}
    active = [p for p in pods if is_active(p)]
    on_node: dict[str, list[Obj]] = {}
    for pod in active:
        on_node.setdefault(pinned_node(pod) or "", []).append(pod)
    changed = False

    def gone(pod: Obj) -> bool:
        return control.delete(ds, pod, COMPONENT)

    for node, (should_run, may_keep) in verdicts.items():
        here = on_node.get(node, [])
        if not live:
            break
        if should_run and not here:
            changed |= control.create(ds, _pod(ds, node, rev), COMPONENT)
        elif here and not may_keep:
            for pod in here:
                changed |= gone(pod)
        elif len(here) > 1:  # one daemon pod per node (with surge: an old and a new one), the oldest
            for pod in keep_on_node(ds, here, rev):
                changed |= gone(pod)
    if live:
        for node, here in on_node.items():
            if node not in verdicts:  # its node went
                for pod in here:
                    changed |= gone(pod)
    seconds = min_ready_seconds(ds)
    scheduled = {n for n, here in on_node.items() if here and n in verdicts}
    desired = {n for n, (should_run, may_keep) in verdicts.items() if should_run or (may_keep and n in scheduled)}
    rolling = (spec_of(ds).get("updateStrategy") or {}).get("type", "RollingUpdate") == "RollingUpdate"
    if live and rolling and not changed:
        step = rolling_update(ds, on_node, {n: v[0] for n, v in verdicts.items()},
                              sum(1 for v in verdicts.values() if v[0]), rev, seconds)
        for pod in step.delete:
            changed |= gone(pod)
        for node in step.create:
            changed |= control.create(ds, _pod(ds, node, rev), COMPONENT)
    if live:
        cleanup_history(control.writer, ds, old, pods)
    # (updateDaemonSetStatus: the oldest pod of each node is the one counted)
    counted = [oldest_first(found)[0] for n in sorted(desired) if (found := on_node.get(n))]
    updated = sum(1 for p in counted if (meta(p).get("labels") or {}).get(REVISION_HASH) == rev)
    available = sum(1 for p in counted if is_available(p, seconds))
    status = without_zeros({
        "currentNumberScheduled": len(scheduled & desired), "numberMisscheduled": len(scheduled - desired),
        "desiredNumberScheduled": len(desired), "numberReady": sum(1 for p in counted if is_ready(p)),
        "observedGeneration": meta(ds).get("generation"), "updatedNumberScheduled": updated,
        "numberAvailable": available, "numberUnavailable": max(len(desired) - available, 0),
        "collisionCount": status_of(ds).get("collisionCount")},
        "updatedNumberScheduled", "numberAvailable", "numberUnavailable", "collisionCount")
    return write_status(control.writer, "daemonsets", ds, status) or changed
