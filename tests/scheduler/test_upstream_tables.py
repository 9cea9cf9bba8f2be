"""kube-scheduler's own plugin unit-test tables, run against dralloc's plugins.

Each YAML file under ``upstream_tables/`` transcribes one upstream ``*_test.go`` file of
``pkg/scheduler/framework/plugins/``: per case the nodes, the pods already bound to them, the incoming pod, the
storage objects a volume plugin reads (PVs, PVCs, StorageClasses, CSINodes, CSIDrivers: per table or per case),
the plugin args and feature gates the upstream test sets, and the verdict (Filter: code, and message where
upstream checks it) or the normalised score it expects per node. A case runs through the plugin's real
extension points in a one-plugin profile: PreFilter, then Filter on every node (a filter case) or PreScore +
Score + NormalizeScore on the nodes the upstream test scores (a score case), as the framework runs them in a
cycle.

A table lists the upstream tests it leaves out under ``skipped`` with the reason (Go internals: state structs,
clones, queueing hints, calls the framework never makes). A case dralloc does not agree with yet says why under
``knownDisagreement``: it runs as an expected failure that must still fail, so a fix shows as soon as it lands.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec
import pytest
from upstream_table_support import assert_tables_name_their_sources, load_table, run_checked

from dralloc.api import codec
from dralloc.api.core_v1 import Node, Pod
from dralloc.scheduler import FeatureGates
from dralloc.scheduler.config import types as cfg
from dralloc.scheduler.config.defaults import default_args
from dralloc.scheduler.framework import Code, Cycle, Plugin, Status
from dralloc.scheduler.profile import FACTORIES
from dralloc.simulator.simulator import Simulator

TABLES = Path(__file__).parent / "upstream_tables"

ARGS_TYPES: dict[str, type[cfg.ArgsBase]] = {
    "PodTopologySpread": cfg.PodTopologySpreadArgs,
    "InterPodAffinity": cfg.InterPodAffinityArgs,
    "NodeResourcesFit": cfg.NodeResourcesFitArgs,
    "NodeResourcesBalancedAllocation": cfg.NodeResourcesBalancedAllocationArgs,
    "NodeAffinity": cfg.NodeAffinityArgs,
}

# The storage objects a table may list (for all its cases, or per case): key -> (apiVersion, kind, Simulator
# argument).
VOLUME_KINDS = {
    "persistentVolumes": ("v1", "PersistentVolume", "persistent_volumes"),
    "persistentVolumeClaims": ("v1", "PersistentVolumeClaim", "persistent_volume_claims"),
    "storageClasses": ("storage.k8s.io/v1", "StorageClass", "storage_classes"),
    "csiNodes": ("storage.k8s.io/v1", "CSINode", "csi_nodes"),
    "csiDrivers": ("storage.k8s.io/v1", "CSIDriver", "csi_drivers"),
}

# Upstream's status codes by the names its tables use.
CODES = {"Success": Code.SUCCESS, "Error": Code.ERROR, "Unschedulable": Code.UNSCHEDULABLE,
         "UnschedulableAndUnresolvable": Code.UNRESOLVABLE, "Skip": Code.SKIP}


@dataclass
class Case:
    source: str
    plugin: str
    test: str
    name: str
    data: dict[str, Any] = field(default_factory=dict)

    @property
    def id(self) -> str:
        return f"{self.test}/{self.name}"


def _cases() -> list[Case]:
    cases: list[Case] = []
    for path in sorted(TABLES.glob("*.yaml")):
        table = load_table(path)
        for raw in table["cases"]:
            # Table-wide settings (the plugin args every upstream test of the file sets), unless a case has its own.
            data = {**{k: table[k] for k in ("args", "gates", *VOLUME_KINDS) if k in table}, **raw}
            cases.append(Case(path.name, raw.get("plugin", table["plugin"]), raw["test"], raw["name"], data))
    return cases


def _object(doc: dict[str, Any], api_version: str, kind: str) -> Any:
    return codec.decode({"apiVersion": api_version, "kind": kind, **doc}, where=kind)


def _pod(doc: dict[str, Any]) -> Pod:
    doc = dict(doc)
    meta = dict(doc.get("metadata") or {})
    meta.setdefault("namespace", "default")
    meta.setdefault("uid", f"{meta['namespace']}/{meta.get('name')}")
    doc["metadata"] = meta
    spec = dict(doc.get("spec") or {})
    spec.setdefault("containers", [])
    doc["spec"] = spec
    pod = _object(doc, "v1", "Pod")
    assert isinstance(pod, Pod)
    return pod


def _namespaced(doc: dict[str, Any]) -> dict[str, Any]:
    return {**doc, "metadata": {"namespace": "default", **(doc.get("metadata") or {})}}


def _plugin(case: Case) -> Plugin:
    args_type = ARGS_TYPES.get(case.plugin)
    args = msgspec.convert(case.data["args"], args_type) if args_type and "args" in case.data else None
    return FACTORIES[case.plugin](default_args(case.plugin, args))


@dataclass
class Outcome:
    pre_filter: Status | None
    pre_filter_skipped: bool
    pre_filter_nodes: set[str] | None
    codes: dict[str, str]
    messages: dict[str, str]
    scores: dict[str, int]
    pre_score: Status | None = None


def run_case(case: Case) -> Outcome:
    data = case.data
    nodes: list[Node] = [_object(n, "v1", "Node") for n in data.get("nodes") or ()]
    existing = [_pod(p) for p in data.get("existingPods") or ()]
    incoming = _pod(data["pod"])
    plugin = _plugin(case)
    sim = Simulator(nodes, [*existing, incoming], plugins=[plugin],
                    feature_gates=FeatureGates.parse(",".join(f"{k}={str(v).lower()}"
                                                              for k, v in (data.get("gates") or {}).items())),
                    services=[_object(s, "v1", "Service") for s in data.get("services") or ()],
                    controllers=[_object(r, "apps/v1", "ReplicaSet") for r in data.get("replicaSets") or ()],
                    namespaces=[_object(n, "v1", "Namespace") for n in data.get("namespaces") or ()],
                    classes=[_object(c, "resource.k8s.io/v1", "DeviceClass") for c in data.get("deviceClasses") or ()],
                    slices=[_object(r, "resource.k8s.io/v1", "ResourceSlice") for r in data.get("resourceSlices") or ()],
                    claims=[_object(c, "resource.k8s.io/v1", "ResourceClaim") for c in data.get("resourceClaims") or ()],
                    **{arg: [_object(_namespaced(o) if kind == "PersistentVolumeClaim" else o, version, kind)
                             for o in data.get(key) or ()]
                       for key, (version, kind, arg) in VOLUME_KINDS.items()})
    info = sim.infos[f"{incoming.metadata.namespace}/{incoming.metadata.name}"]
    framework = sim.framework
    cycle = Cycle(info, sim.snapshot)
    pre_status, names, _ = framework.run_pre_filter(cycle)
    codes: dict[str, str] = {}
    messages: dict[str, str] = {}
    scores: dict[str, int] = {}
    by_code = {v: k for k, v in CODES.items()}
    if "wantScores" in data or "wantPreScore" in data:
        assert pre_status is None or pre_status.code != Code.ERROR, pre_status
        scored = data.get("scoredNodes")
        feasible = [n for n in sim.snapshot.nodes if scored is None or n.name in scored]
        # The plugin's own PreScore verdict, as the upstream test reads it; then the framework's score run.
        pre_score = plugin.pre_score(cycle, feasible)
        if pre_score is None:
            for _, normalised in framework.plugin_scores(cycle, feasible, {n.name: n for n in feasible}):
                scores.update(normalised)
        elif pre_score.code == Code.SKIP and "wantScores" in data:
            # A plugin whose PreScore skips the pod adds nothing to any node's total: 0 for every node.
            scores = dict.fromkeys((n.name for n in feasible), 0)
            pre_score = None
        return Outcome(pre_status, plugin.name in cycle.skip_filter, names, codes, messages, scores, pre_score)
    for node in sim.snapshot.nodes:
        status: Status | None
        if pre_status is not None:
            status = pre_status
        elif plugin.name in cycle.skip_filter:
            codes[node.name] = "Success"
            continue
        else:
            status = framework.run_filters(cycle, node)
        codes[node.name] = "Success" if status is None else by_code[status.code]
        if status is not None:
            # (the framework names the plugin in front of an error; upstream's tests call the plugin itself)
            messages[node.name] = status.message.removeprefix(f'running "{plugin.name}" filter plugin: ') \
                if status.code == Code.ERROR else status.message
    return Outcome(pre_status, plugin.name in cycle.skip_filter, names, codes, messages, scores)


CASES = _cases()


@pytest.mark.parametrize("case", CASES, ids=[f"{c.source}:{c.id}" for c in CASES])
def test_upstream_case(case: Case) -> None:
    run_checked(case.data, lambda: _check(case))


def _check(case: Case) -> None:
    outcome = run_case(case)
    data = case.data
    if "wantPreScore" in data:
        want = data["wantPreScore"]
        assert outcome.pre_score is not None and outcome.pre_score.code == CODES[want["code"]], outcome.pre_score
        assert want.get("messageContains", "") in outcome.pre_score.message
        return
    if "wantScores" in data:
        assert outcome.pre_score is None
        assert outcome.scores == data["wantScores"]
        return
    # PreFilter's result: the only nodes worth filtering (None: all of them)
    want_nodes = data.get("wantPreFilterNodes")
    assert outcome.pre_filter_nodes == (set(want_nodes) if want_nodes is not None else None)
    want_pre = data.get("wantPreFilter")
    if want_pre is None:
        assert outcome.pre_filter is None and not outcome.pre_filter_skipped
    elif want_pre["code"] == "Skip":
        # (a PreFilter that returns Skip turns the plugin's Filter off: the framework passes every node)
        assert outcome.pre_filter is None and outcome.pre_filter_skipped
    else:
        got = outcome.pre_filter
        assert got is not None and got.code == CODES[want_pre["code"]]
        assert got.message == want_pre.get("message", got.message)
        return
    want = data["want"]
    want_codes = {node: w if isinstance(w, str) else w["code"] for node, w in want.items()}
    assert outcome.codes == want_codes
    want_messages = {node: w["message"] for node, w in want.items() if not isinstance(w, str) and "message" in w}
    assert {node: outcome.messages.get(node, "") for node in want_messages} == want_messages


def test_every_table_names_its_source_and_skips() -> None:
    assert_tables_name_their_sources(TABLES)
