"""The Priority admission plugin: what a pod's priority and preemption policy become when it is created.

* ``priorityClassName`` set: the class's ``value`` and ``preemptionPolicy`` (a class without one defaults
  to ``PreemptLowerPriority``); an unknown name is rejected.
* unset: the ``globalDefault`` class with the lowest value, whose name is then written into the pod; with
  none, priority 0 and ``PreemptLowerPriority``.
* a pod that already states a different priority or preemption policy is rejected.

With ``WorkloadAwarePreemption`` the plugin admits a PodGroup created the same way (its ``priorityClassName``
and ``priority``; a PodGroup has no preemption policy): :func:`admit_pod_group_priority`.

The API server always has the two system classes, ``system-node-critical`` (2000001000) and
``system-cluster-critical`` (2000000000). Apply this to pods being created (manifests, controller output),
not to pods read back from a cluster: those were admitted when they were created.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple

from msgspec.structs import replace

from dralloc.api.core_v1 import Pod
from dralloc.api.defaults import PREEMPT_LOWER_PRIORITY
from dralloc.api.meta import ObjectMeta
from dralloc.api.scheduling_v1 import PriorityClass
from dralloc.api.scheduling_v1alpha2 import PodGroup
from dralloc.errors import InputError
from dralloc.validation import scheduling as rules

__all__ = ["SYSTEM_PRIORITY_CLASSES", "AdmittedPriority", "PriorityAdmissionError", "admit_pod_group_priority",
           "admit_pod_priority", "admitted_priority"]

_DESCRIPTIONS = {
    "system-node-critical": "Used for system critical pods that must not be moved from their current node.",
    "system-cluster-critical": "Used for system critical pods that must run in the cluster, but can be moved to "
                               "another node if necessary.",
}
PODS = "pods"
POD_GROUPS = "podgroups.scheduling.k8s.io"
SYSTEM_PRIORITY_CLASSES = tuple(
    PriorityClass(metadata=ObjectMeta(name=name), value=value, description=_DESCRIPTIONS[name],
                  preemption_policy=PREEMPT_LOWER_PRIORITY)
    for name, (value, _default) in rules.SYSTEM_PRIORITY_CLASSES.items())


class PriorityAdmissionError(InputError):
    """kube-apiserver's Priority admission plugin would reject the pod (HTTP 403)."""


class AdmittedPriority(NamedTuple):
    """What the admission plugin writes into a pod's spec."""

    class_name: str | None  # priorityClassName (the default class's name when the pod named none)
    priority: int
    preemption_policy: str


def admit_pod_priority(pod: Pod, classes: Iterable[PriorityClass]) -> Pod:
    """The pod as the Priority admission plugin leaves it on create (see the module docstring)."""
    spec = pod.spec
    admitted = admitted_priority(pod.metadata.name or "", spec.priority_class_name, spec.priority,
                                 spec.preemption_policy, classes)
    return replace(pod, spec=replace(spec, priority_class_name=admitted.class_name, priority=admitted.priority,
                                     preemption_policy=admitted.preemption_policy))


def admit_pod_group_priority(group: PodGroup, classes: Iterable[PriorityClass]) -> PodGroup:
    """The PodGroup as the Priority admission plugin leaves it on create: its class's value in
    ``spec.priority``, the global default's name and value when it names no class."""
    spec = group.spec
    admitted = admitted_priority(group.metadata.name or "", spec.priority_class_name, spec.priority, None, classes,
                                 resource=POD_GROUPS)
    return replace(group, spec=replace(spec, priority_class_name=admitted.class_name, priority=admitted.priority))


def admitted_priority(pod_name: str, class_name: str | None, priority: int | None, preemption_policy: str | None,
                      classes: Iterable[PriorityClass], resource: str = PODS) -> AdmittedPriority:
    """The rule on the few fields it reads: a pod's name (for the message), the ``priorityClassName``,
    ``priority`` and ``preemptionPolicy`` it was created with; raises PriorityAdmissionError (a 403).
    ``resource``: what the 403 names (``pods``, or ``podgroups.scheduling.k8s.io``)."""
    by_name: dict[str, PriorityClass] = {}
    for pc in (*SYSTEM_PRIORITY_CLASSES, *classes):
        by_name[pc.metadata.name or ""] = pc
    class_name = class_name or ""
    if class_name:
        chosen = by_name.get(class_name)
        if chosen is None:
            raise _forbidden(resource, pod_name, f"no PriorityClass with name {class_name} was found")
    else:
        chosen = None
        for pc in by_name.values():  # in input order: the first of equally low defaults wins
            if pc.global_default and (chosen is None or pc.value < chosen.value):
                chosen = pc
        class_name = (chosen.metadata.name or "") if chosen is not None else ""
    value = chosen.value if chosen is not None else 0
    policy = (chosen.preemption_policy if chosen is not None else None) or PREEMPT_LOWER_PRIORITY
    if priority is not None and priority != value:
        raise _forbidden(resource, pod_name, f"the integer value of priority ({priority}) must not be provided in pod spec; "
                                   f"priority admission controller computed {value} from the given PriorityClass "
                                   "name")
    if preemption_policy is not None and preemption_policy != policy:
        raise _forbidden(resource, pod_name, f"the string value of PreemptionPolicy ({preemption_policy}) must not be "
                                   f"provided in pod spec; priority admission controller computed {policy} from the "
                                   "given PriorityClass name")
    return AdmittedPriority(class_name or None, value, policy)


def _forbidden(resource: str, name: str, reason: str) -> PriorityAdmissionError:
    return PriorityAdmissionError(f'{resource} "{name}" is forbidden: {reason}')
