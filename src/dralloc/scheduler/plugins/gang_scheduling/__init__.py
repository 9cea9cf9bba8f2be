"""GangScheduling (gate ``GangScheduling``): all-or-nothing for the pods of a PodGroup with a gang policy.

* PreEnqueue, the barrier: a pod naming a PodGroup that does not exist, or a gang with fewer known pods than
  ``minCount``, never reaches the queue (UnschedulableAndUnresolvable, with the texts below).
* PlacementFeasible, in the pod group cycle after each member is evaluated: with ``scheduled`` members
  assumed or bound and ``remaining`` not yet evaluated, ``remaining + scheduled < minCount`` ends the cycle
  (Unschedulable), ``scheduled < minCount`` goes on (Wait), otherwise the group is feasible — the members that
  fit bind even when others do not (partial binding above minCount).

A basic group has minCount 1 (``getMinCount``). Permit's part (holding assumed members until minCount are)
is played by the pod group cycle itself, which binds the group's feasible members together or none.
"""

from __future__ import annotations

from dataclasses import dataclass

from dralloc.scheduler.framework import Code, Plugin, Status, unresolvable, unschedulable
from dralloc.scheduler.pod_groups import PodGroupStates, group_name
from dralloc.scheduler.podinfo import PodInfo

NAME = "GangScheduling"
# (upstream's text says "pods's")
GROUP_MISSING = "waiting for pods's pod group {name} to appear in scheduling queue"
TOO_FEW_PODS = "waiting for minCount pods from a gang to appear in scheduling queue"
CANNOT_BE_SATISFIED = "minCount ({min}) cannot be satisfied: {scheduled} scheduled, {remaining} remaining"
NOT_YET_SATISFIED = "minCount ({min}) is not yet satisfied: {scheduled} scheduled, {remaining} remaining"


@dataclass
class PlacementProgress:
    """Where a pod group cycle stands: members left to evaluate and members assumed or bound."""

    remaining: int
    scheduled: int


def _go_quote(text: str) -> str:
    """``%q`` of a DNS name (no characters that need escaping)."""
    return f'"{text}"'


class GangScheduling(Plugin):
    name = NAME

    def __init__(self, groups: PodGroupStates) -> None:
        self.groups = groups

    def pre_enqueue(self, pod: PodInfo) -> Status | None:
        name = group_name(pod)
        if name is None:
            return None
        key = self.groups.key_of(pod)
        assert key is not None
        group = self.groups.get(key)
        if group is None:
            return unresolvable(NAME, GROUP_MISSING.format(name=_go_quote(name)))
        gang = group.spec.scheduling_policy.gang
        if gang is None:
            return None
        if self.groups.all_pods_count(key) < gang.min_count:
            return unresolvable(NAME, TOO_FEW_PODS)
        return None

    def placement_feasible(self, min_count: int, progress: PlacementProgress) -> Status | None:
        """None when minCount is met, Code.WAIT while it may still be, a rejection once it cannot be."""
        remaining, scheduled = progress.remaining, progress.scheduled
        if remaining + scheduled < min_count:
            return unschedulable(NAME, CANNOT_BE_SATISFIED.format(min=min_count, scheduled=scheduled,
                                                                  remaining=remaining))
        if scheduled < min_count:
            return Status(Code.WAIT, (NOT_YET_SATISFIED.format(min=min_count, scheduled=scheduled,
                                                               remaining=remaining),), NAME)
        return None
