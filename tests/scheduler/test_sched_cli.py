"""``dralloc simulate`` as a user runs it: outputs, exit codes, invalid input."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from sched_builders import GPU_CLASS, GPU_TEMPLATE, TEMPLATE_CLAIM, gpu_slice, node, pod


def write(tmp_path: Path, *docs: str) -> str:
    f = tmp_path / "cluster.yaml"
    f.write_text("\n---\n".join(docs))
    return str(f)


@pytest.mark.slow
def test_exit_zero_when_everything_is_placed_and_one_when_some_pods_stay_pending(tmp_path, dralloc_cmd) -> None:
    ok = write(tmp_path, node("n1"), pod("a"))
    out = subprocess.run([*dralloc_cmd, "simulate", "-f", ok], capture_output=True, text=True, check=False)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[0].split() == ["POD", "NODE", "CLAIM", "→", "DEVICES", "/", "REASON"]
    pending = write(tmp_path, node("n1", cpu="1"), pod("a", cpu="2"))
    out = subprocess.run([*dralloc_cmd, "simulate", "-f", pending], capture_output=True, text=True, check=False)
    assert out.returncode == 1
    assert "0/1 nodes are available: 1 Insufficient cpu." in out.stdout


@pytest.mark.slow
def test_json_lists_every_pod_once_with_its_allocation(tmp_path, dralloc_cmd) -> None:
    f = write(tmp_path, node("n1"), gpu_slice("n1", 1), GPU_CLASS, GPU_TEMPLATE,
              pod("a", claims=TEMPLATE_CLAIM), pod("b", claims=TEMPLATE_CLAIM), pod("r", node_name="n1"))
    out = subprocess.run([*dralloc_cmd, "simulate", "-f", f, "-o", "json"], capture_output=True, text=True, check=False)
    assert out.returncode == 1
    doc = json.loads(out.stdout)
    assert doc["kind"] == "SimulationResult" and (doc["scheduled"], doc["unschedulable"]) == (1, 1)
    assert [p["name"] for p in doc["pods"]] == ["a", "b", "r"]
    a = doc["pods"][0]
    assert list(a) == ["namespace", "name", "node", "status", "message", "claims"]
    assert a["claims"][0]["allocation"]["devices"]["results"][0]["device"] == "gpu-0"
    assert doc["pods"][1]["node"] is None and doc["pods"][1]["message"].startswith("0/1 nodes are available")


@pytest.mark.slow
def test_yaml_output_can_be_fed_back(tmp_path, dralloc_cmd) -> None:
    f = write(tmp_path, node("n1"), gpu_slice("n1", 2), GPU_CLASS, GPU_TEMPLATE, pod("a", claims=TEMPLATE_CLAIM))
    first = subprocess.run([*dralloc_cmd, "simulate", "-f", f, "-o", "yaml"], capture_output=True, text=True, check=False)
    assert first.returncode == 0, first.stderr
    again = tmp_path / "again.yaml"
    again.write_text(first.stdout + "\n---\n" + "\n---\n".join([node("n1"), gpu_slice("n1", 2), GPU_CLASS,
                                                                  GPU_TEMPLATE, pod("b", claims=TEMPLATE_CLAIM)]))
    second = subprocess.run([*dralloc_cmd, "simulate", "-f", str(again), "-o", "json"], capture_output=True, check=False,
                            text=True)
    doc = json.loads(second.stdout)
    statuses = {p["name"]: (p["status"], p["node"]) for p in doc["pods"]}
    assert statuses == {"a": ("running", "n1"), "b": ("scheduled", "n1")}
    (b,) = [p for p in doc["pods"] if p["name"] == "b"]
    assert b["claims"][0]["allocation"]["devices"]["results"][0]["device"] == "gpu-1"


@pytest.mark.slow
def test_invalid_input_is_exit_two_with_a_field_path(tmp_path, dralloc_cmd) -> None:
    bad = gpu_slice("n1").replace("name: gpu-0", "name: GPU_0")
    f = write(tmp_path, node("n1"), bad)
    out = subprocess.run([*dralloc_cmd, "simulate", "-f", f], capture_output=True, text=True, check=False)
    assert out.returncode == 2
    assert 'spec.devices[0].name: Invalid value: "GPU_0"' in out.stderr
    assert "Traceback" not in out.stderr


@pytest.mark.slow
def test_bad_flags_are_exit_two(tmp_path, dralloc_cmd) -> None:
    f = write(tmp_path, node("n1"))
    for flags in (["--add-nodes", "2"], ["--feature-gates", "Nope=true"], ["--remove-node", "ghost"],
                  ["--percentage-of-nodes-to-score", "101"]):
        out = subprocess.run([*dralloc_cmd, "simulate", "-f", f, *flags], capture_output=True, text=True, check=False)
        assert out.returncode == 2, (flags, out.stderr)
        assert "Traceback" not in out.stderr


@pytest.mark.slow
def test_explain_says_why_the_claims_fit_no_node(tmp_path, dralloc_cmd) -> None:
    f = write(tmp_path, node("n1"), gpu_slice("n1", 1), GPU_CLASS, GPU_TEMPLATE,
              pod("a", claims=TEMPLATE_CLAIM), pod("b", claims=TEMPLATE_CLAIM))
    out = subprocess.run([*dralloc_cmd, "simulate", "-f", f, "--explain"], capture_output=True, text=True,
                         check=False)
    assert out.returncode == 1
    assert "default/b: node n1: cannot allocate the claims" in out.stderr
    assert "already allocated to another claim: gpu.example.com/n1/gpu-0" in out.stderr
    doc = json.loads(subprocess.run([*dralloc_cmd, "simulate", "-f", f, "--explain", "-o", "json"],
                                    capture_output=True, text=True, check=False).stdout)
    assert list(doc["explanations"]) == ["default/b"]
