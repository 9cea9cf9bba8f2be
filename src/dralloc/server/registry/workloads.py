"""The workload strategies, as kube-apiserver's registry treats apps/v1 Deployments, ReplicaSets, StatefulSets,
DaemonSets and batch/v1 Jobs and CronJobs: stored as the client sent them plus the defaults of their versioned
types (``pkg/apis/apps/v1/defaults.go``, ``pkg/apis/batch/v1/defaults.go``, and every pod template's
SetDefaults_PodSpec, the rule pods get too), with ``metadata.generation``, a status written through ``/status``
only, and the model's validation on create and its update rules (``dralloc.validation.workloads``); the columns
``kubectl get`` prints are in ``registry/workload_columns.py``, the controllers that act on them in
``server/controllers/workloads.py``."""

from __future__ import annotations

import re
from typing import Any

from dralloc.api import strict
from dralloc.api.codec import decode
from dralloc.errors import DecodeError
from dralloc.server.registry.core_defaults import default_pod_spec
from dralloc.server.registry.strategy import CoreStrategy, managed_field_errors
from dralloc.server.types import Obj
from dralloc.validation import validate, validate_update
from dralloc.validation.field import FieldError, invalid
from dralloc.validation.meta import finalizers_added_while_deleting

REVISION_HISTORY_LIMIT = 10
PROGRESS_DEADLINE_SECONDS = 600

# the labels a Job's strategy adds to its pod template, and the one its generated selector selects by
JOB_NAME_LABELS = ("job-name", "batch.kubernetes.io/job-name")
CONTROLLER_UID = "batch.kubernetes.io/controller-uid"
LEGACY_CONTROLLER_UID = "controller-uid"


def _dict_at(obj: Obj, *path: str) -> Obj:
    """The object at ``path``, made (an empty dict) where missing; a non-object there is left alone and an
    empty dict, not attached, is returned (validation reports the wrong type)."""
    for key in path:
        value = obj.get(key)
        if value is None:
            value = obj[key] = {}
        if not isinstance(value, dict):
            return {}
        obj = value
    return obj


def _template_defaults(spec: Obj) -> None:
    template = spec.get("template")
    if isinstance(template, dict):
        default_pod_spec(template.get("spec"))


def _rolling(strategy: Obj, type_key: str, rolling: Obj) -> None:
    """An update strategy of type RollingUpdate (the default) gets its rollingUpdate parameters."""
    strategy.setdefault("type", "RollingUpdate")
    if strategy["type"] == "RollingUpdate":
        params = _dict_at(strategy, type_key)
        for key, value in rolling.items():
            params.setdefault(key, value)


def deployment_defaults(obj: Obj) -> None:
    """SetDefaults_Deployment: 1 replica; RollingUpdate with maxUnavailable and maxSurge 25%; 10 old
    ReplicaSets kept; 600 s to progress."""
    spec = _dict_at(obj, "spec")
    spec.setdefault("replicas", 1)
    _rolling(_dict_at(spec, "strategy"), "rollingUpdate", {"maxUnavailable": "25%", "maxSurge": "25%"})
    spec.setdefault("revisionHistoryLimit", REVISION_HISTORY_LIMIT)
    spec.setdefault("progressDeadlineSeconds", PROGRESS_DEADLINE_SECONDS)
    _template_defaults(spec)


def replica_set_defaults(obj: Obj) -> None:
    """SetDefaults_ReplicaSet: 1 replica."""
    spec = _dict_at(obj, "spec")
    spec.setdefault("replicas", 1)
    _template_defaults(spec)


def stateful_set_defaults(obj: Obj) -> None:
    """SetDefaults_StatefulSet: OrderedReady pods; RollingUpdate from partition 0, one pod unavailable at a
    time (MaxUnavailableStatefulSet, on by default); claims retained when the set is deleted or scaled down; 1
    replica; 10 revisions kept."""
    spec = _dict_at(obj, "spec")
    spec.setdefault("podManagementPolicy", "OrderedReady")
    strategy = _dict_at(spec, "updateStrategy")
    if not strategy.get("type"):
        strategy["type"] = "RollingUpdate"
        strategy.setdefault("rollingUpdate", {})
    if strategy.get("type") == "RollingUpdate" and isinstance(strategy.get("rollingUpdate"), dict):
        strategy["rollingUpdate"].setdefault("partition", 0)
        strategy["rollingUpdate"].setdefault("maxUnavailable", 1)
    retention = _dict_at(spec, "persistentVolumeClaimRetentionPolicy")
    retention.setdefault("whenDeleted", "Retain")
    retention.setdefault("whenScaled", "Retain")
    spec.setdefault("replicas", 1)
    spec.setdefault("revisionHistoryLimit", REVISION_HISTORY_LIMIT)
    _template_defaults(spec)


def daemon_set_defaults(obj: Obj) -> None:
    """SetDefaults_DaemonSet: RollingUpdate one node at a time (maxUnavailable 1, maxSurge 0); 10 revisions
    kept."""
    spec = _dict_at(obj, "spec")
    _rolling(_dict_at(spec, "updateStrategy"), "rollingUpdate", {"maxUnavailable": 1, "maxSurge": 0})
    spec.setdefault("revisionHistoryLimit", REVISION_HISTORY_LIMIT)
    _template_defaults(spec)


def job_spec_defaults(spec: Obj) -> None:
    """SetDefaults_Job's spec part: with neither completions nor parallelism, one of each; parallelism 1;
    backoff limit 6 (unbounded with a per-index limit); NonIndexed; not suspended; pods replaced once
    terminated or failed (failed only, with a pod failure policy); a pod failure policy's condition patterns
    with status True; the selector generated."""
    if spec.get("completions") is None and spec.get("parallelism") is None:
        spec["completions"] = 1
    spec.setdefault("parallelism", 1)
    if spec.get("backoffLimit") is None:
        spec["backoffLimit"] = 2**31 - 1 if spec.get("backoffLimitPerIndex") is not None else 6
    spec.setdefault("completionMode", "NonIndexed")
    spec.setdefault("suspend", False)
    if spec.get("podReplacementPolicy") is None:
        spec["podReplacementPolicy"] = "Failed" if spec.get("podFailurePolicy") is not None else "TerminatingOrFailed"
    spec.setdefault("manualSelector", False)
    policy = spec.get("podFailurePolicy")
    for rule in (policy.get("rules") or []) if isinstance(policy, dict) else []:
        for pattern in (rule.get("onPodConditions") or []) if isinstance(rule, dict) else []:
            if isinstance(pattern, dict) and not pattern.get("status"):
                pattern["status"] = "True"  # a pod condition pattern's status defaults to True
    _template_defaults(spec)


def job_defaults(obj: Obj) -> None:
    """SetDefaults_Job: the spec's defaults, and a Job without labels takes its template's."""
    spec = _dict_at(obj, "spec")
    job_spec_defaults(spec)
    template_labels = (spec.get("template") or {}).get("metadata", {}).get("labels") \
        if isinstance(spec.get("template"), dict) and isinstance(spec["template"].get("metadata"), dict) else None
    meta = _dict_at(obj, "metadata")
    if template_labels and not meta.get("labels"):
        meta["labels"] = dict(template_labels)


def cron_job_defaults(obj: Obj) -> None:
    """SetDefaults_CronJob: concurrent runs allowed, not suspended, 3 successful and 1 failed Jobs kept; its
    Job template's spec as a Job's."""
    spec = _dict_at(obj, "spec")
    spec.setdefault("concurrencyPolicy", "Allow")
    spec.setdefault("suspend", False)
    spec.setdefault("successfulJobsHistoryLimit", 3)
    spec.setdefault("failedJobsHistoryLimit", 1)
    job_spec = _dict_at(spec, "jobTemplate", "spec")
    job_spec_defaults(job_spec)


def _copied_at(obj: Obj, *path: str) -> Obj:
    """:func:`_dict_at` that changes nothing it was given: each object on the path is copied (shallow) into
    its parent, itself a copy (``obj`` is the caller's own)."""
    for key in path:
        value = obj.get(key)
        if value is not None and not isinstance(value, dict):
            return {}
        obj[key] = value = dict(value) if value is not None else {}
        obj = value
    return obj


def generate_job_selector(job: Obj) -> None:
    """The Job strategy's generateSelector (unless ``spec.manualSelector``): the template labelled with the
    Job's name and uid, and a selector of its uid label. ``job`` is changed (it is the caller's); the parts
    of it that change are copies, so an object it shares them with is not (a create tried again under another
    generated name starts from the same object)."""
    meta = job.get("metadata") or {}
    spec = job.get("spec")
    if not isinstance(spec, dict) or spec.get("manualSelector") is True:
        return
    labels = _copied_at(job, "spec", "template", "metadata", "labels")
    name, uid = str(meta.get("name") or ""), str(meta.get("uid") or "")
    labels.setdefault(JOB_NAME_LABELS[0], name)
    labels[JOB_NAME_LABELS[1]] = name
    labels.setdefault(LEGACY_CONTROLLER_UID, uid)
    labels[CONTROLLER_UID] = uid
    _copied_at(job["spec"], "selector", "matchLabels").setdefault(CONTROLLER_UID, uid)


_PATH_PART = re.compile(r"[^.\[\]]+|\[\d+\]")


def drop_unknown_fields(obj: Obj) -> None:
    """Remove the fields the kind's schema lacks (those ``strict`` finds: under the parts dralloc models), as
    kube-apiserver's decoding into the Go types drops them; the request's warnings named them already."""
    for path in strict.unknown_field_paths(obj):
        *parents, last = _PATH_PART.findall(path)
        node: Any = obj
        for part in parents:
            node = node[int(part[1:-1])] if part.startswith("[") else node.get(part)
        if isinstance(node, dict):
            node.pop(last, None)


class WorkloadStrategy(CoreStrategy):
    """A workload kind: stored as sent plus its defaults, with a generation and a status subresource."""

    tracks_generation = True

    def __init__(self, defaults: Any) -> None:
        self.defaults = defaults

    def decode_defaults(self, obj: Obj, sub: str) -> None:
        if sub:
            return
        drop_unknown_fields(obj)
        self.defaults(obj)  # as decoding does on every write: a replace need not repeat them

    def decode_known_defaults(self, obj: Obj) -> None:
        self.defaults(obj)

    def prepare_for_create(self, stored: Obj) -> None:
        """As upstream's PrepareForCreate: a new object has an empty status, whatever it sent."""
        stored["status"] = {}

    def create_errors(self, typed: Any, stored: Obj | None, namespaced: bool) -> list[FieldError]:
        return validate(_decoded(stored or {}, typed), require_namespace=namespaced)

    def prepare_for_update(self, merged: Obj, old: Obj, sub: str) -> None:
        if sub:
            return
        # the generation counts spec changes once both are defaulted
        meta, old_meta = merged["metadata"], old.get("metadata") or {}
        gen = int(old_meta.get("generation") or 1)
        meta["generation"] = gen + 1 if merged.get("spec") != old.get("spec") else gen

    def update_errors(self, merged: Obj, old: Obj, sub: str, typed_meta: Any) -> list[FieldError]:
        errors = finalizers_added_while_deleting(merged["metadata"], old["metadata"]) + managed_field_errors(merged)
        if sub:
            return errors
        try:
            new_typed, old_typed = decode(merged), decode(old)
        except DecodeError as exc:
            return [invalid("spec", None, str(exc))]
        return validate_update(new_typed, old_typed) + errors


class JobStrategy(WorkloadStrategy):
    def with_system_fields(self, created: Obj) -> Obj:
        created = {**created}
        generate_job_selector(created)
        return created


def _decoded(stored: Obj, fallback: Any) -> Any:
    try:
        return decode(stored)
    except DecodeError:
        return fallback


DEPLOYMENTS = WorkloadStrategy(deployment_defaults)
REPLICA_SETS = WorkloadStrategy(replica_set_defaults)
STATEFUL_SETS = WorkloadStrategy(stateful_set_defaults)
DAEMON_SETS = WorkloadStrategy(daemon_set_defaults)
JOBS = JobStrategy(job_defaults)
CRON_JOBS = WorkloadStrategy(cron_job_defaults)
