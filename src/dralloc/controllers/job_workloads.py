"""The Job controller's Workload path (gate ``WorkloadWithJob``, 1.36 alpha): a new Indexed Job whose
``parallelism`` (more than 1) equals its ``completions`` gets a Workload and a PodGroup, and its pods join it.

* Workload ``<job>-<hash>`` (the Job name cut to fit a DNS subdomain; the hash is FNV-32a of the Job's UID as
  go-spew prints it, ``(types.UID)"<uid>"``, its decimal digits safe-encoded), owned by the Job, with
  ``controllerRef {apiGroup: batch, kind: Job, name}`` and one template ``<job>-pgt-0`` with a gang policy of
  ``minCount: parallelism``.
* PodGroup ``<workload>-<template>-<hash>`` (FNV-32a of the two names), owned by the Job (controller) and
  the Workload, with the template's policy and a ``podGroupTemplateRef`` to it.
* A Job that already has pods, has started, has succeeded or failed pods or was suspended keeps default
  scheduling, as does one whose pod template names a scheduling group itself.
"""

from __future__ import annotations

from collections.abc import Iterable

from msgspec.structs import replace

from dralloc.api.batch_v1 import Job
from dralloc.api.core_v1 import Pod, PodSchedulingGroup
from dralloc.api.meta import ObjectMeta, OwnerReference
from dralloc.api.scheduling_v1alpha2 import (
    GROUP_VERSION,
    GangSchedulingPolicy,
    PodGroup,
    PodGroupSchedulingPolicy,
    PodGroupSpec,
    PodGroupTemplate,
    PodGroupTemplateReference,
    TypedLocalObjectReference,
    Workload,
    WorkloadPodGroupTemplateReference,
    WorkloadSpec,
)
from dralloc.controllers.names import fnv32a, safe_encode

__all__ = ["attach_job_workloads", "job_pod_group", "pod_group_name", "wants_workload", "workload_name"]

DNS1123_SUBDOMAIN_MAX = 253


def wants_workload(job: Job, has_pods: bool) -> bool:
    """``shouldManageWorkloadForJob`` and ``isNewJob``."""
    spec = job.spec
    parallelism = spec.parallelism if spec.parallelism is not None else 1
    if parallelism <= 1 or spec.completion_mode != "Indexed" or spec.completions != parallelism:
        return False
    if spec.template.spec.scheduling_group is not None or has_pods:
        return False
    status = job.status
    if status is not None:
        if status.start_time or status.succeeded or status.failed:
            return False
        if any(c.type == "Suspended" for c in status.conditions or ()):
            return False
    return True


def workload_name(job: Job) -> str:
    """``computeWorkloadName``."""
    digest = safe_encode(str(fnv32a(f'(types.UID)"{job.metadata.uid or ""}"'.encode())))
    prefix = (job.metadata.name or "")[:DNS1123_SUBDOMAIN_MAX - len(digest) - 1]
    return f"{prefix}-{digest}"


def pod_group_name(workload: str, template: str) -> str:
    """``computePodGroupName``: both names, cut to leave room for the hash (each keeps up to half the room;
    a short one lends the rest to the other)."""
    digest = safe_encode(str(fnv32a((workload + template).encode())))
    room = DNS1123_SUBDOMAIN_MAX - len(digest) - 2
    wl, tpl = workload, template
    if len(wl) + len(tpl) > room:
        half = room // 2
        if len(wl) <= half:
            tpl = tpl[:room - len(wl)]
        elif len(tpl) <= half:
            wl = wl[:room - len(tpl)]
        else:
            wl, tpl = wl[:room - half], tpl[:half]
    return f"{wl}-{tpl}-{digest}"


def job_pod_group(job: Job) -> tuple[Workload, PodGroup]:
    """The Workload and PodGroup the Job controller creates for ``job``."""
    meta = job.metadata
    name, namespace = meta.name or "", meta.namespace or "default"
    owner = OwnerReference(api_version="batch/v1", kind="Job", name=name, uid=meta.uid or "", controller=True,
                           block_owner_deletion=True)
    policy = PodGroupSchedulingPolicy(gang=GangSchedulingPolicy(min_count=job.spec.parallelism or 0))
    template = PodGroupTemplate(name=f"{name}-pgt-0", scheduling_policy=policy)
    workload = Workload(
        metadata=ObjectMeta(name=workload_name(job), namespace=namespace, owner_references=[owner]),
        spec=WorkloadSpec(controller_ref=TypedLocalObjectReference(api_group="batch", kind="Job", name=name),
                          pod_group_templates=[template]))
    wl_name = workload.metadata.name or ""
    group = PodGroup(
        metadata=ObjectMeta(name=pod_group_name(wl_name, template.name), namespace=namespace, owner_references=[
            owner, OwnerReference(api_version=GROUP_VERSION, kind="Workload", name=wl_name, uid="")]),
        spec=PodGroupSpec(pod_group_template_ref=PodGroupTemplateReference(workload=WorkloadPodGroupTemplateReference(
            workload_name=wl_name, pod_group_template_name=template.name)), scheduling_policy=policy))
    return workload, group


def attach_job_workloads(jobs: Iterable[Job], pods: list[Pod], input_pods: set[int]
                         ) -> tuple[list[Workload], list[PodGroup], list[Pod]]:
    """Workloads and PodGroups for the new Jobs among ``jobs``, and ``pods`` with each such Job's created pods
    (those not in the input, by ``id``) naming its PodGroup."""
    workloads: list[Workload] = []
    groups: list[PodGroup] = []
    by_job: dict[str, str] = {}
    for job in jobs:
        uid = job.metadata.uid or ""
        had_pods = any(id(p) in input_pods and any(o.uid == uid and o.controller for o in
                                                   p.metadata.owner_references or ()) for p in pods)
        if not wants_workload(job, had_pods):
            continue
        workload, group = job_pod_group(job)
        workloads.append(workload)
        groups.append(group)
        by_job[uid] = group.metadata.name or ""
    if not by_job:
        return workloads, groups, pods
    out = []
    for pod in pods:
        owner = next((o.uid for o in pod.metadata.owner_references or () if o.controller and o.kind == "Job"), None)
        if id(pod) not in input_pods and owner in by_job:
            pod = replace(pod, spec=replace(pod.spec, scheduling_group=PodSchedulingGroup(
                pod_group_name=by_job[owner])))
        out.append(pod)
    return workloads, groups, out
