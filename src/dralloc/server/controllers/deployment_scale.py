"""A Deployment's ReplicaSets scaled, as the deployment controller scales them: one at a time by a rollout
(``_set_replicas``: the size, the desired and max replicas annotations, the ScalingReplicaSet event), or all
at once by a scaling event or any sync of a paused Deployment (``scale``: the active ReplicaSets grow or
shrink in proportion to their size, the largest taking what rounding leaves)."""

from __future__ import annotations

import math

from dralloc.controllers.workloads import rollout_fenceposts
from dralloc.server.controllers.workload_pods import Obj, PodControl, meta, replicas, spec_of, status_of

DEPLOYMENT_COMPONENT = "deployment-controller"
DESIRED = "deployment.kubernetes.io/desired-replicas"
MAX_REPLICAS = "deployment.kubernetes.io/max-replicas"


def surge_and_unavailable(deploy: Obj) -> tuple[int, int]:
    """The Deployment's maxSurge and maxUnavailable, resolved for its replicas."""
    return rollout_fenceposts(spec_of(deploy).get("strategy"), replicas(deploy))


def set_replicas(control: PodControl, rs: Obj, count: int, deploy: Obj, annotate: bool = False,
                  way: str = "") -> bool:
    """Scale a ReplicaSet (event ScalingReplicaSet on the Deployment); with ``annotate`` (scaleReplicaSet of a
    scaling event) its desired and max replicas annotations are brought up to date even at the same size."""
    before = replicas(rs)
    want = replicas(deploy)
    surge, _ = surge_and_unavailable(deploy)
    annotations = meta(rs).get("annotations") or {}
    stale = annotate and (annotations.get(DESIRED), annotations.get(MAX_REPLICAS)) != (str(want), str(want + surge))
    if before == count and not stale:
        return False
    writer = control.writer

    def mutate(current: Obj) -> Obj:
        if replicas(current) != count:
            current.setdefault("spec", {})["replicas"] = count
            current["metadata"]["generation"] = int(current["metadata"].get("generation") or 1) + 1
        annotations = current["metadata"].setdefault("annotations", {})
        annotations[DESIRED], annotations[MAX_REPLICAS] = str(want), str(want + surge)
        return current

    writer.update("replicasets", meta(rs).get("namespace") or "", meta(rs).get("name") or "", mutate,
                  uid=str(meta(rs).get("uid")))
    if before != count:
        way = way or ("up" if count > before else "down")
        control.event(deploy, "ScalingReplicaSet",
                      f"Scaled {way} replica set {meta(rs).get('name')} from {before} to {count}", DEPLOYMENT_COMPONENT)
    return True


def by_age(sets: list[Obj], newest_first: bool = False) -> list[Obj]:
    """ReplicaSetsByCreationTimestamp (ties by name), or its reverse."""
    return sorted(sets, key=lambda r: (str(meta(r).get("creationTimestamp") or ""), str(meta(r).get("name"))),
                  reverse=newest_first)


def _active_sets(sets: list[Obj]) -> list[Obj]:
    """FilterActiveReplicaSets: those meant to have pods."""
    return [r for r in sets if replicas(r) > 0]


def _annotated(rs: Obj, key: str) -> int | None:
    try:
        return int((meta(rs).get("annotations") or {})[key])
    except (KeyError, TypeError, ValueError):
        return None


def is_scaling_event(deploy: Obj, sets: list[Obj]) -> bool:
    """isScalingEvent: an active ReplicaSet was made for another replica count than the Deployment's."""
    want = replicas(deploy)
    return any((desired := _annotated(rs, DESIRED)) is not None and desired != want for rs in _active_sets(sets))


def _saturated(deploy: Obj, rs: Obj) -> bool:
    """IsSaturated: the ReplicaSet has (and was made for) the Deployment's replicas, all available."""
    want = replicas(deploy)
    available = status_of(rs).get("availableReplicas")
    return replicas(rs) == want and _annotated(rs, DESIRED) == want and available == want


def _round(value: float) -> int:
    """integer.RoundToInt32: halves away from zero."""
    return int(math.floor(value + 0.5)) if value >= 0 else -int(math.floor(-value + 0.5))


def _proportion(rs: Obj, deploy: Obj, to_add: int, added: int) -> int:
    """GetProportion: the ReplicaSet's share of the replicas to add (or, negative, to remove), as large as its
    share of the replicas it was made for (its max-replicas annotation, else the Deployment's status)."""
    if replicas(rs) == 0 or to_add == 0 or to_add == added:
        return 0
    want = replicas(deploy)
    if want == 0:
        fraction = -replicas(rs)
    else:
        surge, _ = surge_and_unavailable(deploy)
        annotated = _annotated(rs, MAX_REPLICAS)
        if annotated is None:
            status_replicas = status_of(deploy).get("replicas")
            annotated = status_replicas if isinstance(status_replicas, int) else 0
        fraction = _round(replicas(rs) * (want + surge) / annotated) - replicas(rs) if annotated else 0
    allowed = to_add - added
    return min(fraction, allowed) if to_add > 0 else max(fraction, allowed)


def scale(control: PodControl, deploy: Obj, new: Obj | None, old: list[Obj]) -> bool:
    """The deployment controller's scale (a scaling event, or any sync of a paused Deployment): one active
    ReplicaSet (or none: the newest) takes the Deployment's replicas; a saturated new one leaves the old ones
    none; otherwise, rolling, every active ReplicaSet grows or shrinks in proportion to its size, the largest
    taking what rounding leaves."""
    want = replicas(deploy)
    newest_old = by_age(old, newest_first=True)
    everything = [*newest_old, *([new] if new is not None else [])]
    if everything:
        active = _active_sets(everything)
        latest = active[0] if len(active) == 1 else None
        if not active:
            latest = new if new is not None else newest_old[0]
        if latest is not None:
            return set_replicas(control, latest, want, deploy)
    changed = False
    if new is not None and _saturated(deploy, new):
        for rs in _active_sets(old):
            changed |= set_replicas(control, rs, 0, deploy)
        return changed
    if (spec_of(deploy).get("strategy") or {}).get("type", "RollingUpdate") != "RollingUpdate":
        return False
    surge, _ = surge_and_unavailable(deploy)
    active = _active_sets(everything)
    to_add = (want + surge if want > 0 else 0) - sum(replicas(r) for r in active)
    way = "up" if to_add > 0 else "down" if to_add < 0 else ""
    # ReplicaSetsBySizeNewer when adding, ReplicaSetsBySizeOlder when removing: the largest first
    active = sorted(by_age(active, newest_first=to_add > 0), key=lambda r: -replicas(r))
    sizes: list[int] = []
    added = 0
    for rs in active:
        share = _proportion(rs, deploy, to_add, added)
        sizes.append(replicas(rs) + share)
        added += share
    if active and to_add:
        sizes[0] = max(sizes[0] + to_add - added, 0)  # the leftover to the largest
    for rs, size in zip(active, sizes, strict=True):
        changed |= set_replicas(control, rs, size, deploy, annotate=True, way=way)
    return changed
