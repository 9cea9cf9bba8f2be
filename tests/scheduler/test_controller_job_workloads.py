"""The Job controller's WorkloadWithJob path: a new Indexed Job with parallelism == completions > 1 gets a
Workload and a gang PodGroup of minCount = parallelism, and its pods join that group."""

from __future__ import annotations

import io
from typing import Any

from dralloc.api import codec
from dralloc.api.batch_v1 import Job
from dralloc.controllers.job_workloads import job_pod_group, pod_group_name, wants_workload
from dralloc.controllers.names import fnv32a, safe_encode
from dralloc.scheduler.features import FeatureGates
from dralloc.simulator import Simulator

GATES = "GenericWorkload=true,GangScheduling=true,WorkloadWithJob=true"


def job(parallelism: int = 4, completions: int | None = 4, mode: str | None = "Indexed", extra: str = "") -> str:
    lines = ["apiVersion: batch/v1", "kind: Job", "metadata: {name: train, namespace: default, uid: u-1}", "spec:",
             f"  parallelism: {parallelism}"]
    if completions is not None:
        lines.append(f"  completions: {completions}")
    if mode:
        lines.append(f"  completionMode: {mode}")
    lines.append("  template: {spec: {restartPolicy: Never, containers: [{name: w, resources: "
                 "{requests: {cpu: '2'}}}]}}")
    return "\n".join(lines) + "\n" + extra


NODE = "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {allocatable: {cpu: '6', memory: 8Gi, pods: '110'}}\n"


def decoded(text: str) -> Any:
    return codec.load(io.StringIO(text))[0]


def test_which_jobs_get_a_workload() -> None:
    assert wants_workload(decoded(job()), has_pods=False)
    assert not wants_workload(decoded(job()), has_pods=True)
    assert not wants_workload(decoded(job(parallelism=1, completions=1)), has_pods=False)
    assert not wants_workload(decoded(job(completions=8)), has_pods=False)
    assert not wants_workload(decoded(job(mode=None)), has_pods=False)
    assert not wants_workload(decoded(job(extra="status: {startTime: '2026-01-01T00:00:00Z'}\n")), has_pods=False)


def test_the_workload_and_pod_group_the_controller_creates() -> None:
    the_job = decoded(job())
    assert isinstance(the_job, Job)
    workload, group = job_pod_group(the_job)
    digest = safe_encode(str(fnv32a(b'(types.UID)"u-1"')))
    assert workload.metadata.name == f"train-{digest}"
    template = workload.spec.pod_group_templates[0]
    assert template.name == "train-pgt-0"
    assert template.scheduling_policy.gang is not None and template.scheduling_policy.gang.min_count == 4
    assert workload.spec.controller_ref is not None and workload.spec.controller_ref.kind == "Job"
    assert group.metadata.name == pod_group_name(workload.metadata.name or "", "train-pgt-0")
    assert group.metadata.name.endswith("-" + safe_encode(str(fnv32a(
        (workload.metadata.name + "train-pgt-0").encode()))))
    owners = [(o.kind, bool(o.controller)) for o in group.metadata.owner_references or ()]
    assert owners == [("Job", True), ("Workload", False)]


def test_long_names_are_cut_to_fit_a_dns_subdomain() -> None:
    name = pod_group_name("w" * 200, "t" * 200)
    assert len(name) <= 253 and name.startswith("w" * 10)


def test_a_job_of_4_is_scheduled_as_a_gang() -> None:
    objects = codec.load(io.StringIO(job() + "---\n" + NODE))
    result = Simulator.from_objects(objects, feature_gates=FeatureGates.parse(GATES)).schedule()
    # 3 of 4 two-CPU pods would fit the 6-CPU node: as a gang, none binds
    assert [p.status for p in result.pods] == ["unschedulable"] * 4
    (row,) = result.pod_groups
    assert row.min_count == 4 and not row.placed
    alone = Simulator.from_objects(objects, feature_gates=FeatureGates.parse("GenericWorkload=true,"
                                                                             "GangScheduling=true")).schedule()
    assert sum(p.status == "scheduled" for p in alone.pods) == 3
