"""Inputs that can change a placement in kube-scheduler but that the simulation does not model: each one a
warning naming the object, the field and the pods it affects; ``simulate --strict`` exits 2 on them."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from sched_builders import load, node, pod

from dralloc.simulator import Scheduler

ROOT = Path(__file__).resolve().parents[2]


def warnings_of(*docs: str) -> list[str]:
    return Scheduler.from_objects(load(*docs)).schedule().warnings


def test_affected_pods_are_shortened_after_five() -> None:
    pending = [pod(f"p{i}") for i in range(7)]
    (found,) = warnings_of(condition_node("Ready", "False"), *pending)
    assert found.endswith("default/p0, default/p1, default/p2, default/p3, default/p4 and 2 more")


def condition_node(kind: str, status: str, taints: str = "") -> str:
    spec = f"spec: {{taints: {taints}}}\n" if taints else ""
    return node("n1").replace(
        'status: {allocatable:', f"{spec}status: {{conditions: [{{type: {kind}, status: '{status}'}}], allocatable:")


@pytest.mark.parametrize(("kind", "status", "taint"), [
    ("Ready", "False", "node.kubernetes.io/not-ready"),
    ("Ready", "Unknown", "node.kubernetes.io/unreachable"),
    ("NetworkUnavailable", "True", "node.kubernetes.io/network-unavailable"),
    ("MemoryPressure", "True", "node.kubernetes.io/memory-pressure"),
    ("DiskPressure", "True", "node.kubernetes.io/disk-pressure"),
    ("PIDPressure", "True", "node.kubernetes.io/pid-pressure"),
])
def test_a_condition_without_its_taint_names_the_pods_that_do_not_tolerate_it(kind: str, status: str,
                                                                              taint: str) -> None:
    tolerant = pod("t", extra_spec=f"tolerations: [{{key: {taint}, operator: Exists}}]")
    found = warnings_of(condition_node(kind, status), pod("a"), tolerant)
    assert found == [f"node n1: status.conditions {kind}={status} without the {taint}:NoSchedule taint the node "
                     "lifecycle controller adds for it: kube-scheduler would keep pods that do not tolerate it "
                     "off the node, the simulation does not; affects pending pods: default/a"]


def test_a_condition_with_its_taint_or_a_healthy_one_is_silent() -> None:
    tainted = condition_node("Ready", "False", "[{key: node.kubernetes.io/not-ready, effect: NoSchedule}]")
    assert warnings_of(tainted, pod("a", extra_spec="tolerations: [{operator: Exists}]")) == []
    assert warnings_of(tainted, pod("a")) == []  # the taint is there: the simulation keeps a off n1 itself
    assert warnings_of(condition_node("Ready", "True"), pod("a")) == []
    assert warnings_of(condition_node("NetworkUnavailable", "False"), pod("a")) == []


def test_a_condition_every_pending_pod_tolerates_is_silent() -> None:
    assert warnings_of(condition_node("Ready", "False"), pod("a", extra_spec="tolerations: [{operator: Exists}]")) == []


# ---------------------------------------------------------------- the CLI


def simulate(dralloc_cmd: list[str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*dralloc_cmd, "simulate", *args], capture_output=True, text=True, check=False)


def write(tmp_path: Path, *docs: str) -> str:
    f = tmp_path / "cluster.yaml"
    f.write_text("\n---\n".join(docs))
    return str(f)


@pytest.mark.slow
def test_strict_exits_two_with_only_the_warnings(tmp_path: Path, dralloc_cmd: list[str]) -> None:
    f = write(tmp_path, condition_node("Ready", "False"), pod("a"))
    out = simulate(dralloc_cmd, "-f", f, "--strict", "-o", "json")
    assert out.returncode == 2
    assert out.stdout == ""
    lines = out.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("warning: node n1: status.conditions Ready=False")


@pytest.mark.slow
def test_without_strict_each_warning_once_on_stderr_and_in_the_json(tmp_path: Path, dralloc_cmd: list[str]) -> None:
    f = write(tmp_path, condition_node("Ready", "False"), pod("a"), pod("b", node_name="n2"))
    out = simulate(dralloc_cmd, "-f", f, "-o", "json")
    assert out.returncode == 0, out.stderr
    warnings = json.loads(out.stdout)["warnings"]
    assert len(warnings) == 2 and len(set(warnings)) == 2  # the condition, and b on a node not in the input
    assert out.stderr.splitlines() == [f"warning: {w}" for w in warnings]


@pytest.mark.slow
def test_strict_refuses_unknown_fields_but_not_skipped_kinds(tmp_path: Path, dralloc_cmd: list[str]) -> None:
    config_map = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x, namespace: default}\n"
    f = write(tmp_path, node("n1"), pod("a"), config_map)
    out = simulate(dralloc_cmd, "-f", f, "--strict")
    assert out.returncode == 0, out.stderr
    assert "skipping ConfigMap" in out.stderr
    f = write(tmp_path, node("n1"), pod("a").replace("spec:", "spec:\n  bogusField: 1"))
    out = simulate(dralloc_cmd, "-f", f, "--strict")
    assert out.returncode == 2 and out.stdout == ""
    assert "bogusField" in out.stderr
    assert simulate(dralloc_cmd, "-f", f).returncode == 0


@pytest.mark.slow
@pytest.mark.parametrize("example", ["examples/cluster", "examples/real-dump"])
def test_clean_examples_pass_strict(example: str, dralloc_cmd: list[str]) -> None:
    out = simulate(dralloc_cmd, "-f", str(ROOT / example), "--strict", "-o", "json")
    assert out.returncode in (0, 1), out.stderr
    assert all("skipping" in line for line in out.stderr.splitlines()), out.stderr
