"""``dralloc plan`` as a user runs it: the ScaleUpPlan / ScaleDownPlan documents, exit codes, bad input."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from sched_builders import node, pod


def write(tmp_path: Path, name: str, *docs: str) -> str:
    f = tmp_path / name
    f.write_text("\n---\n".join(docs))
    return str(f)


def run(dralloc_cmd: list[str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*dralloc_cmd, "plan", *args], capture_output=True, text=True, check=False)


@pytest.mark.slow
def test_scale_up_json_contract_and_exit_codes(tmp_path, dralloc_cmd) -> None:
    cluster = write(tmp_path, "c.yaml", node("full", cpu="1"), pod("a", cpu="2"), pod("b", cpu="2"))
    tmpl = write(tmp_path, "t.yaml", node("t", cpu="4"))
    out = run(dralloc_cmd, "-f", cluster, "--node-template", f"small={tmpl}", "-o", "json")
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert list(doc)[:4] == ["kind", "add", "pods", "unschedulable"]
    assert doc["kind"] == "ScaleUpPlan" and doc["add"] == {"small": 1} and doc["unschedulable"] == 0
    assert doc["pods"] == [{"namespace": "default", "name": "a", "node": "small-1", "message": ""},
                           {"namespace": "default", "name": "b", "node": "small-1", "message": ""}]
    capped = run(dralloc_cmd, "-f", cluster, "--node-template", f"small={tmpl}", "--max-nodes", "small=0",
                 "-o", "json")
    assert capped.returncode == 1
    doc = json.loads(capped.stdout)
    assert doc["add"] == {} and doc["unschedulable"] == 2
    assert doc["pods"][0]["node"] is None and doc["pods"][0]["message"].startswith("0/1 nodes are available")


@pytest.mark.slow
def test_scale_up_table_and_yaml(tmp_path, dralloc_cmd) -> None:
    cluster = write(tmp_path, "c.yaml", node("full", cpu="1"), pod("a", cpu="2"))
    tmpl = write(tmp_path, "t.yaml", node("t", cpu="4"))
    out = run(dralloc_cmd, "-f", cluster, "--node-template", f"small={tmpl}")
    assert out.returncode == 0
    assert out.stdout.splitlines()[0] == "add: small: 1 (expander least-waste)"
    yaml_out = run(dralloc_cmd, "-f", cluster, "--node-template", f"small={tmpl}", "-o", "yaml")
    assert "kind: ScaleUpPlan" in yaml_out.stdout


@pytest.mark.slow
def test_scale_down_json_contract(tmp_path, dralloc_cmd) -> None:
    owned = "ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: rs, uid: u, controller: true}]"
    busy = pod("w", cpu="3", node_name="b").replace("metadata: {name: w, namespace: default}",
                                                    f"metadata: {{name: w, namespace: default, {owned}}}")
    cluster = write(tmp_path, "c.yaml", node("a", cpu="4"), node("b", cpu="4"), busy)
    out = run(dralloc_cmd, "--scale-down", "-f", cluster, "-o", "json")
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert list(doc)[:3] == ["kind", "removable", "blocked"]
    assert doc["kind"] == "ScaleDownPlan" and doc["removable"] == ["a"]
    assert doc["blocked"][0]["node"] == "b" and doc["blocked"][0]["reason"].startswith("not underutilized")


@pytest.mark.slow
def test_bad_input_exits_two_with_a_clear_message(tmp_path, dralloc_cmd) -> None:
    cluster = write(tmp_path, "c.yaml", node("full", cpu="1"), pod("a", cpu="2"))
    two = write(tmp_path, "two.yaml", node("t1"), node("t2"))
    cases = [
        (["-f", cluster], "give at least one --node-template"),
        (["-f", cluster, "--node-template", f"x={two}"], "a template holds exactly one Node, found 2"),
        (["-f", cluster, "--node-template", "nofile"], "expected NAME=VALUE"),
        (["-f", cluster, "--node-template", f"x={two}", "--max-nodes", "x=-1"], "must be at least 0"),
        (["-f", cluster, "--node-template", f"x={two}", "--expander", "cheapest"], "unknown expander"),
        (["--scale-down", "-f", cluster, "--node-template", f"x={two}"], "--scale-down takes no --node-template"),
        (["-f", cluster, "--node-template", f"x={tmp_path / 'missing.yaml'}"], "missing.yaml"),
    ]
    for args, text in cases:
        out = run(dralloc_cmd, *args)
        assert out.returncode == 2, (args, out.stdout, out.stderr)
        assert text in out.stderr, (args, out.stderr)
        assert "Traceback" not in out.stderr


@pytest.mark.slow
def test_generate_node_writes_a_template_plan_accepts(tmp_path, dralloc_cmd) -> None:
    out = subprocess.run([*dralloc_cmd, "generate", "node", "--profile", "dra-example", "--name", "gpu-node"],
                         capture_output=True, text=True, check=False)
    assert out.returncode == 0, out.stderr
    tmpl = write(tmp_path, "t.yaml", out.stdout)
    assert "kind: DeviceClass" not in out.stdout
    bad = subprocess.run([*dralloc_cmd, "generate", "node", "--profile", "nic", "--name", "Bad_Name"],
                         capture_output=True, text=True, check=False)
    assert bad.returncode == 2 and "--name: Invalid value: 'Bad_Name'" in bad.stderr
    cluster = write(tmp_path, "c.yaml", node("full", cpu="1"), pod("a", cpu="2"))
    plan = run(dralloc_cmd, "-f", cluster, "--node-template", f"gpu={tmpl}", "-o", "json")
    assert plan.returncode == 0 and json.loads(plan.stdout)["add"] == {"gpu": 1}
