"""kube-scheduler's DefaultPreemption unit-test tables, run against dralloc's DefaultPreemption.

Each YAML file under ``upstream_tables/preemption/`` transcribes cases of upstream's
``default_preemption_test.go``: the nodes, the pods bound to them, the PodDisruptionBudgets, the incoming pod
and the Filter status each node got in the failed cycle (``nodeStatuses``: a code per node; a node not listed
has upstream's default, UnschedulableAndUnresolvable). The runner runs the profile's PreFilter for the pod
(NodeResourcesFit, the only Filter plugin upstream's test registers) and then DefaultPreemption's PostFilter,
and compares the node it nominates (``wantNominated``: a name, "" for none, or a list of names any of which
upstream's test accepts), its status (``wantStatus``: a code and message) and the victims there
(``wantVictims``, most important first), or only whether the pod may preempt at all (``wantEligible``). A dry-run case
(``wantCandidates``, upstream's ``TestDryRunPreemption``) instead runs the dry run over every node, with the
Filter plugins the case names (``plugins``; default NodeResourcesFit), and compares each candidate node's
victims (by name) and how many PodDisruptionBudgets they break. A case dralloc does not agree with yet says why
under ``knownDisagreement``: it runs as an expected failure that must still fail.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from upstream_table_support import assert_tables_name_their_sources, load_table, run_checked

from dralloc.api import codec
from dralloc.api.core_v1 import Node, Pod
from dralloc.scheduler import FeatureGates
from dralloc.scheduler.config.defaults import default_args
from dralloc.scheduler.framework import Code, Cycle, Diagnosis, Status
from dralloc.scheduler.profile import FACTORIES
from dralloc.simulator.simulator import Simulator

TABLES = Path(__file__).parent / "upstream_tables" / "preemption"

CODES = {"Success": Code.SUCCESS, "Error": Code.ERROR, "Unschedulable": Code.UNSCHEDULABLE,
         "UnschedulableAndUnresolvable": Code.UNRESOLVABLE}
BY_CODE = {v: k for k, v in CODES.items()}


@dataclass
class Case:
    source: str
    test: str
    name: str
    data: dict[str, Any] = field(default_factory=dict)


def _cases() -> list[Case]:
    return [Case(path.name, raw["test"], raw["name"], raw)
            for path in sorted(TABLES.glob("*.yaml")) for raw in load_table(path)["cases"]]


def _object(doc: dict[str, Any], api_version: str, kind: str) -> Any:
    return codec.decode({"apiVersion": api_version, "kind": kind, **doc}, where=kind)


def _pod(doc: dict[str, Any]) -> Pod:
    meta = {"namespace": "default", **(doc.get("metadata") or {})}
    spec = {"containers": [], **(doc.get("spec") or {})}
    pod = _object({**doc, "metadata": meta, "spec": spec}, "v1", "Pod")
    assert isinstance(pod, Pod)
    return pod


def _simulator(data: dict[str, Any]) -> tuple[Simulator, Cycle]:
    """The cluster with the incoming pod and a cycle for it whose PreFilter has run."""
    nodes: list[Node] = [_object(n, "v1", "Node") for n in data["nodes"]]
    pod = _pod(data["pod"])
    gates = ",".join(f"{k}={str(v).lower()}" for k, v in (data.get("gates") or {}).items())
    plugins = [FACTORIES[name](default_args(name, None)) for name in data.get("plugins") or ["NodeResourcesFit"]]
    sim = Simulator(nodes, [*(_pod(p) for p in data.get("existingPods") or ()), pod],
                    plugins=plugins, feature_gates=FeatureGates.parse(gates),
                    disruption_budgets=[_object({**b, "metadata": {"namespace": "default", **b["metadata"]}},
                                                "policy/v1", "PodDisruptionBudget") for b in data.get("pdbs") or ()])
    info = sim.infos[f"{pod.metadata.namespace}/{pod.metadata.name}"]
    framework = sim.framework
    cycle = Cycle(info, sim.snapshot)
    pre_filter, _, _ = framework.run_pre_filter(cycle)
    assert pre_filter is None, pre_filter
    return sim, cycle


def run_case(case: Case) -> tuple[Status, str, list[str]]:
    """DefaultPreemption's PostFilter status, the node it nominates ("" for none) and the victims there."""
    data = case.data
    sim, cycle = _simulator(data)
    framework = sim.framework
    nodes = sim.snapshot.nodes
    diagnosis = Diagnosis(node_statuses={name: Status(CODES[code]) for name, code in data["nodeStatuses"].items()},
                          absent_status=Status(Code.UNRESOLVABLE))
    assert framework.preemption is not None
    status, candidate, _ = framework.preemption.post_filter(cycle, diagnosis, len(nodes))
    if candidate is None:
        return status, "", []
    return status, candidate.node.name, [v.name for v in candidate.victims]


def dry_run(case: Case) -> dict[str, dict[str, Any]]:
    """The dry run's candidates over every node: node -> its victims (sorted by name) and PDB violations."""
    sim, cycle = _simulator(case.data)
    assert sim.framework.preemption is not None
    candidates = sim.framework.preemption.dry_run(cycle, list(sim.snapshot.nodes), {})
    return {c.node.name: {"victims": sorted(v.name for v in c.victims), "pdbViolations": c.pdb_violations}
            for c in candidates}


def _check(case: Case) -> None:
    if "wantCandidates" in case.data:
        want = {node: {"victims": sorted(c["victims"]), "pdbViolations": c.get("pdbViolations", 0)}
                for node, c in case.data["wantCandidates"].items()}
        assert dry_run(case) == want
        return
    status, nominated, victims = run_case(case)
    if "wantEligible" in case.data:
        # (upstream's TestPodEligibleToPreemptOthers: only whether the pod may preempt at all)
        assert ("not eligible" not in status.message) == case.data["wantEligible"], status
        return
    if "wantVictims" in case.data:
        assert victims == case.data["wantVictims"]
    want = case.data["wantStatus"]
    assert BY_CODE[status.code] == want["code"], status
    assert status.message == want.get("message", ""), status.message
    want_nominated = case.data["wantNominated"]
    assert nominated in want_nominated if isinstance(want_nominated, list) else nominated == want_nominated


CASES = _cases()


@pytest.mark.parametrize("case", CASES, ids=[f"{c.source}:{c.test}/{c.name}" for c in CASES])
def test_upstream_case(case: Case) -> None:
    run_checked(case.data, lambda: _check(case))


def test_every_table_names_its_source_and_skips() -> None:
    assert_tables_name_their_sources(TABLES)
