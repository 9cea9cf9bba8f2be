"""JobSets and LeaderWorkerSets of an input, expanded as their controllers, the Job and StatefulSet controllers
and their pod webhooks would: into Jobs, StatefulSets, headless Services and pods.

The input's own objects count, as in a running cluster's dump: a JobSet makes only the Jobs the input lacks;
a LeaderWorkerSet reuses its leader StatefulSet and leader pods and makes only the missing worker StatefulSets
and Services. Pods that the other workload expansion made for such Jobs and StatefulSets go through the same
pod webhooks. Names and UIDs come from the NameGenerator, drawn in input order.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from dralloc.api.apps_v1 import StatefulSet
from dralloc.api.batch_v1 import Job
from dralloc.api.core_v1 import Pod, Service
from dralloc.api.jobset_v1alpha2 import JobSet
from dralloc.api.leaderworkerset_v1 import LeaderWorkerSet
from dralloc.api.scheduling_v1 import PriorityClass
from dralloc.controllers.jobsets import admit_jobset_pod, jobset_jobs, jobset_service
from dralloc.controllers.leaderworkersets import admit_lws_pod, expand_leaderworkerset
from dralloc.controllers.names import NameGenerator
from dralloc.controllers.priority import PriorityAdmissionError, admitted_priority
from dralloc.controllers.workloads import Owned, expand_job, with_uid

__all__ = ["SET_KINDS", "SetExpansion", "expand_workload_sets"]

SET_KINDS = (JobSet, LeaderWorkerSet)


@dataclass
class SetExpansion:
    """What the sets made: the sets themselves (with UIDs), their Jobs and StatefulSets in creation order,
    Services, pods, and a message for each part a controller is still waiting to create."""

    workloads: list[Any] = field(default_factory=list)
    services: list[Service] = field(default_factory=list)
    pods: list[Pod] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def _priority(pod: Pod, classes: list[PriorityClass]) -> int:
    """The priority the Priority admission plugin gives the pod (it runs before the webhooks)."""
    spec = pod.spec
    try:
        return admitted_priority(pod.metadata.name or "", spec.priority_class_name, spec.priority,
                                 spec.preemption_policy, classes).priority
    except PriorityAdmissionError:
        return spec.priority or 0  # the simulation warns about the class itself


def expand_workload_sets(sets: Iterable[JobSet | LeaderWorkerSet], workloads: Iterable[Any],
                         input_pods: Iterable[Pod], new_pods: Iterable[Pod], names: NameGenerator,
                         priority_classes: Iterable[PriorityClass] = (),
                         services: Iterable[Service] = ()) -> SetExpansion:
    """Expand ``sets`` in order, next to the input's (and the other controllers') ``workloads``, the input's
    pods and ``services``. ``new_pods``, the pods other controllers just made, come back in ``pods`` as the
    webhooks admit them, followed by the sets' own."""
    classes = list(priority_classes)
    workloads = list(workloads)
    input_pods = list(input_pods)
    have = {(type(o).__name__, o.metadata.namespace or "default", o.metadata.name or "")
            for o in [*workloads, *services]}
    owned = Owned([*input_pods, *(w for w in workloads if isinstance(w, (Job, StatefulSet)))])

    priorities: dict[tuple[str | None, int | None, str | None], int] = {}

    def priority(pod: Pod) -> int:
        # Pods of one template share their priority fields: admit each combination once.
        spec = pod.spec
        key = (spec.priority_class_name, spec.priority, spec.preemption_policy)
        if key not in priorities:
            priorities[key] = _priority(pod, classes)
        return priorities[key]

    def webhooks(pods: Iterable[Pod]) -> list[Pod]:
        return [admit_lws_pod(admit_jobset_pod(p, priority(p))) for p in pods]

    out = SetExpansion(pods=webhooks(new_pods))
    for obj in sets:
        obj = with_uid(obj, names)
        out.workloads.append(obj)
        if isinstance(obj, JobSet):
            mine = {j.metadata.name or "" for j in owned.of(obj) if isinstance(j, Job)}
            made = jobset_jobs(obj, mine)
            out.warnings.extend(made.warnings)
            service = jobset_service(obj)
            if service is not None and ("Service", service.metadata.namespace or "default",
                                        service.metadata.name or "") not in have:
                out.services.append(service)
            for job in made.jobs:
                job = with_uid(job, names)
                out.workloads.append(job)
                out.pods.extend(webhooks(expand_job(job, names, owned)))
        else:
            lws_made = expand_leaderworkerset(obj, names, owned, lambda *key: key in have)
            out.workloads.extend(lws_made.statefulsets)
            out.services.extend(lws_made.services)
            # the LWS webhook ran inside; the other pod admission (JobSet's) does not apply to these pods
            out.pods.extend(lws_made.pods)
    return out
