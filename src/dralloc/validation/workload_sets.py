"""What the JobSet and LeaderWorkerSet admission (their CRD schemas and validating webhooks) refuses, and the
Job and pod templates inside them as kube-apiserver would refuse the Jobs and pods made from them.

JobSet: unique replicated job names; ``replicas`` at least 0; the group name and every Job name
``<jobset>-<replicatedJob>-<index>`` a DNS-1035 label (of at most 63 characters, as the pod names
``<job>-<index>-<5 characters>`` must be); ``dependsOn`` only on earlier replicated jobs and never on the first;
a coordinator that names an existing replicated job, Job and pod; a subdomain that is a DNS-1035 label.
LeaderWorkerSet: a DNS-1035 name; ``replicas`` from 0 to 1000000; ``size`` at least 1; maxUnavailable and
maxSurge non-negative integers or percentages of at most 100%, not both 0; a non-negative partition; a
sub-group size that divides ``size`` or ``size - 1`` (``size - 1`` with LeaderExcluded) and is not larger;
no sub-group exclusive topology without sub-groups.
"""

from __future__ import annotations

import dataclasses
import re

from dralloc.api.batch_v1 import Job
from dralloc.api.jobset_v1alpha2 import JobSet, group_name, replicas
from dralloc.api.jobset_v1alpha2 import defaulted as defaulted_jobset
from dralloc.api.leaderworkerset_v1 import LEADER_EXCLUDED, LeaderWorkerSet
from dralloc.api.leaderworkerset_v1 import defaulted as defaulted_lws
from dralloc.validation import field as f
from dralloc.validation.formats import regex_error
from dralloc.validation.pod import pod_template_errors
from dralloc.validation.workloads import workload_spec_errors

__all__ = ["jobset_errors", "leaderworkerset_errors"]

_DNS1035_FMT = "[a-z]([-a-z0-9]*[a-z0-9])?"
_DNS1035_MSG = ("a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an "
                "alphabetic character, and end with an alphanumeric character")
_DNS1035 = re.compile(_DNS1035_FMT)
_LABEL_MAX = 63
JOB_NAME_TOO_LONG = "JobSet name is too long, job names generated for this JobSet will exceed 63 characters"
POD_NAME_TOO_LONG = "JobSet name is too long, pod names generated for this JobSet will exceed 63 characters"
GROUP_NAME_TOO_LONG = ".spec.replicatedJob[].groupName is too long, must be less than 63 characters"
SUBDOMAIN_TOO_LONG = ".spec.network.subdomain is too long, must be less than 63 characters"
_PERCENT = re.compile(r"[0-9]+%")


def _dns1035(value: str, path: str, too_long: str) -> list[f.FieldError]:
    errs = []
    if len(value) > _LABEL_MAX:
        errs.append(f.invalid(path, value, too_long))
    if not _DNS1035.fullmatch(value):
        errs.append(f.invalid(path, value, regex_error(_DNS1035_MSG, _DNS1035_FMT, "my-name", "abc-123")))
    return errs


def _rerooted(errors: list[f.FieldError], prefix: str) -> list[f.FieldError]:
    """A Job's errors (paths from ``spec``) at the replicated job's template (``<prefix>.spec``)."""
    return [dataclasses.replace(e, field=f"{prefix}.{e.field}") if e.field else e for e in errors]


def jobset_errors(js: JobSet) -> list[f.FieldError]:
    """The spec errors of a new JobSet (see the module docstring)."""
    js = defaulted_jobset(js)
    name = js.metadata.name or ""
    errs: list[f.FieldError] = []
    network = js.spec.network
    if network is not None and network.subdomain:
        errs += _dns1035(network.subdomain, "spec.network.subdomain", SUBDOMAIN_TOO_LONG)
    seen: set[str] = set()
    rjobs = js.spec.replicated_jobs or []
    for i, rjob in enumerate(rjobs):
        path = f.index("spec.replicatedJobs", i)
        if not rjob.name:
            errs.append(f.required(f.child(path, "name"), ""))
        elif rjob.name in seen:
            errs.append(f.duplicate(path, {"name": rjob.name}))
        count = replicas(rjob)
        if count < 0:
            errs.append(f.invalid(f.child(path, "replicas"), count,
                                  f"{path}.replicas in body should be greater than or equal to 0"))
        errs += _dns1035(group_name(rjob), f.child(path, "groupName"), GROUP_NAME_TOO_LONG)
        longest = f"{name}-{rjob.name}-{max(count - 1, 0)}"
        errs += _dns1035(longest, f.child(path, "name"), JOB_NAME_TOO_LONG)
        spec = rjob.template.spec
        if spec.completion_mode == "Indexed" and spec.completions is not None:
            pod = f"{longest}-{max(spec.completions - 1, 0)}-abcde"
            if len(pod) > _LABEL_MAX:
                errs.append(f.invalid(f.child(path, "name"), longest, POD_NAME_TOO_LONG))
        for dep in rjob.depends_on or ():
            if i == 0:
                errs.append(f.forbidden(f.child(path, "dependsOn"), "DependsOn can't be set for the first "
                                                                    "ReplicatedJob"))
                break
            if dep.name not in seen:
                errs.append(f.invalid(f.child(path, "dependsOn"), dep.name,
                                      f"replicatedJob: {rjob.name} cannot depend on replicatedJob: {dep.name}"))
        errs += _rerooted(workload_spec_errors(Job(spec=spec)), f.child(path, "template"))
        seen.add(rjob.name)
    coordinator = js.spec.coordinator
    if coordinator is not None:
        target = next((r for r in rjobs if r.name == coordinator.replicated_job), None)
        where = "spec.coordinator"
        if target is None:
            errs.append(f.invalid(f.child(where, "replicatedJob"), coordinator.replicated_job,
                                  "replicatedJob does not exist"))
        else:
            if (coordinator.job_index or 0) >= replicas(target) or (coordinator.job_index or 0) < 0:
                errs.append(f.invalid(f.child(where, "jobIndex"), coordinator.job_index or 0,
                                      "jobIndex is outside the replicatedJob's replicas"))
            completions = target.template.spec.completions
            if completions is not None and not 0 <= (coordinator.pod_index or 0) < completions:
                errs.append(f.invalid(f.child(where, "podIndex"), coordinator.pod_index or 0,
                                      "podIndex is outside the Job's completions"))
    return errs


def _int_or_percent(value: int | str | None, path: str) -> list[f.FieldError]:
    if value is None:
        return []
    if isinstance(value, int):
        return [f.invalid(path, value, "must be greater than or equal to 0")] if value < 0 else []
    if not _PERCENT.fullmatch(value):
        return [f.invalid(path, value, regex_error("a valid percent string must be a numeric string followed by "
                                                   "an ending '%'", "[0-9]+%", "1%", "93%"))]
    if int(value[:-1]) > 100:
        return [f.invalid(path, value, "must not be greater than 100%")]
    return []


def _scaled(value: int | str | None, total: int, round_up: bool) -> int:
    if value is None:
        return 0
    if isinstance(value, int):
        return value
    if not _PERCENT.fullmatch(value):
        return 0
    scaled = int(value[:-1]) * total
    return -(-scaled // 100) if round_up else scaled // 100


def leaderworkerset_errors(lws: LeaderWorkerSet) -> list[f.FieldError]:
    """The errors of a new LeaderWorkerSet (see the module docstring); its metadata is checked by the caller."""
    lws = defaulted_lws(lws)
    spec = lws.spec
    template = spec.leader_worker_template
    errs = _dns1035(lws.metadata.name or "", "metadata.name", "must be no more than 63 characters")
    count = spec.replicas or 0
    if count < 0:
        errs.append(f.invalid("spec.replicas", count, "replicas must be equal or greater than 0"))
    if count > 1000000:
        errs.append(f.invalid("spec.replicas", count, "replicas must be equal or less than 1000000"))
    size = template.size or 0
    if size < 1:
        errs.append(f.invalid("spec.leaderWorkerTemplate.size", size, "size must be equal or greater than 1"))
    rolling = spec.rollout_strategy.rolling_update_configuration if spec.rollout_strategy is not None else None
    if rolling is not None:
        where = "spec.rolloutStrategy.rollingUpdateConfiguration"
        errs += _int_or_percent(rolling.max_unavailable, f.child(where, "maxUnavailable"))
        errs += _int_or_percent(rolling.max_surge, f.child(where, "maxSurge"))
        if (rolling.partition or 0) < 0:
            errs.append(f.invalid(f.child(where, "partition"), rolling.partition,
                                  "must be greater than or equal to 0"))
        if (_scaled(rolling.max_unavailable, count, False) == 0 and _scaled(rolling.max_surge, count, True) == 0
                and count != 0):
            errs.append(f.invalid(f.child(where, "maxUnavailable"), rolling.max_unavailable,
                                  "must not be 0 when `maxSurge` is 0"))
    policy = template.sub_group_policy
    if policy is not None:
        where = "spec.leaderWorkerTemplate.SubGroupPolicy.subGroupSize"
        sub = policy.sub_group_size or 0
        if sub < 1:
            errs.append(f.invalid(where, sub, "subGroupSize must be equal or greater than 1"))
        elif size >= 1:
            if size % sub != 0 and (size - 1) % sub != 0:
                errs.append(f.invalid(where, sub, "size or size - 1 must be divisible by subGroupSize"))
            if size < sub:
                errs.append(f.invalid(where, sub, "subGroupSize cannot be larger than size"))
            if policy.sub_group_policy_type == LEADER_EXCLUDED and (size - 1) % sub != 0:
                errs.append(f.invalid(where, sub, "size-1 must be divisible by subGroupSize when using LeaderExcluded"))
    elif "leaderworkerset.sigs.k8s.io/subgroup-exclusive-topology" in (lws.metadata.annotations or {}):
        key = "leaderworkerset.sigs.k8s.io/subgroup-exclusive-topology"
        errs.append(f.invalid(f"metadata.annotations[{key}]", (lws.metadata.annotations or {})[key],
                              "cannot have subgroup-exclusive-topology without subGroupSize set"))
    if template.leader_template is not None:
        errs += pod_template_errors(template.leader_template, "spec.leaderWorkerTemplate.leaderTemplate")
    errs += pod_template_errors(template.worker_template, "spec.leaderWorkerTemplate.workerTemplate")
    return errs
