"""PodDisruptionBudgets in DefaultPreemption (kube-scheduler 1.36): victim selection, the node picked, the
budgets each eviction violates, and the policy/v1 input kind."""

from __future__ import annotations

import json
import subprocess
import textwrap
from pathlib import Path

import pytest
from sched_builders import by_name, load, node

from dralloc.api.policy_v1 import PodDisruptionBudget
from dralloc.scheduler import Scheduler
from dralloc.simulator.result import PodResult, SimulationResult
from dralloc.validation import validate


def pod(name: str, labels: str = "{}", cpu: str = "1", priority: int = 0, node_name: str = "",
        start: str = "2026-01-01T00:00:00Z") -> str:
    lines = ["apiVersion: v1", "kind: Pod", f"metadata: {{name: {name}, namespace: default, labels: {labels}}}",
             "spec:", f"  containers: [{{name: c, resources: {{requests: {{cpu: \"{cpu}\"}}}}}}]",
             f"  priority: {priority}"]
    if node_name:
        lines += [f"  nodeName: {node_name}", f"status: {{phase: Running, startTime: '{start}'}}"]
    return "\n".join(lines) + "\n"


def pdb(name: str, selector: str, allowed: int, disrupted: str = "", extra: str = "") -> str:
    status = f"{{disruptionsAllowed: {allowed}, currentHealthy: 1, desiredHealthy: 1, expectedPods: 1"
    status += f", disruptedPods: {disrupted}}}" if disrupted else "}"
    return textwrap.dedent(f"""\
        apiVersion: policy/v1
        kind: PodDisruptionBudget
        metadata: {{name: {name}, namespace: default}}
        spec: {{minAvailable: 1, selector: {selector}{extra}}}
        status: {status}
        """)


def simulate(*docs: str) -> tuple[dict[str, PodResult], SimulationResult]:
    result = Scheduler.from_objects(load(*docs)).schedule()
    return by_name(result), result


def test_the_node_without_pdb_violations_is_picked_before_lower_priority_victims() -> None:
    # Without budgets node a wins (its victim has the lower priority); evicting it would break web-pdb.
    docs = [node("a", cpu="2"), node("b", cpu="2"),
            pod("web", "{app: web}", cpu="2", priority=1, node_name="a"),
            pod("batch", "{app: batch}", cpu="2", priority=5, node_name="b"),
            pod("high", cpu="2", priority=100)]
    pods, _ = simulate(*docs)
    assert pods["high"].node == "a" and pods["web"].status == "evicted"
    pods, result = simulate(*docs, pdb("web-pdb", "{matchLabels: {app: web}}", 0))
    assert pods["high"].node == "b" and pods["batch"].status == "evicted" and pods["web"].status == "running"
    assert [(e.name, e.violated_budgets) for e in result.evicted] == [("batch", [])]


def test_violating_victims_are_reprieved_first() -> None:
    # Either pod's eviction makes room. Most important first would keep "important" and evict "web";
    # the budget makes the dry run try to keep "web" first.
    docs = [node("a", cpu="3"),
            pod("web", "{app: web}", cpu="2", priority=5, node_name="a"),
            pod("important", "{app: other}", cpu="2", priority=10, node_name="a"),
            pod("high", cpu="1", priority=100)]
    pods, _ = simulate(*docs)
    assert pods["web"].status == "evicted" and pods["important"].status == "running"
    pods, _ = simulate(*docs, pdb("web-pdb", "{matchLabels: {app: web}}", 0))
    assert pods["web"].status == "running" and pods["important"].status == "evicted"


def test_a_budget_is_best_effort_and_the_eviction_says_which_it_violates() -> None:
    docs = [node("a", cpu="2"), pod("web", "{app: web}", cpu="2", priority=1, node_name="a"),
            pod("high", cpu="2", priority=100), pdb("web-pdb", "{matchLabels: {app: web}}", 0),
            pdb("all-apps", "{matchExpressions: [{key: app, operator: Exists}]}", 1)]
    pods, result = simulate(*docs)
    assert pods["high"].node == "a"
    [eviction] = result.evicted
    assert eviction.violated_budgets == ["default/web-pdb"]
    assert result.to_dict()["evicted"][0]["violatedBudgets"] == ["default/web-pdb"]


def test_disruptions_allowed_are_spent_victim_by_victim() -> None:
    # One disruption allowed, two covered victims: the second one evicted violates the budget.
    docs = [node("a", cpu="2"),
            pod("web-1", "{app: web}", cpu="1", priority=2, node_name="a"),
            pod("web-2", "{app: web}", cpu="1", priority=1, node_name="a"),
            pod("high", cpu="2", priority=100), pdb("web-pdb", "{matchLabels: {app: web}}", 1)]
    _, result = simulate(*docs)
    assert [(e.name, e.violated_budgets) for e in result.evicted] == [("web-1", []), ("web-2", ["default/web-pdb"])]
    pods = by_name(result)
    assert pods["web-2"].message == "preempted by default/high on node a; violates PodDisruptionBudget default/web-pdb"
    assert pods["web-1"].message == "preempted by default/high on node a"


def test_a_pod_already_in_disrupted_pods_does_not_count_against_its_budget() -> None:
    docs = [node("a", cpu="2"), node("b", cpu="2"),
            pod("web", "{app: web}", cpu="2", priority=1, node_name="a"),
            pod("batch", "{app: batch}", cpu="2", priority=5, node_name="b"),
            pod("high", cpu="2", priority=100),
            pdb("web-pdb", "{matchLabels: {app: web}}", 0, disrupted="{web: '2026-01-01T00:00:00Z'}")]
    pods, result = simulate(*docs)
    assert pods["high"].node == "a" and result.evicted[0].violated_budgets == []


def test_budgets_cover_only_their_namespace_and_a_selector_that_selects_something() -> None:
    docs = [node("a", cpu="2"), node("b", cpu="2"),
            pod("web", "{app: web}", cpu="2", priority=1, node_name="a"),
            pod("batch", "{app: batch}", cpu="2", priority=5, node_name="b"),
            pod("high", cpu="2", priority=100)]
    other_ns = pdb("web-pdb", "{matchLabels: {app: web}}", 0).replace("namespace: default", "namespace: other")
    empty = pdb("everything", "{}", 0)
    for budget in (other_ns, empty):
        pods, _ = simulate(*docs, budget)
        assert pods["high"].node == "a"


def test_the_budget_spent_by_one_preemption_is_gone_for_the_next() -> None:
    docs = [node("a", cpu="1"), node("b", cpu="1"),
            pod("web-a", "{app: web}", cpu="1", priority=1, node_name="a"),
            pod("web-b", "{app: web}", cpu="1", priority=1, node_name="b"),
            pod("high-1", cpu="1", priority=100), pod("high-2", cpu="1", priority=100),
            pdb("web-pdb", "{matchLabels: {app: web}}", 1)]
    _, result = simulate(*docs)
    assert sorted(tuple(e.violated_budgets) for e in result.evicted) == [(), ("default/web-pdb",)]


def test_invalid_budgets_are_refused_with_field_paths() -> None:
    [both] = load(pdb("x", "{matchLabels: {app: web}}", 0, extra=", maxUnavailable: 1"))
    assert isinstance(both, PodDisruptionBudget)
    assert [str(e).split(":")[0] for e in validate(both)] == ["spec"]
    [bad] = load(pdb("x", "{matchExpressions: [{key: app, operator: Near}]}", 0, extra="").replace(
        "minAvailable: 1", "minAvailable: 120%"))
    assert sorted(str(e).split(":")[0] for e in validate(bad)) == ["spec.minAvailable",
                                                                    "spec.selector.matchExpressions[0].operator"]


@pytest.mark.slow
def test_dralloc_simulate_reads_budgets_and_rejects_unknown_fields(tmp_path: Path, dralloc_cmd: list[str]) -> None:
    cluster = tmp_path / "cluster.yaml"
    cluster.write_text("\n---\n".join([node("a", cpu="2"), pod("web", "{app: web}", cpu="2", priority=1, node_name="a"),
                                       pod("high", cpu="2", priority=100),
                                       pdb("web-pdb", "{matchLabels: {app: web}}", 0)]))
    out = subprocess.run([*dralloc_cmd, "simulate", "-f", str(cluster), "-o", "json"], capture_output=True, text=True,
                         check=False)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["evicted"][0]["violatedBudgets"] == ["default/web-pdb"]
    invalid = tmp_path / "invalid.yaml"
    invalid.write_text(pdb("web-pdb", "{matchLabels: {app: web}}", 0, extra=", maxUnavailable: 1"))
    out = subprocess.run([*dralloc_cmd, "simulate", "-f", str(invalid)], capture_output=True, text=True, check=False)
    assert out.returncode == 2 and "PodDisruptionBudget/web-pdb: spec: Invalid value" in out.stderr
    unknown = tmp_path / "unknown.yaml"
    unknown.write_text(pdb("web-pdb", "{matchLabels: {app: web}}", 0, extra=", maxUnavaliable: 1"))
    out = subprocess.run([*dralloc_cmd, "simulate", "-f", str(unknown)], capture_output=True, text=True, check=False)
    assert 'unknown field "spec.maxUnavaliable"' in out.stderr
    out = subprocess.run([*dralloc_cmd, "validate", "--strict", "-f", str(unknown)], capture_output=True, text=True,
                         check=False)
    assert out.returncode == 2 and 'unknown field "spec.maxUnavaliable"' in out.stdout + out.stderr
