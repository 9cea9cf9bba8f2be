"""Workload-aware preemption (gate WorkloadAwarePreemption, kube-scheduler 1.36): a pod group that cannot be
placed preempts across the cluster — PodGroup-mode victims whole, Pod-mode ones pod by pod, lower priority only,
PodDisruptionBudgets respected — and its victims are evicted as per-pod preemption evicts them."""

from __future__ import annotations

import io
import json
from typing import Any

from gang_builders import by_name, members, rack_nodes
from hypothesis import given, settings
from hypothesis import strategies as st

from dralloc.api import codec
from dralloc.scheduler.config import config_from_dict
from dralloc.scheduler.features import FeatureGates
from dralloc.simulator import Simulator
from dralloc.simulator.result import SimulationResult

WAP = "GenericWorkload=true,GangScheduling=true,WorkloadAwarePreemption=true"
GANG_ONLY = "GenericWorkload=true,GangScheduling=true"
NO_VICTIMS = "No preemption victims found for incoming preemptor"


def group(name: str, min_count: int, priority: int | None = None, mode: str | None = None,
          class_name: str | None = None, rack: bool = False) -> str:
    text = (f"apiVersion: scheduling.k8s.io/v1alpha2\nkind: PodGroup\nmetadata: {{name: {name}, namespace: default}}\n"
            f"spec:\n  schedulingPolicy: {{gang: {{minCount: {min_count}}}}}\n")
    if priority is not None:
        text += f"  priority: {priority}\n"
    if mode is not None:
        text += f"  disruptionMode: {mode}\n"
    if class_name is not None:
        text += f"  priorityClassName: {class_name}\n"
    if rack:
        text += "  schedulingConstraints: {topology: [{key: example.com/rack}]}\n"
    return text


def running_gang(mode: str | None, priority: int = 1) -> list[str]:
    """A gang of 8 one-CPU pods filling two 4-CPU nodes."""
    return [group("low", 8, priority, mode),
            members("low", 4, priority=priority, node_name="r0-n0", prefix="low-a"),
            members("low", 4, priority=priority, node_name="r0-n1", prefix="low-b")]


def run(*docs: str, gates: str = WAP, seed: int = 0, config: Any = None,
        terminate_at: str | None = None) -> SimulationResult:
    objects: list[Any] = codec.load(io.StringIO("---\n".join(docs)))
    return Simulator.from_objects(objects, seed=seed, feature_gates=FeatureGates.parse(gates), config=config,
                                  victims_terminate_at=terminate_at).schedule()


def evicted(result: SimulationResult) -> list[str]:
    return [e.name for e in result.evicted]


def row(result: SimulationResult, name: str) -> Any:
    return next(r for r in result.pod_groups if r.name == name)


# ---------------------------------------------------------------------- preemption units
def test_a_high_priority_gang_preempts_a_pod_group_mode_gang_whole() -> None:
    # 4 CPUs are enough for the new gang, but the running one may only be disrupted as a whole
    result = run(rack_nodes(1, 2), *running_gang("PodGroup"), group("high", 4, 10), members("high", 4, priority=10))
    pods = by_name(result)
    assert sorted(evicted(result)) == [f"low-{s}-{i}" for s in "ab" for i in range(4)]
    assert all(pods[f"high-{i}"].status == "scheduled" for i in range(4))
    assert pods["low-a-0"].message == "preempted by PodGroup/default/high on node r0-n0"
    assert {e.by for e in result.evicted} == {"PodGroup/default/high"}
    assert row(result, "high").placed


def test_pod_mode_evicts_only_the_pods_needed() -> None:
    # units are single pods: the more important (first listed) are reprieved while the gang still fits
    result = run(rack_nodes(1, 2), *running_gang("Pod"), group("high", 4, 10), members("high", 4, priority=10))
    assert evicted(result) == ["low-b-0", "low-b-1", "low-b-2", "low-b-3"]
    assert {by_name(result)[f"high-{i}"].node for i in range(4)} == {"r0-n1"}


def test_disruption_mode_unset_is_pod_mode() -> None:
    result = run(rack_nodes(1, 2), *running_gang(None), group("high", 4, 10), members("high", 4, priority=10))
    assert len(evicted(result)) == 4


def test_a_pod_group_mode_victim_weighs_with_its_groups_priority() -> None:
    # the pods say 1, their PodGroup says 10: as one unit they are not lower than the preemptor
    docs = [group("low", 8, 10, "PodGroup"),
            members("low", 4, priority=1, node_name="r0-n0", prefix="low-a"),
            members("low", 4, priority=1, node_name="r0-n1", prefix="low-b")]
    result = run(rack_nodes(1, 2), *docs, group("high", 4, 10), members("high", 4, priority=10))
    assert not result.evicted


# ---------------------------------------------------------------------- priorities and eligibility
def test_no_preemption_when_the_victims_are_not_of_lower_priority() -> None:
    result = run(rack_nodes(1, 2), *running_gang("PodGroup", priority=10), group("high", 4, 10),
                 members("high", 4, priority=10))
    assert not result.evicted
    assert row(result, "high").message == ("pod group is unschedulable, "
                                           + NO_VICTIMS)
    # a member keeps its own FitError, whose PostFilter part says DefaultPreemption leaves it to the group
    assert by_name(result)["high-0"].message == (
        "0/2 nodes are available: 2 Insufficient cpu. no new claims to deallocate, "
        "preemption: not eligible due to workload aware preemption enabled")
    assert by_name(result)["high-1"].message == by_name(result)["high-0"].message  # every member is tried


def test_the_preemptor_priority_is_the_pod_groups_not_its_pods() -> None:
    result = run(rack_nodes(1, 2), *running_gang("PodGroup", priority=5), group("high", 4, 1),
                 members("high", 4, priority=100))
    assert not result.evicted


def test_a_member_with_preemption_policy_never_makes_the_group_ineligible() -> None:
    never = members("high", 4, priority=10).replace("spec:\n", "spec:\n  preemptionPolicy: Never\n", 1)
    result = run(rack_nodes(1, 2), *running_gang("PodGroup"), group("high", 4, 10), never)
    assert not result.evicted
    assert row(result, "high").message.endswith(", not eligible due to preemptionPolicy=Never.")


def test_no_group_preemption_when_removing_every_victim_does_not_help() -> None:
    # 16 one-CPU pods never fit on 8 CPUs: the group cycle's own status is appended
    result = run(rack_nodes(1, 2), *running_gang("PodGroup"), group("high", 16, 10), members("high", 16, priority=10))
    assert not result.evicted
    assert row(result, "high").message == ("pod group is unschedulable, "  # (the trial's own status, appended)
                                           "pod group is unschedulable")


def test_a_group_with_a_topology_constraint_does_not_preempt() -> None:
    gates = WAP + ",TopologyAwareWorkloadScheduling=true"
    result = run(rack_nodes(1, 2), *running_gang("PodGroup"), group("high", 4, 10, rack=True),
                 members("high", 4, priority=10), gates=gates)
    assert not result.evicted
    assert row(result, "high").message.endswith(
        ", workload aware preemption is not supported for pod groups with scheduling constraints")
    assert by_name(result)["high-0"].message.endswith(
        "preemption: not eligible due to placement-based pod group scheduling limitation")


def test_a_profile_without_default_preemption_does_not_preempt() -> None:
    config = config_from_dict({"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
                               "profiles": [{"schedulerName": "default-scheduler", "plugins": {
                                   "postFilter": {"disabled": [{"name": "DefaultPreemption"}]}}}]})
    result = run(rack_nodes(1, 2), *running_gang("PodGroup"), group("high", 4, 10), members("high", 4, priority=10),
                 config=config)
    assert not result.evicted
    assert row(result, "high").message.endswith(
        ", default preemption plugin is not registered, workload aware preemption is disabled")
    assert by_name(result)["high-0"].message.endswith("Insufficient cpu. no new claims to deallocate")


# ---------------------------------------------------------------------- disruption budgets
def budget(allowed: int) -> str:
    return ("apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: db, namespace: default}\n"
            f"spec: {{selector: {{matchLabels: {{app: db}}}}}}\nstatus: {{disruptionsAllowed: {allowed}}}\n")


def single_pods(prefix: str, count: int, node: str, labels: str = "") -> str:
    meta = f", labels: {{{labels}}}" if labels else ""
    return "---\n".join(f"apiVersion: v1\nkind: Pod\nmetadata: {{name: {prefix}-{i}, namespace: default{meta}}}\n"
                        f"spec:\n  priority: 1\n  nodeName: {node}\n"
                        f"  containers: [{{name: c, resources: {{requests: {{cpu: \"1\"}}}}}}]\n" for i in range(count))


def test_victims_whose_eviction_violates_a_budget_are_reprieved_first() -> None:
    docs = [rack_nodes(1, 2), single_pods("web", 4, "r0-n0"), single_pods("db", 4, "r0-n1", "app: db"),
            group("high", 4, 10), members("high", 4, priority=10)]
    assert evicted(run(*docs)) == ["db-0", "db-1", "db-2", "db-3"]  # no budget: the first listed are kept
    result = run(*docs, budget(0))
    assert evicted(result) == ["web-0", "web-1", "web-2", "web-3"]
    assert all(not e.violated_budgets for e in result.evicted)


def test_a_budget_is_violated_when_nothing_else_makes_room() -> None:
    docs = [rack_nodes(1, 1), single_pods("db", 4, "r0-n0", "app: db"), group("high", 4, 10),
            members("high", 4, priority=10), budget(1)]
    result = run(*docs)
    # all four are needed; the three that break the budget were tried first, and come first
    assert evicted(result) == ["db-1", "db-2", "db-3", "db-0"]
    assert [e.violated_budgets for e in result.evicted] == [[], ["default/db"], ["default/db"], ["default/db"]]


# ---------------------------------------------------------------------- victims that take their time
def test_terminating_victims_are_marked_and_the_members_that_fit_are_nominated() -> None:
    # room for 2 of 4: the 2 that fit are nominated where they fit; the victims terminate for their grace period
    docs = [rack_nodes(1, 1), group("low", 2, 1, "PodGroup"), members("low", 2, cpu="1", priority=1,
                                                                      node_name="r0-n0"),
            group("high", 4, 10), members("high", 4, priority=10)]
    result = run(*docs, terminate_at="2026-01-01T00:00:00Z")
    pods = by_name(result)
    assert evicted(result) == ["low-0", "low-1"]
    victim = pods["low-0"].pod
    assert victim.metadata.deletion_timestamp == "2026-01-01T00:00:30Z"
    condition = next(c for c in victim.status.conditions if c.type == "DisruptionTarget")
    assert (condition.reason, condition.message) == (
        "PreemptionByScheduler", "default-scheduler: preempting to accommodate a higher priority podgroup")
    nominated = {name: p.pod.status.nominated_node_name if p.pod.status else None for name, p in pods.items()
                 if name.startswith("high")}
    assert nominated == {"high-0": "r0-n0", "high-1": "r0-n0", "high-2": None, "high-3": None}
    assert all(pods[f"high-{i}"].status == "unschedulable" for i in range(4))
    # waiting on preemption, the members that fit read the group's status (not their Permit's); the others
    # keep their own FitError
    assert pods["high-0"].message == "pod group is unschedulable"
    assert pods["high-2"].message.startswith("0/1 nodes are available: 1 Insufficient cpu.")


def test_a_group_waits_while_its_victims_terminate_on_its_nominated_node() -> None:
    docs = [rack_nodes(1, 1), group("low", 2, 1, "PodGroup"), members("low", 2, priority=1, node_name="r0-n0"),
            group("high", 4, 10), members("high", 4, priority=10)]
    objects = codec.load(io.StringIO("---\n".join(docs)))
    sim = Simulator.from_objects(objects, feature_gates=FeatureGates.parse(WAP),
                                 victims_terminate_at="2026-01-01T00:00:00Z")
    sim.schedule()
    again = Simulator.from_objects([*(r.pod for r in sim.results.values()), *objects[:1],
                                    *(o for o in objects if type(o).__name__ == "PodGroup")],
                                   feature_gates=FeatureGates.parse(WAP),
                                   victims_terminate_at="2026-01-01T00:00:10Z").schedule()
    assert not again.evicted
    assert row(again, "high").message.endswith(", not eligible due to a terminating pod on the nominated node.")


# ---------------------------------------------------------------------- gates and determinism
def test_with_the_gate_off_each_member_preempts_for_itself_pod_by_pod() -> None:
    # kube-scheduler 1.36 without WorkloadAwarePreemption: a member's own DefaultPreemption runs in the group
    # cycle; the running gang's PodGroup disruption mode is not read, and it loses the pods each member needs
    docs = [rack_nodes(1, 2), *running_gang("PodGroup"), group("high", 4, 10), members("high", 4, priority=10)]
    result = run(*docs, gates=GANG_ONLY)
    assert [(e.name, e.by) for e in result.evicted] == [
        ("low-b-3", "default/high-0"), ("low-a-3", "default/high-1"), ("low-a-2", "default/high-2"),
        ("low-b-2", "default/high-3")]
    pods = by_name(result)
    assert all(pods[f"high-{i}"].status == "scheduled" for i in range(4))
    assert sum(p.status == "running" for p in result.pods if p.name.startswith("low")) == 4


def test_with_the_gate_off_a_gang_waits_for_its_members_victims() -> None:
    # victims terminating: the group cycle that preempted ends waiting, its members nominated where they preempted
    docs = [rack_nodes(1, 2), *running_gang("PodGroup"), group("high", 4, 10), members("high", 4, priority=10)]
    result = run(*docs, gates=GANG_ONLY, terminate_at="2026-01-01T00:00:00Z")
    assert row(result, "high").message == "pod group is unschedulable, pod group is waiting for preemption to complete"
    pods = by_name(result)
    nominated = {name: pods[name].pod.status.nominated_node_name for name in ("high-0", "high-1", "high-2", "high-3")}
    assert nominated == {"high-0": "r0-n1", "high-1": "r0-n0", "high-2": "r0-n0", "high-3": "r0-n1"}
    # a member its own preemption placed reads its FitError (its PostFilter found a candidate: no suffix)
    assert pods["high-0"].message == "0/2 nodes are available: 2 Insufficient cpu."


def test_the_same_input_preempts_the_same_way() -> None:
    docs = [rack_nodes(2, 2), *running_gang("Pod"), single_pods("web", 4, "r1-n0"), group("high", 6, 10),
            members("high", 6, priority=10)]
    first = json.dumps(run(*docs, seed=3).to_dict(), sort_keys=True)
    assert first == json.dumps(run(*docs, seed=3).to_dict(), sort_keys=True)
    assert "PodGroup/default/high" in first


# ---------------------------------------------------------------------- PodGroup priority
def test_a_pod_groups_priority_comes_from_its_priority_class() -> None:
    classes = ("apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: urgent}\nvalue: 10\n---\n"
               "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: batch}\nvalue: 1\n"
               "globalDefault: true\n")
    docs = [rack_nodes(1, 2), classes, group("low", 8, None, "PodGroup"),
            members("low", 4, priority=1, node_name="r0-n0", prefix="low-a"),
            members("low", 4, priority=1, node_name="r0-n1", prefix="low-b"),
            group("high", 4, None, class_name="urgent"), members("high", 4, priority=10)]
    result = run(*docs)
    assert len(evicted(result)) == 8  # urgent (10) over the global default batch (1)
    groups = {g.metadata.name: g for g in result.pod_group_objects}
    assert (groups["low"].spec.priority_class_name, groups["low"].spec.priority) == ("batch", 1)
    missing = run(*docs[:-2], group("high", 4, None, class_name="gone"),
                  members("high", 4, priority=10))
    assert not missing.evicted
    assert 'podgroups.scheduling.k8s.io "high" is forbidden: no PriorityClass with name gone was found; ' \
           "priority 0" in missing.warnings


# ---------------------------------------------------------------------- the units' order and budgets
def _info(name: str, priority: int, group_name: str | None = None, start: str = "", labels: str = "") -> Any:
    from dralloc.scheduler.podinfo import PodInfo

    spec: dict[str, Any] = {"containers": [{"name": "c"}]}
    if group_name:
        spec["schedulingGroup"] = {"podGroupName": group_name}
    meta: dict[str, Any] = {"name": name, "namespace": "default"}
    if labels:
        meta["labels"] = {"app": labels}
    pod = codec.decode({"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec,
                        "status": {"startTime": start} if start else {}})
    return PodInfo.build(pod, 0, priority)


def test_units_are_ordered_by_priority_then_groups_then_size_and_age() -> None:
    from dralloc.scheduler.nodeinfo import NodeInfo
    from dralloc.scheduler.plugins.default_preemption.pod_group import Victim, importance_key

    node = NodeInfo.build(codec.decode({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"}}))
    old_single = Victim(1, [(_info("old", 1, start="2026-01-01T00:00:00Z"), node)])
    new_single = Victim(1, [(_info("new", 1, start="2026-02-01T00:00:00Z"), node)])
    small = Victim(1, [(_info(f"s{i}", 1, "small"), node) for i in range(2)])
    large = Victim(1, [(_info(f"l{i}", 1, "large"), node) for i in range(3)])
    high = Victim(2, [(_info("high", 2), node)])
    ordered = sorted([new_single, small, old_single, large, high], key=importance_key)
    assert ordered == [high, large, small, old_single, new_single]


@given(st.lists(st.tuples(st.integers(1, 3), st.booleans()), max_size=8), st.integers(-1, 3))
def test_budget_split_keeps_order_and_every_unit(units: list[tuple[int, bool]], allowed: int) -> None:
    from dralloc.api.policy_v1 import PodDisruptionBudget
    from dralloc.scheduler.nodeinfo import NodeInfo
    from dralloc.scheduler.plugins.default_preemption.disruption_budgets import Budget
    from dralloc.scheduler.plugins.default_preemption.pod_group import Victim, split_violating

    node = NodeInfo.build(codec.decode({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"}}))
    victims = [Victim(1, [(_info(f"u{u}-{i}", 1, labels="db" if covered else ""), node) for i in range(size)])
               for u, (size, covered) in enumerate(units)]
    pdb = codec.decode({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
                        "metadata": {"name": "b", "namespace": "default"},
                        "spec": {"selector": {"matchLabels": {"app": "db"}}}, "status": {"disruptionsAllowed": allowed}})
    assert isinstance(pdb, PodDisruptionBudget)
    violating, other = split_violating(victims, [Budget.of(pdb)])
    assert sorted(map(id, violating + other)) == sorted(map(id, victims))
    assert violating == [v for v in victims if v in violating] and other == [v for v in victims if v in other]
    # covered pods spend the budget in order: a unit violates once the covered pods so far exceed it
    spent = 0
    for victim, (size, covered) in zip(victims, units):
        spent += size if covered else 0
        assert (victim in violating) == (covered and spent > allowed)


# ---------------------------------------------------------------------- the result
def test_a_preempted_groups_row_names_its_preemptor() -> None:
    result = run(rack_nodes(1, 2), *running_gang("PodGroup"), group("high", 4, 10), members("high", 4, priority=10))
    assert row(result, "low").preempted_by == "PodGroup/default/high"
    assert row(result, "low").to_dict()["preemptedBy"] == "PodGroup/default/high"
    assert "preemptedBy" not in row(result, "high").to_dict()
    assert result.to_dict()["evicted"][0] == {"namespace": "default", "name": "low-a-0", "node": "r0-n0",
                                              "by": "PodGroup/default/high", "violatedBudgets": []}
    from dralloc.cli.simulate import table

    assert ("podgroup default/low    <preempted>   0/8 pods (minCount 8): preempted by PodGroup/default/high"
            in table(result))


def test_once_the_victims_are_gone_the_group_binds_where_it_was_nominated() -> None:
    docs = [rack_nodes(1, 1), group("low", 2, 1, "PodGroup"), members("low", 2, priority=1, node_name="r0-n0"),
            group("high", 4, 10), members("high", 4, priority=10)]
    objects = codec.load(io.StringIO("---\n".join(docs)))
    first = run(*docs, terminate_at="2026-01-01T00:00:00Z")
    # the victims are gone; the nominated members are assumed in the next cycle, no longer holding room twice
    left = [p.pod for p in first.pods if p.status != "evicted"]
    again = Simulator.from_objects([objects[0], *left, *(o for o in objects if type(o).__name__ == "PodGroup")],
                                   feature_gates=FeatureGates.parse(WAP)).schedule()
    assert [p.node for p in again.pods] == ["r0-n0"] * 4


def test_members_that_fit_in_a_failed_cycle_lose_their_nomination() -> None:
    # high-0 comes nominated; the gang cannot preempt (nothing lower runs), so the failure handler clears it
    nominated = members("high", 1, priority=10).replace("spec:\n", "status: {nominatedNodeName: r0-n0}\nspec:\n", 1)
    docs = [rack_nodes(1, 1, cpu="2"), group("high", 4, 10), nominated, members("high", 3, priority=10, prefix="more")]
    pods = by_name(run(*docs))
    assert pods["high-0"].pod.status.nominated_node_name is None
    kept = by_name(run(*docs, gates=GANG_ONLY))["high-0"].pod.status.nominated_node_name
    assert kept == "r0-n0"  # (without the gate nothing is nominated by a group cycle)


# ---------------------------------------------------------------------- any small cluster
RUNNING = st.lists(st.tuples(st.integers(0, 2),  # node
                             st.integers(0, 3),  # priority
                             st.sampled_from(["single", "g1", "g2", "p1"])),  # own unit, a PodGroup-mode group, a Pod-mode group
                   max_size=12)


@given(RUNNING, st.integers(1, 5))
@settings(max_examples=40, deadline=None)
def test_group_preemption_takes_only_lower_units_and_whole_groups(running: list[tuple[int, int, str]],
                                                                  min_count: int) -> None:
    # 3 nodes of 4 one-CPU slots; the pending gang (priority 2) needs min_count slots
    per_node = [0, 0, 0]
    docs = [rack_nodes(1, 3), group("g1", 1, 1, "PodGroup"), group("g2", 1, 3, "PodGroup"), group("p1", 1, 1, "Pod")]
    priorities: dict[str, int] = {}
    for i, (node, priority, unit) in enumerate(running):
        if per_node[node] == 4:
            continue
        per_node[node] += 1
        name = f"run-{i}"
        group_ref = f"  schedulingGroup: {{podGroupName: {unit}}}\n" if unit != "single" else ""
        docs.append(f"apiVersion: v1\nkind: Pod\nmetadata: {{name: {name}, namespace: default}}\nspec:\n"
                    f"  priority: {priority}\n  nodeName: r0-n{node}\n{group_ref}"
                    f"  containers: [{{name: c, resources: {{requests: {{cpu: \"1\"}}}}}}]\n")
        priorities[name] = {"g1": 1, "g2": 3}.get(unit, priority)  # a PodGroup-mode pod weighs as its group
    docs += [group("high", min_count, 2), members("high", min_count, priority=2)]
    result = run(*docs)
    gone = set(evicted(result))
    assert all(priorities[name] < 2 for name in gone)
    for unit in ("g1", "g2"):
        members_of = {f"run-{i}" for i, (_, _, u) in enumerate(running) if u == unit and f"run-{i}" in priorities}
        assert not (members_of & gone) or members_of <= gone
    free = 12 - len(priorities)
    lower = sum(1 for p in priorities.values() if p < 2)
    placed = row(result, "high").placed
    assert placed == (free + lower >= min_count)
    assert bool(gone) == (placed and free < min_count)


def test_a_pod_groups_victim_event_names_the_group_and_the_cluster() -> None:
    from dralloc.controllers.preemption import (
        POD_GROUP_CANDIDATE,
        PREEMPTOR_POD_GROUP,
        preempted_event_message,
    )

    assert preempted_event_message(PREEMPTOR_POD_GROUP, "1234", POD_GROUP_CANDIDATE) == \
        "Preempted by podgroup 1234 on node cluster"
    assert preempted_event_message("pod", "abcd", "node-1") == "Preempted by pod abcd on node node-1"


def test_the_readme_example_preempts_the_sweep_whole() -> None:
    from pathlib import Path

    from dralloc.cli.simulate import table
    from dralloc.simulator.report_topology import render_pod_groups

    folder = Path(__file__).resolve().parents[2] / "examples" / "gang-preemption"
    objects: list[Any] = []
    for path in sorted(folder.glob("*.yaml")):
        objects += codec.load(io.StringIO(path.read_text(encoding="utf-8")))
    result = Simulator.from_objects(objects, feature_gates=FeatureGates.parse(WAP)).schedule()
    text = table(result)
    assert "podgroup default/sweep      <preempted>   0/4 pods (minCount 4): preempted by PodGroup/default/deadline" \
        in text
    assert "podgroup default/deadline   <placed>      2/2 pods (minCount 2) on node-a, node-b" in text
    assert "<td>default/sweep</td><td>preempted</td>" in render_pod_groups(result.pod_groups)
