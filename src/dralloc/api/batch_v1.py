"""batch/v1 Job: what the job controller reads to create pods (parallelism, completions, completion mode,
the pod template); failure and success policies are kept as plain data."""

from __future__ import annotations

from typing import Any

import msgspec

from dralloc.api.core_v1 import PodTemplateSpec
from dralloc.api.meta import Base, LabelSelector, ListMeta, ObjectMeta

GROUP_VERSION = "batch/v1"


class JobCondition(Base):
    type: str = ""
    status: str = ""
    last_probe_time: str | None = None
    last_transition_time: str | None = None
    reason: str | None = None
    message: str | None = None


class JobSpec(Base):
    parallelism: int | None = None  # defaults to 1
    completions: int | None = None  # unset: any one success completes the job (work queue)
    active_deadline_seconds: int | None = None
    pod_failure_policy: dict[str, Any] | None = None
    success_policy: dict[str, Any] | None = None
    backoff_limit: int | None = None
    backoff_limit_per_index: int | None = None
    max_failed_indexes: int | None = None
    selector: LabelSelector | None = None
    manual_selector: bool | None = None
    template: PodTemplateSpec = msgspec.field(default_factory=PodTemplateSpec)
    ttl_seconds_after_finished: int | None = None
    completion_mode: str | None = None  # NonIndexed (default) or Indexed
    suspend: bool | None = None
    pod_replacement_policy: str | None = None
    managed_by: str | None = None


class JobStatus(Base):
    conditions: list[JobCondition] | None = None
    start_time: str | None = None
    completion_time: str | None = None
    active: int | None = None
    succeeded: int | None = None
    failed: int | None = None
    terminating: int | None = None
    completed_indexes: str | None = None
    failed_indexes: str | None = None
    uncounted_terminated_pods: dict[str, Any] | None = None
    ready: int | None = None


class Job(Base):
    api_version: str = GROUP_VERSION
    kind: str = "Job"
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: JobSpec = msgspec.field(default_factory=JobSpec)
    status: JobStatus | None = None


class JobList(Base):
    api_version: str = GROUP_VERSION
    kind: str = "JobList"
    metadata: ListMeta | None = None
    items: list[Job] = msgspec.field(default_factory=list)


# --- CronJob: stored, served and run (server/controllers/cron_jobs.py) ----------------------------------


class JobTemplateSpec(Base):
    metadata: ObjectMeta | None = None
    spec: JobSpec = msgspec.field(default_factory=JobSpec)


class CronJobSpec(Base):
    schedule: str = ""
    time_zone: str | None = None
    starting_deadline_seconds: int | None = None
    concurrency_policy: str | None = None  # Allow (default), Forbid or Replace
    suspend: bool | None = None
    job_template: JobTemplateSpec = msgspec.field(default_factory=JobTemplateSpec)
    successful_jobs_history_limit: int | None = None
    failed_jobs_history_limit: int | None = None


class CronJob(Base):
    api_version: str = GROUP_VERSION
    kind: str = "CronJob"
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: CronJobSpec = msgspec.field(default_factory=CronJobSpec)
    status: dict[str, Any] | None = None


class CronJobList(Base):
    api_version: str = GROUP_VERSION
    kind: str = "CronJobList"
    metadata: ListMeta | None = None
    items: list[CronJob] = msgspec.field(default_factory=list)
