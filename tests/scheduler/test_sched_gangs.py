"""Pod groups: the GangScheduling barrier, the all-or-nothing pod group cycle, topology placements, gates."""

from __future__ import annotations

import io
import json

import pytest
from gang_builders import ALL_ON, by_name, members, pod_group, rack_nodes, simulate
from sched_builders import GPU_CLASS, GPU_TEMPLATE, gpu_slice

from dralloc.api import codec
from dralloc.scheduler.features import FeatureGateError, FeatureGates
from dralloc.scheduler.plugins.gang_scheduling import GROUP_MISSING, TOO_FEW_PODS
from dralloc.simulator import Simulator

GANG_ONLY = "GenericWorkload=true,GangScheduling=true"
# a member that does not fit runs its own PostFilter (WorkloadAwarePreemption off): no lower-priority pods here
NO_VICTIMS = (" no new claims to deallocate, preemption: 0/2 nodes are available: 2 No preemption victims found "
              "for incoming pod.")


# ---------------------------------------------------------------------- PreEnqueue barrier
def test_a_pod_of_a_missing_pod_group_waits_at_the_queue_door() -> None:
    result = simulate(rack_nodes(1, 2), members("ghost", 2), gates=GANG_ONLY)
    for p in result.pods:
        assert p.status == "unschedulable"
        assert p.message == GROUP_MISSING.format(name='"ghost"')
        assert p.attempts == 0
    assert p.message == 'waiting for pods\'s pod group "ghost" to appear in scheduling queue'


def test_a_gang_with_fewer_pods_than_min_count_is_never_tried() -> None:
    result = simulate(rack_nodes(1, 4), pod_group("job", 4), members("job", 3), gates=GANG_ONLY)
    assert {p.message for p in result.pods} == {TOO_FEW_PODS}
    assert all(p.attempts == 0 for p in result.pods)
    (row,) = result.pod_groups
    assert not row.placed and row.message == TOO_FEW_PODS


def test_a_basic_pod_group_has_no_barrier() -> None:
    result = simulate(rack_nodes(1, 4), pod_group("job"), members("job", 3), gates=GANG_ONLY)
    assert all(p.status == "scheduled" for p in result.pods)


# ---------------------------------------------------------------------- all or nothing
def test_a_gang_that_does_not_fit_whole_binds_no_pod() -> None:
    # 2 nodes × 4 CPUs hold 8 one-CPU pods; the gang needs 9
    result = simulate(rack_nodes(1, 2), pod_group("job", 9), members("job", 9), gates=GANG_ONLY)
    pods = by_name(result)
    assert all(p.status == "unschedulable" and p.node is None for p in result.pods)
    # the 8 that fit waited at Permit for a 9th; the group is not feasible
    assert pods["job-0"].message == "pod group is unschedulable, waiting for minCount pods from a gang to be scheduled"
    assert pods["job-8"].message == ("0/2 nodes are available: 2 Insufficient cpu." + NO_VICTIMS)
    row = result.pod_groups[0]
    assert (row.placed, row.scheduled) == (False, 0)


def test_without_gang_scheduling_the_same_pods_bind_one_by_one() -> None:
    result = simulate(rack_nodes(1, 2), pod_group("job", 9), members("job", 9), gates="GenericWorkload=true")
    assert sum(p.status == "scheduled" for p in result.pods) == 8


def test_a_failed_gang_leaves_its_room_to_the_next_pods() -> None:
    result = simulate(rack_nodes(1, 2), pod_group("big", 9), members("big", 9), members_plain(8),
                      gates=GANG_ONLY)
    assert sum(p.status == "scheduled" for p in result.pods if p.name.startswith("plain")) == 8


def members_plain(count: int) -> str:
    docs = [f"apiVersion: v1\nkind: Pod\nmetadata: {{name: plain-{i}}}\nspec:\n"
            f"  containers: [{{name: c, resources: {{requests: {{cpu: \"1\"}}}}}}]\n" for i in range(count)]
    return "---\n".join(docs)


def test_members_above_min_count_bind_when_the_gang_is_feasible() -> None:
    # minCount 4 of 10 pods; 8 fit: those 8 bind, the other 2 keep their own FitError
    result = simulate(rack_nodes(1, 2), pod_group("job", 4), members("job", 10), gates=GANG_ONLY)
    scheduled = [p for p in result.pods if p.status == "scheduled"]
    failed = [p for p in result.pods if p.status != "scheduled"]
    assert len(scheduled) == 8 and len(failed) == 2
    assert {p.message for p in failed} == {"0/2 nodes are available: 2 Insufficient cpu." + NO_VICTIMS}
    row = result.pod_groups[0]
    assert row.placed and row.scheduled == 8
    group = result.pod_group_objects[0]
    assert group.status is not None and group.status.conditions is not None
    cond = group.status.conditions[0]
    assert (cond.type, cond.status, cond.reason) == ("PodGroupScheduled", "True", "Scheduled")


def test_running_members_count_toward_min_count() -> None:
    bound = members("job", 2, prefix="old", node_name="r0-n0")
    result = simulate(rack_nodes(1, 1), pod_group("job", 4), bound, members("job", 2, prefix="new"),
                      gates=GANG_ONLY)
    assert [p.status for p in result.pods if p.name.startswith("new")] == ["scheduled", "scheduled"]


# ---------------------------------------------------------------------- queue order
def test_gangs_compete_in_queue_order_and_the_later_one_waits_whole() -> None:
    # room for 8 pods: the higher-priority gang takes it, the other pends as a whole
    result = simulate(rack_nodes(1, 2), pod_group("low", 6), members("low", 6, priority=1),
                      pod_group("high", 6), members("high", 6, priority=10), gates=GANG_ONLY)
    pods = by_name(result)
    assert all(pods[f"high-{i}"].status == "scheduled" for i in range(6))
    assert all(pods[f"low-{i}"].status == "unschedulable" for i in range(6))
    # every member is tried: the first two fit and wait at Permit, the other four do not fit
    assert pods["low-0"].message == "pod group is unschedulable, waiting for minCount pods from a gang to be scheduled"
    assert all(pods[f"low-{i}"].message == "0/2 nodes are available: 2 Insufficient cpu." + NO_VICTIMS
               for i in range(2, 6))


# ---------------------------------------------------------------------- topology placement
def test_a_gang_with_a_rack_constraint_lands_in_one_rack() -> None:
    result = simulate(rack_nodes(3, 2), pod_group("job", 8, rack=True), members("job", 8))
    nodes = {p.node for p in result.pods}
    assert all(p.status == "scheduled" for p in result.pods)
    racks = {n.split("-")[0] for n in nodes if n}
    assert len(racks) == 1
    assert result.pod_groups[0].domain == f"rack-{next(iter(racks))[1:]}"


def test_without_the_topology_gate_the_constraint_is_ignored() -> None:
    # 12 pods need 1.5 racks: allowed to spread when topology-aware scheduling is off
    result = simulate(rack_nodes(3, 2), pod_group("job", 12, rack=True), members("job", 12), gates=GANG_ONLY)
    assert all(p.status == "scheduled" for p in result.pods)


def test_a_gang_no_rack_holds_pends_whole_with_the_placements_message() -> None:
    result = simulate(rack_nodes(3, 2), pod_group("job", 12, rack=True), members("job", 12))
    assert all(p.status == "unschedulable" for p in result.pods)
    expected = "0/3 placements are available, first placement status: pod group is unschedulable"
    # the members read what the first placement gave them: waiting at Permit, or their own FitError
    assert by_name(result)["job-0"].message == "pod group is unschedulable, waiting for minCount pods from a gang to be scheduled"
    # a member of a constrained group does not preempt for itself under topology-aware scheduling
    assert by_name(result)["job-8"].message == ("0/2 nodes are available: 2 Insufficient cpu. no new claims to "
                                                "deallocate, preemption: not eligible due to placement-based pod "
                                                "group scheduling limitation")
    row = result.pod_groups[0]
    assert (row.placed, row.domain, row.message) == (False, None, expected)


def test_unlabelled_nodes_are_in_no_placement() -> None:
    # 10 pods fit on 1 rack (8) + the loose nodes, never on a rack alone
    result = simulate(rack_nodes(1, 2, unlabelled=2), pod_group("job", 10, rack=True), members("job", 10))
    assert all(p.status == "unschedulable" for p in result.pods)
    assert result.pod_groups[0].message == "0/1 placements are available, first placement status: pod group is unschedulable"


def test_placements_prefer_the_domain_that_holds_more_members() -> None:
    # rack-0 is half full: a basic group of 8 fits whole only in rack-1 (PodGroupPodsCount)
    filler = members_plain(4).replace("plain-", "fill-").replace("spec:\n", "spec:\n  nodeName: r0-n0\n")
    result = simulate(rack_nodes(2, 2), filler, pod_group("job", rack=True), members("job", 8))
    assert {p.node.split("-")[0] for p in result.pods if p.name.startswith("job") and p.node} == {"r1"}


def test_a_member_already_running_pins_the_domain() -> None:
    old = members("job", 1, prefix="old", node_name="r1-n0")
    result = simulate(rack_nodes(3, 2), pod_group("job", 3, rack=True), old, members("job", 2, prefix="new"))
    assert {p.node.split("-")[0] for p in result.pods if p.node} == {"r1"}


# ---------------------------------------------------------------------- gates and determinism
def test_with_generic_workload_off_groups_are_ignored() -> None:
    result = simulate(rack_nodes(1, 2), members("ghost", 3), pod_group("job", 9), members("job", 9),
                      gates="")
    assert sum(p.status == "scheduled" for p in result.pods) == 8
    assert result.pod_groups == []
    assert "podGroups" not in result.to_dict()


def test_gates_need_their_dependencies() -> None:
    with pytest.raises(FeatureGateError, match="GangScheduling is enabled, but depends on disabled features: "
                                               "GenericWorkload"):
        FeatureGates.parse("GangScheduling=true")
    assert FeatureGates.parse(ALL_ON).enabled("TopologyAwareWorkloadScheduling")
    assert not FeatureGates().enabled("GenericWorkload")


def test_the_same_input_gives_the_same_result() -> None:
    docs = (rack_nodes(6, 2), pod_group("a", 8, rack=True), members("a", 8), pod_group("b", 8, rack=True),
            members("b", 8), pod_group("c", 4, rack=True), members("c", 6))
    first = json.dumps(simulate(*docs, seed=3).to_dict(), sort_keys=True)
    assert first == json.dumps(simulate(*docs, seed=3).to_dict(), sort_keys=True)
    rows = json.loads(first)["podGroups"]
    assert [r["name"] for r in rows] == ["a", "b", "c"] and all(r["placed"] for r in rows)


# ---------------------------------------------------------------------- devices
def gpu_members(group: str, count: int) -> str:
    return members(group, count).replace(
        "  containers:", "  resourceClaims: [{name: gpu, resourceClaimTemplateName: one-gpu}]\n  containers:")


def test_devices_a_held_member_took_are_taken_for_the_next_members() -> None:
    # one node with 2 GPUs: a gang of 3 one-GPU pods cannot fit, a gang of 2 gets both GPUs
    cluster = (rack_nodes(1, 1, cpu="64"), gpu_slice("r0-n0", 2), GPU_CLASS, GPU_TEMPLATE)
    three = simulate(*cluster, pod_group("job", 3), gpu_members("job", 3), gates=GANG_ONLY)
    assert all(p.status == "unschedulable" for p in three.pods)
    assert by_name(three)["job-2"].message == ("0/1 nodes are available: 1 cannot allocate all claims. still not "
                                               "schedulable, preemption: 0/1 nodes are available: 1 Preemption is "
                                               "not helpful for scheduling.")
    assert all(c.status is None or c.status.allocation is None for c in three.claims)
    two = simulate(*cluster, pod_group("job", 2), gpu_members("job", 2), gates=GANG_ONLY)
    devices = {r.device for c in two.claims if c.status and c.status.allocation
               for r in c.status.allocation.devices.results or ()}
    assert devices == {"gpu-0", "gpu-1"}


CLAIMS_ON = GANG_ONLY + ",DRAWorkloadResourceClaims=true"


def test_a_pod_group_claim_is_made_once_and_shared_by_every_member() -> None:
    # one node with one device: the group's claim is allocated once and every member uses it
    group = pod_group("job", 3) + "  resourceClaims: [{name: gpu, resourceClaimTemplateName: one-gpu}]\n"
    cluster = (rack_nodes(1, 1, cpu="64"), gpu_slice("r0-n0", 1), GPU_CLASS, GPU_TEMPLATE, group,
               gpu_members("job", 3))
    result = simulate(*cluster, gates=CLAIMS_ON)
    assert all(p.status == "scheduled" for p in result.pods)
    (claim,) = result.claims
    assert claim.metadata.name is not None and claim.metadata.name.startswith("job-gpu-")
    assert claim.metadata.annotations == {"resource.kubernetes.io/podgroup-claim-name": "gpu"}
    owner = (claim.metadata.owner_references or [])[0]
    assert (owner.api_version, owner.kind, owner.name, owner.controller) == \
        ("scheduling.k8s.io/v1alpha2", "PodGroup", "job", True)
    assert claim.status is not None and claim.status.reserved_for is not None
    assert [(r.api_group, r.resource, r.name) for r in claim.status.reserved_for] == \
        [("scheduling.k8s.io", "podgroups", "job")]
    statuses = {s.resource_claim_name for p in result.pods for s in p.pod.status.resource_claim_statuses or ()}
    assert statuses == {claim.metadata.name}
    group_status = result.pod_group_objects[0].status
    assert group_status is not None and group_status.resource_claim_statuses is not None
    assert group_status.resource_claim_statuses[0].resource_claim_name == claim.metadata.name
    # without the gate each member makes its own claim: one device holds one pod, the gang of 3 fails
    alone = simulate(*cluster, gates=GANG_ONLY)
    assert all(p.status == "unschedulable" for p in alone.pods) and len(alone.claims) == 3


def test_a_full_pod_group_claim_still_serves_the_group_it_is_reserved_for() -> None:
    # the group's claim, allocated, holds 256 consumers: the group's one entry and 255 others. Its members add
    # nothing (the group is their consumer), so they bind; a pod of no group would be the 257th.
    group = (pod_group("job", 2) + "  resourceClaims: [{name: gpu, resourceClaimTemplateName: one-gpu}]\n"
             + "status:\n  resourceClaimStatuses: [{name: gpu, resourceClaimName: job-gpu-x1}]\n"
             ).replace("name: job,", "name: job, uid: job-uid,")
    others = ", ".join(f"{{resource: pods, name: o{i}, uid: o-{i}}}" for i in range(255))
    claim = f"""\
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata:
  name: job-gpu-x1
  namespace: default
  annotations: {{resource.kubernetes.io/podgroup-claim-name: gpu}}
  ownerReferences: [{{apiVersion: scheduling.k8s.io/v1alpha2, kind: PodGroup, name: job, uid: job-uid, controller: true}}]
spec:
  devices:
    requests: [{{name: gpu, exactly: {{deviceClassName: gpu}}}}]
status:
  reservedFor: [{{apiGroup: scheduling.k8s.io, resource: podgroups, name: job, uid: job-uid}}, {others}]
  allocation:
    devices:
      results: [{{request: gpu, driver: gpu.example.com, pool: r0-n0, device: gpu-0}}]
    nodeSelector:
      nodeSelectorTerms: [{{matchFields: [{{key: metadata.name, operator: In, values: [r0-n0]}}]}}]
"""
    cluster = (rack_nodes(1, 1, cpu="64"), gpu_slice("r0-n0", 1), GPU_CLASS, GPU_TEMPLATE, group, claim,
               gpu_members("job", 2))
    result = simulate(*cluster, gates=CLAIMS_ON)
    assert [(p.name, p.status) for p in result.pods] == [("job-0", "scheduled"), ("job-1", "scheduled")]
    (stored,) = result.claims
    assert stored.status is not None and stored.status.reserved_for is not None
    assert len(stored.status.reserved_for) == 256 and stored.status.reserved_for[0].name == "job"


# ---------------------------------------------------------------------- --max for a gang
def sim_of(*docs: str, gates: str = ALL_ON) -> Simulator:
    objects = codec.load(io.StringIO("---\n".join(docs)))
    return Simulator.from_objects(objects, feature_gates=FeatureGates.parse(gates))


def test_max_counts_whole_copies_of_a_gang_per_domain() -> None:
    # 3 racks of 8 one-CPU slots: the job takes one, 2 more copies fit, one per rack left
    sim = sim_of(rack_nodes(3, 2), pod_group("job", 8, rack=True), members("job", 8))
    sim.schedule()
    count, per_domain, why = sim.max_copies("PodGroup/job")
    assert count == 2 and sorted(per_domain.values()) == [1, 1] and len(per_domain) == 2
    assert why == "0/3 placements are available, first placement status: pod group is unschedulable"


def test_max_for_a_gang_without_topology_counts_all_or_nothing_copies() -> None:
    # 12 free slots after the first job: one more 8-pod gang fits, not 1.5
    sim = sim_of(rack_nodes(1, 5), pod_group("job", 8), members("job", 8), gates=GANG_ONLY)
    sim.schedule()
    count, per_domain, _ = sim.max_copies("job")
    assert (count, per_domain) == (1, {"*": 1})


# ---------------------------------------------------------------------- planning
def test_the_planner_adds_nodes_until_the_whole_gang_fits() -> None:
    from sched_builders import node

    from dralloc.simulator.planner import plan_scale_up
    from dralloc.simulator.planner.templates import template_from_objects
    from dralloc.simulator.planner.trial import PlanSettings

    # 5 one-CPU slots, a gang of 9: two 2-CPU nodes make 9; with one (7 slots) no member would bind
    objects = codec.load(io.StringIO("---\n".join([rack_nodes(1, 1, cpu="5"), pod_group("job", 9),
                                                   members("job", 9)])))
    tmpl = template_from_objects("small", codec.load(io.StringIO(node("small-template", cpu="2"))))
    gangs = PlanSettings(Simulator, feature_gates=FeatureGates.parse(GANG_ONLY))
    plan = plan_scale_up(objects, [tmpl], settings=gangs)
    assert plan.add == {"small": 2} and plan.unschedulable == 0
    assert sum(p.node is not None and p.node.startswith("small") for p in plan.pods) == 4
    from dralloc.simulator.planner.trial import run_trial

    one = run_trial(objects, gangs, add={tmpl: 1})
    assert len(one.result.unschedulable) == 9


def test_finished_members_do_not_count_toward_the_barrier() -> None:
    done = members("job", 2, prefix="done").replace("spec:\n", "status: {phase: Succeeded}\nspec:\n")
    result = simulate(rack_nodes(1, 2), pod_group("job", 4), done, members("job", 2, prefix="new"),
                      gates=GANG_ONLY)
    assert {p.message for p in result.pods if p.name.startswith("new")} == {TOO_FEW_PODS}


def test_sharing_one_evaluation_among_alike_racks_changes_no_outcome(monkeypatch: pytest.MonkeyPatch) -> None:
    from dralloc.scheduler.schedule_group import PodGroupCycle

    docs = [rack_nodes(5, 2, cpu="6"), rack_nodes(2, 3, cpu="4").replace("r0-", "s0-").replace("r1-", "s1-")
            .replace("rack-0", "rack-s0").replace("rack-1", "rack-s1")]
    for g, (count, cpu) in enumerate([(8, "1"), (3, "2"), (20, "1"), (12, "1"), (5, "2"), (8, "1"), (6, "1"),
                                      (2, "4")]):
        docs += [pod_group(f"g{g}", count, rack=True), members(f"g{g}", count, cpu=cpu)]
    for seed in (0, 1, 2):
        shared = json.dumps(simulate(*docs, seed=seed).to_dict(), sort_keys=True)
        monkeypatch.setattr(PodGroupCycle, "_signatures", lambda self, placements, pods: None)
        alone = json.dumps(simulate(*docs, seed=seed).to_dict(), sort_keys=True)
        monkeypatch.undo()
        assert shared == alone
        assert any(r["placed"] for r in json.loads(shared)["podGroups"])
        assert not all(r["placed"] for r in json.loads(shared)["podGroups"])


def test_a_group_split_between_two_profiles_is_an_error() -> None:
    from dralloc.scheduler.profile import Profile

    other = members("job", 1, prefix="odd").replace("spec:\n", "spec:\n  schedulerName: gpu-scheduler\n")
    objects = codec.load(io.StringIO("---\n".join([rack_nodes(1, 2), pod_group("job", 2), members("job", 1),
                                                   other])))
    sim = Simulator.from_objects(objects, feature_gates=FeatureGates.parse(GANG_ONLY),
                                 profiles=[Profile("gpu-scheduler")])
    result = sim.schedule()
    assert [p.status for p in result.pods] == ["error", "error"]
    assert result.pods[0].message == ('all pods in a single pod group should have the same .spec.schedulerName '
                                      'set, got: "gpu-scheduler" and "default-scheduler"')


def test_the_json_rows_carry_the_pod_group_scheduled_condition() -> None:
    from datetime import UTC, datetime

    objects = codec.load(io.StringIO("---\n".join([rack_nodes(1, 1), pod_group("big", 9), members("big", 9)])))
    sim = Simulator(*_nodes_and_pods(objects), pod_groups=[o for o in objects if type(o).__name__ == "PodGroup"],
                    feature_gates=FeatureGates.parse(GANG_ONLY), now=datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC))
    (row,) = sim.schedule().to_dict()["podGroups"]
    assert row["conditions"] == [{"type": "PodGroupScheduled", "status": "False", "reason": "Unschedulable",
                                  "lastTransitionTime": "2026-01-02T03:04:05Z", "message": row["message"]}]
    assert row["message"] == "pod group is unschedulable"


def _nodes_and_pods(objects: list) -> tuple[list, list]:
    return ([o for o in objects if type(o).__name__ == "Node"], [o for o in objects if type(o).__name__ == "Pod"])


# ---------------------------------------------------------------------- 1.36's group algorithm, to the letter
def test_an_unconstrained_group_under_topology_scheduling_runs_the_placement_algorithm_over_one_placement() -> None:
    # 2 nodes × 4 CPUs hold 8 one-CPU pods; the gang needs 9 and has no topology constraint
    result = simulate(rack_nodes(1, 2), pod_group("job", 9), members("job", 9), gates=ALL_ON)
    (row,) = result.pod_groups
    assert row.message == "0/1 placements are available, first placement status: pod group is unschedulable"
    assert row.domain is None
    # placed, an unconstrained group has no domain either
    placed = simulate(rack_nodes(1, 2), pod_group("job", 8), members("job", 8), gates=ALL_ON)
    assert placed.pod_groups[0].placed and placed.pod_groups[0].domain is None


def test_a_pending_gangs_table_row_counts_its_members_reasons() -> None:
    from dralloc.cli.simulate import table

    result = simulate(rack_nodes(1, 2), pod_group("job", 9), members("job", 9), gates=GANG_ONLY)
    (row,) = [line for line in table(result).splitlines() if line.startswith("podgroup")]
    assert row.endswith("0/9 pods (minCount 9): pod group is unschedulable; members: "
                        "8 × pod group is unschedulable, waiting for minCount pods from a gang to be scheduled; "
                        "1 × 0/2 nodes are available: 2 Insufficient cpu." + NO_VICTIMS)
