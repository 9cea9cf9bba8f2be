"""jobset.x-k8s.io/v1alpha2 JobSet (kubernetes-sigs/jobset): a set of Indexed Jobs made from replicated templates.

Every field of the upstream type is modelled, so an unknown field is reported with its path. What the JobSet
controller reads to create Jobs is typed (replicated jobs, their Job templates and replicas, network,
suspend, coordinator, startup policy); the failure, success and volume claim policies are kept as plain data.
Defaults are those of the CRD schema and the JobSet webhook, applied by :func:`defaulted`.
"""

from __future__ import annotations

from typing import Any

import msgspec
from msgspec.structs import replace

from dralloc.api.batch_v1 import JobSpec
from dralloc.api.meta import Base, Condition, ListMeta, ObjectMeta

GROUP_VERSION = "jobset.x-k8s.io/v1alpha2"
DEFAULT_GROUP_NAME = "default"  # +kubebuilder:default=default on replicatedJobs[].groupName


class JobTemplateSpec(Base):
    """batch/v1 JobTemplateSpec: the Job each replica is made from."""

    metadata: ObjectMeta | None = None
    spec: JobSpec = msgspec.field(default_factory=JobSpec)


class DependsOn(Base):
    name: str = ""
    status: str = ""  # Ready or Complete


class ReplicatedJob(Base):
    name: str = ""
    group_name: str | None = None  # defaults to "default"
    template: JobTemplateSpec = msgspec.field(default_factory=JobTemplateSpec)
    replicas: int | None = None  # defaults to 1
    depends_on: list[DependsOn] | None = None


class Network(Base):
    enable_dns_hostnames: bool | None = msgspec.field(default=None, name="enableDNSHostnames")  # webhook: true
    subdomain: str | None = None  # defaults to the JobSet's name
    publish_not_ready_addresses: bool | None = None


class StartupPolicy(Base):
    startup_policy_order: str = ""  # AnyOrder or InOrder


class Coordinator(Base):
    replicated_job: str = ""
    job_index: int | None = None
    pod_index: int | None = None


class JobSetSpec(Base):
    replicated_jobs: list[ReplicatedJob] | None = None
    network: Network | None = None
    success_policy: dict[str, Any] | None = None
    failure_policy: dict[str, Any] | None = None
    startup_policy: StartupPolicy | None = None
    suspend: bool | None = None
    coordinator: Coordinator | None = None
    managed_by: str | None = None
    ttl_seconds_after_finished: int | None = None
    volume_claim_policies: list[dict[str, Any]] | None = None


class ReplicatedJobStatus(Base):
    name: str = ""
    ready: int = 0
    succeeded: int = 0
    failed: int = 0
    active: int = 0
    suspended: int = 0
    job_restarts: list[int] | None = None
    job_restarts_count_towards_max: list[int] | None = None


class JobSetStatus(Base):
    conditions: list[Condition] | None = None
    restarts: int = 0
    restarts_count_towards_max: int | None = None
    terminal_state: str | None = None
    replicated_jobs_status: list[ReplicatedJobStatus] | None = None
    previous_in_place_restart_attempt: int | None = None
    current_in_place_restart_attempt: int | None = None


class JobSet(Base):
    api_version: str = GROUP_VERSION
    kind: str = "JobSet"
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: JobSetSpec = msgspec.field(default_factory=JobSetSpec)
    status: JobSetStatus | None = None


class JobSetList(Base):
    api_version: str = GROUP_VERSION
    kind: str = "JobSetList"
    metadata: ListMeta | None = None
    items: list[JobSet] = msgspec.field(default_factory=list)


def replicas(rjob: ReplicatedJob) -> int:
    return 1 if rjob.replicas is None else rjob.replicas


def group_name(rjob: ReplicatedJob) -> str:
    return DEFAULT_GROUP_NAME if rjob.group_name is None else rjob.group_name


def defaulted(js: JobSet) -> JobSet:
    """The JobSet as stored: the CRD's defaults (replicas 1, groupName ``default``) and the webhook's
    (Indexed completion mode, restart policy OnFailure, DNS hostnames on, startup policy AnyOrder)."""
    spec = js.spec
    rjobs = []
    for rjob in spec.replicated_jobs or ():
        job_spec = rjob.template.spec
        pod_spec = job_spec.template.spec
        if pod_spec.restart_policy is None or pod_spec.restart_policy == "":
            job_spec = replace(job_spec, template=replace(job_spec.template,
                                                          spec=replace(pod_spec, restart_policy="OnFailure")))
        if job_spec.completion_mode is None:
            job_spec = replace(job_spec, completion_mode="Indexed")
        rjobs.append(replace(rjob, replicas=replicas(rjob), group_name=group_name(rjob),
                             template=replace(rjob.template, spec=job_spec)))
    network = spec.network or Network()
    network = replace(network,
                      enable_dns_hostnames=True if network.enable_dns_hostnames is None else network.enable_dns_hostnames,
                      publish_not_ready_addresses=(True if network.publish_not_ready_addresses is None
                                                   else network.publish_not_ready_addresses))
    startup = spec.startup_policy or StartupPolicy(startup_policy_order="AnyOrder")
    success = spec.success_policy if spec.success_policy is not None else {"operator": "All"}
    return replace(js, spec=replace(spec, replicated_jobs=rjobs, network=network, startup_policy=startup,
                                    success_policy=success))
