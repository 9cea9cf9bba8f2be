"""``dralloc simulate`` on the JobSet and LeaderWorkerSet examples, and on bad manifests (exit code 2)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

GATES = "GenericWorkload=true,GangScheduling=true,TopologyAwareWorkloadScheduling=true"


def simulate(dralloc_cmd: list[str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*dralloc_cmd, "simulate", *args], capture_output=True, text=True, check=False)


@pytest.mark.slow
def test_the_jobset_example_lands_whole_in_one_rack(examples_dir: Path, dralloc_cmd: list[str]) -> None:
    gangs = examples_dir / "gangs"
    files = [str(gangs / "00-racks.yaml"), str(gangs / "10-gpu.yaml"), str(gangs / "jobset")]
    out = simulate(dralloc_cmd, "-f", *files, "--feature-gates", GATES, "-o", "json")
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert [(g["name"], g["placed"], g["domain"], g["scheduled"]) for g in doc["podGroups"]] == [
        ("llm-train-workers", True, "rack-a", 8)]
    names = sorted(p["name"][:-6] for p in doc["pods"])
    assert names == sorted(f"llm-train-workers-{j}-{i}" for j in range(2) for i in range(4))
    table = simulate(dralloc_cmd, "-f", *files, "--feature-gates", GATES)
    assert "podgroup default/llm-train-workers   rack-a   8/8 pods (minCount 8) on gpu-a1, gpu-a2" in table.stdout


@pytest.mark.slow
def test_the_leaderworkerset_example_gives_each_group_a_rack(examples_dir: Path, dralloc_cmd: list[str]) -> None:
    gangs = examples_dir / "gangs"
    out = simulate(dralloc_cmd, "-f", str(gangs / "00-racks.yaml"), str(gangs / "10-gpu.yaml"),
                   str(gangs / "leaderworkerset"), "-o", "json")
    assert out.returncode == 0, out.stderr
    nodes = {p["name"]: p["node"] for p in json.loads(out.stdout)["pods"]}
    assert sorted(nodes) == ["vllm-0", "vllm-0-1", "vllm-0-2", "vllm-0-3", "vllm-1", "vllm-1-1", "vllm-1-2",
                             "vllm-1-3"]
    rack = {"gpu-a1": "a", "gpu-a2": "a", "gpu-b1": "b", "gpu-c1": "c"}
    groups = [{rack[nodes[n]] for n in nodes if n.startswith(f"vllm-{g}")} for g in range(2)]
    assert all(len(g) == 1 for g in groups) and groups[0] != groups[1]


@pytest.mark.slow
def test_bad_sets_exit_2_with_the_field_path(tmp_path: Path, dralloc_cmd: list[str]) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("apiVersion: leaderworkerset.x-k8s.io/v1\nkind: LeaderWorkerSet\n"
                   "metadata: {name: bad, namespace: default}\n"
                   "spec: {leaderWorkerTemplate: {size: 0, workerTemplate: {spec: {containers: [{name: c}]}}}}\n")
    out = simulate(dralloc_cmd, "-f", str(bad))
    assert out.returncode == 2
    assert "LeaderWorkerSet/bad: spec.leaderWorkerTemplate.size: Invalid value: 0: size must be equal or greater " \
           "than 1" in out.stderr
    assert "Traceback" not in out.stderr
    unknown = tmp_path / "unknown.yaml"
    unknown.write_text("apiVersion: jobset.x-k8s.io/v1alpha2\nkind: JobSet\nmetadata: {name: js, namespace: default}\n"
                       "spec: {replicatedJobs: [{name: w, replica: 2, template: {spec: {template: {spec: "
                       "{containers: [{name: c}]}}}}}]}\n")
    out = simulate(dralloc_cmd, "-f", str(unknown), "--strict")
    assert out.returncode == 2
    assert 'unknown field "spec.replicatedJobs[0].replica"' in out.stderr
