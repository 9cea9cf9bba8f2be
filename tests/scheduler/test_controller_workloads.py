"""Workload controllers: the pods (and ReplicaSets) Deployment, ReplicaSet, StatefulSet, Job and DaemonSet make."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dralloc.api import codec
from dralloc.api.core_v1 import Node, Toleration
from dralloc.controllers.names import (
    ALPHANUMS,
    NameGenerator,
    fnv32,
    fnv32a,
    go_json,
    pod_template_hash,
    safe_encode,
)
from dralloc.controllers.workloads import (
    daemonset_pod,
    daemonset_should_run,
    expand_daemonset,
    expand_job,
    expand_replicaset,
    expand_statefulset,
    expand_workloads,
    job_pod_generate_name,
    replicaset_for_deployment,
)

TEMPLATE = {"metadata": {"labels": {"app": "web"}, "annotations": {"team": "a"}},
            "spec": {"containers": [{"name": "c", "image": "nginx"}]}}


def workload(kind: str, name: str = "web", namespace: str = "prod", **spec: Any) -> Any:
    api = "batch/v1" if kind == "Job" else "apps/v1"
    return codec.decode({"apiVersion": api, "kind": kind,
                         "metadata": {"name": name, "namespace": namespace, "uid": f"uid-{name}"},
                         "spec": {"template": TEMPLATE, **spec}})


def node(name: str, labels: dict[str, str] | None = None, taints: list[dict[str, str]] | None = None) -> Node:
    return codec.decode({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels or {}},
                         "spec": {"taints": taints or []}})


def suffix_of(name: str, base: str) -> str:
    assert name.startswith(base)
    return name[len(base):]


# --- names ------------------------------------------------------------------------------------------


def test_generated_names_are_the_base_cut_to_58_plus_five_safe_characters() -> None:
    names = NameGenerator(0)
    name = names.generate("x" * 70)
    assert len(name) == 63 and name.startswith("x" * 58)
    assert all(c in ALPHANUMS for c in name[58:])


def test_the_same_seed_gives_the_same_names_and_another_seed_others() -> None:
    def draw(seed: int) -> list[str]:
        names = NameGenerator(seed)
        return [names.generate("p-") for _ in range(5)] + [names.uid()]

    assert draw(7) == draw(7)
    assert draw(7) != draw(8)


def test_safe_encode_maps_each_digit_as_apimachinery_does() -> None:
    assert safe_encode("3718868910") == "7c5ddbdf54"  # the shape of a real pod-template-hash


def test_fnv32a_matches_the_reference_vectors() -> None:
    assert fnv32a(b"") == 0x811C9DC5
    assert fnv32a(b"a") == 0xE40C292C
    assert fnv32a(b"foobar") == 0xBF9CF968
    assert fnv32a(b"chongo was here!\n" * 2) == fnv32a(b"chongo was here!\n", fnv32a(b"chongo was here!\n"))


def _fnv32a_byte_at_a_time(data: bytes, value: int) -> int:
    for byte in data:
        value = ((value ^ byte) * 0x01000193) & 0xFFFFFFFF
    return value


@given(st.binary(max_size=80), st.integers(0, 0xFFFFFFFF))
def test_fnv32a_eight_bytes_a_step_is_the_byte_at_a_time_hash(data: bytes, value: int) -> None:
    assert fnv32a(data, value) == _fnv32a_byte_at_a_time(data, value)
    assert fnv32a(data) == _fnv32a_byte_at_a_time(data, 0x811C9DC5)


def test_the_collision_count_changes_the_pod_template_hash() -> None:
    template = workload("Deployment").spec.template
    assert pod_template_hash(template) == pod_template_hash(template)
    assert pod_template_hash(template) != pod_template_hash(template, 1)
    assert all(c in ALPHANUMS for c in pod_template_hash(template, 1))


# --- Deployment / ReplicaSet ------------------------------------------------------------------------


def test_a_deployments_replicaset_is_named_and_labelled_with_the_template_hash() -> None:
    deploy = workload("Deployment", replicas=3, selector={"matchLabels": {"app": "web"}})
    rs = replicaset_for_deployment(deploy)
    template_hash = pod_template_hash(deploy.spec.template)
    assert rs.metadata.name == f"web-{template_hash}" and rs.metadata.namespace == "prod"
    assert rs.spec.template.metadata.labels == {"app": "web", "pod-template-hash": template_hash}
    assert rs.spec.selector.match_labels == {"app": "web", "pod-template-hash": template_hash}
    assert rs.metadata.labels == rs.spec.template.metadata.labels
    ref = rs.metadata.owner_references[0]
    assert (ref.api_version, ref.kind, ref.name, ref.uid, ref.controller, ref.block_owner_deletion) == \
        ("apps/v1", "Deployment", "web", "uid-web", True, True)
    assert rs.spec.replicas == 3


@pytest.mark.parametrize(("replicas", "strategy", "max_replicas"), [
    (3, None, "4"),  # default maxSurge 25%, rounded up
    (10, None, "13"),
    (10, {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 2}}, "12"),
    # both 0: ResolveFenceposts lets one pod be unavailable instead, and the surge stays 0
    (4, {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 0, "maxUnavailable": 0}}, "4"),
    (10, {"type": "Recreate"}, "10"),
])
def test_the_replicaset_carries_the_revision_annotations(replicas, strategy, max_replicas) -> None:
    extra = {"strategy": strategy} if strategy else {}
    deploy = workload("Deployment", replicas=replicas, **extra)
    annotations = replicaset_for_deployment(deploy).metadata.annotations
    assert annotations["deployment.kubernetes.io/revision"] == "1"
    assert annotations["deployment.kubernetes.io/desired-replicas"] == str(replicas)
    assert annotations["deployment.kubernetes.io/max-replicas"] == max_replicas


def test_deployment_annotations_are_copied_to_the_replicaset_except_the_controllers_own() -> None:
    deploy = codec.decode({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {
        "name": "web", "annotations": {"owner": "me", "kubectl.kubernetes.io/last-applied-configuration": "{}"}},
        "spec": {"template": TEMPLATE}})
    annotations = replicaset_for_deployment(deploy).metadata.annotations
    assert annotations["owner"] == "me"
    assert "kubectl.kubernetes.io/last-applied-configuration" not in annotations


def test_replicaset_pods_are_the_set_name_plus_a_suffix_with_template_metadata_and_owner() -> None:
    rs = workload("ReplicaSet", name="web-abc", replicas=2)
    pods = expand_replicaset(rs, NameGenerator(1))
    assert len(pods) == 2 and len({p.metadata.name for p in pods}) == 2
    for pod in pods:
        assert len(suffix_of(pod.metadata.name, "web-abc-")) == 5
        assert pod.metadata.generate_name == "web-abc-" and pod.metadata.namespace == "prod"
        assert pod.metadata.labels == {"app": "web"} and pod.metadata.annotations == {"team": "a"}
        assert pod.metadata.owner_references[0].kind == "ReplicaSet" and pod.metadata.uid
        assert pod.spec.containers[0].image == "nginx"


def test_replicas_default_to_one() -> None:
    assert len(expand_replicaset(workload("ReplicaSet"), NameGenerator())) == 1


# --- StatefulSet ------------------------------------------------------------------------------------


def test_statefulset_pods_are_numbered_from_the_ordinals_start() -> None:
    sts = workload("StatefulSet", name="db", replicas=3, ordinals={"start": 5})
    pods = expand_statefulset(sts, NameGenerator())
    assert [p.metadata.name for p in pods] == ["db-5", "db-6", "db-7"]
    labels = pods[1].metadata.labels
    assert labels["statefulset.kubernetes.io/pod-name"] == "db-6"
    assert labels["apps.kubernetes.io/pod-index"] == "6"
    assert labels["controller-revision-hash"].startswith("db-")


def test_statefulset_ordinals_start_at_zero_by_default() -> None:
    pods = expand_statefulset(workload("StatefulSet", name="db", replicas=2), NameGenerator())
    assert [p.metadata.name for p in pods] == ["db-0", "db-1"]


# --- Job --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("spec", "count"), [
    ({"parallelism": 3, "completions": 10}, 3),
    ({"parallelism": 5, "completions": 2}, 2),
    ({"parallelism": 4}, 4),  # a work queue: parallelism pods
    ({}, 1),
    ({"parallelism": 3, "suspend": True}, 0),
])
def test_a_job_starts_min_of_parallelism_and_completions_pods(spec, count) -> None:
    assert len(expand_job(workload("Job", name="train", **spec), NameGenerator())) == count


def test_nonindexed_job_pods_carry_job_labels_and_the_tracking_finalizer() -> None:
    [pod] = expand_job(workload("Job", name="train"), NameGenerator())
    assert len(suffix_of(pod.metadata.name, "train-")) == 5
    assert pod.metadata.labels == {"app": "web", "job-name": "train", "batch.kubernetes.io/job-name": "train",
                                   "controller-uid": "uid-train", "batch.kubernetes.io/controller-uid": "uid-train"}
    assert pod.metadata.finalizers == ["batch.kubernetes.io/job-tracking"]
    assert pod.metadata.owner_references[0].kind == "Job"


def test_indexed_job_pods_take_the_lowest_indexes_in_name_annotation_and_label() -> None:
    pods = expand_job(workload("Job", name="train", parallelism=2, completions=5, completionMode="Indexed"),
                      NameGenerator())
    assert [p.metadata.generate_name for p in pods] == ["train-0-", "train-1-"]
    assert len(suffix_of(pods[1].metadata.name, "train-1-")) == 5
    assert pods[1].metadata.annotations["batch.kubernetes.io/job-completion-index"] == "1"
    assert pods[1].metadata.labels["batch.kubernetes.io/job-completion-index"] == "1"


def test_a_long_indexed_job_name_is_cut_before_the_index() -> None:
    base = job_pod_generate_name("j" * 60, 12)
    assert base == "j" * 54 + "-12-" and len(base) == 58


def test_a_manual_selector_job_keeps_its_template_labels() -> None:
    [pod] = expand_job(workload("Job", name="train", manualSelector=True), NameGenerator())
    assert pod.metadata.labels == {"app": "web"}


# --- DaemonSet --------------------------------------------------------------------------------------


def daemonset(**template_spec: Any) -> Any:
    return codec.decode({"apiVersion": "apps/v1", "kind": "DaemonSet",
                         "metadata": {"name": "agent", "namespace": "kube-system", "uid": "uid-agent"},
                         "spec": {"template": {"metadata": {"labels": {"app": "agent"}},
                                               "spec": {"containers": [{"name": "a"}], **template_spec}}}})


def test_a_daemonset_runs_on_every_node_without_constraints() -> None:
    assert daemonset_should_run(daemonset(), node("n1")) == (True, True)


def test_the_node_selector_restricts_daemonset_nodes() -> None:
    ds = daemonset(nodeSelector={"gpu": "true"})
    assert daemonset_should_run(ds, node("n1", {"gpu": "true"})) == (True, True)
    assert daemonset_should_run(ds, node("n2", {"gpu": "false"})) == (False, False)


def test_required_node_affinity_restricts_daemonset_nodes() -> None:
    ds = daemonset(affinity={"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}]}}})
    assert daemonset_should_run(ds, node("n1", {"zone": "a"}))[0]
    assert daemonset_should_run(ds, node("n2", {"zone": "b"})) == (False, False)


def test_a_malformed_required_affinity_matches_no_node() -> None:
    ds = daemonset(affinity={"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "In", "values": []}]}]}}})
    assert daemonset_should_run(ds, node("n1", {"zone": "a"})) == (False, False)


def test_a_template_node_name_limits_the_daemonset_to_that_node() -> None:
    ds = daemonset(nodeName="n1")
    assert daemonset_should_run(ds, node("n1"))[0] and daemonset_should_run(ds, node("n2")) == (False, False)


def test_an_untolerated_noschedule_taint_blocks_new_pods_but_keeps_running_ones() -> None:
    tainted = node("n1", taints=[{"key": "gpu", "value": "broken", "effect": "NoSchedule"}])
    assert daemonset_should_run(daemonset(), tainted) == (False, True)
    tolerant = daemonset(tolerations=[{"key": "gpu", "operator": "Equal", "value": "broken"}])
    assert daemonset_should_run(tolerant, tainted) == (True, True)
    wrong_value = daemonset(tolerations=[{"key": "gpu", "operator": "Equal", "value": "ok"}])
    assert daemonset_should_run(wrong_value, tainted) == (False, True)


def test_an_untolerated_noexecute_taint_evicts_daemon_pods() -> None:
    tainted = node("n1", taints=[{"key": "maintenance", "effect": "NoExecute"}])
    assert daemonset_should_run(daemonset(), tainted) == (False, False)


def test_prefer_noschedule_taints_do_not_matter_to_daemonsets() -> None:
    assert daemonset_should_run(daemonset(), node("n1", taints=[{"key": "x", "effect": "PreferNoSchedule"}]))[0]


@pytest.mark.parametrize("taint", [
    {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"},
    {"key": "node.kubernetes.io/not-ready", "effect": "NoExecute"},
    {"key": "node.kubernetes.io/memory-pressure", "effect": "NoSchedule"},
])
def test_the_automatic_daemon_tolerations_are_applied_before_checking_taints(taint) -> None:
    assert daemonset_should_run(daemonset(), node("n1", taints=[taint])) == (True, True)


def test_network_unavailable_is_tolerated_only_by_host_network_daemonsets() -> None:
    tainted = node("n1", taints=[{"key": "node.kubernetes.io/network-unavailable", "effect": "NoSchedule"}])
    assert not daemonset_should_run(daemonset(), tainted)[0]
    assert daemonset_should_run(daemonset(hostNetwork=True), tainted)[0]


def test_daemon_pods_are_pinned_by_replacing_required_affinity_terms_and_keeping_the_rest() -> None:
    ds = daemonset(nodeSelector={"role": "worker"}, affinity={"nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}]},
        "preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 1, "preference": {"matchExpressions": [{"key": "ssd", "operator": "Exists"}]}}]}})
    pod = daemonset_pod(ds, "n7", NameGenerator())
    affinity = pod.spec.affinity.node_affinity
    [term] = affinity.required_during_scheduling_ignored_during_execution.node_selector_terms
    assert term.match_expressions is None
    assert [(r.key, r.operator, r.values) for r in term.match_fields] == [("metadata.name", "In", ["n7"])]
    assert affinity.preferred_during_scheduling_ignored_during_execution[0].weight == 1
    assert pod.spec.node_selector == {"role": "worker"} and pod.spec.node_name is None
    assert pod.metadata.labels["pod-template-generation"] == "1" and "controller-revision-hash" in pod.metadata.labels


def test_daemon_tolerations_are_added_once_and_replace_an_equal_one_with_seconds() -> None:
    ds = daemonset(tolerations=[{"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute",
                                 "tolerationSeconds": 300}, {"key": "custom", "operator": "Exists"}])
    tolerations = daemonset_pod(ds, "n1", NameGenerator()).spec.tolerations
    assert tolerations[0] == Toleration(key="node.kubernetes.io/not-ready", operator="Exists", effect="NoExecute")
    assert tolerations[1] == Toleration(key="custom", operator="Exists")
    assert [t.key for t in tolerations[2:]] == [
        "node.kubernetes.io/unreachable", "node.kubernetes.io/disk-pressure", "node.kubernetes.io/memory-pressure",
        "node.kubernetes.io/pid-pressure", "node.kubernetes.io/unschedulable"]


def test_expand_daemonset_makes_one_pod_per_eligible_node_in_node_order() -> None:
    nodes = [node("a", {"gpu": "true"}), node("b"), node("c", {"gpu": "true"})]
    pods = expand_daemonset(daemonset(nodeSelector={"gpu": "true"}), nodes, NameGenerator())
    pinned = [p.spec.affinity.node_affinity.required_during_scheduling_ignored_during_execution
              .node_selector_terms[0].match_fields[0].values[0] for p in pods]
    assert pinned == ["a", "c"]
    assert all(p.metadata.generate_name == "agent-" for p in pods)


# --- all workloads ----------------------------------------------------------------------------------


def test_expand_workloads_gives_uids_and_is_deterministic_for_a_seed() -> None:
    objects = [codec.decode({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
                             "spec": {"replicas": 2, "template": TEMPLATE}}),
               workload("Job", name="train", parallelism=2), daemonset()]

    def run(seed: int) -> list[Any]:
        created, pods = expand_workloads(objects, [node("n1"), node("n2")], NameGenerator(seed))
        return [codec.to_dict(o) for o in created + pods]

    first = run(3)
    assert first == run(3)
    assert [o["kind"] for o in first] == ["Deployment", "ReplicaSet", "Job", "DaemonSet"] + ["Pod"] * 6
    assert first[0]["metadata"]["uid"] and first[1]["metadata"]["ownerReferences"][0]["uid"] == \
        first[0]["metadata"]["uid"]
    assert run(4) != first


def _fnv32_byte_at_a_time(data: bytes) -> int:
    value = 0x811C9DC5
    for byte in data:
        value = (value * 0x01000193) & 0xFFFFFFFF
        value ^= byte
    return value


@given(st.binary(max_size=64))
def test_fnv32_eight_bytes_a_step_is_the_byte_at_a_time_hash(data: bytes) -> None:
    assert fnv32(data) == _fnv32_byte_at_a_time(data)


def test_go_json_escapes_as_go_marshals() -> None:
    assert go_json({"b": "<a & b>", "a": "\u2028\u2029é"}) == \
        '{"a":"\\u2028\\u2029é","b":"\\u003ca \\u0026 b\\u003e"}'.encode()
