"""Scale down: a set of nodes that can all be removed together, their pods rescheduled on the nodes left with
their claims re-allocated, under Cluster Autoscaler's default rules.

Candidates are nodes not annotated ``cluster-autoscaler.kubernetes.io/scale-down-disabled: "true"`` whose
utilisation is below the threshold (0.5, CA's ``--scale-down-utilization-threshold``): the highest of the CPU
and memory requested over allocatable, and of the devices allocated over those the node's pools publish
(CA's DRA utilisation). Candidates are tried from the least used (then by name); each is kept when none of its
pods blocks it (``drain``) and a simulation without it and the nodes already kept places every pod it must
move (otherwise: "no place to move <pod>: <kube-scheduler's message>"). Consecutive candidates are tried in
growing batches while whole batches can go, so a large cluster takes a few simulations, not one per node.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from dralloc.scheduler.plugins.default_preemption.disruption_budgets import Budget
from dralloc.simulator.planner.drain import (
    SCALE_DOWN_DISABLED,
    blocking_reason,
    budget_blocker,
    needs_no_home,
)
from dralloc.simulator.planner.trial import PlanSettings, SimulatorLike, Trial, run_trial

DEFAULT_THRESHOLD = Fraction(1, 2)


@dataclass
class Blocked:
    node: str
    reason: str


@dataclass
class ScaleDownPlan:
    removable: list[str]
    blocked: list[Blocked]
    moved: dict[str, str | None] = field(default_factory=dict)  # pod key → its new node
    utilization: dict[str, Fraction] = field(default_factory=dict)
    trial: Trial | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": "ScaleDownPlan",
            "removable": list(self.removable),
            "blocked": [{"node": b.node, "reason": b.reason} for b in self.blocked],
            "moved": [{"pod": k, "node": v} for k, v in self.moved.items()],
        }


def node_utilization(sched: SimulatorLike, node_name: str) -> Fraction:
    """max(CPU, memory, devices) in use over what the node offers, as the cluster is."""
    snap = sched.snapshot
    info = snap.by_name[node_name]
    alloc = info.allocatable
    used: dict[str, int] = {}
    for pod in info.pods:
        for resource, amount in pod.request.items():
            used[resource] = used.get(resource, 0) + amount
    shares = [Fraction(used.get(r, 0), alloc[r]) for r in ("cpu", "memory") if alloc.get(r)]
    total, taken = device_counts(sched, node_name)
    if total:
        shares.append(Fraction(taken, total))
    return max(shares, default=Fraction(0))


def device_counts(sched: SimulatorLike, node_name: str) -> tuple[int, int]:
    """(devices the node's local slices publish, devices allocated to claims)."""
    snap = sched.snapshot
    local = {(s.spec.driver, s.spec.pool.name, d.name) for s in snap.raw_slices if s.spec.node_name == node_name
             for d in s.spec.devices or ()}
    taken = set()
    for claim in snap.claims.values():
        alloc = claim.status.allocation if claim.status is not None else None
        if alloc is None or alloc.devices is None:
            continue
        for r in alloc.devices.results or ():
            if (r.driver, r.pool, r.device) in local:
                taken.add((r.driver, r.pool, r.device))
    return len(local), len(taken)


def plan_scale_down(objects: list[Any], *, settings: PlanSettings, budgets: Sequence[Budget] | None = None,
                    threshold: Fraction = DEFAULT_THRESHOLD) -> ScaleDownPlan:
    """``budgets``: the PodDisruptionBudgets the drain rules read (default: those of ``objects``)."""
    if budgets is None:
        from dralloc.simulator.planner.budgets import budgets_from_objects

        budgets = budgets_from_objects(objects)
    # The cluster as it is (nothing scheduled yet) decides candidates and blockers, as CA's snapshot does;
    # the pending pods that fit today must still fit after the removal.
    now = settings.build(objects)
    base = run_trial(objects, settings)
    placed_pending = [k for k, r in base.scheduler.results.items() if r.status == "scheduled"]
    blocked: list[Blocked] = []
    candidates: list[tuple[Fraction, str]] = []
    usage: dict[str, Fraction] = {}
    movers: dict[str, list[str]] = {}
    for info in now.snapshot.nodes:
        name = info.name
        if (info.node.metadata.annotations or {}).get(SCALE_DOWN_DISABLED) == "true":
            blocked.append(Blocked(name, "scale down disabled by annotation"))
            continue
        usage[name] = node_utilization(now, name)
        if usage[name] >= threshold:
            blocked.append(Blocked(name, f"not underutilized: utilization {float(usage[name]):.3f} "
                                         f"is at or above the threshold {float(threshold):.3f}"))
            continue
        to_move = [p for p in info.pods if not needs_no_home(p.pod)]
        reason = next((r for p in to_move if (r := blocking_reason(p, budgets)) is not None), None)
        if reason is None:
            reason = budget_blocker(to_move, budgets)
        if reason is not None:
            blocked.append(Blocked(name, reason))
            continue
        movers[name] = [p.key for p in to_move]
        candidates.append((usage[name], name))
    removable: list[str] = []
    last = base
    order = [name for _, name in sorted(candidates)]
    # Candidates are tried in order, several at a time while whole batches succeed (a batch that fails is
    # halved down to the one candidate that cannot go, which is then blocked with its own reason): the same
    # answer as one at a time when removals do not interact, with a few simulations instead of one each.
    i, batch = 0, 1
    while i < len(order):
        names = order[i:i + batch]
        if all(not movers[n] for n in names) and not placed_pending:
            removable.extend(names)  # empty nodes go without a simulation, as CA's empty-node removal
            i += len(names)
            continue
        trial = run_trial(objects, settings, remove=removable + names)
        keys = [k for n in removable + names for k in movers[n]] + placed_pending
        stuck = [k for k in keys if not trial.placed(k)]
        if not stuck and not trial.evictions:
            removable.extend(names)
            last = trial
            i += len(names)
            batch *= 2
            continue
        if len(names) > 1:
            batch = len(names) // 2
            continue
        blocked.append(Blocked(names[0], _stuck_reason(trial, stuck, placed_pending)))
        i += 1
        batch = 1
    moved = {k: last.scheduler.results[k].node for n in removable for k in movers[n]}
    blocked.sort(key=lambda b: b.node)
    return ScaleDownPlan(sorted(removable), blocked, moved, usage, last)


def _stuck_reason(trial: Trial, stuck: list[str], pending: list[str]) -> str:
    if not stuck:
        return "moving its pods would preempt running pods: " + ", ".join(
            f"{e.namespace}/{e.name}" for e in trial.result.evicted)
    key = stuck[0]
    message = trial.scheduler.results[key].message
    if key in pending:
        return f"pending pod {key} would fit nowhere: {message}"
    return f"no place to move {key}: {message}"
