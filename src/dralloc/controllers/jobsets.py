"""The JobSet controller and its pod webhook (kubernetes-sigs/jobset, API jobset.x-k8s.io/v1alpha2).

* Each replicated job ``r`` makes ``replicas`` Jobs ``<jobset>-<r>-<jobIndex>`` in the JobSet's namespace,
  owned by it, from the replicated job's Job template (defaulted to Indexed completion and OnFailure
  restarts), skipping those the input already holds (by name, among the JobSet's Jobs). The Job controller
  then makes their pods (``<job>-<completionIndex>-`` + 5 characters).
* Jobs and their pod templates carry, as labels and as annotations: ``jobset-name``, ``jobset-uid``,
  ``replicatedjob-name``, ``restart-attempt`` (``status.restarts``), ``replicatedjob-replicas``,
  ``global-replicas`` (replicas of every replicated job), ``job-index``, ``job-key`` (SHA-1 of
  ``<namespace>/<job>``), ``job-global-index`` (the index counted over every replicated job in spec order),
  ``group-name``, ``group-replicas`` and ``job-group-index`` (the same within the group), and with a
  coordinator ``coordinator: <jobset>-<rjob>-<jobIndex>-<podIndex>.<subdomain>``. The annotation
  ``alpha.jobset.sigs.k8s.io/exclusive-topology`` (of the JobSet, or of the replicated job's template, which
  wins) is copied as an annotation only, with ``alpha.jobset.sigs.k8s.io/node-selector`` beside it.
* With DNS hostnames on (the default) the JobSet gets a headless Service named after its subdomain
  (``spec.network.subdomain``, else the JobSet's name) selecting ``jobset-name``, which default topology
  spreading reads.
* Exclusive placement with the node-selector strategy: the Job's pods select
  ``alpha.jobset.sigs.k8s.io/namespaced-job: <namespace>_<job>`` and tolerate the
  ``alpha.jobset.sigs.k8s.io/no-schedule`` NoSchedule taint.
* A suspended JobSet makes suspended Jobs (which make no pods); one managed by another controller
  (``spec.managedBy``) or finished (condition Completed or Failed) makes nothing.
* ``dependsOn`` and ``startupPolicy: InOrder`` order the Jobs' creation in time; here, as for a
  StatefulSet's ordered start, all are made at once, except a replicated job that waits for another to be
  Complete: it is made only once the JobSet's status records that one's Jobs all succeeded.

The pod webhook (for pods created with the ``jobset-name`` annotation, unless the node-selector strategy is
in use) labels each pod ``jobset.sigs.k8s.io/priority: <priority>`` and, with exclusive placement, gives the
leader (completion index 0) a required pod affinity to its own Job (``job-key In [<key>]``) and anti-affinity
to pods of other Jobs of the same priority (``job-key Exists``, ``job-key NotIn [<key>]``, ``priority In
[<priority>]``) over the topology key, in all namespaces. Upstream creates a follower only once its leader is
scheduled, with a nodeSelector for the leader's domain; a simulation creates every pod at once, so a follower
instead requires pod affinity to its leader (``job-key In [<key>]``, completion index 0) over the same key:
it lands in the leader's domain, and waits while the leader has none.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable

from msgspec.structs import replace

from dralloc.api.batch_v1 import Job, JobSpec
from dralloc.api.core_v1 import Pod, Service, ServiceSpec, Toleration
from dralloc.api.jobset_v1alpha2 import JobSet, ReplicatedJob, defaulted, group_name, replicas
from dralloc.api.meta import ObjectMeta
from dralloc.controllers.required_affinity import required_term, requirement, with_required_terms
from dralloc.controllers.workloads import controller_ref

__all__ = [
    "EXCLUSIVE_KEY",
    "JOBSET_NAME_KEY",
    "JobSetJobs",
    "admit_jobset_pod",
    "global_job_index",
    "job_key",
    "job_name",
    "jobset_jobs",
    "jobset_service",
]

JOBSET_CONTROLLER = "jobset.sigs.k8s.io/jobset-controller"
JOBSET_NAME_KEY = "jobset.sigs.k8s.io/jobset-name"
JOBSET_UID_KEY = "jobset.sigs.k8s.io/jobset-uid"
REPLICATED_JOB_NAME_KEY = "jobset.sigs.k8s.io/replicatedjob-name"
REPLICATED_JOB_REPLICAS_KEY = "jobset.sigs.k8s.io/replicatedjob-replicas"
GLOBAL_REPLICAS_KEY = "jobset.sigs.k8s.io/global-replicas"
JOB_INDEX_KEY = "jobset.sigs.k8s.io/job-index"
JOB_GLOBAL_INDEX_KEY = "jobset.sigs.k8s.io/job-global-index"
JOB_KEY = "jobset.sigs.k8s.io/job-key"
GROUP_NAME_KEY = "jobset.sigs.k8s.io/group-name"
GROUP_REPLICAS_KEY = "jobset.sigs.k8s.io/group-replicas"
JOB_GROUP_INDEX_KEY = "jobset.sigs.k8s.io/job-group-index"
RESTARTS_KEY = "jobset.sigs.k8s.io/restart-attempt"
COORDINATOR_KEY = "jobset.sigs.k8s.io/coordinator"
PRIORITY_KEY = "jobset.sigs.k8s.io/priority"
EXCLUSIVE_KEY = "alpha.jobset.sigs.k8s.io/exclusive-topology"
NODE_SELECTOR_STRATEGY_KEY = "alpha.jobset.sigs.k8s.io/node-selector"
NAMESPACED_JOB_KEY = "alpha.jobset.sigs.k8s.io/namespaced-job"
NO_SCHEDULE_TAINT_KEY = "alpha.jobset.sigs.k8s.io/no-schedule"
COMPLETION_INDEX = "batch.kubernetes.io/job-completion-index"


def job_name(jobset: str, replicated_job: str, index: int) -> str:
    """``placement.GenJobName``."""
    return f"{jobset}-{replicated_job}-{index}"


def job_key(namespace: str, name: str) -> str:
    """``jobHashKey``: the SHA-1 hex digest of ``<namespace>/<job>``."""
    return hashlib.sha1(f"{namespace}/{name}".encode()).hexdigest()


def global_job_index(js: JobSet, replicated_job: str, index: int) -> str:
    """The Job's index counted over the replicated jobs in spec order ("" for an unknown one)."""
    seen = 0
    for rjob in js.spec.replicated_jobs or ():
        if rjob.name == replicated_job:
            return str(seen + index)
        seen += replicas(rjob)
    return ""


def _group_job_index(js: JobSet, group: str, replicated_job: str, index: int) -> str:
    seen = 0
    for rjob in js.spec.replicated_jobs or ():
        if group_name(rjob) == group:
            if rjob.name == replicated_job:
                return str(seen + index)
            seen += replicas(rjob)
    return ""


def subdomain(js: JobSet) -> str:
    """``GetSubdomain``: ``spec.network.subdomain``, else the JobSet's name."""
    network = js.spec.network
    return (network.subdomain if network is not None and network.subdomain else None) or js.metadata.name or ""


def _dns_hostnames(js: JobSet) -> bool:
    return bool(js.spec.network is not None and js.spec.network.enable_dns_hostnames)


def _jobset_metadata(js: JobSet, rjob: ReplicatedJob, index: int) -> tuple[dict[str, str], dict[str, str]]:
    """``labelAndAnnotateObject``: the labels and the annotations a Job and its pod template get."""
    name, namespace = js.metadata.name or "", js.metadata.namespace or "default"
    every_rjob = js.spec.replicated_jobs or ()
    group = group_name(rjob)
    common = {
        JOBSET_NAME_KEY: name,
        JOBSET_UID_KEY: js.metadata.uid or "",
        REPLICATED_JOB_NAME_KEY: rjob.name,
        RESTARTS_KEY: str(js.status.restarts if js.status is not None else 0),
        REPLICATED_JOB_REPLICAS_KEY: str(replicas(rjob)),
        GLOBAL_REPLICAS_KEY: str(sum(replicas(r) for r in every_rjob)),
        JOB_INDEX_KEY: str(index),
        JOB_KEY: job_key(namespace, job_name(name, rjob.name, index)),
        JOB_GLOBAL_INDEX_KEY: global_job_index(js, rjob.name, index),
        GROUP_NAME_KEY: group,
        GROUP_REPLICAS_KEY: str(sum(replicas(r) for r in every_rjob if group_name(r) == group)),
        JOB_GROUP_INDEX_KEY: _group_job_index(js, group, rjob.name, index),
    }
    coordinator = js.spec.coordinator
    if coordinator is not None:
        common[COORDINATOR_KEY] = (f"{name}-{coordinator.replicated_job}-{coordinator.job_index or 0}-"
                                   f"{coordinator.pod_index or 0}.{subdomain(js)}")
    annotations = dict(common)
    # The exclusive-topology annotation: the JobSet's, overridden by the replicated job's template.
    for source in (js.metadata.annotations or {}, (rjob.template.metadata.annotations
                                                     if rjob.template.metadata else None) or {}):
        if EXCLUSIVE_KEY in source:
            annotations[EXCLUSIVE_KEY] = source[EXCLUSIVE_KEY]
            if NODE_SELECTOR_STRATEGY_KEY in source:
                annotations[NODE_SELECTOR_STRATEGY_KEY] = source[NODE_SELECTOR_STRATEGY_KEY]
    return common, annotations


def _merged(meta: ObjectMeta | None, labels: dict[str, str], annotations: dict[str, str]) -> ObjectMeta:
    meta = meta or ObjectMeta()
    return replace(meta, labels={**(meta.labels or {}), **labels},
                   annotations={**(meta.annotations or {}), **annotations})


def construct_job(js: JobSet, rjob: ReplicatedJob, index: int) -> Job:
    """``constructJob``: the Job for one replica of a replicated job (``js`` defaulted)."""
    labels, annotations = _jobset_metadata(js, rjob, index)
    name = job_name(js.metadata.name or "", rjob.name, index)
    spec: JobSpec = rjob.template.spec
    template = spec.template
    template = replace(template, metadata=_merged(template.metadata, labels, annotations))
    pod_spec = template.spec  # (the pod's subdomain is not modelled: it does not change scheduling)
    job_meta = _merged(rjob.template.metadata, labels, annotations)
    job_annotations = job_meta.annotations or {}
    if EXCLUSIVE_KEY in job_annotations and NODE_SELECTOR_STRATEGY_KEY in job_annotations:
        namespace = js.metadata.namespace or "default"
        pod_spec = replace(pod_spec, node_selector={**(pod_spec.node_selector or {}),
                                                    NAMESPACED_JOB_KEY: f"{namespace}_{name}"},
                           tolerations=[*(pod_spec.tolerations or []), Toleration(
                               key=NO_SCHEDULE_TAINT_KEY, operator="Exists", effect="NoSchedule")])
    template = replace(template, spec=pod_spec)
    return Job(metadata=replace(job_meta, name=name, namespace=js.metadata.namespace, uid=None,
                                owner_references=[controller_ref(js)]),
               spec=replace(spec, template=template, suspend=bool(js.spec.suspend)))


def _finished(js: JobSet) -> bool:
    return any(c.type in ("Completed", "Failed") and c.status == "True"
               for c in (js.status.conditions if js.status is not None else None) or ())


def _completed(js: JobSet, rjob_name: str, want: int) -> bool:
    """Whether the JobSet's status records every Job of a replicated job as succeeded."""
    statuses = (js.status.replicated_jobs_status if js.status is not None else None) or ()
    return any(s.name == rjob_name and s.succeeded == want for s in statuses)


class JobSetJobs:
    """The Jobs a JobSet's controller creates now, and ``warnings`` on what it leaves for later or what is not
    modelled."""

    def __init__(self, jobs: list[Job], warnings: list[str]) -> None:
        self.jobs = jobs
        self.warnings = warnings


def jobset_jobs(js: JobSet, existing: Iterable[str] = ()) -> JobSetJobs:
    """The Jobs the controller creates for ``js`` (see the module docstring); ``existing``: the names of the
    JobSet's Jobs the input already holds. ``js`` must have its UID."""
    js = defaulted(js)
    if (js.spec.managed_by or JOBSET_CONTROLLER) != JOBSET_CONTROLLER or _finished(js):
        return JobSetJobs([], [])
    have = set(existing)
    sizes = {r.name: replicas(r) for r in js.spec.replicated_jobs or ()}
    jobs: list[Job] = []
    where = f"JobSet {js.metadata.namespace or 'default'}/{js.metadata.name}"
    # The claims are mounted where a container has a volumeMount of their name: the model has no mounts.
    warnings = [f"{where}: volumeClaimPolicies are not modelled; its pods get no volumes for them"
                ] if js.spec.volume_claim_policies else []
    for rjob in js.spec.replicated_jobs or ():
        blocked = [d.name for d in rjob.depends_on or ()
                   if d.status == "Complete" and not _completed(js, d.name, sizes.get(d.name, 0))]
        if blocked:
            warnings.append(f"{where}: replicatedJob {rjob.name!r} waits for {', '.join(map(repr, blocked))} "
                           "to complete; its Jobs are not created")
            continue
        for index in range(replicas(rjob)):
            if job_name(js.metadata.name or "", rjob.name, index) not in have:
                jobs.append(construct_job(js, rjob, index))
    return JobSetJobs(jobs, warnings)


def jobset_service(js: JobSet) -> Service | None:
    """The headless Service of a JobSet with DNS hostnames on: named after the subdomain, selecting the
    JobSet's pods."""
    js = defaulted(js)
    if not _dns_hostnames(js):
        return None
    return Service(metadata=ObjectMeta(name=subdomain(js), namespace=js.metadata.namespace,
                                       owner_references=[controller_ref(js)]),
                   spec=ServiceSpec(selector={JOBSET_NAME_KEY: js.metadata.name or ""}))


# --- the pod webhook -----------------------------------------------------------------------------------


def admit_jobset_pod(pod: Pod, priority: int) -> Pod:
    """The JobSet pod webhook on a new pod (see the module docstring); ``priority``: the pod's priority as
    the Priority admission plugin set it."""
    meta = pod.metadata
    annotations = meta.annotations or {}
    if JOBSET_NAME_KEY not in annotations or NODE_SELECTOR_STRATEGY_KEY in annotations:
        return pod
    labels = {**(meta.labels or {}), PRIORITY_KEY: str(priority)}
    pod = replace(pod, metadata=replace(meta, labels=labels))
    topology = annotations.get(EXCLUSIVE_KEY)
    if topology is None:
        return pod
    key = labels.get(JOB_KEY, "")
    if annotations.get(COMPLETION_INDEX) == "0":
        together = required_term(topology, requirement(JOB_KEY, "In", [key]), every_namespace=True)
        apart = required_term(topology, requirement(JOB_KEY, "Exists"), requirement(JOB_KEY, "NotIn", [key]),
                              requirement(PRIORITY_KEY, "In", [str(priority)]), every_namespace=True)
        return replace(pod, spec=replace(pod.spec, affinity=with_required_terms(pod.spec.affinity, together, apart)))
    follow = required_term(topology, requirement(JOB_KEY, "In", [key]), requirement(COMPLETION_INDEX, "In", ["0"]))
    return replace(pod, spec=replace(pod.spec, affinity=with_required_terms(pod.spec.affinity, follow, None)))


def admit_jobset_pods(pods: Iterable[Pod], priority_of: Callable[[Pod], int]) -> list[Pod]:
    return [admit_jobset_pod(p, priority_of(p)) for p in pods]
