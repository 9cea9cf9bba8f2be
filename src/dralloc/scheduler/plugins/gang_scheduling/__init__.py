"""GangScheduling (gate ``GangScheduling``): all-or-nothing for the pods of a PodGroup with a gang policy
(kube-scheduler 1.36, ``plugins/gangscheduling``).

* PreEnqueue, the barrier: a pod naming a PodGroup that does not exist, or a gang with fewer known pods than
  ``minCount``, never reaches the queue (UnschedulableAndUnresolvable, with the texts below).
* Permit, in the pod group cycle after each member that fits is assumed: while fewer than ``minCount``
  members are assumed or bound the member waits (``waiting for minCount pods from a gang to be scheduled``);
  the member that makes ``minCount`` — and every one after it — is allowed, and the group with it. Members
  that did not fit keep their own FitError (partial binding above minCount).

A basic group (or a pod of no group) is not held by Permit.
"""

from __future__ import annotations

from dralloc.scheduler.framework import Code, Plugin, Status, unresolvable
from dralloc.scheduler.pod_groups import PodGroupStates, group_name
from dralloc.scheduler.podinfo import PodInfo

NAME = "GangScheduling"
# (upstream's text says "pods's")
GROUP_MISSING = "waiting for pods's pod group {name} to appear in scheduling queue"
TOO_FEW_PODS = "waiting for minCount pods from a gang to appear in scheduling queue"
WAITING_FOR_QUORUM = "waiting for minCount pods from a gang to be scheduled"


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

    def quorum(self, min_count: int, scheduled: int) -> Status | None:
        """Permit for a gang member just assumed in its group's cycle, with ``scheduled`` members of the group
        assumed or bound (itself included): Code.WAIT below ``min_count`` (0 for a basic group), else None
        (allowed). (The framework's per-pod ``permit`` point is not used: only a group cycle holds members.)"""
        if scheduled < min_count:
            return Status(Code.WAIT, (WAITING_FOR_QUORUM,), NAME)
        return None
