"""``--config``: a KubeSchedulerConfiguration's profiles, plugin sets, weights and args change placements as
they change kube-scheduler's."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from sched_builders import load, node, pod

from dralloc.scheduler.config import config_from_dict
from dralloc.simulator import Scheduler

V1 = "kubescheduler.config.k8s.io/v1"


def config(*profiles: dict[str, Any], **fields: Any) -> Any:
    return config_from_dict({"apiVersion": V1, "kind": "KubeSchedulerConfiguration",
                             "profiles": list(profiles), **fields})


def placements(docs: list[str], cfg: Any = None) -> dict[str, str | None]:
    result = Scheduler.from_objects(load(*docs), config=cfg).schedule()
    return {p.name: p.node for p in result.pods}


BUSY = [node("empty", cpu="8"), node("busy", cpu="8"), pod("running", cpu="4", node_name="busy")]
MOST_ALLOCATED = {"schedulerName": "default-scheduler", "pluginConfig": [{"name": "NodeResourcesFit", "args": {
    "scoringStrategy": {"type": "MostAllocated", "resources": [{"name": "cpu", "weight": 1}]}}}]}


def test_most_allocated_packs_where_least_allocated_spreads() -> None:
    docs = [*BUSY, pod("new", cpu="1")]
    assert placements(docs)["new"] == "empty"
    assert placements(docs, config(MOST_ALLOCATED))["new"] == "busy"


def test_requested_to_capacity_ratio_shape() -> None:
    shape = {"schedulerName": "default-scheduler", "pluginConfig": [{"name": "NodeResourcesFit", "args": {
        "scoringStrategy": {"type": "RequestedToCapacityRatio", "resources": [{"name": "cpu", "weight": 1}],
                            "requestedToCapacityRatio": {"shape": [{"utilization": 0, "score": 0},
                                                                   {"utilization": 100, "score": 10}]}}}}]}
    assert placements([*BUSY, pod("new", cpu="1")], config(shape))["new"] == "busy"


def test_a_disabled_filter_no_longer_rejects() -> None:
    tainted = node("tainted", cpu="8", extra="spec: {taints: [{key: x, value: y, effect: NoSchedule}]}")
    docs = [tainted, pod("new", cpu="1")]
    assert placements(docs)["new"] is None
    no_taints = {"schedulerName": "default-scheduler", "plugins": {"filter": {"disabled": [{"name": "TaintToleration"}]}}}
    assert placements(docs, config(no_taints))["new"] == "tainted"


def test_profiles_by_scheduler_name() -> None:
    packing = dict(MOST_ALLOCATED, schedulerName="bin-packing")
    docs = [*BUSY, pod("spread", cpu="1"), pod("packed", cpu="1", extra_spec="schedulerName: bin-packing"),
            pod("other", cpu="1", extra_spec="schedulerName: someone-else")]
    cfg = config({"schedulerName": "default-scheduler"}, packing)
    result = Scheduler.from_objects(load(*docs), config=cfg).schedule()
    by = {p.name: p for p in result.pods}
    assert by["spread"].node == "empty" and by["packed"].node == "busy"
    assert by["other"].status == "skipped" and 'schedulerName "someone-else"' in by["other"].message


def test_added_node_affinity_is_enforced_with_its_own_text() -> None:
    enforced = {"schedulerName": "default-scheduler", "pluginConfig": [{"name": "NodeAffinity", "args": {
        "addedAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": "pool", "operator": "In", "values": ["batch"]}]}]}}}}]}
    docs = [node("web", cpu="8", labels="{pool: web}"), pod("new", cpu="1")]
    result = Scheduler.from_objects(load(*docs), config=config(enforced)).schedule()
    assert result.pods[0].message.startswith(
        "0/1 nodes are available: 1 node(s) didn't match scheduler-enforced node affinity.")
    docs.append(node("batch-1", cpu="8", labels="{pool: batch}"))
    assert placements(docs, config(enforced))["new"] == "batch-1"


def test_without_default_preemption_nothing_is_evicted() -> None:
    docs = [node("n", cpu="2"), pod("low", cpu="2", node_name="n", priority=0), pod("high", cpu="2", priority=100)]
    assert Scheduler.from_objects(load(*docs)).schedule().evicted
    no_preemption = {"schedulerName": "default-scheduler",
                     "plugins": {"postFilter": {"disabled": [{"name": "DefaultPreemption"}]}}}
    result = Scheduler.from_objects(load(*docs), config=config(no_preemption)).schedule()
    assert not result.evicted
    high = next(p for p in result.pods if p.name == "high")
    assert "preemption" not in high.message


def test_list_default_spread_constraints() -> None:
    listed = {"schedulerName": "default-scheduler", "pluginConfig": [{"name": "PodTopologySpread", "args": {
        "defaultingType": "List", "defaultConstraints": [
            {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"}]}}]}
    owner = ", ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: web, uid: rs, controller: true}]"
    rs = ("apiVersion: apps/v1\nkind: ReplicaSet\nmetadata: {name: web, namespace: default, uid: rs}\n"
          "spec: {replicas: 0, selector: {matchLabels: {app: web}}, template: {metadata: {labels: {app: web}},"
          " spec: {containers: [{name: c, image: x}]}}}\n")

    def web(name: str, on: str = "") -> str:
        doc = pod(name, cpu="100m", node_name=on)
        return doc.replace(f"metadata: {{name: {name}, namespace: default}}",
                           f"metadata: {{name: {name}, namespace: default, labels: {{app: web}}{owner}}}")
    docs = [node("a1", cpu="8", labels="{zone: a}"), node("a2", cpu="8", labels="{zone: a}"),
            node("b1", cpu="150m", labels="{zone: b}"), rs, web("w1", "a1"), web("w2", "b1"), web("w3", "a2"),
            web("new")]
    # Zone a holds 2, zone b 1 with no room left: a third in zone a breaks maxSkew 1 → pending.
    result = Scheduler.from_objects(load(*docs), config=config(listed)).schedule()
    new = next(p for p in result.pods if p.name == "new")
    assert new.node is None and "didn't match pod topology spread constraints" in new.message
    assert placements(docs)["new"] in ("a1", "a2")  # the system defaults only score


@pytest.mark.slow
def test_simulate_cli_reads_config_and_refuses_an_invalid_one(tmp_path: Path, dralloc_cmd: list[str]) -> None:
    cluster = tmp_path / "c.yaml"
    cluster.write_text("\n---\n".join([*BUSY, pod("new", cpu="1")]))
    good = tmp_path / "sched.yaml"
    good.write_text(json.dumps({"apiVersion": V1, "kind": "KubeSchedulerConfiguration", "profiles": [MOST_ALLOCATED]}))
    out = subprocess.run([*dralloc_cmd, "simulate", "-f", str(cluster), "--config", str(good), "-o", "json"],
                         capture_output=True, text=True, check=False)
    assert out.returncode == 0, out.stderr
    assert next(p for p in json.loads(out.stdout)["pods"] if p["name"] == "new")["node"] == "busy"
    bad = tmp_path / "bad.yaml"
    bad.write_text(f"apiVersion: {V1}\nkind: KubeSchedulerConfiguration\npercentageOfNodesToScore: 101\n")
    out = subprocess.run([*dralloc_cmd, "simulate", "-f", str(cluster), "--config", str(bad)],
                         capture_output=True, text=True, check=False)
    assert out.returncode == 2
    assert "percentageOfNodesToScore: Invalid value: 101: not in valid range [0-100]" in out.stderr
    assert "Traceback" not in out.stderr
