"""Workload controllers reconcile with what a cluster dump already holds: no pod counted twice."""

from __future__ import annotations

from typing import Any

from msgspec.structs import replace

from dralloc.api import codec
from dralloc.api.core_v1 import Pod, PodStatus
from dralloc.api.meta import ObjectMeta, OwnerReference
from dralloc.controllers.names import NameGenerator
from dralloc.controllers.workloads import expand_workloads, replicaset_for_deployment
from dralloc.simulator import Scheduler

TEMPLATE = {"metadata": {"labels": {"app": "web"}},
            "spec": {"containers": [{"name": "c", "image": "nginx", "resources": {"requests": {"cpu": "100m"}}}]}}


def workload(kind: str, name: str = "web", **spec: Any) -> Any:
    api = "batch/v1" if kind == "Job" else "apps/v1"
    selector = {"selector": {"matchLabels": {"app": "web"}}} if kind != "Job" else {}
    return codec.decode({"apiVersion": api, "kind": kind,
                         "metadata": {"name": name, "namespace": "prod", "uid": f"uid-{name}"},
                         "spec": {"template": TEMPLATE, **selector, **spec}})


def owned_pod(name: str, owner: Any, *, node: str | None = "n1", phase: str | None = None, deleting: bool = False,
              annotations: dict[str, str] | None = None) -> Pod:
    ref = OwnerReference(api_version=owner.api_version, kind=owner.kind, name=owner.metadata.name,
                         uid=owner.metadata.uid or "", controller=True)
    base: Pod = codec.decode({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
                              "spec": TEMPLATE["spec"]})
    meta = ObjectMeta(name=name, namespace="prod", uid=f"uid-{name}", owner_references=[ref],
                      annotations=annotations, deletion_timestamp="2026-01-01T00:00:00Z" if deleting else None)
    return replace(base, metadata=meta, spec=replace(base.spec, node_name=node),
                   status=PodStatus(phase=phase) if phase else None)


def new_pods(objects: list[Any], existing: list[Pod], nodes: list[Any] = ()) -> list[Pod]:  # type: ignore[assignment]
    return expand_workloads(objects, nodes, NameGenerator(0), existing)[1]


def test_a_deployment_whose_replicaset_exists_makes_only_the_missing_pods() -> None:
    deploy = workload("Deployment", replicas=3)
    rs = replace(replicaset_for_deployment(deploy), metadata=replace(replicaset_for_deployment(deploy).metadata,
                                                                      uid="uid-rs"))
    running = [owned_pod("web-a", rs), owned_pod("web-b", rs)]
    pods = new_pods([deploy, rs], running)
    assert len(pods) == 1 and pods[0].metadata.owner_references[0].name == rs.metadata.name  # type: ignore[index]
    # Finished and terminating pods do not count as the ReplicaSet's.
    done = [owned_pod("web-a", rs, phase="Succeeded"), owned_pod("web-b", rs, deleting=True)]
    assert len(new_pods([deploy, rs], done)) == 3


def test_a_replicaset_alone_and_pods_of_another_owner() -> None:
    rs = workload("ReplicaSet", replicas=2)
    other = workload("ReplicaSet", name="other", replicas=1)
    assert len(new_pods([rs], [owned_pod("x", other)])) == 2
    assert len(new_pods([rs], [owned_pod("x", rs)])) == 1
    # A UID that disagrees names another object of the same name (recreated): not ours.
    stale = replace(rs, metadata=replace(rs.metadata, uid="uid-new"))
    assert len(new_pods([stale], [owned_pod("x", rs)])) == 2


def test_a_statefulset_makes_its_missing_ordinals() -> None:
    sts = workload("StatefulSet", replicas=3)
    pods = new_pods([sts], [owned_pod("web-0", sts), owned_pod("web-2", sts)])
    assert [p.metadata.name for p in pods] == ["web-1"]


def test_a_daemonset_skips_nodes_that_have_its_pod() -> None:
    ds = workload("DaemonSet")
    nodes = [codec.decode({"apiVersion": "v1", "kind": "Node", "metadata": {"name": n}}) for n in ("n1", "n2")]
    pods = new_pods([ds], [owned_pod("agent-x", ds, node="n1")], nodes)
    assert len(pods) == 1
    pinned = pods[0].spec.affinity.node_affinity.required_during_scheduling_ignored_during_execution  # type: ignore[union-attr]
    assert pinned.node_selector_terms[0].match_fields[0].values == ["n2"]  # type: ignore[index]


def test_a_job_counts_active_and_succeeded_pods() -> None:
    job = workload("Job", parallelism=3, completions=3)
    job = replace(job, status=codec.decode({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "x"},
                                            "status": {"succeeded": 1}}).status)
    pods = new_pods([job], [owned_pod("web-a", job)])
    assert len(pods) == 1  # min(parallelism 3, completions left 2) minus one running
    indexed = workload("Job", name="idx", parallelism=2, completions=4, completionMode="Indexed")
    have = [owned_pod("idx-0", indexed, annotations={"batch.kubernetes.io/job-completion-index": "0"},
                      phase="Succeeded"),
            owned_pod("idx-1", indexed, annotations={"batch.kubernetes.io/job-completion-index": "1"})]
    pods = new_pods([indexed], have)
    assert [p.metadata.annotations["batch.kubernetes.io/job-completion-index"] for p in pods] == ["2"]  # type: ignore[index]


def test_a_dump_with_deployment_replicaset_and_pods_simulates_each_pod_once() -> None:
    deploy = workload("Deployment", replicas=2)
    rs = replicaset_for_deployment(deploy)
    rs = replace(rs, metadata=replace(rs.metadata, uid="uid-rs"))
    node = codec.decode({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
                         "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}})
    running = owned_pod("web-a", rs)
    result = Scheduler.from_objects([node, deploy, rs, running]).schedule()
    assert sorted(p.status for p in result.pods) == ["running", "scheduled"]

