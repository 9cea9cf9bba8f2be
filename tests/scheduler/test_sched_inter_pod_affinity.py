"""InterPodAffinity (kube-scheduler 1.36): Filter, Score, namespaces, matchLabelKeys and preemption."""

from __future__ import annotations

import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sched_builders import by_name, load

from dralloc.scheduler import Scheduler
from dralloc.scheduler.plugins.inter_pod_affinity.scoring import normalize
from dralloc.simulator.result import PodResult

HOST = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"
NOT_HELPFUL = "Preemption is not helpful for scheduling"
NO_VICTIMS = "No preemption victims found for incoming pod"
NO_CLAIMS = "no new claims to deallocate"


def node(name: str, zone: str | None = None, cpu: str = "4") -> str:
    labels = {HOST: name}
    if zone is not None:
        labels[ZONE] = zone
    text = ", ".join(f"{k}: {v}" for k, v in labels.items())
    return textwrap.dedent(f"""\
        apiVersion: v1
        kind: Node
        metadata: {{name: {name}, labels: {{{text}}}}}
        status: {{allocatable: {{cpu: "{cpu}", memory: 8Gi, pods: "110"}}}}
        """)


def pod(name: str, labels: str = "{}", affinity: str = "", node_name: str = "", ns: str = "default",
        priority: int | None = None, cpu: str = "100m", status: str = "") -> str:
    lines = ["apiVersion: v1", "kind: Pod", f"metadata: {{name: {name}, namespace: {ns}, labels: {labels}}}",
             "spec:", f"  containers: [{{name: c, resources: {{requests: {{cpu: \"{cpu}\"}}}}}}]"]
    if node_name:
        lines.append(f"  nodeName: {node_name}")
    if priority is not None:
        lines.append(f"  priority: {priority}")
    if affinity:
        lines.append("  affinity:")
        lines += ["    " + line for line in textwrap.dedent(affinity).splitlines() if line.strip()]
    if status:
        lines.append(f"status: {status}")
    return "\n".join(lines) + "\n"


def required(kind: str, selector: str, key: str = HOST, extra: str = "") -> str:
    """A podAffinity / podAntiAffinity block with one required term."""
    return textwrap.dedent(f"""\
        {kind}:
          requiredDuringSchedulingIgnoredDuringExecution:
          - labelSelector: {selector}
            topologyKey: {key}
        """) + "".join(f"    {line}\n" for line in extra.splitlines() if line.strip())


def preferred(kind: str, selector: str, weight: int = 10, key: str = HOST) -> str:
    return textwrap.dedent(f"""\
        {kind}:
          preferredDuringSchedulingIgnoredDuringExecution:
          - weight: {weight}
            podAffinityTerm:
              labelSelector: {selector}
              topologyKey: {key}
        """)


def namespace(name: str, labels: str = "{}") -> str:
    return f"apiVersion: v1\nkind: Namespace\nmetadata: {{name: {name}, labels: {labels}}}\n"


WEB = "{matchLabels: {app: web}}"
DB = "{matchLabels: {app: db}}"


def run(*docs: str, seed: int = 0, group_nodes: bool = True) -> dict[str, PodResult]:
    sched = Scheduler.from_objects(load(*docs), seed=seed)
    sched.framework.group_nodes = group_nodes
    return by_name(sched.schedule())


# ---------------------------------------------------------------------------------------------- Filter


def test_a_deployment_with_required_anti_affinity_puts_one_replica_per_node_and_leaves_the_third_pending(
        simulate) -> None:
    deployment = textwrap.dedent(f"""\
        apiVersion: apps/v1
        kind: Deployment
        metadata: {{name: web, namespace: default}}
        spec:
          replicas: 3
          selector: {WEB}
          template:
            metadata: {{labels: {{app: web}}}}
            spec:
              affinity:
                podAntiAffinity:
                  requiredDuringSchedulingIgnoredDuringExecution:
                  - labelSelector: {WEB}
                    topologyKey: {HOST}
              containers: [{{name: c, image: nginx, resources: {{requests: {{cpu: 100m}}}}}}]
        """)
    _, result = simulate(node("node-a"), node("node-b"), deployment)
    placed = sorted(p.node for p in result.pods if p.status == "scheduled")
    assert placed == ["node-a", "node-b"]
    [pending] = result.unschedulable
    assert pending.message == (
        "0/2 nodes are available: 2 node(s) didn't match pod anti-affinity rules. "
        f"{NO_CLAIMS}, preemption: 0/2 nodes are available: 2 {NO_VICTIMS}.")


def test_a_running_pods_anti_affinity_repels_a_newcomer_that_declares_nothing() -> None:
    pods = run(node("a"), pod("guard", "{app: guard}", required("podAntiAffinity", WEB), node_name="a"),
               pod("web", "{app: web}"))
    assert pods["web"].message == (
        "0/1 nodes are available: 1 node(s) didn't satisfy existing pods anti-affinity rules. "
        f"{NO_CLAIMS}, preemption: 0/1 nodes are available: 1 {NO_VICTIMS}.")
    pods = run(node("a"), node("b"), pod("guard", "{app: guard}", required("podAntiAffinity", WEB), node_name="a"),
               pod("web", "{app: web}"))
    assert pods["web"].node == "b"


def test_existing_anti_affinity_only_counts_in_its_topology_domain() -> None:
    zone_guard = pod("guard", "{app: guard}", required("podAntiAffinity", WEB, ZONE), node_name="a1")
    pods = run(node("a1", "z1"), node("a2", "z1"), node("b1", "z2"), zone_guard, pod("web", "{app: web}"))
    assert pods["web"].node == "b1"


def test_required_affinity_places_the_pod_in_the_zone_of_a_matching_pod() -> None:
    docs = [node("a", "z1"), node("b", "z2"), node("c", "z2"), pod("db", "{app: db}", node_name="a"),
            pod("web", "{app: web}", required("podAffinity", DB, ZONE))]
    for seed in range(4):
        assert run(*docs, seed=seed)["web"].node == "a"


def test_unmet_required_affinity_is_unresolvable_so_preemption_does_not_try() -> None:
    pods = run(node("a", "z1"), node("b", "z2"), pod("other", "{app: other}", node_name="a", priority=0),
               pod("web", "{app: web}", required("podAffinity", DB, ZONE), priority=100))
    assert pods["web"].message == (
        "0/2 nodes are available: 2 node(s) didn't match pod affinity rules. "
        f"{NO_CLAIMS}, preemption: 0/2 nodes are available: 2 {NOT_HELPFUL}.")


def test_the_first_pod_of_a_group_with_affinity_to_itself_may_schedule() -> None:
    self_affine = required("podAffinity", WEB, ZONE)
    pods = run(node("a", "z1"), node("b", "z2"), pod("web-0", "{app: web}", self_affine),
               pod("web-1", "{app: web}", self_affine), pod("web-2", "{app: web}", self_affine))
    zones = {pods[n].node for n in ("web-0", "web-1", "web-2")}
    assert len(zones) == 1 and None not in zones


def test_the_first_pod_rule_needs_the_topology_label_on_the_node() -> None:
    pods = run(node("a"), pod("web", "{app: web}", required("podAffinity", WEB, ZONE)))
    assert pods["web"].message.startswith(
        "0/1 nodes are available: 1 node(s) didn't match pod affinity rules.")


def test_the_first_pod_rule_does_not_apply_once_some_pod_matches_elsewhere() -> None:
    # A matching pod runs on a node without the zone label: it is counted nowhere, so the pod is "first".
    pods = run(node("a"), node("b", "z1"), pod("old", "{app: web}", node_name="a"),
               pod("web", "{app: web}", required("podAffinity", WEB, ZONE)))
    assert pods["web"].node == "b"
    # A matching pod in zone z2 (no room there): a node of z1 is not enough any more.
    pods = run(node("full", "z2", cpu="1"), node("b", "z1"), pod("old", "{app: web}", node_name="full", cpu="1"),
               pod("web", "{app: web}", required("podAffinity", WEB, ZONE)))
    assert pods["web"].message.startswith("0/2 nodes are available: 1 Insufficient cpu, "
                                          "1 node(s) didn't match pod affinity rules.")


def test_a_pod_that_does_not_match_its_own_affinity_is_not_the_first_of_a_group() -> None:
    pods = run(node("a", "z1"), pod("web", "{app: web}", required("podAffinity", DB, ZONE)))
    assert pods["web"].status == "unschedulable"


def test_anti_affinity_ignores_nodes_without_the_topology_label() -> None:
    pods = run(node("a"), pod("db", "{app: db}", node_name="a"),
               pod("web", "{app: web}", required("podAntiAffinity", DB, ZONE)))
    assert pods["web"].node == "a"


def test_terms_select_pods_of_the_pods_own_namespace_unless_namespaces_are_named() -> None:
    other_db = pod("db", "{app: db}", node_name="a", ns="other")
    pods = run(node("a"), other_db, pod("web", "{app: web}", required("podAntiAffinity", DB)))
    assert pods["web"].node == "a"
    named = required("podAntiAffinity", DB, extra="namespaces: [other]")
    pods = run(node("a"), other_db, pod("web", "{app: web}", named))
    assert pods["web"].status == "unschedulable"


def test_a_namespace_selector_selects_by_the_namespace_objects_labels() -> None:
    by_team = required("podAntiAffinity", DB, extra="namespaceSelector: {matchLabels: {team: red}}")
    docs = [node("a"), namespace("other", "{team: red}"), pod("db", "{app: db}", node_name="a", ns="other")]
    assert run(*docs, pod("web", "{app: web}", by_team))["web"].status == "unschedulable"
    docs[1] = namespace("other", "{team: blue}")
    assert run(*docs, pod("web", "{app: web}", by_team))["web"].node == "a"
    # kube-apiserver's own label on every namespace selects it by name
    by_name_label = required("podAntiAffinity", DB,
                             extra="namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: other}}")
    assert run(*docs, pod("web", "{app: web}", by_name_label))["web"].status == "unschedulable"
    # an empty selector selects every namespace
    everywhere = required("podAntiAffinity", DB, extra="namespaceSelector: {}")
    assert run(*docs, pod("web", "{app: web}", everywhere))["web"].status == "unschedulable"


def test_an_existing_pods_namespace_selector_reads_the_newcomers_namespace_labels() -> None:
    guard = pod("guard", "{app: guard}", node_name="a",
                affinity=required("podAntiAffinity", WEB, extra="namespaceSelector: {matchLabels: {tier: front}}"))
    docs = [node("a"), guard, namespace("shop", "{tier: front}"), namespace("back", "{tier: back}")]
    assert run(*docs, pod("web", "{app: web}", ns="shop"))["web"].status == "unschedulable"
    assert run(*docs, pod("web", "{app: web}", ns="back"))["web"].node == "a"


def test_match_label_keys_narrow_the_selector_to_the_pods_own_label_values() -> None:
    keyed = required("podAntiAffinity", WEB, extra="matchLabelKeys: [version]")
    docs = [node("a"), pod("old", "{app: web, version: v1}", keyed, node_name="a")]
    assert run(*docs, pod("new", "{app: web, version: v2}", keyed))["new"].node == "a"
    assert run(*docs, pod("new", "{app: web, version: v1}", keyed))["new"].status == "unschedulable"


def test_mismatch_label_keys_exclude_pods_with_the_same_value() -> None:
    # Exclusive per tenant: repel web pods of any other tenant.
    other_tenants = required("podAntiAffinity", WEB, extra="mismatchLabelKeys: [tenant]")
    docs = [node("a"), pod("t1", "{app: web, tenant: one}", node_name="a")]
    assert run(*docs, pod("new", "{app: web, tenant: one}", other_tenants))["new"].node == "a"
    assert run(*docs, pod("new", "{app: web, tenant: two}", other_tenants))["new"].status == "unschedulable"


def test_an_invalid_selector_operator_keeps_the_pod_pending_with_the_parse_error() -> None:
    bad = required("podAffinity", "{matchExpressions: [{key: app, operator: Near, values: [x]}]}")
    pods = run(node("a"), pod("web", "{app: web}", bad))
    assert pods["web"].message == (
        '0/1 nodes are available: parsing pod: requiredAffinityTerms: "Near" is not a valid label selector '
        f"operator. {NO_CLAIMS}, preemption: 0/1 nodes are available: 1 {NOT_HELPFUL}.")


# ---------------------------------------------------------------------------------------------- Score


def test_preferred_affinity_draws_the_pod_to_the_matching_pods_node() -> None:
    docs = [node(n) for n in ("a", "b", "c", "d")] + [pod("db", "{app: db}", node_name="c")]
    for seed in range(4):
        assert run(*docs, pod("web", "{app: web}", preferred("podAffinity", DB)), seed=seed)["web"].node == "c"


def test_preferred_anti_affinity_keeps_the_pod_away() -> None:
    docs = [node("a"), node("b"), pod("db", "{app: db}", node_name="a")]
    for seed in range(4):
        assert run(*docs, pod("web", "{app: web}", preferred("podAntiAffinity", DB)), seed=seed)["web"].node == "b"


def test_an_existing_pods_preferred_terms_attract_or_repel_the_newcomer() -> None:
    for seed in range(4):
        attract = pod("db", "{app: db}", preferred("podAffinity", WEB), node_name="b")
        assert run(node("a"), node("b"), node("c"), attract, pod("web", "{app: web}"), seed=seed)["web"].node == "b"
        repel = pod("db", "{app: db}", preferred("podAntiAffinity", WEB), node_name="b")
        pods = run(node("a"), node("b"), repel, pod("web", "{app: web}"), seed=seed)
        assert pods["web"].node == "a"


def test_an_existing_pods_required_affinity_attracts_with_the_hard_pod_affinity_weight() -> None:
    # db requires web in its zone (ignored during execution); web is drawn there by hardPodAffinityWeight 1.
    needs_web = pod("db", "{app: db}", required("podAffinity", WEB, ZONE), node_name="a")
    for seed in range(4):
        pods = run(node("a", "z1"), node("b", "z2"), node("c", "z2"), needs_web, pod("web", "{app: web}"), seed=seed)
        assert pods["web"].node == "a"


def test_normalize_maps_min_and_max_onto_0_and_100() -> None:
    assert normalize({"a": -10, "b": 0, "c": 5}) == {"a": 0, "b": 66, "c": 100}
    assert normalize({"a": 3, "b": 3}) == {"a": 0, "b": 0}
    assert normalize({"a": 1, "b": 2, "c": 4}) == {"a": 0, "b": 33, "c": 100}


# ---------------------------------------------------------------------------------------------- grouping


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 5), st.sampled_from(["web", "db", "cache"]), st.integers(0, 4)),
                min_size=1, max_size=14),
       st.integers(0, 3))
def test_node_grouping_never_changes_a_placement(pods: list[tuple[int, str, int]], seed: int) -> None:
    """Nodes grouped by (verdict, raw score) give the placements of filtering and scoring every node."""
    kinds = ["", required("podAntiAffinity", WEB), required("podAffinity", DB, ZONE),
             preferred("podAffinity", "{matchLabels: {app: cache}}", 7, ZONE), preferred("podAntiAffinity", WEB)]
    docs = [node(f"n{i}", f"z{i % 3}", cpu="2") for i in range(6)]
    for i, (where, app, kind) in enumerate(pods):
        docs.append(pod(f"p{i}", f"{{app: {app}}}", kinds[kind], node_name=f"n{where}" if i % 3 == 0 else "",
                        cpu="300m"))
    grouped = run(*docs, seed=seed)
    exact = run(*docs, seed=seed, group_nodes=False)
    assert {k: (p.node, p.message) for k, p in grouped.items()} == {k: (p.node, p.message) for k, p in exact.items()}


# ---------------------------------------------------------------------------------------------- preemption


def test_preemption_evicts_a_lower_priority_pod_to_satisfy_anti_affinity() -> None:
    pods = run(node("a"), pod("low-db", "{app: db}", node_name="a", priority=1),
               pod("web", "{app: web}", required("podAntiAffinity", DB), priority=100))
    assert pods["low-db"].status == "evicted"
    assert pods["web"].node == "a"


def test_preemption_evicts_the_pod_whose_anti_affinity_repels_the_newcomer() -> None:
    pods = run(node("a"), pod("guard", "{app: guard}", required("podAntiAffinity", WEB), node_name="a", priority=1),
               pod("keep", "{app: keep}", node_name="a", priority=1),
               pod("web", "{app: web}", priority=100))
    assert pods["guard"].status == "evicted" and pods["keep"].status == "running"
    assert pods["web"].node == "a"


def test_a_nominated_pod_counts_in_the_anti_affinity_of_a_lower_priority_pod() -> None:
    nominated = pod("db", "{app: db}", priority=50, status="{nominatedNodeName: a}")
    sched = Scheduler.from_objects(load(node("a"), pod("web", "{app: web}", required("podAntiAffinity", DB))))
    sched._hold(load(nominated)[0])
    [web] = sched.schedule().pods
    assert web.message.startswith("0/1 nodes are available: 1 node(s) didn't match pod anti-affinity rules.")


def test_a_nominated_pod_alone_does_not_satisfy_affinity() -> None:
    """The second pass of RunFilterPluginsWithNominatedPods: the pod must also fit without them."""
    nominated = pod("db", "{app: db}", priority=50, status="{nominatedNodeName: a}")
    sched = Scheduler.from_objects(load(node("a"), pod("web", "{app: web}", required("podAffinity", DB))))
    sched._hold(load(nominated)[0])
    [web] = sched.schedule().pods
    assert web.message.startswith("0/1 nodes are available: 1 node(s) didn't match pod affinity rules.")


@pytest.mark.parametrize("ns_labels", ["{}", "{team: red}"])
def test_namespace_objects_get_the_metadata_name_label(ns_labels: str) -> None:
    sched = Scheduler.from_objects(load(node("a"), namespace("shop", ns_labels)))
    assert sched.snapshot.namespace_labels["shop"]["kubernetes.io/metadata.name"] == "shop"


def test_a_namespace_without_its_object_still_has_its_name_label_and_the_gap_is_warned_about() -> None:
    by_name_label = required("podAntiAffinity", DB,
                             extra="namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: other}}")
    docs = [node("a"), pod("db", "{app: db}", node_name="a", ns="other")]
    sched = Scheduler.from_objects(load(*docs, pod("web", "{app: web}", by_name_label)))
    assert by_name(sched.schedule())["web"].status == "unschedulable"
    assert not sched.warnings
    by_team = required("podAntiAffinity", DB, extra="namespaceSelector: {matchLabels: {team: red}}")
    sched = Scheduler.from_objects(load(*docs, pod("web", "{app: web}", by_team)))
    assert by_name(sched.schedule())["web"].node == "a"
    assert sched.warnings == ["pod default/web: its pod (anti-)affinity selects namespaces by label, but the input "
                              "has no Namespace objects: only each namespace's kubernetes.io/metadata.name label "
                              "is known"]


@settings(max_examples=30, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 2)), min_size=1, max_size=10), st.integers(0, 3))
def test_node_grouping_with_node_affinity_never_changes_a_placement(pods: list[tuple[int, int]], seed: int) -> None:
    """NodeAffinity keys nodes by the label values its terms read: the placements of filtering every node."""
    kinds = ["",
             "nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: "
             f"[{{matchExpressions: [{{key: {ZONE}, operator: In, values: [z0, z1]}}]}}]}}}}",
             "nodeAffinity: {preferredDuringSchedulingIgnoredDuringExecution: [{weight: 5, preference: "
             f"{{matchExpressions: [{{key: {ZONE}, operator: In, values: [z2]}}]}}}}]}}",
             "nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: "
             "[{matchFields: [{key: metadata.name, operator: NotIn, values: [n1]}]}]}}"]
    docs = [node(f"n{i}", f"z{i % 3}", cpu="1") for i in range(6)]
    for i, (kind, spread) in enumerate(pods):
        affinity = kinds[kind] + ("\n" + preferred("podAntiAffinity", WEB) if spread == 1 else "")
        docs.append(pod(f"p{i}", "{app: web}", affinity, cpu="400m"))
    grouped = run(*docs, seed=seed)
    exact = run(*docs, seed=seed, group_nodes=False)
    assert {k: (p.node, p.message) for k, p in grouped.items()} == {k: (p.node, p.message) for k, p in exact.items()}


# --------------------------------------------------------------------------- counting against the definition

SELECTORS = ["{matchLabels: {app: a}}", "{matchExpressions: [{key: app, operator: In, values: [a, b]}]}",
             "{matchExpressions: [{key: app, operator: NotIn, values: [a]}]}",
             "{matchExpressions: [{key: tier, operator: Exists}]}", "{}",
             "{matchExpressions: [{key: tier, operator: In, values: [x]}, {key: app, operator: In, values: [b]}]}"]
TERM = st.tuples(st.sampled_from(["podAffinity", "podAntiAffinity"]), st.booleans(), st.sampled_from(SELECTORS),
                 st.sampled_from([HOST, ZONE]), st.integers(1, 30))
LABELS = st.tuples(st.sampled_from(["a", "b", "c"]), st.sampled_from(["x", "y", None]), st.booleans())


def _affinity_text(terms: list[tuple[str, bool, str, str, int]]) -> str:
    lines: list[str] = []
    for kind in ("podAffinity", "podAntiAffinity"):
        mine = [t for t in terms if t[0] == kind]
        if not mine:
            continue
        lines.append(f"{kind}:")
        hard = [t for t in mine if t[1]]
        soft = [t for t in mine if not t[1]]
        if hard:
            lines.append("  requiredDuringSchedulingIgnoredDuringExecution:")
            lines += [f"  - {{labelSelector: {sel}, topologyKey: {key}}}" for _, _, sel, key, _ in hard]
        if soft:
            lines.append("  preferredDuringSchedulingIgnoredDuringExecution:")
            lines += [f"  - {{weight: {w}, podAffinityTerm: {{labelSelector: {sel}, topologyKey: {key}}}}}"
                      for _, _, sel, key, w in soft]
    return "\n".join(lines)


def _labels_text(i: int, labels: tuple[str, str | None, bool]) -> str:
    app, tier, unique = labels
    parts = [f"app: {app}"] + ([f"tier: {tier}"] if tier else []) + ([f"idx: i{i}"] if unique else [])
    return "{" + ", ".join(parts) + "}"


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(placed=st.lists(st.tuples(st.integers(0, 3), LABELS, st.lists(TERM, max_size=2)), max_size=10),
       own=LABELS, own_terms=st.lists(TERM, max_size=3))
def test_prefilter_counts_and_scores_follow_the_definition_pod_by_pod(placed, own, own_terms) -> None:
    """The PodIndex reads groups through labels and shared terms; the verdicts and raw scores must equal
    those counted pod by pod over every assigned pod, as kube-scheduler counts them."""
    from dralloc.scheduler.affinity_terms import parse_pod_affinity
    from dralloc.scheduler.framework import SKIP, Cycle
    from dralloc.scheduler.plugins.inter_pod_affinity import InterPodAffinity
    from dralloc.scheduler.plugins.inter_pod_affinity.scoring import DEFAULT_HARD_POD_AFFINITY_WEIGHT as HARD
    from dralloc.scheduler.podinfo import PodInfo

    nodes = [node(f"n{i}", zone=f"z{i % 2}") for i in range(4)]
    docs = list(nodes)
    for j, (where, labels, terms) in enumerate(placed):
        docs.append(pod(f"p{j}", labels=_labels_text(j, labels), node_name=f"n{where}",
                        affinity=_affinity_text(terms)))
    sched = Scheduler.from_objects(load(*docs))
    (incoming,) = load(pod("new", labels=_labels_text(99, own), affinity=_affinity_text(own_terms)))
    info = PodInfo.build(incoming, 0, 0)
    cycle = Cycle(info, sched.snapshot)
    plugin = InterPodAffinity()
    skipped = plugin.pre_filter(cycle) is SKIP
    scored = plugin.pre_score(cycle, sched.snapshot.nodes) is None  # (Score runs whether Filter was skipped or not)

    # The definition, pod by pod.
    ns_labels = {"kubernetes.io/metadata.name": "default"}
    mine = parse_pod_affinity(incoming)
    running = [(p, next(n for n in sched.snapshot.nodes if n.name == p.spec.node_name))
               for p in load(*docs[len(nodes):])]
    existing, affine, anti, scores = {}, {}, {}, {}

    def bump(table: dict, key: str, labels: dict, n: int = 1) -> None:
        value = labels.get(key)
        if value is not None:
            table[(key, value)] = table.get((key, value), 0) + n

    for p, where in running:
        terms = parse_pod_affinity(p)
        labels, ns = p.metadata.labels or {}, p.metadata.namespace
        if terms is not None:
            for t in terms.required_anti_affinity:
                if t.matches("default", info.labels, ns_labels):
                    bump(existing, t.topology_key, where.labels)
            for t, w in [(t, HARD) for t in terms.required_affinity] + \
                    [(wt.term, wt.weight) for wt in terms.preferred_affinity] + \
                    [(wt.term, -wt.weight) for wt in terms.preferred_anti_affinity]:
                if t.matches("default", info.labels, ns_labels):
                    bump(scores, t.topology_key, where.labels, w)
        if mine is not None:
            if mine.required_affinity and all(t.matches(ns, labels, {}) for t in mine.required_affinity):
                for t in mine.required_affinity:
                    bump(affine, t.topology_key, where.labels)
            for t in mine.required_anti_affinity:
                if t.matches(ns, labels, {}):
                    bump(anti, t.topology_key, where.labels)
            for wt, sign in [(wt, 1) for wt in mine.preferred_affinity] + [(wt, -1) for wt in mine.preferred_anti_affinity]:
                if wt.term.matches(ns, labels, {}):
                    bump(scores, wt.term.topology_key, where.labels, sign * wt.weight)

    for n in sched.snapshot.nodes:
        labels = n.labels
        expected = None
        if mine is not None and mine.required_affinity:
            keys_present = all(t.topology_key in labels for t in mine.required_affinity)
            found = all(affine.get((t.topology_key, labels.get(t.topology_key)), 0) > 0 for t in mine.required_affinity)
            first = not any(affine.values()) and all(
                t.matches("default", info.labels, {}) for t in mine.required_affinity)
            if not keys_present or not (found or first):
                expected = "node(s) didn't match pod affinity rules"
        if expected is None and mine is not None and any(
                anti.get((t.topology_key, labels.get(t.topology_key)), 0) > 0 for t in mine.required_anti_affinity):
            expected = "node(s) didn't match pod anti-affinity rules"
        if expected is None and any(
                existing.get((key, labels.get(key)), 0) > 0 for key, _ in existing):
            expected = "node(s) didn't satisfy existing pods anti-affinity rules"
        got = None if skipped else plugin.filter(cycle, n)
        assert (got.reasons[0] if got is not None else None) == expected, n.name
        total = sum(v for (key, value), v in scores.items() if labels.get(key) == value)
        assert (plugin.score(cycle, n) if scored else 0) == total, n.name
