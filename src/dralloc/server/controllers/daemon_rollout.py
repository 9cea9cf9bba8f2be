"""A DaemonSet's rolling update (``pkg/controller/daemon/update.go``'s rollingUpdate and ``util``'s
SurgeCount and UnavailableCount), node by node, over the pods not being deleted:

* ``maxUnavailable`` and ``maxSurge`` are counts or shares (rounded up) of the nodes that should run the
  set; with both 0 one node may be unavailable;
* without surge, old pods are deleted (the manage loop makes their replacements) while fewer than
  ``maxUnavailable`` nodes are unavailable — an old pod that is not available is replaced at once;
* with surge, a new pod is started beside an old one on up to ``maxSurge`` nodes (at once where the old pod
  is not available) and the old one is deleted once the new one is available; an old pod on a node that
  should no longer run the set goes only while more pods are available than nodes should run it.

Each node holds at most one old and one new pod (``keep_on_node``); a node with more is left to that."""

from __future__ import annotations

from dataclasses import dataclass, field

from dralloc.controllers.workloads import REVISION_HASH
from dralloc.server.controllers.workload_pods import Obj, is_available, meta, scaled_value, spec_of


def _rolling_value(ds: Obj, key: str, total: int) -> int:
    strategy = spec_of(ds).get("updateStrategy") or {}
    if strategy.get("type", "RollingUpdate") != "RollingUpdate":
        return 0
    value = scaled_value((strategy.get("rollingUpdate") or {}).get(key), total, round_up=True)
    return value if value is not None and value > 0 else 0


def budgets(ds: Obj, desired: int) -> tuple[int, int]:
    """updatedDesiredNodeCounts: (maxSurge, maxUnavailable) over ``desired`` nodes; one unavailable node when
    both are 0."""
    surge, unavailable = _rolling_value(ds, "maxSurge", desired), _rolling_value(ds, "maxUnavailable", desired)
    if desired > 0 and surge == 0 and unavailable == 0:
        unavailable = 1
    return surge, unavailable


def allows_surge(ds: Obj) -> bool:
    """AllowsSurge: ``maxSurge`` comes to more than 0 (of one node)."""
    return _rolling_value(ds, "maxSurge", 1) > 0


def oldest_first(pods: list[Obj]) -> list[Obj]:
    """podByCreationTimestampAndPhase: bound pods first, then the oldest, then by name."""
    return sorted(pods, key=lambda p: (not spec_of(p).get("nodeName"), str(meta(p).get("creationTimestamp") or ""),
                                       str(meta(p).get("name"))))


def keep_on_node(ds: Obj, pods: list[Obj], rev: str) -> list[Obj]:
    """The excess daemon pods of one node, to delete: all but the oldest — with surge, all but the oldest new
    and the oldest old one."""
    ranked = oldest_first(pods)
    if not allows_surge(ds):
        return ranked[1:]
    kept: dict[bool, Obj] = {}
    excess = []
    for pod in ranked:
        new = (meta(pod).get("labels") or {}).get(REVISION_HASH) == rev
        if new in kept:
            excess.append(pod)
        else:
            kept[new] = pod
    return excess


@dataclass
class Rollout:
    """What one rolling update step does: the pods to delete and the nodes to start a new pod on."""

    delete: list[Obj] = field(default_factory=list)
    create: list[str] = field(default_factory=list)


def _split(pods: list[Obj], rev: str) -> tuple[Obj | None, Obj | None] | None:
    """findUpdatedPodsOnNode: the node's (new, old) pod; None when it has more than one of either."""
    new: Obj | None = None
    old: Obj | None = None
    for pod in pods:
        if (meta(pod).get("labels") or {}).get(REVISION_HASH) == rev:
            if new is not None:
                return None
            new = pod
        else:
            if old is not None:
                return None
            old = pod
    return new, old


def rolling_update(ds: Obj, on_node: dict[str, list[Obj]], should_run: dict[str, bool], desired: int,
                   rev: str, min_ready: int) -> Rollout:
    """One step of the rollout over the pods (not being deleted) on each node."""
    surge, unavailable_budget = budgets(ds, desired)
    out = Rollout()
    nodes = sorted(n for n in on_node if n)

    def available(pod: Obj) -> bool:
        return is_available(pod, min_ready)

    if surge == 0:
        unavailable, candidates = 0, []
        for node in nodes:
            split = _split(on_node[node], rev)
            if split is None or split[0] is not None and split[1] is not None or split == (None, None):
                unavailable += 1  # (the manage loop settles this node first)
            elif split[0] is not None:
                unavailable += 0 if available(split[0]) else 1
            elif split[1] is not None and not available(split[1]):
                out.delete.append(split[1])  # an old pod that is down anyway: replaced at once
            elif split[1] is not None and unavailable < unavailable_budget:
                candidates.append(split[1])
        out.delete += candidates[:max(unavailable_budget - unavailable, 0)]
        return out
    surged = available_pods = 0
    candidate_nodes: list[str] = []
    leaving: list[Obj] = []  # old pods on nodes that should no longer run the set
    for node in nodes:
        split = _split(on_node[node], rev)
        if split is None:
            surged += 1
            continue
        new, old = split
        if old is not None and available(old) or old is None and new is not None and available(new):
            available_pods += 1
        if old is None:
            continue
        if new is None:
            if not available(old):
                if should_run.get(node, False):
                    out.create.append(node)  # (down anyway: its replacement starts at once)
                else:
                    out.delete.append(old)
            elif not should_run.get(node, False):
                leaving.append(old)
            elif surged < surge:
                candidate_nodes.append(node)
        elif not available(new):
            surged += 1  # waiting for the new pod to be available
        else:
            out.delete.append(old)  # the new pod is available: the old one goes
    spare = available_pods - desired
    out.delete += leaving[:max(spare, 0)]
    out.create += candidate_nodes[:max(surge - surged, 0)]
    return out
