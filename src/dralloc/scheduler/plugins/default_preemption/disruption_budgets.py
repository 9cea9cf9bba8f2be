"""PodDisruptionBudgets as DefaultPreemption reads them (``filterPodsWithPDBViolation``, kube-scheduler 1.36).

A budget covers a pod of its namespace that has labels, when its selector — neither unset nor empty, both of
which select nothing here — matches them, unless the pod is already in ``status.disruptedPods`` (the API server
has counted that eviction). Going through pods in order, each covered pod uses one of the budget's
``status.disruptionsAllowed``; a pod that takes a budget below zero violates it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from dralloc.api.meta import LabelSelector
from dralloc.api.policy_v1 import PodDisruptionBudget
from dralloc.scheduler.labels import Selector, from_model
from dralloc.scheduler.podinfo import PodInfo


def _selector(selector: LabelSelector | None) -> Selector | None:
    """The budget's selector, or None when it selects nothing (unset, empty or invalid)."""
    compiled = from_model(selector)
    return None if compiled.empty or compiled.nothing else compiled


@dataclass(frozen=True)
class Budget:
    key: str  # namespace/name
    namespace: str
    selector: Selector | None
    allowed: int
    disrupted: frozenset[str]

    @classmethod
    def of(cls, pdb: PodDisruptionBudget) -> Budget:
        namespace = pdb.metadata.namespace or "default"
        status = pdb.status
        return cls(f"{namespace}/{pdb.metadata.name or ''}", namespace, _selector(pdb.spec.selector),
                   status.disruptions_allowed if status is not None else 0,
                   frozenset((status.disrupted_pods or {}) if status is not None else ()))

    def covers(self, pod: PodInfo) -> bool:
        labels = pod.labels
        return (bool(labels) and self.namespace == pod.namespace and self.selector is not None
                and self.selector.matches(labels) and pod.name not in self.disrupted)


def violations(pods: Iterable[PodInfo], budgets: list[Budget]) -> list[list[str]]:
    """For each pod in order, the keys of the budgets it takes below zero."""
    allowed = [b.allowed for b in budgets]
    out: list[list[str]] = []
    for pod in pods:
        broken: list[str] = []
        if pod.labels:
            for i, budget in enumerate(budgets):
                if budget.covers(pod):
                    allowed[i] -= 1
                    if allowed[i] < 0:
                        broken.append(budget.key)
        out.append(broken)
    return out


def split_violating(pods: list[PodInfo], budgets: list[Budget]) -> tuple[list[PodInfo], list[PodInfo]]:
    """``filterPodsWithPDBViolation``: (violating, non-violating), each in the given order."""
    violating: list[PodInfo] = []
    other: list[PodInfo] = []
    for pod, broken in zip(pods, violations(pods, budgets)):
        (violating if broken else other).append(pod)
    return violating, other
