"""kube-scheduler's plugin unit-test tables that follow a pod through the whole cycle, run against dralloc.

Each YAML file under ``upstream_tables/lifecycle/`` transcribes one upstream ``*_test.go`` table whose cases
check every extension point of one plugin in turn (DynamicResources' ``TestPlugin``): PreEnqueue, PreFilter,
Filter on each node, Score and NormalizeScore, Reserve, PreBind or Unreserve, PostFilter, and the state of the
objects the plugin writes (here the ResourceClaims) after the last step. The runner calls the plugin's own
extension points in upstream's order, as upstream's test does, over a one-plugin simulator that holds the
case's objects.

A case's expectations: ``wantPreEnqueue``, ``wantPreFilter``, ``wantFilter`` (per node; a node not named
passes), ``wantScores`` / ``wantNormalizedScores``, ``wantInFlight`` (the claims Reserve allocates),
``wantPreBind``, ``wantPostFilter`` (each a code and a ``message``, or ``messageContains``, a text or texts
the message must hold, where upstream's test checks part of it) and ``wantClaims`` (every claim after the last step; see :func:`claim_view`).
A step without an expectation must succeed. ``unreserveBeforePreBind`` runs Unreserve instead of PreBind (as
if another PreBind plugin had failed), ``unreserveAfterBindFailure`` runs it after PreBind (as if Bind had
failed). A case dralloc does not agree with yet says why under ``knownDisagreement``: it runs as an
expected failure that must still fail.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import msgspec
import pytest
from upstream_table_support import assert_tables_name_their_sources, load_table, run_checked

from dralloc.api import codec
from dralloc.api.core_v1 import Node, Pod
from dralloc.api.resource_v1 import ResourceClaim
from dralloc.scheduler import FeatureGates
from dralloc.scheduler.config import types as cfg
from dralloc.scheduler.config.validation import parse_duration
from dralloc.scheduler.framework import Code, Cycle, Status
from dralloc.scheduler.plugins.dynamic_resources import NAME, DraCycle, DynamicResources, pinned_names
from dralloc.simulator.simulator import Simulator

TABLES = Path(__file__).parent / "upstream_tables" / "lifecycle"

CODES = {"Success": Code.SUCCESS, "Error": Code.ERROR, "Unschedulable": Code.UNSCHEDULABLE,
         "UnschedulableAndUnresolvable": Code.UNRESOLVABLE, "Skip": Code.SKIP}
BY_CODE = {v: k for k, v in CODES.items()}


@dataclass
class Case:
    source: str
    name: str
    data: dict[str, Any] = field(default_factory=dict)


def _cases() -> list[Case]:
    cases: list[Case] = []
    for path in sorted(TABLES.glob("*.yaml")):
        table = load_table(path)
        for raw in table["cases"]:
            # the table's feature gates under the case's own; the table's clock
            data = {**raw, "gates": {**(table.get("gates") or {}), **(raw.get("gates") or {})},
                    "now": raw.get("now", table.get("now"))}
            cases.append(Case(path.name, raw["name"], data))
    return cases


def _object(doc: dict[str, Any], api_version: str, kind: str) -> Any:
    return codec.decode({"apiVersion": api_version, "kind": kind, **doc}, where=kind)


def _pod(doc: dict[str, Any]) -> Pod:
    meta = {"namespace": "default", **(doc.get("metadata") or {})}
    meta.setdefault("uid", f"{meta['namespace']}/{meta.get('name')}")
    spec = {"containers": [], **(doc.get("spec") or {})}
    pod = _object({**doc, "metadata": meta, "spec": spec}, "v1", "Pod")
    assert isinstance(pod, Pod)
    return pod


def claim_view(claim: ResourceClaim) -> dict[str, Any]:
    """What upstream's test compares of a claim, in short: each allocation result as ``"<request>
    <driver>/<pool>"`` (plus `` adminAccess``; upstream ignores which device), the nodes the allocation's
    selector pins (``other`` for any other selector), the pods in ``reservedFor``, the finalizers, and how
    many device statuses the claim carries. Empty parts are left out."""
    view: dict[str, Any] = {}
    status = claim.status
    allocation = status.allocation if status is not None else None
    if allocation is not None:
        results = allocation.devices.results or [] if allocation.devices is not None else []
        view["results"] = [f"{r.request} {r.driver}/{r.pool}" + (" adminAccess" if r.admin_access else "")
                           for r in results]
        selector = allocation.node_selector
        pinned = pinned_names(selector) if selector is not None else None
        view["nodes"] = sorted(pinned) if pinned is not None else ["other"]
    if status is not None and status.reserved_for:
        view["reservedFor"] = [r.name for r in status.reserved_for]
    if claim.metadata.finalizers:
        view["finalizers"] = list(claim.metadata.finalizers)
    if status is not None and status.devices:
        view["devices"] = len(status.devices)
    return view


@dataclass
class Outcome:
    """What each extension point answered (absent: not reached) and the claims at the end."""

    statuses: dict[str, Status | None] = field(default_factory=dict)
    filters: dict[str, Status | None] = field(default_factory=dict)
    scores: dict[str, int] | None = None
    normalized: dict[str, int] | None = None
    in_flight: list[str] | None = None
    claims: dict[str, dict[str, Any]] = field(default_factory=dict)


def _plugin(data: dict[str, Any]) -> DynamicResources:
    args = msgspec.convert(data.get("args") or {}, cfg.DynamicResourcesArgs)
    if args.filter_timeout is not None:
        return DynamicResources(filter_timeout=parse_duration(args.filter_timeout))
    return DynamicResources()


def run_case(case: Case) -> Outcome:
    data = case.data
    nodes: list[Node] = [_object(n, "v1", "Node") for n in data.get("nodes") or
                         [{"metadata": {"name": "worker", "labels": {"kubernetes.io/hostname": "worker"}}}]]
    pod = _pod(data["pod"])
    plugin = _plugin(data)
    gates = ",".join(f"{k}={str(v).lower()}" for k, v in data["gates"].items())
    sim = Simulator(nodes, [pod], plugins=[plugin], feature_gates=FeatureGates.parse(gates),
                    now=datetime.fromisoformat(data["now"].replace("Z", "+00:00")) if data.get("now") else None,
                    classes=[_object(c, "resource.k8s.io/v1", "DeviceClass") for c in data.get("classes") or ()],
                    slices=[_object(s, "resource.k8s.io/v1", "ResourceSlice") for s in data.get("slices") or ()],
                    claims=[_object(c, "resource.k8s.io/v1", "ResourceClaim") for c in data.get("claims") or ()])
    # the special claim of extended resources is named as upstream's fake API server names it
    plugin.new_claim_name = lambda generate: generate + "0"
    info = sim.infos[f"{pod.metadata.namespace}/{pod.metadata.name}"]
    out = Outcome()

    def finish() -> Outcome:
        out.claims = {c.metadata.name or "": claim_view(c) for c in sim.snapshot.claims.values()}
        return out

    out.statuses["preEnqueue"] = status = plugin.pre_enqueue(info)
    if status is not None:
        return finish()
    cycle = Cycle(info, sim.snapshot)
    result = plugin.pre_filter(cycle)
    assert not isinstance(result, set), "DynamicResources never narrows the nodes in PreFilter"
    out.statuses["preFilter"] = result
    passing = []
    if result is None or not result.rejected:
        for node in (sim.snapshot.by_name[n.metadata.name or ""] for n in nodes):
            # (upstream's test calls Filter even after PreFilter's Skip, where it passes every node)
            out.filters[node.name] = status = plugin.filter(cycle, node)
            if status is not None and status.code == Code.ERROR:
                return finish()  # an error aborts the attempt
            if status is None:
                passing.append(node)
    if not passing:
        out.statuses["postFilter"] = plugin.post_filter(cycle)
        return finish()
    chosen = passing[0]
    if len(passing) > 1:
        assert plugin.pre_score(cycle, passing) is None
        out.scores = {n.name: plugin.score(cycle, n) for n in passing}
        out.normalized = plugin.normalize(cycle, dict(out.scores))
        best = max(out.normalized.values())
        chosen = next(n for n in passing if out.normalized[n.name] == best)
    out.statuses["reserve"] = status = plugin.reserve(cycle, chosen)
    state: DraCycle | None = cycle.data.get(NAME)
    if state is not None and state.reservation is not None and state.reservation.claims:
        out.in_flight = sorted(c.metadata.name or "" for c in state.reservation.claims)
    if status is not None:
        plugin.unreserve(cycle, chosen)
        return finish()
    if data.get("unreserveBeforePreBind"):
        plugin.unreserve(cycle, chosen)
        return finish()
    out.statuses["preBind"] = plugin.pre_bind(cycle, chosen)
    if data.get("unreserveAfterBindFailure"):
        plugin.unreserve(cycle, chosen)
    return finish()


def _check_status(point: str, got: Status | None, want: dict[str, Any] | None) -> None:
    if want is None or want["code"] == "Success":
        assert got is None or got.code == Code.SUCCESS, f"{point}: {got}"
        return
    assert got is not None, f"{point}: passed, want {want}"
    assert BY_CODE[got.code] == want["code"], f"{point}: {got}"
    if "message" in want:
        assert got.message == want["message"], f"{point}: {got.message!r}"
    parts = want.get("messageContains", [])
    for part in [parts] if isinstance(parts, str) else parts:
        assert part in got.message, f"{point}: {got.message!r}"


def _check(case: Case) -> None:
    data = case.data
    out = run_case(case)
    for point, key in (("preEnqueue", "wantPreEnqueue"), ("preFilter", "wantPreFilter"),
                       ("reserve", "wantReserve"), ("preBind", "wantPreBind"), ("postFilter", "wantPostFilter")):
        if point in out.statuses:
            _check_status(point, out.statuses[point], data.get(key))
        else:
            assert key not in data, f"{point} was not reached"
    want_filter = data.get("wantFilter") or {}
    for node, status in out.filters.items():
        _check_status(f"filter {node}", status, want_filter.get(node))
    assert set(want_filter) <= set(out.filters), f"filtered only {sorted(out.filters)}"
    assert out.scores == data.get("wantScores")
    assert out.normalized == data.get("wantNormalizedScores")
    assert out.in_flight == data.get("wantInFlight"), out.in_flight
    if "wantClaims" in data:
        assert out.claims == data["wantClaims"]


CASES = _cases()


@pytest.mark.parametrize("case", CASES, ids=[f"{c.source}:{c.name}" for c in CASES])
def test_upstream_case(case: Case) -> None:
    run_checked(case.data, lambda: _check(case))


def test_every_table_names_its_source_and_skips() -> None:
    assert_tables_name_their_sources(TABLES)


def test_a_pod_whose_stale_extended_claim_postfilter_deletes_is_tried_again_and_scheduled() -> None:
    """The cycle after upstream's ``extended-resource-name-with-resources-has-claim``: PostFilter's deletion
    changes the cluster, so the pod is tried again at once and gets a claim of its own on the node."""
    case = next(c for c in CASES if c.name == "extended-resource-name-with-resources-has-claim")
    data = case.data
    pod = _pod(data["pod"])
    gates = ",".join(f"{k}={str(v).lower()}" for k, v in data["gates"].items())
    node = {"metadata": {"name": "worker"}, "status": {"capacity": {"pods": "10"}, "allocatable": {"pods": "10"}}}
    sim = Simulator([_object(node, "v1", "Node")], [pod],
                    feature_gates=FeatureGates.parse(gates),
                    classes=[_object(c, "resource.k8s.io/v1", "DeviceClass") for c in data["classes"]],
                    slices=[_object(s, "resource.k8s.io/v1", "ResourceSlice") for s in data["slices"]],
                    claims=[_object(c, "resource.k8s.io/v1", "ResourceClaim") for c in data["claims"]])
    (result,) = sim.schedule().pods
    assert (result.status, result.node) == ("scheduled", "worker"), result.message
    names = [c.metadata.name for c in sim.snapshot.claims.values()]
    assert len(names) == 1 and names[0] != "my-pod-extended-resources-0"
    assert names[0].startswith("my-pod-extended-resources-")
