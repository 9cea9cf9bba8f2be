"""PodDisruptionBudgets of the input as the drain rules read them."""

from __future__ import annotations

from typing import Any

from dralloc.simulator.planner.drain import Budget


def budgets_from_objects(objects: list[Any]) -> list[Budget]:
    return []  # MERGE-TODO: read policy/v1 PodDisruptionBudgets once the model exists
