"""How the Job controller makes and deletes its pods (``job_controller.go``'s manageJob, deleteActivePods and
deleteJobPods): up to ``parallelism`` active pods and no more than the completions left — ``<job>-`` + 5
characters, or for an Indexed Job ``<job>-<index>-`` for its lowest pending indexes, with the completion-index
annotation, label and ``JOB_COMPLETION_INDEX`` variable and the hostname ``<job>-<index>`` (and with per-index
backoff the failures of its index so far); the pods beyond that deleted (an Indexed Job's duplicates and
strays first); a suspended Job's active pods deleted. Pods that only failing would replace
(``podReplacementPolicy: Failed``) are waited for while they terminate."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from dralloc.controllers.workloads import JOB_COMPLETION_INDEX, job_pod_generate_name
from dralloc.server.controllers import job_indexes as ix
from dralloc.server.controllers.job_tracking import (
    only_replaces_failed,
    remove_finalizers,
    tracked,
    with_finalizer,
)
from dralloc.server.controllers.workload_pods import (
    Obj,
    PodControl,
    deletion_order,
    is_ready,
    meta,
    pod_from_template,
    spec_of,
)

COMPONENT = "job-controller"
INDEX_VARIABLE = "JOB_COMPLETION_INDEX"


def count_of(value: Any) -> int | None:
    """An integer field (None: unset or not an integer)."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


@dataclass
class JobPods:
    """The Job's pods as one sync sees them (after its own deletions and creations)."""

    active: list[Obj]
    terminating: int
    ready: int

    def deleted(self, control: PodControl, job: Obj, gone: list[Obj], keep_finalizers: bool) -> bool:
        """deleteActivePods (finalizers kept: the tracking counts them) or deleteJobPods (let go of first)."""
        if not keep_finalizers:
            remove_finalizers(control.writer, [p for p in gone if tracked(p)])
        uids = {str(meta(p).get("uid")) for p in gone}
        for pod in gone:
            control.delete(job, pod, COMPONENT)
        self.active = [p for p in self.active if str(meta(p).get("uid")) not in uids]
        self.terminating += len(gone)
        self.ready -= sum(1 for p in gone if is_ready(p))
        return bool(gone)


def indexed_pod(job: Obj, template: Obj, index: int, replaced: Obj | None) -> Obj:
    """An Indexed Job's pod: its index as annotation, label, environment variable and hostname; with per-index
    backoff, the failures of its index so far."""
    annotations = {JOB_COMPLETION_INDEX: str(index)}
    if count_of(spec_of(job).get("backoffLimitPerIndex")) is not None:
        annotations.update(ix.replacement_counts(job, replaced))
    name = str(meta(job).get("name"))
    pod = pod_from_template(template, job, generate_name=job_pod_generate_name(name, index),
                            labels={JOB_COMPLETION_INDEX: str(index)}, annotations=annotations)
    spec = pod["spec"]
    for key in ("initContainers", "containers"):
        for container in spec.get(key) or []:
            env = container.setdefault("env", [])
            if not any(isinstance(v, dict) and v.get("name") == INDEX_VARIABLE for v in env):
                env.append({"name": INDEX_VARIABLE, "valueFrom": {"fieldRef": {
                    "fieldPath": f"metadata.labels['{JOB_COMPLETION_INDEX}']"}}})
    spec["hostname"] = f"{name}-{index}"
    return pod


def manage(control: PodControl, job: Obj, state: JobPods, succeeded: int, taken: set[int],
            delayed: dict[int, Obj], index_of: Callable[[Obj], int | None]) -> bool:
    """manageJob: a suspended Job's active pods deleted; else the pods beyond what is wanted deleted (an
    Indexed Job's duplicates first), or the missing ones made (not while pods that only failing would
    replace are still terminating)."""
    spec = spec_of(job)
    if spec.get("suspend") is True:
        return state.deleted(control, job, state.active, keep_finalizers=False)
    parallelism = count_of(spec.get("parallelism"))
    parallelism = 1 if parallelism is None else max(parallelism, 0)  # (defaulted to 1)
    completions = count_of(spec.get("completions"))
    active = len(state.active)
    if completions is None:
        want = active if succeeded > 0 else parallelism
    else:
        want = max(min(completions - succeeded, parallelism), 0)
    indexed = spec.get("completionMode") == "Indexed" and completions is not None
    remove: list[Obj] = []
    rest = state.active
    if indexed and completions is not None:
        remove, rest = ix.duplicate_index_pods(state.active, index_of)
    if len(remove) < active - want:
        remove += deletion_order(rest)[:active - want - len(remove)]
    if remove:
        return state.deleted(control, job, remove, keep_finalizers=False)
    missing = want - (state.terminating if only_replaces_failed(job) else 0) - active
    if missing <= 0:
        return False
    template = spec.get("template") or {}
    made = False
    if indexed and completions is not None:
        for index in ix.first_pending_indexes(missing, completions, taken):
            pod = indexed_pod(job, template, index, delayed.get(index))
            made |= control.create(job, with_finalizer(pod), COMPONENT)
    else:
        for _ in range(missing):
            pod = pod_from_template(template, job, generate_name=f"{meta(job).get('name')}-")
            made |= control.create(job, with_finalizer(pod), COMPONENT)
    return made
