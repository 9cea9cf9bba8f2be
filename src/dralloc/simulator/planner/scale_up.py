"""Scale up: the fewest nodes per template after which every pending pod that any template can host
schedules under the simulator's rules.

The search, per round (as Cluster Autoscaler's loop): for each template with budget left, estimate the nodes
it needs (``capacity.estimate``), simulate that many, and find by bisection the fewest that give the same
outcome — an outcome is (pods still pending, pods evicted), fewer is better. The expander picks one template's
option, the plan grows, and the next round serves the pods left. A last pass lowers each template's count
while the outcome holds, so no template keeps a node the others made unneeded. Bisection assumes more nodes
never leave more pods pending, which holds for the scheduler's rules but not for every tie-break: the count
returned is always checked (one node fewer of any template leaves the outcome worse or was never needed).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from dralloc.api.core_v1 import Pod
from dralloc.scheduler.nodeinfo import NodeInfo
from dralloc.simulator.planner.capacity import estimate
from dralloc.simulator.planner.expanders import Option, choose
from dralloc.simulator.planner.templates import NodeTemplate
from dralloc.simulator.planner.trial import PlanSettings, Trial, run_trial

PENDING_STATUSES = frozenset({"scheduled", "unschedulable", "error"})
Outcome = tuple[int, int]  # (pods left pending, evictions)
RECENT_TRIALS = 4


@dataclass
class PodPlacement:
    namespace: str
    name: str
    node: str | None
    message: str


@dataclass
class ScaleUpPlan:
    """``add``: nodes to add per template; ``pods``: every pod pending in the input, where it lands after the
    plan or kube-scheduler's message; ``unschedulable``: how many still fit nowhere."""

    add: dict[str, int]
    pods: list[PodPlacement]
    unschedulable: int
    expander: list[str] = field(default_factory=list)
    trial: Trial | None = None
    templates: list[NodeTemplate] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": "ScaleUpPlan",
            "add": dict(self.add),
            "pods": [{"namespace": p.namespace, "name": p.name, "node": p.node, "message": p.message}
                     for p in self.pods],
            "unschedulable": self.unschedulable,
            "expander": ",".join(self.expander),
        }


class _Planner:
    def __init__(self, objects: list[Any], templates: Sequence[NodeTemplate], settings: PlanSettings,
                 max_nodes: Mapping[str, int]) -> None:
        self.objects = objects
        self.templates = {t.name: t for t in templates}
        self.settings = settings
        self.max_nodes = max_nodes
        self.outcomes: dict[tuple[tuple[str, int], ...], Outcome] = {}
        self.recent: dict[tuple[tuple[str, int], ...], Trial] = {}  # the last few trials, for their placements
        self.base = run_trial(objects, settings)
        self.pending = [k for k, r in self.base.scheduler.results.items()
                        if r.status in PENDING_STATUSES]

    def trial(self, plan: Mapping[str, int]) -> Trial:
        key = tuple(sorted((n, c) for n, c in plan.items() if c))
        if not key:
            return self.base
        found = self.recent.get(key)
        if found is None:
            found = run_trial(self.objects, self.settings, add={self.templates[n]: c for n, c in key})
            self.recent[key] = found
            while len(self.recent) > RECENT_TRIALS:
                del self.recent[next(iter(self.recent))]
            self.outcomes[key] = (len(found.left_pending(self.pending)), found.evictions)
        return found

    def outcome(self, plan: Mapping[str, int]) -> Outcome:
        key = tuple(sorted((n, c) for n, c in plan.items() if c))
        found = self.outcomes.get(key)
        if found is None:
            trial = self.trial(plan)
            found = (len(trial.left_pending(self.pending)), trial.evictions)
            self.outcomes[key] = found
        return found

    def fewest(self, plan: Mapping[str, int], name: str, low_bad: int, high_good: int, guess: int) -> int:
        """The smallest count of ``name`` in (low_bad, high_good] whose outcome is as good as at ``high_good``
        (the others as in ``plan``), probing ``guess`` first."""
        target = self.outcome({**plan, name: high_good})
        lo, hi = low_bad, high_good
        # The estimate is usually right: try it (or one below the top when it says the top) before bisecting.
        probe = guess if lo < guess < hi else (hi - 1 if guess >= hi > lo + 1 else (lo + hi) // 2)
        while hi - lo > 1:
            if self.outcome({**plan, name: probe}) <= target:
                hi = probe
            else:
                lo = probe
            probe = (lo + hi) // 2
        return hi

    def option(self, plan: dict[str, int], template: NodeTemplate, current: Outcome,
               left: list[str]) -> Option | None:
        have = plan.get(template.name, 0)
        budget = self.max_nodes.get(template.name)
        room = budget - have if budget is not None else None
        if room is not None and room <= 0:
            return None
        pods: list[Pod] = [self.base.scheduler.results[k].pod for k in left]
        guess = estimate(self.objects, template, pods, self.settings)
        if not guess.helps:
            return None
        high = guess.upper if room is None else min(guess.upper, room)
        best = self.outcome({**plan, template.name: have + high})
        # The estimate assumes shapes pack alone; grow while more nodes still place more pods.
        while best[0] > 0 and (room is None or high < room):
            bigger = high * 2 if room is None else min(high * 2, room)
            found = self.outcome({**plan, template.name: have + bigger})
            if found >= best:
                break
            high, best = bigger, found
        if best >= current:
            return None
        count = self.fewest(plan, template.name, have, have + high, have + max(guess.lower, 1)) - have
        after = self.outcome({**plan, template.name: have + count})
        placed = self._placed(plan, template.name, have + count, left)
        cpu = sum(self._request(k, "cpu") for k in placed)
        memory = sum(self._request(k, "memory") for k in placed)
        alloc = NodeInfo.build(template.node).allocatable
        return Option(template.name, count, current[0] - after[0], cpu, memory,
                      alloc.get("cpu", 0), alloc.get("memory", 0))

    def _placed(self, plan: Mapping[str, int], name: str, count: int, left: list[str]) -> list[str]:
        trial = self.trial({**plan, name: count})
        return [k for k in left if trial.placed(k)]

    def _request(self, key: str, resource: str) -> int:
        info = self.base.scheduler.infos.get(key)
        return info.request.get(resource, 0) if info is not None else 0


def plan_scale_up(objects: list[Any], templates: Sequence[NodeTemplate], *, settings: PlanSettings,
                  max_nodes: Mapping[str, int] | None = None, expander: Sequence[str] = ("least-waste",),
                  priorities: Mapping[str, int] | None = None,
                  prices: Mapping[str, Fraction] | None = None) -> ScaleUpPlan:
    """The fewest nodes per template that make the pending pods of ``objects`` schedule (see the module)."""
    from dralloc.errors import InputError

    names = [t.name for t in templates]
    if len(set(names)) != len(names):
        raise InputError("node templates: each template needs its own name")
    for name in max_nodes or {}:
        if name not in names:
            raise InputError(f"--max-nodes: no template named {name!r}")
    planner = _Planner(objects, templates, settings, max_nodes or {})
    plan: dict[str, int] = {}
    current = planner.outcome(plan)
    while current != (0, 0):
        trial_left = _left(planner, plan)
        options = [o for t in sorted(templates, key=lambda t: t.name)
                   if (o := planner.option(plan, t, current, trial_left)) is not None]
        if not options:
            break
        picked = choose(options, list(expander), priorities or {}, prices or {})
        plan[picked.template] = plan.get(picked.template, 0) + picked.count
        current = planner.outcome(plan)
    if len([c for c in plan.values() if c]) > 1:
        for name in sorted(plan):
            others = {n: c for n, c in plan.items() if n != name}
            if planner.outcome(others) <= current:
                plan[name] = 0
            elif plan[name] > 1:
                plan[name] = planner.fewest(others, name, 0, plan[name], plan[name] - 1)
    plan = {n: c for n, c in sorted(plan.items()) if c}
    final = planner.trial(plan)
    pods = []
    for key in planner.pending:
        res = final.scheduler.results[key]
        placed = final.placed(key)
        pods.append(PodPlacement(res.namespace, res.name, res.node if placed else None,
                                 "" if placed else res.message))
    return ScaleUpPlan(plan, pods, sum(1 for p in pods if p.node is None), list(expander), final, list(templates))


def _left(planner: _Planner, plan: Mapping[str, int]) -> list[str]:
    return planner.trial(plan).left_pending(planner.pending)
