"""PodDisruptionBudgets of the input as the drain rules read them (the preemption rules' own model)."""

from __future__ import annotations

from typing import Any

from dralloc.api.policy_v1 import PodDisruptionBudget
from dralloc.scheduler.plugins.default_preemption.disruption_budgets import Budget


def budgets_from_objects(objects: list[Any]) -> list[Budget]:
    return [Budget.of(o) for o in objects if isinstance(o, PodDisruptionBudget)]
