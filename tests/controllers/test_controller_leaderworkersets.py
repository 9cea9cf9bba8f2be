"""The LeaderWorkerSet controllers and pod webhook: the leader StatefulSet, one worker StatefulSet per leader pod,
the pods' names, labels and annotations, exclusive placement, sub-groups, and the admission rules.

Group keys and sub-group indexes are checked against the values of upstream's webhook tests."""

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
from dralloc.api.apps_v1 import StatefulSet
from dralloc.api.leaderworkerset_v1 import LeaderWorkerSet
from dralloc.controllers.leaderworkersets import (
    admit_lws_pod,
    expand_leaderworkerset,
    group_key,
    revision_key,
    sub_group_index,
)
from dralloc.controllers.names import ALPHANUMS, NameGenerator, fnv32
from dralloc.controllers.workloads import Owned
from dralloc.simulator import Simulator
from dralloc.validation import validate

WORKER = "{spec: {containers: [{name: w, resources: {requests: {cpu: '1'}}}]}}"
LEADER = "{metadata: {labels: {role: leader}}, spec: {containers: [{name: l, resources: {requests: {cpu: '1'}}}]}}"


def lws(replicas: int = 2, size: int = 3, annotations: str = "", extra: str = "", spec: str = "",
        leader: str | None = None) -> str:
    lines = ["apiVersion: leaderworkerset.x-k8s.io/v1", "kind: LeaderWorkerSet",
             f"metadata: {{name: sample, namespace: default, uid: lws-uid, labels: {{app: a}}{annotations}}}",
             "spec:", f"  replicas: {replicas}", "  leaderWorkerTemplate:", f"    size: {size}",
             f"    workerTemplate: {WORKER}"]
    if leader:
        lines.append(f"    leaderTemplate: {leader}")
    if extra:
        lines.append(extra)
    if spec:
        lines.append(spec)
    return "\n".join(lines) + "\n"


def decoded(text: str) -> Any:
    return codec.load(io.StringIO(text))[0]


def expand(text: str, inputs: list[Any] | None = None) -> Any:
    the_set = decoded(text)
    assert isinstance(the_set, LeaderWorkerSet)
    inputs = inputs or []
    have = {(type(o).__name__, o.metadata.namespace or "default", o.metadata.name or "") for o in inputs}
    return expand_leaderworkerset(the_set, NameGenerator(0), Owned(inputs), lambda *key: key in have)


def labels(pod: Any) -> dict[str, str]:
    return dict(pod.metadata.labels or {})


@pytest.mark.parametrize(("namespace", "pod", "key"), [
    ("default", "test-sample", "95e88034e460983f51a9952fe128729fbc0663b5"),
    ("default", "podName", "390b34ab671d29e9997d7d4252b8bbf8da02f5b7"),
    ("leaderworkerset", "test-sample", "39f5d7e9122b9d94d3932e3720b43fd3b56347e8"),
])
def test_group_key_matches_upstream(namespace: str, pod: str, key: str) -> None:
    assert group_key(namespace, pod) == key


@pytest.mark.parametrize(("count", "sub_size", "worker", "index"), [(4, 2, 2, "1"), (5, 2, 2, "0"), (3, 1, 1, "1"),
                                                                   (3, 1, 2, "2")])
def test_sub_group_index_matches_upstream(count: int, sub_size: int, worker: int, index: str) -> None:
    assert sub_group_index(count, sub_size, worker) == index


def test_leader_and_worker_pods_are_named_and_labelled_as_the_controllers_do() -> None:
    made = expand(lws())
    names = [p.metadata.name for p in made.pods]
    assert names == ["sample-0", "sample-1", "sample-0-1", "sample-0-2", "sample-1-1", "sample-1-2"]
    revision = revision_key(decoded(lws()))
    leader = labels(made.pods[1])
    assert leader["leaderworkerset.sigs.k8s.io/name"] == "sample"
    assert leader["leaderworkerset.sigs.k8s.io/worker-index"] == "0"
    assert leader["leaderworkerset.sigs.k8s.io/group-index"] == "1"
    assert leader["leaderworkerset.sigs.k8s.io/group-key"] == hashlib.sha1(b"default/sample-1").hexdigest()
    assert leader["leaderworkerset.sigs.k8s.io/template-revision-hash"] == revision
    assert leader["statefulset.kubernetes.io/pod-name"] == "sample-1"
    worker = labels(made.pods[5])
    assert worker["leaderworkerset.sigs.k8s.io/worker-index"] == "2"
    assert worker["leaderworkerset.sigs.k8s.io/group-index"] == "1"
    assert worker["leaderworkerset.sigs.k8s.io/group-key"] == leader["leaderworkerset.sigs.k8s.io/group-key"]
    assert worker["leaderworkerset.sigs.k8s.io/template-revision-hash"] == revision
    assert worker["apps.kubernetes.io/pod-index"] == "2"
    assert (made.pods[5].metadata.annotations or {}) == {"leaderworkerset.sigs.k8s.io/size": "3",
                                                         "leaderworkerset.sigs.k8s.io/leader-name": "sample-1"}
    assert (made.pods[1].metadata.annotations or {}) == {"leaderworkerset.sigs.k8s.io/size": "3"}


def test_the_leader_statefulset() -> None:
    made = expand(lws(leader=LEADER))
    leader_set = made.statefulsets[0]
    assert leader_set.metadata.name == "sample"
    owner = (leader_set.metadata.owner_references or [])[0]
    assert (owner.kind, owner.uid, owner.api_version) == ("LeaderWorkerSet", "lws-uid", "leaderworkerset.x-k8s.io/v1")
    spec = leader_set.spec
    assert (spec.replicas, spec.service_name, spec.pod_management_policy) == (2, "sample", "Parallel")
    assert spec.selector is not None and spec.selector.match_labels == {
        "leaderworkerset.sigs.k8s.io/name": "sample", "leaderworkerset.sigs.k8s.io/worker-index": "0"}
    assert (leader_set.metadata.labels or {})["app"] == "a"
    assert (leader_set.metadata.annotations or {}) == {"leaderworkerset.sigs.k8s.io/replicas": "2"}
    assert (made.pods[0].metadata.labels or {})["role"] == "leader"  # the leader template
    assert made.pods[0].spec.containers[0].name == "l"
    assert made.pods[2].spec.containers[0].name == "w"


def test_a_worker_statefulset_per_leader_owned_by_the_leader_pod() -> None:
    made = expand(lws())
    workers = made.statefulsets[1:]
    assert [s.metadata.name for s in workers] == ["sample-0", "sample-1"]
    leader = made.pods[0]
    owner = (workers[0].metadata.owner_references or [])[0]
    assert (owner.api_version, owner.kind, owner.name, owner.uid, owner.controller) == (
        "v1", "Pod", "sample-0", leader.metadata.uid, True)
    spec = workers[0].spec
    assert spec.replicas == 2 and spec.ordinals is not None and spec.ordinals.start == 1
    assert spec.service_name == "sample"
    assert spec.selector is not None and spec.selector.match_labels == {
        "leaderworkerset.sigs.k8s.io/group-index": "0", "leaderworkerset.sigs.k8s.io/name": "sample",
        "leaderworkerset.sigs.k8s.io/group-key": group_key("default", "sample-0")}
    assert [s.metadata.name for s in made.services] == ["sample"]
    assert made.services[0].spec.selector == {"leaderworkerset.sigs.k8s.io/name": "sample"}


def test_size_one_makes_no_workers() -> None:
    made = expand(lws(size=1))
    assert [p.metadata.name for p in made.pods] == ["sample-0", "sample-1"]
    assert len(made.statefulsets) == 1


def test_unique_per_replica_subdomain_gives_each_group_its_service() -> None:
    made = expand(lws(spec="  networkConfig: {subdomainPolicy: UniquePerReplica}"))
    assert [s.metadata.name for s in made.services] == ["sample-0", "sample-1"]
    assert made.services[1].spec.selector == {"leaderworkerset.sigs.k8s.io/name": "sample",
                                              "leaderworkerset.sigs.k8s.io/group-index": "1"}
    assert made.statefulsets[2].spec.service_name == "sample-1"
    assert (made.pods[0].metadata.annotations or {})["leaderworkerset.sigs.k8s.io/subdomainPolicy"] == \
        "UniquePerReplica"


def test_exclusive_topology_affinities() -> None:
    made = expand(lws(annotations=", annotations: {leaderworkerset.sigs.k8s.io/exclusive-topology: rack}"))
    key = group_key("default", "sample-0")
    required = "requiredDuringSchedulingIgnoredDuringExecution"
    leader = made.pods[0].spec.affinity
    assert leader is not None
    assert msgspec.to_builtins(leader.pod_affinity)[required] == [{"labelSelector": {"matchExpressions": [
        {"key": "leaderworkerset.sigs.k8s.io/group-key", "operator": "In", "values": [key]}]}, "topologyKey": "rack"}]
    assert msgspec.to_builtins(leader.pod_anti_affinity)[required] == [{"labelSelector": {"matchExpressions": [
        {"key": "leaderworkerset.sigs.k8s.io/group-key", "operator": "Exists"},
        {"key": "leaderworkerset.sigs.k8s.io/group-key", "operator": "NotIn", "values": [key]}]},
        "topologyKey": "rack"}]
    worker = made.pods[2].spec.affinity
    assert worker is not None and worker.pod_anti_affinity is None
    assert msgspec.to_builtins(worker.pod_affinity)[required] == [{"labelSelector": {"matchExpressions": [
        {"key": "leaderworkerset.sigs.k8s.io/group-key", "operator": "In", "values": [key]},
        {"key": "leaderworkerset.sigs.k8s.io/worker-index", "operator": "In", "values": ["0"]}]},
        "topologyKey": "rack"}]
    assert (made.pods[2].metadata.annotations or {})["leaderworkerset.sigs.k8s.io/exclusive-topology"] == "rack"
    assert expand(lws()).pods[0].spec.affinity is None


def test_exclusive_terms_already_in_the_template_are_not_added_twice() -> None:
    pod = expand(lws(annotations=", annotations: {leaderworkerset.sigs.k8s.io/exclusive-topology: rack}")).pods[0]
    again = admit_lws_pod(pod)
    assert again.spec.affinity == pod.spec.affinity


def test_sub_groups_label_leader_and_workers() -> None:
    extra = "    subGroupPolicy: {subGroupSize: 2}"
    ann = ", annotations: {leaderworkerset.sigs.k8s.io/subgroup-exclusive-topology: host}"
    made = expand(lws(replicas=1, size=4, extra=extra, annotations=ann))
    by_name = {p.metadata.name: labels(p) for p in made.pods}
    assert {n: v["leaderworkerset.sigs.k8s.io/subgroup-index"] for n, v in by_name.items()} == {
        "sample-0": "0", "sample-0-1": "0", "sample-0-2": "1", "sample-0-3": "1"}
    assert by_name["sample-0-3"]["leaderworkerset.sigs.k8s.io/subgroup-key"] == \
        hashlib.sha1(b"sample-0/1").hexdigest()
    assert by_name["sample-0"]["leaderworkerset.sigs.k8s.io/subgroup-key"] == hashlib.sha1(b"sample-0/0").hexdigest()
    affinity = made.pods[-1].spec.affinity
    assert affinity is not None and affinity.pod_anti_affinity is not None
    required = msgspec.to_builtins(affinity.pod_affinity)
    assert required["requiredDuringSchedulingIgnoredDuringExecution"][0]["topologyKey"] == "host"
    annotations = made.pods[-1].metadata.annotations or {}
    assert annotations["leaderworkerset.sigs.k8s.io/subgroup-size"] == "2"
    assert annotations["leaderworkerset.sigs.k8s.io/subgroup-policy-type"] == "LeaderWorker"


def test_leader_excluded_sub_groups_leave_the_leader_out() -> None:
    extra = "    subGroupPolicy: {subGroupSize: 2, subGroupPolicyType: LeaderExcluded}"
    made = expand(lws(replicas=1, size=5, extra=extra))
    by_name = {p.metadata.name: labels(p) for p in made.pods}
    assert "leaderworkerset.sigs.k8s.io/subgroup-index" not in by_name["sample-0"]
    assert [by_name[f"sample-0-{w}"]["leaderworkerset.sigs.k8s.io/subgroup-index"] for w in range(1, 5)] == \
        ["0", "0", "1", "1"]


def test_revision_key_is_safe_encoded_fnv32_and_follows_the_template() -> None:
    assert fnv32(b"") == 0x811C9DC5 and fnv32(b"a") == 0x050C5D7E  # FNV-1, not FNV-1a (0xe40c292c)
    key = revision_key(decoded(lws()))
    assert key and set(key) <= set(ALPHANUMS)
    assert key == revision_key(decoded(lws()))
    assert key == revision_key(decoded(lws(replicas=5)))  # replicas are not part of the revision
    assert key != revision_key(decoded(lws(size=4)))


def test_an_input_leader_statefulset_and_leaders_only_get_their_workers() -> None:
    first = expand(lws())
    leader_set: StatefulSet = first.statefulsets[0]
    leaders = first.pods[:2]
    made = expand(lws(), inputs=[leader_set, *leaders])
    assert made.statefulsets and all(s.metadata.name in ("sample-0", "sample-1") for s in made.statefulsets)
    assert [p.metadata.name for p in made.pods] == ["sample-0-1", "sample-0-2", "sample-1-1", "sample-1-2"]
    worker_set = made.statefulsets[0]
    again = expand(lws(), inputs=[leader_set, *leaders, worker_set])
    assert [s.metadata.name for s in again.statefulsets] == ["sample-1"]


# --- through the simulation -----------------------------------------------------------------------------


def placed(text: str) -> dict[str, str | None]:
    sim = Simulator.from_objects(codec.load(io.StringIO(text)))
    sim.run()
    return {r.pod.metadata.name or "": r.node for r in sim.results.values()}


def test_exclusive_groups_each_fill_a_rack() -> None:
    ann = ", annotations: {leaderworkerset.sigs.k8s.io/exclusive-topology: rack}"
    result = placed(rack_nodes(cpu=2) + "---\n" + lws(replicas=2, size=4, annotations=ann))
    assert all(result.values())
    racks = {g: {(result[n] or "").split("-")[0] for n in result if n.startswith(f"sample-{g}")} for g in "01"}
    assert all(len(r) == 1 for r in racks.values()) and racks["0"] != racks["1"]


def test_a_third_exclusive_group_finds_no_rack() -> None:
    ann = ", annotations: {leaderworkerset.sigs.k8s.io/exclusive-topology: rack}"
    result = placed(rack_nodes(cpu=8) + "---\n" + lws(replicas=3, size=2, annotations=ann))
    assert sorted(n for n, node in result.items() if node is None) == ["sample-2", "sample-2-1"]


# --- admission ------------------------------------------------------------------------------------------


def errors(text: str) -> list[str]:
    return [str(e) for e in validate(decoded(text))]


def test_a_valid_set_has_no_errors() -> None:
    assert errors(lws()) == []


@pytest.mark.parametrize(("text", "wanted"), [
    (lws(size=0), "spec.leaderWorkerTemplate.size: Invalid value: 0: size must be equal or greater than 1"),
    (lws(replicas=-1), "spec.replicas: Invalid value: -1: replicas must be equal or greater than 0"),
    (lws(size=5, extra="    subGroupPolicy: {subGroupSize: 3}"),
     "spec.leaderWorkerTemplate.SubGroupPolicy.subGroupSize: Invalid value: 3: size or size - 1 must be divisible "
     "by subGroupSize"),
    (lws(annotations=", annotations: {leaderworkerset.sigs.k8s.io/subgroup-exclusive-topology: h}"),
     "metadata.annotations[leaderworkerset.sigs.k8s.io/subgroup-exclusive-topology]: Invalid value: \"h\": cannot "
     "have subgroup-exclusive-topology without subGroupSize set"),
    (lws(spec="  rolloutStrategy: {rollingUpdateConfiguration: {maxSurge: 150%}}"),
     "spec.rolloutStrategy.rollingUpdateConfiguration.maxSurge: Invalid value: \"150%\": must not be greater than "
     "100%"),
    (lws(spec="  rolloutStrategy: {rollingUpdateConfiguration: {maxUnavailable: 0, maxSurge: 0}}"),
     "spec.rolloutStrategy.rollingUpdateConfiguration.maxUnavailable: Invalid value: 0: must not be 0 when "
     "`maxSurge` is 0"),
    (lws().replace(WORKER, "{spec: {containers: []}}"), "spec.leaderWorkerTemplate.workerTemplate.spec.containers: "
                                                        "Required value"),
])
def test_admission_errors_name_the_field(text: str, wanted: str) -> None:
    assert any(e.startswith(wanted) for e in errors(text)), errors(text)


def test_expansion_is_deterministic() -> None:
    one, two = expand(lws()), expand(lws())
    assert [(p.metadata.name, p.metadata.uid) for p in one.pods] == [(p.metadata.name, p.metadata.uid)
                                                                      for p in two.pods]



@settings(max_examples=80, deadline=None)
@given(st.integers(2, 24), st.integers(1, 8))
def test_sub_groups_are_whole_and_the_leader_joins_the_first(size: int, sub_size: int) -> None:
    if size < sub_size or (size % sub_size and (size - 1) % sub_size):
        return  # admission refuses these
    indexes = [int(sub_group_index(size, sub_size, w)) for w in range(1, size)]
    members = [indexes.count(i) for i in range(max(indexes) + 1)]
    if size % sub_size == 0:  # the leader is one of the first sub-group's members
        assert members == [sub_size - 1] + [sub_size] * (len(members) - 1)
    else:  # the leader is an extra pod of the first sub-group
        assert members == [sub_size] * len(members)
