"""The JobSet controller and pod webhook: the Jobs a JobSet makes, their names, labels and annotations, the
pods the Job controller then makes, exclusive placement, and the JobSet admission rules.

Names follow upstream's controller tests (JobSet ``test-jobset``, replicated job ``replicated-job``: Jobs
``test-jobset-replicated-job-<index>``)."""

from __future__ import annotations

import hashlib
import io
from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rack_cluster import rack_nodes

from dralloc.api import codec
from dralloc.api.batch_v1 import Job
from dralloc.api.jobset_v1alpha2 import JobSet
from dralloc.controllers.jobsets import (
    EXCLUSIVE_KEY,
    admit_jobset_pod,
    global_job_index,
    job_key,
    jobset_jobs,
    jobset_service,
)
from dralloc.controllers.names import NameGenerator
from dralloc.controllers.workloads import expand_job
from dralloc.scheduler.features import FeatureGates
from dralloc.simulator import Simulator
from dralloc.validation import validate

POD_TEMPLATE = ("{metadata: {labels: {pod-label: p}, annotations: {pod-annotation: a}}, spec: {containers: "
                "[{name: w, resources: {requests: {cpu: '1'}}}]}}")


def jobset(*rjobs: str, name: str = "test-jobset", annotations: str = "", spec: str = "", status: str = "") -> str:
    lines = ["apiVersion: jobset.x-k8s.io/v1alpha2", "kind: JobSet",
             f"metadata: {{name: {name}, namespace: default, uid: js-uid{annotations}}}", "spec:", "  replicatedJobs:"]
    lines += [f"  - {r}" for r in rjobs]
    if spec:
        lines.append(spec)
    if status:
        lines.append(status)
    return "\n".join(lines) + "\n"


def rjob(name: str = "replicated-job", replicas: int = 2, parallelism: int = 2, extra: str = "",
         template: str = POD_TEMPLATE, job_meta: str = "") -> str:
    meta = f"metadata: {{{job_meta}}}, " if job_meta else ""
    return (f"{{name: {name}, replicas: {replicas}{extra}, template: {{{meta}spec: {{parallelism: {parallelism}, "
            f"completions: {parallelism}, template: {template}}}}}}}")


def decoded(text: str) -> Any:
    return codec.load(io.StringIO(text))[0]


def jobs_of(text: str, existing: tuple[str, ...] = ()) -> list[Job]:
    js = decoded(text)
    assert isinstance(js, JobSet)
    return jobset_jobs(js, existing).jobs


def test_each_replica_is_a_job_named_jobset_replicatedjob_index_owned_by_the_jobset() -> None:
    jobs = jobs_of(jobset(rjob(replicas=3)))
    assert [j.metadata.name for j in jobs] == [f"test-jobset-replicated-job-{i}" for i in range(3)]
    owner = (jobs[0].metadata.owner_references or [])[0]
    assert (owner.kind, owner.name, owner.uid, owner.controller) == ("JobSet", "test-jobset", "js-uid", True)
    assert owner.api_version == "jobset.x-k8s.io/v1alpha2"
    assert all(j.metadata.namespace == "default" for j in jobs)


def test_jobs_the_input_already_holds_are_not_made_again() -> None:
    jobs = jobs_of(jobset(rjob(replicas=2)), existing=("test-jobset-replicated-job-0",))
    assert [j.metadata.name for j in jobs] == ["test-jobset-replicated-job-1"]


def test_labels_and_annotations_of_the_job_and_its_pod_template() -> None:
    text = jobset(rjob(replicas=2, job_meta="labels: {job-label: j}"), rjob("workers", replicas=3),
                  status="status: {restarts: 2}")
    jobs = jobs_of(text)
    second_worker = jobs[3]
    assert second_worker.metadata.name == "test-jobset-workers-1"
    want = {
        "jobset.sigs.k8s.io/jobset-name": "test-jobset",
        "jobset.sigs.k8s.io/jobset-uid": "js-uid",
        "jobset.sigs.k8s.io/replicatedjob-name": "workers",
        "jobset.sigs.k8s.io/restart-attempt": "2",
        "jobset.sigs.k8s.io/replicatedjob-replicas": "3",
        "jobset.sigs.k8s.io/global-replicas": "5",
        "jobset.sigs.k8s.io/job-index": "1",
        "jobset.sigs.k8s.io/job-key": hashlib.sha1(b"default/test-jobset-workers-1").hexdigest(),
        "jobset.sigs.k8s.io/job-global-index": "3",
        "jobset.sigs.k8s.io/group-name": "default",
        "jobset.sigs.k8s.io/group-replicas": "5",
        "jobset.sigs.k8s.io/job-group-index": "3",
    }
    template_meta = second_worker.spec.template.metadata
    assert template_meta is not None
    for labels in (second_worker.metadata.labels, second_worker.metadata.annotations, template_meta.labels,
                   template_meta.annotations):
        assert {k: (labels or {}).get(k) for k in want} == want
    assert (template_meta.labels or {})["pod-label"] == "p"
    assert (template_meta.annotations or {})["pod-annotation"] == "a"
    assert (jobs[0].metadata.labels or {})["job-label"] == "j"
    assert (jobs[0].metadata.labels or {})["jobset.sigs.k8s.io/job-global-index"] == "0"


def test_group_replicas_and_group_index_count_only_the_group() -> None:
    text = jobset(rjob("a", replicas=2, extra=", groupName: g1"), rjob("b", replicas=3, extra=", groupName: g2"),
                  rjob("c", replicas=1, extra=", groupName: g1"))
    last = jobs_of(text)[-1]
    labels = last.metadata.labels or {}
    assert labels["jobset.sigs.k8s.io/group-name"] == "g1"
    assert labels["jobset.sigs.k8s.io/group-replicas"] == "3"
    assert labels["jobset.sigs.k8s.io/job-group-index"] == "2"
    assert labels["jobset.sigs.k8s.io/job-global-index"] == "5"


def test_global_index_of_an_unknown_replicated_job_is_empty() -> None:
    js = decoded(jobset(rjob()))
    assert global_job_index(js, "nope", 0) == ""
    assert job_key("ns", "job") == hashlib.sha1(b"ns/job").hexdigest()


def test_coordinator_endpoint_label_uses_the_subdomain() -> None:
    coordinator = "  coordinator: {replicatedJob: replicated-job, jobIndex: 0, podIndex: 0}"
    job = jobs_of(jobset(rjob(), spec=coordinator))[0]
    assert (job.metadata.labels or {})["jobset.sigs.k8s.io/coordinator"] == \
        "test-jobset-replicated-job-0-0.test-jobset"
    network = coordinator + "\n  network: {subdomain: net}"
    job = jobs_of(jobset(rjob(), spec=network))[0]
    assert (job.metadata.annotations or {})["jobset.sigs.k8s.io/coordinator"] == \
        "test-jobset-replicated-job-0-0.net"


def test_exclusive_topology_is_an_annotation_the_replicated_job_overrides() -> None:
    ann = ", annotations: {alpha.jobset.sigs.k8s.io/exclusive-topology: rack}"
    job = jobs_of(jobset(rjob(), annotations=ann))[0]
    assert (job.metadata.annotations or {})[EXCLUSIVE_KEY] == "rack"
    assert EXCLUSIVE_KEY not in (job.metadata.labels or {})
    override = rjob(job_meta="annotations: {alpha.jobset.sigs.k8s.io/exclusive-topology: zone}")
    job = jobs_of(jobset(override, annotations=ann))[0]
    template_meta = job.spec.template.metadata
    assert template_meta is not None and (template_meta.annotations or {})[EXCLUSIVE_KEY] == "zone"


def test_node_selector_strategy_selects_the_job_and_tolerates_the_taint() -> None:
    ann = (", annotations: {alpha.jobset.sigs.k8s.io/exclusive-topology: rack, "
           "alpha.jobset.sigs.k8s.io/node-selector: 'true'}")
    job = jobs_of(jobset(rjob(), annotations=ann))[0]
    spec = job.spec.template.spec
    assert spec.node_selector == {"alpha.jobset.sigs.k8s.io/namespaced-job": "default_test-jobset-replicated-job-0"}
    assert [(t.key, t.operator, t.effect) for t in spec.tolerations or ()] == [
        ("alpha.jobset.sigs.k8s.io/no-schedule", "Exists", "NoSchedule")]
    plain = jobs_of(jobset(rjob()))[0]
    assert plain.spec.template.spec.node_selector is None


def test_webhook_defaults_make_indexed_jobs_restarting_on_failure() -> None:
    job = jobs_of(jobset(rjob(parallelism=3)))[0]
    assert job.spec.completion_mode == "Indexed"
    assert job.spec.template.spec.restart_policy == "OnFailure"
    pods = expand_job(job, NameGenerator(0))
    assert [p.metadata.name[:-5] for p in pods] == [f"test-jobset-replicated-job-0-{i}-" for i in range(3)]


def test_a_suspended_jobset_makes_suspended_jobs_without_pods() -> None:
    jobs = jobs_of(jobset(rjob(), spec="  suspend: true"))
    assert jobs and all(j.spec.suspend for j in jobs)
    assert expand_job(jobs[0], NameGenerator(0)) == []
    assert not jobs_of(jobset(rjob()))[0].spec.suspend


def test_jobsets_of_another_manager_or_finished_make_nothing() -> None:
    assert jobs_of(jobset(rjob(), spec="  managedBy: kueue.x-k8s.io/multikueue")) == []
    assert jobs_of(jobset(rjob(), spec="  managedBy: jobset.sigs.k8s.io/jobset-controller"))
    done = "status: {conditions: [{type: Completed, status: 'True'}]}"
    assert jobs_of(jobset(rjob(), status=done)) == []


def test_depends_on_complete_waits_for_the_recorded_success() -> None:
    later = rjob("trainer", replicas=1, extra=", dependsOn: [{name: init, status: Complete}]")
    made = jobset_jobs(decoded(jobset(rjob("init", replicas=2), later)))
    assert [j.metadata.name for j in made.jobs] == ["test-jobset-init-0", "test-jobset-init-1"]
    assert made.warnings == ["JobSet default/test-jobset: replicatedJob 'trainer' waits for 'init' to complete; "
                            "its Jobs are not created"]
    status = "status: {replicatedJobsStatus: [{name: init, succeeded: 2, ready: 0, failed: 0, active: 0, suspended: 0}]}"
    made = jobset_jobs(decoded(jobset(rjob("init", replicas=2), later, status=status)))
    assert [j.metadata.name for j in made.jobs][-1] == "test-jobset-trainer-0" and not made.warnings
    ready = rjob("trainer", replicas=1, extra=", dependsOn: [{name: init, status: Ready}]")
    assert jobset_jobs(decoded(jobset(rjob("init"), ready))).jobs[-1].metadata.name == "test-jobset-trainer-0"


def test_headless_service_named_after_the_subdomain() -> None:
    service = jobset_service(decoded(jobset(rjob())))
    assert service is not None and service.metadata.name == "test-jobset"
    assert service.spec.selector == {"jobset.sigs.k8s.io/jobset-name": "test-jobset"}
    named = jobset_service(decoded(jobset(rjob(), spec="  network: {subdomain: net}")))
    assert named is not None and named.metadata.name == "net"
    assert jobset_service(decoded(jobset(rjob(), spec="  network: {enableDNSHostnames: false}"))) is None


# --- the pod webhook ------------------------------------------------------------------------------------


def _pods(text: str, job_index: int = 0) -> list[Any]:
    job = jobs_of(text)[job_index]
    return expand_job(job, NameGenerator(0))


def test_webhook_labels_the_priority() -> None:
    pod = _pods(jobset(rjob()))[0]
    assert (admit_jobset_pod(pod, 0).metadata.labels or {})["jobset.sigs.k8s.io/priority"] == "0"
    assert (admit_jobset_pod(pod, 7).metadata.labels or {})["jobset.sigs.k8s.io/priority"] == "7"
    assert admit_jobset_pod(pod, 7).spec.affinity is None


def test_exclusive_leader_gets_affinity_to_its_job_and_anti_affinity_to_others() -> None:
    ann = ", annotations: {alpha.jobset.sigs.k8s.io/exclusive-topology: rack}"
    leader, follower = _pods(jobset(rjob(), annotations=ann))
    key = hashlib.sha1(b"default/test-jobset-replicated-job-0").hexdigest()
    affinity = admit_jobset_pod(leader, 5).spec.affinity
    assert affinity is not None
    required = "requiredDuringSchedulingIgnoredDuringExecution"
    assert msgspec.to_builtins(affinity.pod_affinity)[required] == [{
        "labelSelector": {"matchExpressions": [{"key": "jobset.sigs.k8s.io/job-key", "operator": "In",
                                                "values": [key]}]},
        "topologyKey": "rack", "namespaceSelector": {}}]
    assert msgspec.to_builtins(affinity.pod_anti_affinity)[required] == [{
        "labelSelector": {"matchExpressions": [
            {"key": "jobset.sigs.k8s.io/job-key", "operator": "Exists"},
            {"key": "jobset.sigs.k8s.io/job-key", "operator": "NotIn", "values": [key]},
            {"key": "jobset.sigs.k8s.io/priority", "operator": "In", "values": ["5"]}]},
        "topologyKey": "rack", "namespaceSelector": {}}]
    follows = admit_jobset_pod(follower, 5).spec.affinity
    assert follows is not None and follows.pod_anti_affinity is None
    assert msgspec.to_builtins(follows.pod_affinity)[required] == [{
        "labelSelector": {"matchExpressions": [
            {"key": "jobset.sigs.k8s.io/job-key", "operator": "In", "values": [key]},
            {"key": "batch.kubernetes.io/job-completion-index", "operator": "In", "values": ["0"]}]},
        "topologyKey": "rack"}]


def test_webhook_leaves_node_selector_strategy_and_other_pods_alone() -> None:
    ann = (", annotations: {alpha.jobset.sigs.k8s.io/exclusive-topology: rack, "
           "alpha.jobset.sigs.k8s.io/node-selector: 'true'}")
    pod = _pods(jobset(rjob(), annotations=ann))[0]
    assert admit_jobset_pod(pod, 0) is pod
    plain = decoded("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c}]}\n")
    assert admit_jobset_pod(plain, 0) is plain


# --- through the simulation -----------------------------------------------------------------------------


def simulate(text: str, gates: str | None = None) -> Simulator:
    objects = codec.load(io.StringIO(text))
    sim = Simulator.from_objects(objects, feature_gates=FeatureGates.parse(gates) if gates else None)
    sim.run()
    return sim


def placed(sim: Simulator) -> dict[str, str | None]:
    return {r.pod.metadata.name or "": r.node for r in sim.results.values()}


def test_exclusive_jobs_each_take_a_rack_of_their_own() -> None:
    ann = ", annotations: {alpha.jobset.sigs.k8s.io/exclusive-topology: rack}"
    sim = simulate(rack_nodes() + "---\n" + jobset(rjob(replicas=2, parallelism=2), annotations=ann))
    by_job: dict[str, set[str]] = {}
    for name, node in placed(sim).items():
        assert node is not None, name
        by_job.setdefault(name.rsplit("-", 2)[0], set()).add(node.split("-")[0])
    assert sorted(by_job) == ["test-jobset-replicated-job-0", "test-jobset-replicated-job-1"]
    assert all(len(racks) == 1 for racks in by_job.values())
    assert by_job["test-jobset-replicated-job-0"] != by_job["test-jobset-replicated-job-1"]


def test_without_exclusive_topology_the_jobs_share_racks() -> None:
    sim = simulate(rack_nodes() + "---\n" + jobset(rjob(replicas=2, parallelism=2)))
    racks = {(name.rsplit("-", 2)[0], (node or "").split("-")[0]) for name, node in placed(sim).items()}
    assert len(racks) > 2  # some Job spans both racks


def test_a_third_exclusive_job_waits_when_every_rack_is_taken() -> None:
    ann = ", annotations: {alpha.jobset.sigs.k8s.io/exclusive-topology: rack}"
    sim = simulate(rack_nodes() + "---\n" + jobset(rjob(replicas=3, parallelism=1), annotations=ann))
    pending = [n for n, node in placed(sim).items() if node is None]
    assert len(pending) == 1 and pending[0].startswith("test-jobset-replicated-job-2-0-")


def test_template_scheduling_group_joins_the_named_pod_group() -> None:
    group = ("apiVersion: scheduling.k8s.io/v1alpha2\nkind: PodGroup\nmetadata: {name: pg, namespace: default}\n"
             "spec: {schedulingPolicy: {gang: {minCount: 4}}}\n")
    template = ("{spec: {schedulingGroup: {podGroupName: pg}, containers: [{name: w, resources: "
                "{requests: {cpu: '1'}}}]}}")
    text = rack_nodes() + "---\n" + group + "---\n" + jobset(rjob(replicas=2, template=template))
    sim = simulate(text, "GenericWorkload=true,GangScheduling=true,WorkloadWithJob=true")
    pods = [r.pod for r in sim.results.values()]
    assert len(pods) == 4
    assert {p.spec.scheduling_group.pod_group_name for p in pods if p.spec.scheduling_group} == {"pg"}
    assert all(r.node for r in sim.results.values())


def test_with_workload_with_job_each_child_job_gets_its_own_gang() -> None:
    text = rack_nodes() + "---\n" + jobset(rjob(replicas=2))
    sim = simulate(text, "GenericWorkload=true,GangScheduling=true,WorkloadWithJob=true")
    groups = {r.pod.spec.scheduling_group.pod_group_name for r in sim.results.values() if r.pod.spec.scheduling_group}
    assert len(groups) == 2 and all(g.startswith("test-jobset-replicated-job-") for g in groups)


def test_expansion_is_deterministic() -> None:
    text = rack_nodes() + "---\n" + jobset(rjob(replicas=2))
    assert placed(simulate(text)) == placed(simulate(text))


# --- admission ------------------------------------------------------------------------------------------


def errors(text: str) -> list[str]:
    return [str(e) for e in validate(decoded(text))]


def test_a_valid_jobset_has_no_errors() -> None:
    assert errors(jobset(rjob(), rjob("workers"))) == []


@pytest.mark.parametrize(("text", "wanted"), [
    (jobset(rjob(), rjob()), 'spec.replicatedJobs[1]: Duplicate value: {"name":"replicated-job"}'),
    (jobset(rjob(replicas=-1)), "spec.replicatedJobs[0].replicas: Invalid value: -1: spec.replicatedJobs[0]."
                                "replicas in body should be greater than or equal to 0"),
    (jobset(rjob(), name="x" * 60), "spec.replicatedJobs[0].name: Invalid value: \"" + "x" * 60
     + "-replicated-job-1\": JobSet name is too long, job names generated for this JobSet will exceed 63 "
       "characters"),
    (jobset(rjob(extra=", groupName: Bad_Group")), "spec.replicatedJobs[0].groupName: Invalid value: "
                                                   "\"Bad_Group\": a DNS-1035 label"),
    (jobset(rjob(extra=", dependsOn: [{name: x, status: Ready}]")),
     "spec.replicatedJobs[0].dependsOn: Forbidden: DependsOn can't be set for the first ReplicatedJob"),
    (jobset(rjob(), rjob("b", extra=", dependsOn: [{name: c, status: Ready}]")),
     "spec.replicatedJobs[1].dependsOn: Invalid value: \"c\": replicatedJob: b cannot depend on replicatedJob: c"),
    (jobset(rjob(template="{spec: {restartPolicy: Always, containers: [{name: w}]}}")),
     "spec.replicatedJobs[0].template.spec.template.spec.restartPolicy: Required value"),
    (jobset(rjob(template="{spec: {containers: []}}")),
     "spec.replicatedJobs[0].template.spec.template.spec.containers: Required value"),
    (jobset(rjob(), spec="  coordinator: {replicatedJob: nope}"),
     "spec.coordinator.replicatedJob: Invalid value: \"nope\""),
])
def test_admission_errors_name_the_field(text: str, wanted: str) -> None:
    assert any(e.startswith(wanted) for e in errors(text)), errors(text)


def test_a_namespaced_jobset_is_accepted() -> None:
    assert not any("namespace" in e for e in errors(jobset(rjob())))


# --- a dump that already holds some of the JobSet's objects ---------------------------------------------


def test_a_dumped_child_job_is_not_made_again_and_its_new_pods_pass_the_webhook() -> None:
    from dralloc.simulator.loading import sort_objects

    first = jobs_of(jobset(rjob(replicas=2)))[0]
    child = codec.to_dict(first)
    child["metadata"]["uid"] = "job-uid"
    objects = [decoded(jobset(rjob(replicas=2))), codec.decode(child)]
    out = sort_objects(objects, NameGenerator(0))
    jobs = [w.metadata.name for w in out.workloads if isinstance(w, Job)]
    assert sorted(jobs) == ["test-jobset-replicated-job-0", "test-jobset-replicated-job-1"]
    assert len(out.pods) == 4
    assert all((p.metadata.labels or {}).get("jobset.sigs.k8s.io/priority") == "0" for p in out.pods)
    assert [s.metadata.name for s in out.services] == ["test-jobset"]


def test_priority_label_follows_the_priority_class() -> None:
    from dralloc.simulator.loading import sort_objects

    high = "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: high}\nvalue: 1000\n"
    template = "{spec: {priorityClassName: high, containers: [{name: w}]}}"
    objects = codec.load(io.StringIO(high + "---\n" + jobset(rjob(template=template))))
    out = sort_objects(objects, NameGenerator(0))
    assert {(p.metadata.labels or {}).get("jobset.sigs.k8s.io/priority") for p in out.pods} == {"1000"}


def test_volume_claim_policies_are_reported_as_not_modelled() -> None:
    policies = "  volumeClaimPolicies: [{templates: [{metadata: {name: data}}]}]"
    made = jobset_jobs(decoded(jobset(rjob(), spec=policies)))
    assert made.warnings == ["JobSet default/test-jobset: volumeClaimPolicies are not modelled; its pods get no "
                             "volumes for them"]


# --- the index labels over any layout of replicated jobs ------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 4), st.sampled_from(["a", "b", "c"])), min_size=1, max_size=5))
def test_global_and_group_indexes_number_every_job_once(layout: list[tuple[int, str]]) -> None:
    rjobs = [rjob(f"r{i}", replicas=count, parallelism=1, extra=f", groupName: {group}")
             for i, (count, group) in enumerate(layout)]
    jobs = jobs_of(jobset(*rjobs))
    assert len(jobs) == sum(count for count, _ in layout)
    labels = [j.metadata.labels or {} for j in jobs]
    assert [int(x["jobset.sigs.k8s.io/job-global-index"]) for x in labels] == list(range(len(jobs)))
    for group in {g for _, g in layout}:
        mine = [x for x in labels if x["jobset.sigs.k8s.io/group-name"] == group]
        assert [int(x["jobset.sigs.k8s.io/job-group-index"]) for x in mine] == list(range(len(mine)))
        assert {x["jobset.sigs.k8s.io/group-replicas"] for x in mine} <= {str(len(mine))}
    assert {x["jobset.sigs.k8s.io/global-replicas"] for x in labels} <= {str(len(jobs))}
