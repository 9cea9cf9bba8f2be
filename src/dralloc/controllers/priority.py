"""The Priority admission plugin: what a pod's priority and preemption policy become when it is created.

* ``priorityClassName`` set: the class's ``value`` and ``preemptionPolicy`` (a class without one defaults
  to ``PreemptLowerPriority``); an unknown name is rejected.
* unset: the ``globalDefault`` class with the lowest value, whose name is then written into the pod; with
  none, priority 0 and ``PreemptLowerPriority``.
* a pod that already states a different priority or preemption policy is rejected.

The API server always has the two system classes, ``system-node-critical`` (2000001000) and
``system-cluster-critical`` (2000000000). Apply this to pods being created (manifests, controller output),
not to pods read back from a cluster: those were admitted when they were created.
"""

from __future__ import annotations

from collections.abc import Iterable

from msgspec.structs import replace

from dralloc.api.core_v1 import Pod
from dralloc.api.meta import ObjectMeta
from dralloc.api.scheduling_v1 import PriorityClass
from dralloc.errors import InputError

__all__ = ["SYSTEM_PRIORITY_CLASSES", "PriorityAdmissionError", "admit_pod_priority"]

PREEMPT_LOWER_PRIORITY = "PreemptLowerPriority"
SYSTEM_PRIORITY_CLASSES = (
    PriorityClass(metadata=ObjectMeta(name="system-node-critical"), value=2000001000,
                  description="Used for system critical pods that must not be moved from their current node.",
                  preemption_policy=PREEMPT_LOWER_PRIORITY),
    PriorityClass(metadata=ObjectMeta(name="system-cluster-critical"), value=2000000000,
                  description="Used for system critical pods that must run in the cluster, but can be moved to "
                              "another node if necessary.",
                  preemption_policy=PREEMPT_LOWER_PRIORITY),
)


class PriorityAdmissionError(InputError):
    """kube-apiserver's Priority admission plugin would reject the pod (HTTP 403)."""


def admit_pod_priority(pod: Pod, classes: Iterable[PriorityClass]) -> Pod:
    """The pod as the Priority admission plugin leaves it on create (see the module docstring)."""
    by_name: dict[str, PriorityClass] = {}
    for pc in (*SYSTEM_PRIORITY_CLASSES, *classes):
        by_name[pc.metadata.name or ""] = pc
    spec = pod.spec
    class_name = spec.priority_class_name or ""
    if class_name:
        chosen = by_name.get(class_name)
        if chosen is None:
            raise _forbidden(pod, f"no PriorityClass with name {class_name} was found")
    else:
        chosen = None
        for pc in by_name.values():  # in input order: the first of equally low defaults wins
            if pc.global_default and (chosen is None or pc.value < chosen.value):
                chosen = pc
        class_name = (chosen.metadata.name or "") if chosen is not None else ""
    priority = chosen.value if chosen is not None else 0
    policy = (chosen.preemption_policy if chosen is not None else None) or PREEMPT_LOWER_PRIORITY
    if spec.priority is not None and spec.priority != priority:
        raise _forbidden(pod, f"the integer value of priority ({spec.priority}) must not be provided in pod spec; "
                              f"priority admission controller computed {priority} from the given PriorityClass name")
    if spec.preemption_policy is not None and spec.preemption_policy != policy:
        raise _forbidden(pod, f"the string value of PreemptionPolicy ({spec.preemption_policy}) must not be provided "
                              f"in pod spec; priority admission controller computed {policy} from the given "
                              "PriorityClass name")
    return replace(pod, spec=replace(spec, priority_class_name=class_name or None, priority=priority,
                                     preemption_policy=policy))


def _forbidden(pod: Pod, reason: str) -> PriorityAdmissionError:
    return PriorityAdmissionError(f'pods "{pod.metadata.name or ""}" is forbidden: {reason}')
