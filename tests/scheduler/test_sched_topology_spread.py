"""PodTopologySpread as kube-scheduler 1.36 runs it: each rule with a cluster whose placement it decides."""

from __future__ import annotations

import random
import textwrap

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sched_builders import by_name, load

from dralloc.api.core_v1 import TopologySpreadConstraint
from dralloc.scheduler import FeatureGates, Scheduler
from dralloc.scheduler.nodeinfo import NodeInfo
from dralloc.scheduler.plugins.pod_topology_spread import scoring
from dralloc.scheduler.plugins.pod_topology_spread.constraints import (
    Selector,
    SpreadConstraint,
    parse_constraints,
    parse_selector,
)

SKEW = "node(s) didn't match pod topology spread constraints"
MISSING = "node(s) didn't match pod topology spread constraints (missing required label)"
ZONE = "topology.kubernetes.io/zone"


def node(name: str, zone: str | None = None, cpu: str = "4", extra: str = "", labels: str = "",
         memory: str = "8Gi") -> str:
    zone_label = f', {ZONE}: "{zone}"' if zone is not None else ""
    return textwrap.dedent(f"""\
        apiVersion: v1
        kind: Node
        metadata: {{name: {name}, labels: {{kubernetes.io/hostname: {name}{zone_label}{labels}}}}}
        {extra}
        status: {{allocatable: {{cpu: "{cpu}", memory: {memory}, pods: "110"}}}}
        """)


def pod(name: str, labels: str = "{app: web}", cpu: str = "100m", on: str = "", spread: str = "",
        ns: str = "default", meta: str = "", spec: str = "") -> str:
    lines = ["apiVersion: v1", "kind: Pod",
             f"metadata: {{name: {name}, namespace: {ns}, labels: {labels}{meta}}}", "spec:",
             f"  containers: [{{name: c, resources: {{requests: {{cpu: \"{cpu}\"}}}}}}]"]
    if on:
        lines.append(f"  nodeName: {on}")
    if spread:
        lines.append(f"  topologySpreadConstraints: {spread}")
    for extra in textwrap.dedent(spec).splitlines():
        if extra.strip():
            lines.append("  " + extra)
    return "\n".join(lines) + "\n"


def zone_spread(skew: int = 1, when: str = "DoNotSchedule", extra: str = "", selector: str = "{matchLabels: {app: web}}"
                ) -> str:
    return f"[{{maxSkew: {skew}, topologyKey: {ZONE}, whenUnsatisfiable: {when}, labelSelector: {selector}{extra}}}]"


def run(*docs: str, gates: str = "", seed: int = 0, group_nodes: bool = True, nominated: tuple[str, ...] = ()
        ) -> tuple[Scheduler, dict]:
    from dralloc.controllers.names import NameGenerator
    from dralloc.simulator.loading import sort_objects

    objs = sort_objects(load(*docs), NameGenerator(seed))
    sched = Scheduler(objs.nodes, objs.pods, seed=seed, feature_gates=FeatureGates.parse(gates),
                      group_nodes=group_nodes, services=objs.services,
                      controllers=[*objs.replication_controllers, *objs.workloads],
                      nominated=[o for o in load(*nominated)] if nominated else ())
    return sched, by_name(sched.schedule())


# A node made unattractive to resource scoring: most of its cpu is taken by an unrelated pod.
def busy(name: str) -> str:
    return pod(f"filler-{name}", labels="{role: filler}", cpu="3", on=name)


THREE_ZONES = (node("a1", "a"), node("b1", "b"), node("c1", "c"))


# --- Filter -------------------------------------------------------------------------------------------


def test_max_skew_sends_the_pod_to_the_emptiest_zone_even_against_the_resource_scores() -> None:
    docs = (*THREE_ZONES, busy("b1"), pod("w1", on="a1"), pod("w2", on="a1"), pod("w3", on="c1"))
    _, placed = run(*docs, pod("new", spread=zone_spread()))
    assert placed["new"].node == "b1"
    _, free = run(*docs, pod("new"))  # no constraint, no Service: resource scoring alone avoids the busy node
    assert free["new"].node != "b1"


def test_skew_larger_than_max_skew_is_allowed_up_to_max_skew() -> None:
    docs = (*THREE_ZONES, busy("b1"), busy("c1"), pod("w1", on="a1"), pod("w2", on="a1"))
    _, placed = run(*docs, pod("new", spread=zone_spread(skew=3)))
    assert placed["new"].node == "a1"  # 2 + 1 - 0 = 3 <= 3
    _, tight = run(*docs, pod("new", spread=zone_spread(skew=2)))
    assert tight["new"].node in ("b1", "c1")


def test_fit_error_counts_skew_missing_label_and_other_filters() -> None:
    docs = (node("a1", "a"), node("b1", "b", cpu="1"), node("x1"),
            pod("w1", on="a1"), pod("w2", on="a1"), pod("new", cpu="1500m", spread=zone_spread()))
    sched, placed = run(*docs)
    assert placed["new"].status == "unschedulable"
    assert placed["new"].message == (
        "0/3 nodes are available: 1 Insufficient cpu, 1 node(s) didn't match pod topology spread constraints, "
        "1 node(s) didn't match pod topology spread constraints (missing required label). no new claims to "
        "deallocate, preemption: 0/3 nodes are available: 1 No preemption victims found for incoming pod, "
        "2 Preemption is not helpful for scheduling.")


def test_min_domains_counts_missing_domains_as_empty() -> None:
    docs = (node("a1", "a"), node("b1", "b"), pod("w1", on="a1"), pod("w2", on="b1"))
    _, plain = run(*docs, pod("new", spread=zone_spread()))
    assert plain["new"].status == "scheduled"
    _, placed = run(*docs, pod("new", spread=zone_spread(extra=", minDomains: 3")))
    assert placed["new"].status == "unschedulable"
    assert placed["new"].message.startswith(f"0/2 nodes are available: 2 {SKEW}.")


def test_node_affinity_policy_honor_leaves_excluded_zones_out_of_the_minimum() -> None:
    docs = (node("a1", "a", labels=", tier: gold"), node("b1", "b", labels=", tier: gold"), node("c1", "c"),
            pod("w1", on="a1"), pod("w2", on="b1"), pod("w3", on="b1"))
    selector = "nodeSelector: {tier: gold}"
    _, honored = run(*docs, pod("new", spread=zone_spread(), spec=selector))
    assert honored["new"].node == "a1"  # min over a, b = 1: a gives 1 + 1 - 1
    _, ignored = run(*docs, pod("new", spread=zone_spread(extra=", nodeAffinityPolicy: Ignore"), spec=selector))
    assert ignored["new"].status == "unschedulable"  # zone c (0 pods) makes the minimum 0
    assert f"2 {SKEW}" in ignored["new"].message


def test_node_taints_policy_honor_leaves_tainted_nodes_out() -> None:
    taint = "spec: {taints: [{key: dedicated, value: x, effect: NoSchedule}]}"
    docs = (node("a1", "a"), node("b1", "b"), node("c1", "c", extra=taint), pod("w1", on="a1"), pod("w2", on="b1"))
    _, ignored = run(*docs, pod("new", spread=zone_spread()))
    assert ignored["new"].status == "unschedulable"  # default Ignore: the tainted zone c counts, with 0 pods
    _, honored = run(*docs, pod("new", spread=zone_spread(extra=", nodeTaintsPolicy: Honor")))
    assert honored["new"].node in ("a1", "b1")


def test_match_label_keys_narrow_the_selector_to_the_pods_own_values() -> None:
    docs = (node("a1", "a"), node("b1", "b"), busy("b1"),
            pod("old1", labels="{app: web, pod-template-hash: v1}", on="a1"),
            pod("old2", labels="{app: web, pod-template-hash: v1}", on="a1"))
    new = pod("new", labels="{app: web, pod-template-hash: v2}",
              spread=zone_spread(extra=", matchLabelKeys: [pod-template-hash]"))
    _, keyed = run(*docs, new)
    assert keyed["new"].node == "a1"  # the v1 pods do not count
    _, gated = run(*docs, new, gates="MatchLabelKeysInPodTopologySpread=false")
    assert gated["new"].node == "b1"


def test_terminating_pods_and_pods_of_other_namespaces_do_not_count() -> None:
    deleting = ", deletionTimestamp: '2026-01-01T00:00:00Z'"
    docs = (node("a1", "a"), node("b1", "b"), busy("b1"))
    _, terminating = run(*docs, pod("w1", on="a1", meta=deleting), pod("w2", on="a1", meta=deleting),
                         pod("new", spread=zone_spread()))
    assert terminating["new"].node == "a1"
    _, elsewhere = run(*docs, pod("w1", on="a1", ns="other"), pod("w2", on="a1", ns="other"),
                       pod("new", spread=zone_spread()))
    assert elsewhere["new"].node == "a1"
    _, counted = run(*docs, pod("w1", on="a1"), pod("w2", on="a1"), pod("new", spread=zone_spread()))
    assert counted["new"].node == "b1"


def test_an_empty_label_selector_counts_no_pods_but_matches_the_pod_itself() -> None:
    docs = (node("a1", "a"), node("b1", "b"), busy("b1"), pod("w1", on="a1"), pod("w2", on="a1"))
    _, placed = run(*docs, pod("new", spread=zone_spread(selector="{}")))
    assert placed["new"].node == "a1"  # 1.36 counts 0 pods for a selector without requirements
    _, unset = run(*docs, pod("new", spread=f"[{{maxSkew: 1, topologyKey: {ZONE}, whenUnsatisfiable: DoNotSchedule}}]"))
    assert unset["new"].node == "a1"  # an unset selector matches nothing


def test_a_node_without_the_topology_key_stays_unfit_after_evicting_its_pods() -> None:
    docs = (node("x1"), pod("low", on="x1", cpu="3900m", spec="priority: 0"),
            pod("new", cpu="500m", spread=zone_spread(), spec="priority: 100"))
    _, placed = run(*docs)
    assert placed["new"].message == ("0/1 nodes are available: 1 Insufficient cpu. no new claims to deallocate, "
                                     f"preemption: 0/1 nodes are available: 1 {MISSING}.")
    assert placed["low"].status == "running"
    _, alone = run(*docs[:2], pod("new", cpu="500m", spec="priority: 100"))
    assert alone["low"].status == "evicted"


# --- PreFilter extensions -------------------------------------------------------------------------------


def test_preemption_removes_matching_victims_from_the_counts() -> None:
    docs = (node("a1", "a"), node("b1", "b"), node("c1", "c", cpu="1"),
            pod("w1", on="a1", spec="priority: 0"), pod("w2", on="b1", spec="priority: 0"),
            pod("guard", labels="{role: x}", on="c1", cpu="950m", spec="priority: 1000"),
            pod("new", cpu="500m", spread=zone_spread(), spec="priority: 50"))
    sched, placed = run(*docs)
    # a and b: 1 + 1 - 0 > 1; c has no room. Evicting the matching pod of a (or b) brings its zone to 0.
    assert [(e.name, e.node) for e in sched.evicted] in ([("w1", "a1")], [("w2", "b1")])
    assert placed["new"].node == sched.evicted[0].node


def test_nominated_pods_count_in_their_zone() -> None:
    docs = (node("a1", "a"), node("b1", "b"), busy("a1"), pod("new", spread=zone_spread(), spec="priority: 0"))
    held = pod("held", spec="priority: 10").replace("spec:", "status: {nominatedNodeName: b1}\nspec:", 1)
    _, without = run(*docs)
    assert without["new"].node == "b1"
    _, placed = run(*docs, nominated=(held,))
    assert placed["new"].node == "a1"  # with the nominated pod, zone b would be 1 + 1 - 0 > 1


# --- Score ----------------------------------------------------------------------------------------------


def _info(name: str, labels: dict[str, str]) -> NodeInfo:
    from dralloc.api.core_v1 import Node
    from dralloc.api.meta import ObjectMeta

    return NodeInfo(node=Node(metadata=ObjectMeta(name=name, labels=labels)))


def test_score_weights_domains_by_log_of_their_number_and_normalises_inverted() -> None:
    c = SpreadConstraint(1, ZONE, parse_selector({"matchLabels": {"app": "web"}}, "s"))
    nodes = [_info(z, {ZONE: z}) for z in "abc"] + [_info("bare", {})]
    state = scoring.ScoreState((c,), True, [{"a": 3, "b": 1, "c": 0}], [], {})
    scoring.pre_score(state, nodes)
    assert state.weights == [pytest.approx(1.6094379)]  # ln(3 domains + 2); the bare node is ignored
    raw = {n.name: scoring.spread_score(state, n) for n in nodes}
    assert raw == {"a": 5, "b": 2, "c": 0, "bare": scoring.IGNORED}  # round(3 ln 5), round(ln 5)
    assert scoring.normalize(raw) == {"a": 0, "b": 60, "c": 100, "bare": 0}


def test_score_adds_max_skew_minus_one_and_rounds_half_away_from_zero() -> None:
    c = SpreadConstraint(3, ZONE, Selector())
    state = scoring.ScoreState((c,), True, [{"a": 0}], [], {}, weights=[0.5])
    assert scoring.spread_score(state, _info("a", {ZONE: "a"})) == 2
    state.totals = [{"a": 1}]
    assert scoring.spread_score(state, _info("a", {ZONE: "a"})) == 3  # 2.5 rounds up
    assert scoring.normalize({"x": 0, "y": 0}) == {"x": 100, "y": 100}


def test_preferred_spreading_scores_the_emptier_zone_higher() -> None:
    docs = (node("a1", "a"), node("b1", "b"), pod("w1", on="a1", cpu="1m"), pod("w2", on="a1", cpu="1m"),
            pod("w3", on="a1", cpu="1m"), pod("filler", labels="{role: x}", cpu="1", on="b1"))
    _, soft = run(*docs, pod("new", spread=zone_spread(when="ScheduleAnyway")))
    assert soft["new"].node == "b1"
    _, free = run(*docs, pod("new", labels="{app: other}"))
    assert free["new"].node == "a1"


# --- System default constraints ----------------------------------------------------------------------

SERVICE = textwrap.dedent("""\
    apiVersion: v1
    kind: Service
    metadata: {name: web, namespace: default}
    spec: {selector: {app: web}, ports: [{port: 80}]}
    """)


def test_system_defaults_spread_pods_a_service_selects_by_hostname() -> None:
    docs = (node("n1", "a"), node("n2", "a"), pod("w1", on="n1", cpu="1m"), pod("w2", on="n1", cpu="1m"),
            pod("w3", on="n1", cpu="1m"), pod("filler", labels="{role: x}", cpu="1", on="n2"), pod("new"))
    _, with_service = run(*docs, SERVICE)
    assert with_service["new"].node == "n2"
    _, without = run(*docs)
    assert without["new"].node == "n1"
    other_ns = SERVICE.replace("namespace: default", "namespace: other")
    _, elsewhere = run(*docs, other_ns)
    assert elsewhere["new"].node == "n1"


def test_system_defaults_take_the_selector_of_the_replicaset_of_a_deployment() -> None:
    deployment = textwrap.dedent("""\
        apiVersion: apps/v1
        kind: Deployment
        metadata: {name: web, namespace: default}
        spec:
          replicas: 6
          selector: {matchLabels: {app: web}}
          template:
            metadata: {labels: {app: web}}
            spec: {containers: [{name: c, resources: {requests: {cpu: 10m}}}]}
        """)
    docs = (node("big", "a", cpu="64", memory="256Gi"), node("small", "a", cpu="4"))
    sched, placed = run(*docs, deployment)
    where = sorted(p.node for p in placed.values())
    assert where.count("small") >= 2, where
    # The same pods without their ReplicaSet: nothing selects them, resource scoring keeps them on the big node.
    alone = [d for d in (pod(f"p{i}", cpu="10m") for i in range(6))]
    _, unowned = run(*docs, *alone)
    assert {p.node for p in unowned.values()} == {"big"}


def test_statefulset_with_zone_spread_fills_three_zones_evenly() -> None:
    sts = textwrap.dedent(f"""\
        apiVersion: apps/v1
        kind: StatefulSet
        metadata: {{name: db, namespace: default}}
        spec:
          replicas: 6
          serviceName: db
          selector: {{matchLabels: {{app: db}}}}
          template:
            metadata: {{labels: {{app: db}}}}
            spec:
              containers: [{{name: c, resources: {{requests: {{cpu: 100m}}}}}}]
              topologySpreadConstraints:
              - {{maxSkew: 1, topologyKey: {ZONE}, whenUnsatisfiable: DoNotSchedule, labelSelector: {{matchLabels: {{app: db}}}}}}
        """)
    docs = (node("a-big", "a", cpu="64", memory="256Gi"), node("b1", "b"), node("b2", "b"), node("c1", "c"))
    _, placed = run(*docs, sts)
    zones = sorted(p.node[0] for p in placed.values())
    assert zones == ["a", "a", "b", "b", "c", "c"]
    _, unowned = run(*docs, *(pod(f"db-{i}", labels="{app: db}") for i in range(6)))
    assert {p.node for p in unowned.values()} == {"a-big"}  # resource scoring alone


# --- Grouping stays exact ---------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_node_grouping_gives_the_same_placements_as_filtering_every_node(seed: int) -> None:
    rng = random.Random(seed)
    docs = [node(f"n{i}", rng.choice("abc") if rng.random() < 0.9 else None, cpu=rng.choice(["2", "4"]))
            for i in range(24)]
    docs.append(SERVICE)
    for i in range(60):
        app = rng.choice(["web", "db", "cache"])
        kind = rng.random()
        spread = ""
        if kind < 0.3:
            spread = zone_spread(skew=rng.choice([1, 2]), selector=f"{{matchLabels: {{app: {app}}}}}")
        elif kind < 0.5:
            spread = zone_spread(when="ScheduleAnyway", selector=f"{{matchLabels: {{app: {app}}}}}")
        docs.append(pod(f"p{i}", labels=f"{{app: {app}}}", cpu=rng.choice(["100m", "500m"]), spread=spread))
    _, grouped = run(*docs, seed=seed)
    _, plain = run(*docs, seed=seed, group_nodes=False)
    assert {k: (v.node, v.message) for k, v in grouped.items()} == {k: (v.node, v.message) for k, v in plain.items()}
    assert any(v.status == "scheduled" for v in grouped.values())


# --- Input ------------------------------------------------------------------------------------------------


def test_constraints_parse_with_upstream_defaults() -> None:
    raws = msgspec.convert([{"maxSkew": 2, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule",
                             "labelSelector": {"matchLabels": {"app": "web"}}, "matchLabelKeys": ["rev"]},
                            {"maxSkew": 1, "topologyKey": "h", "whenUnsatisfiable": "ScheduleAnyway"}],
                           list[TopologySpreadConstraint])
    (hard,) = parse_constraints(raws, {"app": "web", "rev": "7"}, "DoNotSchedule")
    assert (hard.max_skew, hard.min_domains, hard.honor_affinity, hard.honor_taints) == (2, 1, True, False)
    assert hard.selector.matches({"app": "web", "rev": "7"}) and not hard.selector.matches({"app": "web"})
    (soft,) = parse_constraints(raws, {}, "ScheduleAnyway")
    assert soft.selector.nothing


def test_a_malformed_constraint_is_an_input_error_with_its_field_path(tmp_path) -> None:
    from dralloc.cli.main import main

    bad = pod("new", spread=f"[{{maxSkew: 0, topologyKey: {ZONE}, whenUnsatisfiable: DoNotSchedule}}]")
    path = tmp_path / "c.yaml"
    path.write_text("---\n".join([node("a1", "a"), bad]))
    import contextlib
    import io

    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        code = main(["simulate", "-f", str(path)])
    assert code == 2
    assert "Pod/new: spec.topologySpreadConstraints[0].maxSkew: Invalid value: 0: must be greater than zero" in \
        err.getvalue()


def test_dralloc_simulate_prints_the_spread_fit_error_and_exits_1(tmp_path, capsys) -> None:
    import json

    from dralloc.cli.main import main

    path = tmp_path / "c.yaml"
    path.write_text("---\n".join([node("a1", "a"), node("b1", "b"), pod("w1", on="a1"), pod("w2", on="a1"),
                                  pod("w3", on="b1"), pod("new", spread=zone_spread(extra=", minDomains: 3"))]))
    code = main(["simulate", "-f", str(path), "-o", "json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 1
    (new,) = [p for p in out["pods"] if p["name"] == "new"]
    assert new["message"] == (f"0/2 nodes are available: 2 {SKEW}. no new claims to deallocate, preemption: 0/2 "
                              "nodes are available: 2 No preemption victims found for incoming pod.")


def test_a_service_is_read_strictly_like_the_other_core_kinds(tmp_path) -> None:
    from dralloc.api import codec

    path = tmp_path / "s.yaml"
    path.write_text(SERVICE.replace("spec: {selector:", "spec: {selectr: {x: y}, selector:"))
    objects, problems = codec.load_checked([str(path)])
    assert [type(o).__name__ for o in objects] == ["Service"]
    assert objects[0].spec.selector == {"app": "web"}
    assert [p.message for p in problems] == ['unknown field "spec.selectr"']


def test_a_victim_left_terminating_stops_counting_for_the_next_pods() -> None:
    from dralloc.controllers.names import NameGenerator
    from dralloc.simulator.loading import sort_objects

    docs = (node("a1", "a"), node("b1", "b"), node("c1", "c", cpu="1"),
            pod("w1", on="a1", spec="priority: 0"), pod("w2", on="b1", spec="priority: 0"),
            pod("guard", labels="{role: x}", on="c1", cpu="950m", spec="priority: 1000"),
            pod("new", cpu="500m", spread=zone_spread(), spec="priority: 50"))
    objs = sort_objects(load(*docs), NameGenerator(0))
    sched = Scheduler(objs.nodes, objs.pods, victims_terminate_at="2026-01-01T00:00:00Z")
    sched.schedule()
    (victim,) = sched.evicted
    assert sched.results[f"default/{victim.name}"].pod.metadata.deletion_timestamp
    (other,) = load(pod("other", spread=zone_spread(), spec="priority: 100"))
    assert sched.schedule_pod(other).node == victim.node  # its zone holds no counted pod any more


# --- The filter against its definition, on generated clusters ---------------------------------------------

_POD = st.tuples(st.sampled_from(["a", "b"]), st.sampled_from(["default", "other"]), st.booleans())


@settings(max_examples=60, deadline=None)
@given(zones=st.lists(st.sampled_from(["z1", "z2", "z3", None]), min_size=1, max_size=6),
       placed=st.lists(st.tuples(st.integers(0, 5), _POD), max_size=12),
       skew=st.integers(1, 3), min_domains=st.integers(1, 4), own=st.sampled_from(["a", "b"]))
def test_filter_verdicts_follow_the_definition(zones, placed, skew, min_domains, own) -> None:
    from dralloc.scheduler.plugins.base import Cycle
    from dralloc.scheduler.plugins.pod_topology_spread import PodTopologySpread
    from dralloc.scheduler.podinfo import PodInfo

    docs = [node(f"n{i}", z) for i, z in enumerate(zones)]
    for j, (where, (app, ns, deleting)) in enumerate(placed):
        meta = ", deletionTimestamp: '2026-01-01T00:00:00Z'" if deleting else ""
        docs.append(pod(f"p{j}", labels=f"{{app: {app}}}", on=f"n{where % len(zones)}", ns=ns, meta=meta))
    sched, _ = run(*docs)
    (incoming,) = load(pod("new", labels=f"{{app: {own}}}",
                           spread=zone_spread(skew=skew, extra=f", minDomains: {min_domains}",
                                              selector="{matchLabels: {app: a}}")))
    cycle = Cycle(PodInfo.build(incoming, 0, 0), sched.snapshot)
    plugin = PodTopologySpread()
    assert plugin.pre_filter(cycle) is None
    counts: dict[str, int] = {z: 0 for z in zones if z is not None}
    for where, (app, ns, deleting) in placed:
        zone = zones[where % len(zones)]
        if zone is not None and app == "a" and ns == "default" and not deleting:
            counts[zone] += 1
    low = 0 if len(counts) < min_domains else min(counts.values())
    for info in sched.snapshot.nodes:
        zone = info.labels.get(ZONE)
        got = plugin.filter(cycle, info)
        if zone is None:
            assert got is not None and got.reasons == (MISSING,)
        elif counts[zone] + (own == "a") - low > skew:
            assert got is not None and got.reasons == (SKEW,)
        else:
            assert got is None


@pytest.mark.parametrize("kind", ["StatefulSet", "Deployment"])
def test_a_workload_template_with_a_malformed_constraint_is_refused_once(tmp_path, kind: str) -> None:
    import contextlib
    import io

    from dralloc.cli.main import main

    workload = f"""apiVersion: apps/v1
kind: {kind}
metadata: {{name: web, namespace: default}}
spec:
  replicas: 2
  selector: {{matchLabels: {{app: web}}}}
  template:
    metadata: {{labels: {{app: web}}}}
    spec:
      containers: [{{name: c, image: i}}]
      topologySpreadConstraints: [{{maxSkew: 0, topologyKey: {ZONE}, whenUnsatisfiable: DoNotSchedule}}]
"""
    path = tmp_path / "c.yaml"
    path.write_text("---\n".join([node("a1", "a"), workload]))
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        code = main(["simulate", "-f", str(path)])
    assert code == 2
    line = f"{kind}/web: spec.template.spec.topologySpreadConstraints[0].maxSkew: Invalid value: 0: must be greater"
    assert err.getvalue().count(line) == 1
