"""scheduling.k8s.io/v1alpha2 Workloads and PodGroups in `dralloc serve`: served with the GenericWorkload gate
only, validated with the server's gates (server/registry/pod_groups.py), and scheduled as gangs by the server's
scheduler, which writes the PodGroupScheduled condition (server/controllers/pod_groups.py)."""

from __future__ import annotations

import warnings
from typing import Any

import pytest
from cluster import CLASS, TEMPLATE, Cluster, R, api_client, slice_
from hypothesis import given, settings
from hypothesis import strategies as st
from openapi_walk import explain_path
from starlette.testclient import TestClient

from dralloc.api.codec import decode, to_dict
from dralloc.cli.main import main
from dralloc.scheduler.features import FeatureGates
from dralloc.server import create_app
from dralloc.server.controllers import ControllerManager, Options
from dralloc.server.controllers.live import LiveScheduler
from dralloc.server.controllers.snapshot import Snapshot
from dralloc.simulator import Simulator
from dralloc.store import SQLiteStore

V1A2 = "/apis/scheduling.k8s.io/v1alpha2"
PODGROUPS = f"{V1A2}/namespaces/default/podgroups"
WORKLOADS = f"{V1A2}/namespaces/default/workloads"
GATES = frozenset({"GenericWorkload"})


def workload(name: str = "train") -> dict[str, Any]:
    return {"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "Workload", "metadata": {"name": name},
            "spec": {"podGroupTemplates": [{"name": "workers", "schedulingPolicy": {"gang": {"minCount": 3}}}]}}


def pod_group(name: str = "train-0", min_count: int = 3, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup", "metadata": {"name": name},
            "spec": {"schedulingPolicy": {"gang": {"minCount": min_count}}, **spec}}


def causes(response: Any) -> list[tuple[str, str]]:
    return [(c["field"], c["message"]) for c in response.json()["details"]["causes"]]


# --- serving -------------------------------------------------------------------------------------------


def test_gate_off_the_api_is_not_served() -> None:
    http = api_client()
    group = http.get("/apis/scheduling.k8s.io").json()
    assert [v["version"] for v in group["versions"]] == ["v1"]
    assert http.get(V1A2).status_code == 404
    r = http.post(PODGROUPS, json=pod_group())
    assert r.status_code == 404 and r.json()["message"] == "the server could not find the requested resource"
    assert http.get(WORKLOADS).status_code == 404


def test_gate_on_discovery_lists_workloads_and_podgroups_with_status() -> None:
    http = api_client(feature_gates=GATES)
    group = http.get("/apis/scheduling.k8s.io").json()
    assert [v["version"] for v in group["versions"]] == ["v1", "v1alpha2"]
    assert group["preferredVersion"]["version"] == "v1"
    listed = http.get(V1A2).json()
    assert [(r["name"], r["namespaced"], r["kind"]) for r in listed["resources"]] == [
        ("workloads", True, "Workload"), ("podgroups", True, "PodGroup"), ("podgroups/status", True, "PodGroup")]
    accept = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
    items = http.get("/apis", headers={"Accept": accept}).json()["items"]
    scheduling = next(i for i in items if i["metadata"]["name"] == "scheduling.k8s.io")
    assert [(v["version"], [r["resource"] for r in v["resources"]]) for v in scheduling["versions"]] == [
        ("v1", ["priorityclasses"]), ("v1alpha2", ["workloads", "podgroups"])]


def test_openapi_describes_workloads_and_pod_groups_only_with_the_gate_on() -> None:
    on, off = api_client(feature_gates=GATES), api_client()
    root = on.get("/openapi/v3").json()["paths"]
    assert set(off.get("/openapi/v3").json()["paths"]) == set(root) - {"apis/scheduling.k8s.io/v1alpha2"}
    doc = on.get(root["apis/scheduling.k8s.io/v1alpha2"]["serverRelativeURL"]).json()
    schemas = doc["components"]["schemas"]
    group = schemas["io.k8s.api.scheduling.v1alpha2.PodGroup"]
    assert group["x-kubernetes-group-version-kind"] == [
        {"group": "scheduling.k8s.io", "version": "v1alpha2", "kind": "PodGroup"}]
    assert explain_path(schemas, "io.k8s.api.scheduling.v1alpha2.PodGroup", "spec.schedulingPolicy.gang.minCount")["type"] == \
        "integer"
    template = explain_path(schemas, "io.k8s.api.scheduling.v1alpha2.Workload", "spec.podGroupTemplates")
    assert {"name", "schedulingPolicy", "schedulingConstraints", "resourceClaims"} <= set(template["properties"])
    assert set(doc["paths"]) == {f"{V1A2}/namespaces/{{namespace}}/{r}{tail}" for r in ("workloads", "podgroups")
                                 for tail in ("", "/{name}")} | {f"{PODGROUPS.replace('default', '{namespace}')}"
                                                                 "/{name}/status"}
    assert off.get("/openapi/v3/apis/scheduling.k8s.io/v1alpha2").status_code == 404
    # /openapi/v2 (kubectl validates a List's items with it on the client) follows the gate too
    assert "io.k8s.api.scheduling.v1alpha2.PodGroup" in on.get("/openapi/v2").json()["definitions"]
    assert "io.k8s.api.scheduling.v1alpha2.PodGroup" not in off.get("/openapi/v2").json()["definitions"]
    proto = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"
    assert b"io.k8s.api.scheduling.v1alpha2.PodGroup" in on.get("/openapi/v2", headers={"Accept": proto}).content
    assert b"io.k8s.api.scheduling.v1alpha2.PodGroup" not in off.get("/openapi/v2", headers={"Accept": proto}).content


def test_create_get_list_delete_with_generation() -> None:
    http = api_client(feature_gates=GATES)
    created = http.post(WORKLOADS, json=workload())
    assert created.status_code == 201, created.text
    assert created.json()["metadata"]["generation"] == 1
    assert http.post(PODGROUPS, json=pod_group()).status_code == 201
    assert [o["metadata"]["name"] for o in http.get(PODGROUPS).json()["items"]] == ["train-0"]
    assert http.get(f"{WORKLOADS}/train").json()["spec"]["podGroupTemplates"][0]["name"] == "workers"
    assert http.delete(f"{PODGROUPS}/train-0").status_code == 200
    assert http.get(f"{PODGROUPS}/train-0").status_code == 404


def test_create_is_validated_with_the_servers_gates() -> None:
    topology = {"schedulingConstraints": {"topology": [{"key": "example.com/rack"}]}}
    off = api_client(feature_gates=GATES).post(PODGROUPS, json=pod_group(**topology))
    assert off.status_code == 422
    assert causes(off) == [("spec.schedulingConstraints", "Forbidden: disabled by feature-gate")]
    on = api_client(feature_gates=GATES | {"TopologyAwareWorkloadScheduling"})
    assert on.post(PODGROUPS, json=pod_group(**topology)).status_code == 201
    bad = on.post(PODGROUPS, json=pod_group("zero", min_count=0))
    assert causes(bad) == [("spec.schedulingPolicy.gang.minCount", "Required value")]
    nameless = on.post(WORKLOADS, json={**workload(), "spec": {"podGroupTemplates": []}})
    assert causes(nameless) == [("spec.podGroupTemplates", "Required value: must have at least one item")]


def test_spec_is_immutable_and_status_goes_through_status_only() -> None:
    http = api_client(feature_gates=GATES)
    stored = http.post(PODGROUPS, json=pod_group()).json()
    changed = {**stored, "spec": {"schedulingPolicy": {"gang": {"minCount": 4}}}}
    r = http.put(f"{PODGROUPS}/train-0", json=changed)
    assert r.status_code == 422
    assert [f for f, _ in causes(r)] == ["spec.schedulingPolicy"]
    assert "field is immutable" in causes(r)[0][1]
    condition = {"type": "PodGroupScheduled", "status": "True", "reason": "Scheduled", "message": "",
                 "lastTransitionTime": "2026-01-01T00:00:00Z"}
    with_status = {**stored, "status": {"conditions": [condition]}}
    assert "status" not in http.put(f"{PODGROUPS}/train-0", json=with_status).json()  # main endpoint: kept
    written = http.put(f"{PODGROUPS}/train-0/status", json=with_status)
    assert written.status_code == 200 and written.json()["status"]["conditions"][0]["reason"] == "Scheduled"
    bad = {**written.json(), "status": {"conditions": [{**condition, "status": "Maybe"}]}}
    r = http.put(f"{PODGROUPS}/train-0/status", json=bad)
    assert r.status_code == 422
    assert [f for f, _ in causes(r)] == ["status.conditions[0].status"]


def test_a_namespace_deleted_takes_its_workloads_and_pod_groups() -> None:
    c = gang_cluster()
    c.post("/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ml"}})
    c.post(f"{V1A2}/namespaces/ml/workloads", workload())
    c.post(f"{V1A2}/namespaces/ml/podgroups", pod_group())
    assert c.http.delete("/api/v1/namespaces/ml").status_code == 200
    c.settle()
    assert c.store.list("podgroups")[0] == [] and c.store.list("workloads")[0] == []
    assert c.http.get("/api/v1/namespaces/ml").status_code == 404


def test_a_pod_group_goes_with_the_workload_that_owns_it() -> None:
    c = gang_cluster()
    owner = c.post(WORKLOADS, workload())
    ref = {"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "Workload", "name": "train",
           "uid": owner["metadata"]["uid"], "controller": True}
    owned = pod_group()
    owned["metadata"]["ownerReferences"] = [ref]
    c.post(PODGROUPS, owned)
    c.settle()
    assert c.http.get(f"{PODGROUPS}/train-0").status_code == 200
    assert c.http.delete(f"{WORKLOADS}/train").status_code == 200
    c.settle()
    assert c.http.get(f"{PODGROUPS}/train-0").status_code == 404


def test_a_pod_cannot_join_a_group_without_a_name() -> None:
    http = api_client("ml", feature_gates=GATES)
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
           "spec": {"schedulingGroup": {"podGroupName": ""}, "containers": [{"name": "m", "image": "x"}]}}
    assert http.post("/api/v1/namespaces/ml/pods", json=pod).status_code == 422


def test_serve_refuses_feature_gates_as_simulate_does(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["serve", "--feature-gates", "GangScheduling=true"]) == 2
    assert capsys.readouterr().err.strip().endswith(
        "--feature-gates: GangScheduling is enabled, but depends on disabled features: GenericWorkload")
    assert main(["serve", "--feature-gates", "NoSuchGate=true"]) == 2
    assert "unrecognized feature gate: NoSuchGate" in capsys.readouterr().err


# --- the server's scheduler -----------------------------------------------------------------------------


def gang_cluster(gates: str = "GenericWorkload=true,GangScheduling=true", cpu: str = "8") -> Cluster:
    parsed = FeatureGates.parse(gates)
    c = Cluster.__new__(Cluster)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        c.app = create_app(SQLiteStore(":memory:"), feature_gates=parsed.enabled_names())
    c.http = TestClient(c.app)
    c.store = c.app.api.store
    c.manager = ControllerManager(c.store, Options(feature_gates=parsed))
    c.post("/api/v1/nodes", {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-1"},
                             "status": {"allocatable": {"cpu": cpu, "memory": "32Gi", "pods": "110"}}})
    return c


def member(name: str, cpu: str = "1", group: str = "train-0") -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"schedulingGroup": {"podGroupName": group}, "terminationGracePeriodSeconds": 0,
                     "containers": [{"name": "m", "image": "x:1", "resources": {"requests": {"cpu": cpu}}}]}}


def nodes(c: Cluster) -> dict[str, str | None]:
    return {p["metadata"]["name"]: p["spec"].get("nodeName") for p in c.pods()}


def scheduled_message(c: Cluster, name: str) -> str:
    conditions = c.get("pods", name)["status"]["conditions"]
    return next(x["message"] for x in conditions if x["type"] == "PodScheduled")


def pod_group_scheduled(c: Cluster, name: str = "train-0") -> dict[str, Any] | None:
    status = c.get("podgroups", name).get("status") or {}
    return next((x for x in status.get("conditions") or () if x["type"] == "PodGroupScheduled"), None)


def test_a_gang_binds_whole_once_its_last_pod_exists() -> None:
    c = gang_cluster()
    c.post(PODGROUPS, pod_group())
    for name in ("w-0", "w-1"):
        c.post("/api/v1/namespaces/default/pods", member(name))
    c.settle()
    assert nodes(c) == {"w-0": None, "w-1": None}
    # never tried, held at the queue's door by GangScheduling's PreEnqueue: kube-scheduler writes nothing
    assert [p["status"].get("conditions") for p in c.pods()] == [None, None] and c.events() == []
    assert pod_group_scheduled(c) is None
    # tried again when another pod goes (the same scheduler, not rebuilt), the two still count as two
    other = member("other")
    del other["spec"]["schedulingGroup"]
    c.post("/api/v1/namespaces/default/pods", other)
    c.settle()
    assert c.http.delete("/api/v1/namespaces/default/pods/other").status_code == 200
    c.settle()
    assert nodes(c) == {"w-0": None, "w-1": None}
    assert c.get("pods", "w-1")["status"].get("conditions") is None
    c.post("/api/v1/namespaces/default/pods", member("w-2"))
    c.settle()
    assert nodes(c) == {"w-0": "node-1", "w-1": "node-1", "w-2": "node-1"}
    condition = pod_group_scheduled(c)
    assert condition is not None and (condition["status"], condition["reason"]) == ("True", "Scheduled")
    assert condition["observedGeneration"] == 1 and condition["lastTransitionTime"]


def test_a_gang_that_cannot_fit_leaves_every_member_unbound() -> None:
    c = gang_cluster(cpu="8")
    c.post(PODGROUPS, pod_group())
    for name in ("w-0", "w-1", "w-2"):  # 3 x 3 CPUs on 8: two would fit, the gang does not
        c.post("/api/v1/namespaces/default/pods", member(name, cpu="3"))
    c.settle()
    assert nodes(c) == {"w-0": None, "w-1": None, "w-2": None}
    condition = pod_group_scheduled(c)
    assert condition is not None and (condition["status"], condition["reason"]) == ("False", "Unschedulable")
    assert condition["message"]


def test_gang_scheduling_off_binds_the_pods_that_fit_one_by_one() -> None:
    c = gang_cluster(gates="GenericWorkload=true", cpu="8")
    c.post(PODGROUPS, pod_group())
    for name in ("w-0", "w-1", "w-2"):
        c.post("/api/v1/namespaces/default/pods", member(name, cpu="3"))
    c.settle()
    assert sorted(n is not None for n in nodes(c).values()) == [False, True, True]


@pytest.mark.parametrize("cpu", ["1", "3"])
def test_the_server_places_a_gang_as_dralloc_simulate_does(cpu: str) -> None:
    gates = "GenericWorkload=true,GangScheduling=true"
    c = gang_cluster(gates=gates)
    c.post(PODGROUPS, pod_group())
    for name in ("w-0", "w-1", "w-2"):
        c.post("/api/v1/namespaces/default/pods", member(name, cpu=cpu))
    c.settle()
    stored = [*c.store.list("nodes")[0], *c.store.list("podgroups")[0],
              *[{**p, "spec": {k: v for k, v in p["spec"].items() if k != "nodeName"}, "status": {}}
                for p in c.pods()]]
    simulated = Simulator.from_objects([decode(o) for o in stored], feature_gates=FeatureGates.parse(gates))
    result = simulated.schedule()
    assert {p.key.split("/")[1]: p.node for p in result.pods} == nodes(c)
    assert [(g.name, g.placed) for g in result.pod_groups] == [("train-0", all(nodes(c).values()))]


def test_a_gang_with_a_rack_constraint_lands_in_one_rack() -> None:
    c = gang_cluster(gates="GenericWorkload=true,GangScheduling=true,TopologyAwareWorkloadScheduling=true",
                     cpu="2")  # node-1, unlabelled: never a candidate
    for name, rack in (("a-1", "rack-a"), ("b-1", "rack-b"), ("b-2", "rack-b")):
        c.post("/api/v1/nodes", {"apiVersion": "v1", "kind": "Node",
                                 "metadata": {"name": name, "labels": {"example.com/rack": rack}},
                                 "status": {"allocatable": {"cpu": "2", "memory": "32Gi", "pods": "110"}}})
    c.post(PODGROUPS, pod_group(schedulingConstraints={"topology": [{"key": "example.com/rack"}]}))
    for name in ("w-0", "w-1", "w-2"):  # 3 x 1 CPU: only rack-b (4 CPUs) holds the whole gang
        c.post("/api/v1/namespaces/default/pods", member(name))
    c.settle()
    assert set(nodes(c).values()) <= {"b-1", "b-2"} and None not in nodes(c).values()


# --- the long-lived scheduler and PodGroups --------------------------------------------------------------


def groups_view(sim: Simulator) -> tuple[Any, ...]:
    """What the scheduler holds of pod groups: each group as stored or as the last run left it (its spec and
    status), each group's members (those it has), and the pods on each node."""
    states = sim.pod_groups.states
    groups = {k: (to_dict(g.spec), to_dict(g.status) if g.status else None) for k, g in states.groups.items()}
    members = {k: sorted(p.key for p in m) for k, m in states.members.items() if m}
    on_nodes = {n.name: sorted(p.key for p in n.pods) for n in sim.snapshot.nodes}
    return groups, members, on_nodes


GROUP_STEPS = st.lists(st.one_of(
    st.tuples(st.just("group"), st.integers(0, 2)),
    st.tuples(st.just("member"), st.integers(0, 5)),
    st.tuples(st.just("delete-pod"), st.integers(0, 5)),
    st.tuples(st.just("delete-group"), st.integers(0, 2)),
    st.tuples(st.just("status"), st.integers(0, 2)),
), min_size=1, max_size=12)


@pytest.mark.slow
@settings(max_examples=15, deadline=None)
@given(steps=GROUP_STEPS)
def test_the_long_lived_scheduler_holds_the_pod_groups_one_built_from_the_store_holds(
        steps: list[tuple[str, int]]) -> None:
    c = gang_cluster(cpu="3")
    loop = c.manager.scheduler
    for step, (action, n) in enumerate(steps):
        group, pod = f"g{n}", f"p{n}"
        if action == "group" and c.http.get(f"{PODGROUPS}/{group}").status_code == 404:
            c.post(PODGROUPS, pod_group(group, min_count=2))
        elif action == "member" and c.http.get(f"/api/v1/namespaces/default/pods/{pod}").status_code == 404:
            c.post("/api/v1/namespaces/default/pods", member(pod, group=f"g{n % 3}"))
        elif action == "delete-pod":
            c.http.delete(f"/api/v1/namespaces/default/pods/{pod}")
        elif action == "delete-group":
            c.http.delete(f"{PODGROUPS}/{group}")
        elif action == "status" and c.http.get(f"{PODGROUPS}/{group}").status_code == 200:
            current = c.get("podgroups", group)  # another client's condition, beside the scheduler's
            status = current.get("status") or {}
            others = [x for x in status.get("conditions") or () if x["type"] != "Example"]
            current["status"] = {**status, "conditions": [*others, {
                "type": "Example", "status": "True", "reason": "Step", "message": str(step),
                "lastTransitionTime": "2026-01-01T00:00:00Z"}]}
            assert c.http.put(f"{PODGROUPS}/{group}/status", json=current).status_code == 200
        c.settle(passes=10)
        snap = Snapshot(c.manager.mirror)
        running, assumed = loop.bound_pods(snap)
        kept = loop.live.sync(snap, running, assumed)
        fresh = LiveScheduler(gates=loop.live.gates).sync(snap, running, assumed)
        assert groups_view(kept) == groups_view(fresh)
    assert loop.live.builds <= 1  # PodGroup writes, the scheduler's own included, never built it again


def test_a_condition_the_scheduler_could_not_write_is_read_back_from_the_store(
        monkeypatch: pytest.MonkeyPatch) -> None:
    c = gang_cluster(cpu="8")
    c.post(PODGROUPS, pod_group())
    loop = c.manager.scheduler
    real_update = loop.writer.update

    def group_gone_meanwhile(resource: str, *args: Any, **kwargs: Any) -> Any:
        return None if resource == "podgroups" else real_update(resource, *args, **kwargs)

    monkeypatch.setattr(loop.writer, "update", group_gone_meanwhile)
    for name in ("w-0", "w-1", "w-2"):
        c.post("/api/v1/namespaces/default/pods", member(name, cpu="3"))  # 9 CPUs on 8: unschedulable
    c.settle()
    monkeypatch.undo()
    assert pod_group_scheduled(c) is None  # computed, never written
    snap = Snapshot(c.manager.mirror)
    running, assumed = loop.bound_pods(snap)
    kept = loop.live.sync(snap, running, assumed)
    assert groups_view(kept) == groups_view(LiveScheduler(gates=loop.live.gates).sync(snap, running, assumed))


# --- workload-aware preemption in the server ------------------------------------------------------------

PREEMPTION_GATES = "GenericWorkload=true,GangScheduling=true,WorkloadAwarePreemption=true"


def test_a_pod_group_gets_its_priority_from_its_class_on_create_with_workload_aware_preemption() -> None:
    c = gang_cluster(gates=PREEMPTION_GATES)
    high = c.priority_class(1000)
    created = c.post(PODGROUPS, pod_group("high", priorityClassName=high))
    assert created["spec"]["priority"] == 1000
    assert c.post(PODGROUPS, pod_group("plain"))["spec"]["priority"] == 0  # no class, no global default
    r = c.http.post(PODGROUPS, json=pod_group("wrong", priorityClassName=high, priority=7))
    assert r.status_code == 403 and "podgroups.scheduling.k8s.io" in r.json()["message"]
    missing = c.http.post(PODGROUPS, json=pod_group("missing", priorityClassName="no-such-class"))
    assert missing.status_code == 403
    assert "no PriorityClass with name no-such-class was found" in missing.json()["message"]


def test_without_the_gate_a_pod_group_is_not_admitted_for_priority() -> None:
    c = gang_cluster(gates="GenericWorkload=true,GangScheduling=true")
    created = c.post(PODGROUPS, pod_group("plain"))
    assert "priority" not in created["spec"]


def test_a_higher_priority_gang_evicts_a_pod_group_whole_through_the_api() -> None:
    c = gang_cluster(gates=PREEMPTION_GATES, cpu="4")
    low, high = c.priority_class(10), c.priority_class(1000)
    c.post(PODGROUPS, pod_group("sweep", min_count=2, priorityClassName=low, disruptionMode="PodGroup"))
    for name in ("s-0", "s-1"):
        c.post("/api/v1/namespaces/default/pods", {**member(name, cpu="2", group="sweep")})
    c.settle()
    assert nodes(c) == {"s-0": "node-1", "s-1": "node-1"}
    deadline = c.post(PODGROUPS, pod_group("deadline", min_count=1, priorityClassName=high))
    c.post("/api/v1/namespaces/default/pods", member("d-0", cpu="3", group="deadline"))
    c.settle()
    # both of the sweep's pods go (its disruption mode is the whole group), though one would have made room
    assert nodes(c) == {"d-0": "node-1"}
    events = c.events("Preempted")
    assert sorted(e["involvedObject"]["name"] for e in events) == ["s-0", "s-1"]
    assert {e["message"] for e in events} == {f"Preempted by podgroup {deadline['metadata']['uid']} on node cluster"}
    assert {e["related"]["kind"] for e in events} == {"PodGroup"}


# --- a PodGroup's own claims (DRAWorkloadResourceClaims) ---------------------------------------------------

def test_the_resourceclaim_controller_makes_a_pod_groups_claim_and_its_members_share_it() -> None:
    c = gang_cluster(gates="GenericWorkload=true,GangScheduling=true,DRAWorkloadResourceClaims=true")
    c.post(f"{R}/deviceclasses", CLASS)
    c.post(f"{R}/namespaces/default/resourceclaimtemplates", TEMPLATE)
    c.post(f"{R}/resourceslices", slice_(1))
    group = c.post(PODGROUPS, pod_group(min_count=2, resourceClaims=[{"name": "gpu",
                                                                       "resourceClaimTemplateName": "one-gpu"}]))
    for name in ("w-0", "w-1"):
        pod = member(name)
        pod["spec"]["resourceClaims"] = [{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}]
        c.post("/api/v1/namespaces/default/pods", pod)
    c.settle()
    (claim,) = c.claims()  # one claim for the group, none per pod
    assert claim["metadata"]["generateName"] == "train-0-gpu-"
    assert claim["metadata"]["ownerReferences"] == [{
        "apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup", "name": "train-0",
        "uid": group["metadata"]["uid"], "controller": True, "blockOwnerDeletion": True}]
    assert claim["metadata"]["annotations"]["resource.kubernetes.io/podgroup-claim-name"] == "gpu"
    name = claim["metadata"]["name"]
    assert c.get("podgroups", "train-0")["status"]["resourceClaimStatuses"] == [
        {"name": "gpu", "resourceClaimName": name}]
    for pod in c.pods():
        assert pod["status"]["resourceClaimStatuses"] == [{"name": "gpu", "resourceClaimName": name}]
    assert nodes(c) == {"w-0": "node-1", "w-1": "node-1"}
    assert [r["uid"] for r in claim["status"]["reservedFor"]] == [group["metadata"]["uid"]]
