"""examples/real-dump/: a `kubectl get -A -o yaml` List of a small production cluster, simulated end to end.

The expected outcomes below are kube-scheduler 1.36's, worked out by hand from its rules (see each test);
outcomes that upstream leaves to a random tie-break (which of two equal nodes, generated pod names) are
asserted as sets.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "real-dump" / "cluster.yaml"

WEB_PENDING = (
    "0/7 nodes are available: 2 Insufficient cpu, 2 node(s) had untolerated taint(s), "
    "3 node(s) didn't match pod anti-affinity rules. no new claims to deallocate, "
    "preemption: 0/7 nodes are available: 2 Preemption is not helpful for scheduling, "
    "5 No preemption victims found for incoming pod.")
TRAIN_PENDING = (
    "0/7 nodes are available: 2 node(s) didn't match pod anti-affinity rules, "
    "5 node(s) didn't match Pod's node affinity/selector. still not schedulable, "
    "preemption: 0/7 nodes are available: 2 No preemption victims found for incoming pod, "
    "5 Preemption is not helpful for scheduling.")
RUNNING_WEB = {"web-6d4cf56db6-4xq7n", "web-6d4cf56db6-8kd2m", "web-6d4cf56db6-tz5wr"}


def run(dralloc_cmd: list[str], path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*dralloc_cmd, "simulate", "-f", str(path), *args], capture_output=True, text=True,
                          check=False)


@pytest.fixture(scope="module")
def result() -> dict[str, Any]:
    """The example's JSON result, simulated once for the module."""
    exe = Path(sys.executable).with_name("dralloc")
    out = run([str(exe)] if exe.exists() else [sys.executable, "-m", "dralloc"], EXAMPLE, "-o", "json")
    assert out.returncode == 1, out.stderr  # some pods stay pending
    assert out.stderr == ""
    doc: dict[str, Any] = json.loads(out.stdout)
    return doc


def pods(doc: dict[str, Any], prefix: str) -> list[dict[str, Any]]:
    return [p for p in doc["pods"] if p["name"].startswith(prefix)]


def by_name(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {f"{p['namespace']}/{p['name']}": p for p in doc["pods"]}


def without_kind(tmp_path: Path, kind: str, names: set[str] | None = None) -> Path:
    """The example with its objects of ``kind`` (optionally only those ``names``) removed."""
    dump = yaml.safe_load(EXAMPLE.read_text())
    dump["items"] = [o for o in dump["items"]
                     if not (o["kind"] == kind and (names is None or o["metadata"]["name"] in names))]
    f = tmp_path / "cluster.yaml"
    f.write_text(yaml.safe_dump(dump, sort_keys=False))
    return f


@pytest.mark.slow
def test_the_dump_loads_with_its_namespaced_service_and_warns_about_nothing(result) -> None:
    assert result["warnings"] == []
    assert (result["scheduled"], len(result["evicted"])) == (6, 1)


def test_the_statefulset_spreads_one_pod_per_zone_onto_the_nodes_of_its_local_volumes(result) -> None:
    # db-0 already runs in eu-west-1a. db-1 (priority 100000, scheduled right after the preemptor): node-a1 has a
    # free local volume but would make zone a's count 2 against 0 (maxSkew 1, DoNotSchedule); node-a2's volume is
    # bound to data-db-0; node-b2 is full. node-b1 (3800m allocatable) and node-c1 both fit; node-c1 scores
    # higher (NodeResourcesFit 54 vs 44, BalancedAllocation 70 vs 76). db-2 must then go to zone b: node-b1.
    pods_ = by_name(result)
    assert (pods_["shop/db-0"]["status"], pods_["shop/db-0"]["node"]) == ("running", "node-a2")
    assert pods_["shop/db-1"]["node"] == "node-c1"
    assert pods_["shop/db-2"]["node"] == "node-b1"
    assert result["volumeBindings"] == [
        {"pod": "shop/db-1", "claim": "shop/data-db-1", "node": "node-c1", "volume": "local-pv-node-c1",
         "mode": "static"},
        {"pod": "shop/db-2", "claim": "shop/data-db-2", "node": "node-b1", "volume": "local-pv-node-b1",
         "mode": "static"},
    ]


def test_the_preemptor_evicts_the_unprotected_batch_pod_not_the_web_pods_the_budget_protects(result) -> None:
    # payments-gateway (3500m) fits nowhere: each general node holds a web pod (PDB allows 0 disruptions), db-0
    # (priority 100000) or the nightly report. Fewest PDB violations first, then the lowest highest-priority
    # victim: node-b2 and its report pod.
    assert result["evicted"] == [{"namespace": "shop", "name": "nightly-report-29004480-k8v2c", "node": "node-b2",
                                  "by": "shop/payments-gateway", "violatedBudgets": []}]
    pods_ = by_name(result)
    assert pods_["shop/payments-gateway"]["node"] == "node-b2"
    for name in RUNNING_WEB:
        assert pods_[f"shop/{name}"]["status"] == "running"


@pytest.mark.slow
def test_without_the_budget_the_preemptor_takes_a_web_pods_node(tmp_path, dralloc_cmd) -> None:
    # The budget decides: without it node-a1/b1/c1 (one priority-0 web victim each, started 22:10) beat node-b2
    # (its priority-0 victim started 21:00: the latest earliest start time wins); upstream breaks the remaining
    # tie at random.
    out = run(dralloc_cmd, without_kind(tmp_path, "PodDisruptionBudget"), "-o", "json")
    doc = json.loads(out.stdout)
    (evicted,) = doc["evicted"]
    assert evicted["name"] in RUNNING_WEB and evicted["node"] in {"node-a1", "node-b1", "node-c1"}
    assert by_name(doc)["shop/payments-gateway"]["node"] == evicted["node"]


def test_pending_pods_carry_kube_schedulers_exact_fit_errors(result) -> None:
    new_web = [p for p in pods(result, "web-") if p["name"] not in RUNNING_WEB]
    assert [p["node"] for p in new_web if p["status"] == "scheduled"] == ["node-a2"]
    assert {p["message"] for p in new_web if p["status"] == "unschedulable"} == {WEB_PENDING}
    train = pods(result, "train-")
    assert sorted(p["node"] for p in train if p["node"]) == ["gpu-a1", "gpu-b1"]
    assert [p["message"] for p in train if not p["node"]] == [TRAIN_PENDING]
    for p in train:
        for claim in p["claims"]:
            if p["node"]:
                (device,) = claim["allocation"]["devices"]["results"]
                assert (device["pool"], device["device"]) == (p["node"], "gpu-0")


def test_the_deployment_reuses_the_dumps_replicaset_so_only_three_replicas_are_added(result) -> None:
    new_web = [p for p in pods(result, "web-") if p["name"] not in RUNNING_WEB]
    assert all(p["name"].startswith("web-6d4cf56db6-") for p in new_web)
    assert [p["status"] for p in new_web].count("unschedulable") == 2
    assert len(new_web) == 3


@pytest.mark.slow
def test_statefulset_pods_the_controller_creates_use_their_claims(tmp_path, dralloc_cmd) -> None:
    # The same cluster a moment earlier: the StatefulSet scaled to 3 but db-1 and db-2 not yet created.
    out = run(dralloc_cmd, without_kind(tmp_path, "Pod", {"db-1", "db-2"}), "-o", "json")
    doc = json.loads(out.stdout)
    assert {(b["pod"], b["volume"]) for b in doc["volumeBindings"]} == {
        ("shop/db-1", "local-pv-node-c1"), ("shop/db-2", "local-pv-node-b1")}


@pytest.mark.slow
def test_two_runs_are_identical_byte_for_byte(dralloc_cmd) -> None:
    for output in ("json", "table"):
        first, second = (run(dralloc_cmd, EXAMPLE, "-o", output) for _ in range(2))
        assert first.stdout == second.stdout and first.stdout
