"""The server scheduler's side of pod groups (GenericWorkload on): which waiting pods a new member brings back
to the queue, and the ``PodGroupScheduled`` condition written to a PodGroup's status.

* kube-scheduler's GangScheduling plugin registers for a pod's arrival: a new member of a group may let the
  group pass the ``minCount`` barrier, so the group's waiting members are tried again with it (a pod of
  another group, or of none, does not move them).
* After a pass, each PodGroup whose condition the pod group cycle computed anew gets it in its stored status
  (as kube-scheduler patches the PodGroup's status), the other conditions kept.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from dralloc.api.codec import to_dict
from dralloc.api.scheduling_v1alpha2 import POD_GROUP_SCHEDULED, PodGroup
from dralloc.server.controllers.writes import Writer
from dralloc.simulator.simulator import Simulator

Obj = dict[str, Any]
PODGROUPS = "podgroups"


def group_of(pod: Obj) -> tuple[str, str] | None:
    """(namespace, PodGroup name) a pod joins through ``spec.schedulingGroup``, or None."""
    group = (pod.get("spec") or {}).get("schedulingGroup") or {}
    name = group.get("podGroupName") if isinstance(group, dict) else None
    if not name:
        return None
    return ((pod.get("metadata") or {}).get("namespace") or "default", str(name))


def members_of(groups: set[tuple[str, str]], pods: Iterable[Obj]) -> list[Obj]:
    """The pods of ``pods`` that belong to one of ``groups``."""
    return [p for p in pods if group_of(p) in groups] if groups else []


def _scheduled_condition(group: PodGroup) -> Obj | None:
    for condition in (group.status.conditions if group.status is not None else None) or ():
        if condition.type == POD_GROUP_SCHEDULED:
            return dict(to_dict(condition))
    return None


def write_conditions(writer: Writer, sim: Simulator, stored: Callable[[tuple[str, str]], Obj | None]) -> int:
    """Write each group's PodGroupScheduled condition the run computed that its stored status lacks; ``stored``:
    the PodGroups as stored, by (namespace, name). Returns how many were written."""
    if not sim.pod_groups.enabled:
        return 0
    written = 0
    for group in sim.pod_groups.states.groups.values():
        key = (group.metadata.namespace or "default", group.metadata.name or "")
        obj = stored(key)
        condition = _scheduled_condition(group)
        if obj is None or condition is None:
            continue
        old = next((c for c in (obj.get("status") or {}).get("conditions") or ()
                    if c.get("type") == POD_GROUP_SCHEDULED), None)
        if old == condition:
            continue

        def patch(current: Obj, condition: Obj = condition) -> Obj | None:
            status = dict(current.get("status") or {})
            others = [c for c in status.get("conditions") or () if c.get("type") != POD_GROUP_SCHEDULED]
            status["conditions"] = [*others, condition]
            return {**current, "status": status}

        uid = (obj.get("metadata") or {}).get("uid")
        if writer.update(PODGROUPS, key[0], key[1], patch, uid=uid) is not None:
            written += 1
    return written
