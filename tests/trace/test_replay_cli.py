"""``dralloc replay`` / ``generate trace`` / ``sweep`` as a user runs them: the JSON contract, exit codes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from dralloc.cli.main import main

NODES = "sn,cpu_milli,memory_mib,gpu,model\nn1,16000,65536,2,T4\nn2,64000,262144,4,G2\n"
PODS = ("name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec\n"
        "a,1000,1024,1,500,\nb,2000,1024,1,1000,T4\nc,1000,1024,2,1000,\nd,500,512,0,0,\ne,1000,1024,1,250,\n")


@pytest.fixture
def files(tmp_path: Path) -> tuple[str, str]:
    (tmp_path / "n.csv").write_text(NODES)
    (tmp_path / "p.csv").write_text(PODS)
    return str(tmp_path / "n.csv"), str(tmp_path / "p.csv")


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


def test_json_output_keeps_the_contract(files: tuple[str, str], capsys: pytest.CaptureFixture[str],
                                        tmp_path: Path) -> None:
    nodes, pods = files
    code, out, _ = run(["replay", "--nodes", nodes, "--pods", pods, "--policy", "fgd", "--seed", "7",
                        "-o", "json", "--report", str(tmp_path / "r.html")], capsys)
    assert code == 0
    doc = json.loads(out)
    assert {"kind", "policy", "seed", "totalGpus", "curve", "failedPods", "seconds", "fragmentation"} <= set(doc)
    assert doc["kind"] == "TraceReplayResult" and doc["policy"] == "fgd" and doc["seed"] == 7
    assert doc["totalGpus"] == 6
    assert all(len(point) == 2 for point in doc["curve"])
    assert "<svg" in (tmp_path / "r.html").read_text()


def test_table_output(files: tuple[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["replay", "--nodes", files[0], "--pods", files[1], "--policy", "bestfit"], capsys)
    assert code == 0 and "policy bestfit, seed 42" in out and "ARRIVED %" in out


def test_manifests_replay_like_the_csvs(files: tuple[str, str], capsys: pytest.CaptureFixture[str],
                                        tmp_path: Path) -> None:
    nodes, pods = files
    code, cluster, _ = run(["generate", "trace", "--format", "alibaba-gpu-2023", "--nodes", nodes], capsys)
    assert code == 0
    code, workload, _ = run(["generate", "trace", "--format", "alibaba-gpu-2023", "--nodes", nodes, "--pods", pods],
                            capsys)
    (tmp_path / "cluster.yaml").write_text(cluster)
    only_pods = workload.split("- apiVersion: resource.k8s.io/v1\n  kind: ResourceClaim", 1)
    (tmp_path / "pods.yaml").write_text("apiVersion: v1\nkind: List\nitems:\n- apiVersion: resource.k8s.io/v1\n"
                                        "  kind: ResourceClaim" + only_pods[1])
    _, from_csv, _ = run(["replay", "--nodes", nodes, "--pods", pods, "--policy", "gpupacking", "-o", "json"], capsys)
    code, from_yaml, err = run(["replay", "-f", str(tmp_path / "cluster.yaml"), "--pods", str(tmp_path / "pods.yaml"),
                                "--policy", "gpupacking", "-o", "json"], capsys)
    assert code == 0, err
    a, b = json.loads(from_csv), json.loads(from_yaml)
    assert (a["curve"], a["failedPods"], a["fragmentation"]) == (b["curve"], b["failedPods"], b["fragmentation"])


def test_a_user_plugin_from_a_module(files: tuple[str, str], capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "my_policy.py").write_text(
        "from dralloc.scheduler.plugins.base import Plugin\n"
        "class Emptiest(Plugin):\n"
        "    name = 'Emptiest'\n    has_score = True\n    weight = 1\n"
        "    def score(self, cycle, node):\n        return 100 - min(len(node.pods), 100)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    code, out, _ = run(["replay", "--nodes", files[0], "--pods", files[1], "--plugin", "my_policy:Emptiest",
                        "-o", "json"], capsys)
    assert code == 0 and json.loads(out)["policy"] == "Emptiest"
    code, _, err = run(["replay", "--nodes", files[0], "--pods", files[1], "--plugin", "my_policy:Nope"], capsys)
    assert code == 2 and "not a Plugin subclass" in err


def test_bad_input_exits_2_without_a_traceback(files: tuple[str, str], capsys: pytest.CaptureFixture[str],
                                               tmp_path: Path) -> None:
    (tmp_path / "bad.csv").write_text("name,cpu_milli,memory_mib,num_gpu,gpu_milli\nx,1,2,one,0\n")
    code, _, err = run(["replay", "--nodes", files[0], "--pods", str(tmp_path / "bad.csv")], capsys)
    assert code == 2 and "bad.csv:2: num_gpu: not an integer" in err and "Traceback" not in err
    with pytest.raises(SystemExit) as exit_:
        main(["replay", "--nodes", files[0], "--pods", files[1], "--policy", "nope"])
    assert exit_.value.code == 2
    code, _, err = run(["replay", "--pods", files[1]], capsys)
    assert code == 2 and "--nodes" in err


@pytest.mark.slow
def test_sweep_writes_a_row_per_experiment_and_a_chart(files: tuple[str, str], tmp_path: Path) -> None:
    out = subprocess.run([sys.executable, "-m", "dralloc", "sweep", "--nodes", files[0], "--pods", files[1],
                          "--policies", "fgd,random", "--seeds", "1-2", "--workers", "2",
                          "--csv", str(tmp_path / "s.csv"), "--chart", str(tmp_path / "s.svg")],
                         capture_output=True, text=True, check=False)
    assert out.returncode == 0, out.stderr
    rows = (tmp_path / "s.csv").read_text().splitlines()
    assert rows[0].startswith("trace,policy,seed,inflate,total_gpus") and len(rows) == 5
    assert "<svg" in (tmp_path / "s.svg").read_text()
    assert "fgd" in out.stdout and "random" in out.stdout
