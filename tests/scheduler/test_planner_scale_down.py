"""Scale-down plans: nodes that can go together under Cluster Autoscaler's default drain rules."""

from __future__ import annotations

import textwrap

from sched_builders import GPU_CLASS, gpu_slice, load, node, pod

from dralloc.simulator import Scheduler
from dralloc.simulator.planner import PlanSettings, plan_scale_down

SETTINGS = PlanSettings(Scheduler)

OWNED = "ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: web-abc, uid: u1, controller: true}]"


def running(name: str, node_name: str, cpu: str = "1", ns: str = "default", meta: str = OWNED,
            extra_spec: str = "") -> str:
    doc = pod(name, cpu=cpu, node_name=node_name, ns=ns, extra_spec=extra_spec)
    return doc.replace(f"metadata: {{name: {name}, namespace: {ns}}}",
                       f"metadata: {{name: {name}, namespace: {ns}, {meta}}}")


def verdicts(objects: list) -> tuple[list[str], dict[str, str]]:
    plan = plan_scale_down(objects, settings=SETTINGS)
    return plan.removable, {b.node: b.reason for b in plan.blocked}


def test_a_lightly_used_node_goes_when_its_pods_fit_elsewhere() -> None:
    objects = load(node("a", cpu="4"), node("b", cpu="4"), running("w1", "a"), running("w2", "b", cpu="3"))
    removable, blocked = verdicts(objects)
    assert removable == ["a"]
    assert blocked["b"].startswith("not underutilized: utilization 0.750")
    plan = plan_scale_down(objects, settings=SETTINGS)
    assert plan.moved == {"default/w1": "b"}


def test_nodes_go_together_only_while_the_rest_can_hold_their_pods() -> None:
    objects = load(node("a", cpu="4"), node("b", cpu="4"), node("c", cpu="4"),
                   running("w1", "a", cpu="1500m"), running("w2", "b", cpu="1500m"), running("w3", "c", cpu="1500m"))
    removable, blocked = verdicts(objects)
    # Any one node can go (its 1.5 CPUs fit beside another's); a second removal would leave 4.5 CPUs for 4.
    assert removable == ["a"]
    assert set(blocked) == {"b", "c"}
    assert blocked["b"].startswith("no place to move default/w")
    assert "Insufficient cpu" in blocked["b"]


def test_empty_nodes_go_without_moving_anything() -> None:
    removable, blocked = verdicts(load(node("a"), node("b"), node("c", cpu="4"), running("w", "c", cpu="3")))
    assert removable == ["a", "b"]


def test_daemonset_and_mirror_pods_are_ignored() -> None:
    ds = "ownerReferences: [{apiVersion: apps/v1, kind: DaemonSet, name: agent, uid: d1, controller: true}]"
    mirror = "annotations: {kubernetes.io/config.mirror: abc}"
    objects = load(node("a", cpu="4"), node("b", cpu="4"), running("agent-a", "a", cpu="500m", meta=ds),
                   running("static-a", "a", cpu="500m", meta=mirror), running("w", "b", cpu="3"))
    removable, _ = verdicts(objects)
    assert "a" in removable


def test_an_unreplicated_pod_blocks_its_node_even_with_an_unknown_owner_counted() -> None:
    bare = "labels: {app: x}"
    objects = load(node("a", cpu="4"), node("b", cpu="4"), running("lonely", "a", meta=bare),
                   running("w", "b", cpu="1"))
    removable, blocked = verdicts(objects)
    assert blocked["a"] == "default/lonely is not replicated"
    assert removable == ["b"]  # w's owner is not in the dump: its controller ownerReference still counts


def test_kube_system_pods_without_a_budget_block() -> None:
    objects = load(node("a", cpu="4"), node("b", cpu="4"), running("dns", "a", ns="kube-system"),
                   running("w", "b", cpu="3"))
    _, blocked = verdicts(objects)
    assert blocked["a"] == "non-daemonset, non-mirrored, non-pdb-assigned kube-system pod present: dns"


def test_safe_to_evict_annotations() -> None:
    no = OWNED + ', annotations: {cluster-autoscaler.kubernetes.io/safe-to-evict: "false"}'
    yes = 'annotations: {cluster-autoscaler.kubernetes.io/safe-to-evict: "true"}'
    objects = load(node("a", cpu="4"), node("b", cpu="4"), node("c", cpu="8"), running("pinned", "a", meta=no),
                   running("bare-but-safe", "b", meta=yes), running("w", "c", cpu="5"))
    removable, blocked = verdicts(objects)
    assert blocked["a"] == "pod annotated as not safe to evict present: pinned"
    assert "b" in removable


def test_scale_down_disabled_annotation() -> None:
    kept = textwrap.dedent("""\
        apiVersion: v1
        kind: Node
        metadata: {name: a, annotations: {cluster-autoscaler.kubernetes.io/scale-down-disabled: "true"}}
        status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
        """)
    objects = load(kept, node("b", cpu="4"), running("w", "b", cpu="3"))
    _, blocked = verdicts(objects)
    assert blocked == {"b": blocked["b"], "a": "scale down disabled by annotation"}


def test_claims_are_reallocated_on_the_nodes_left() -> None:
    claim = textwrap.dedent("""\
        apiVersion: resource.k8s.io/v1
        kind: ResourceClaim
        metadata: {name: gpu-claim, namespace: default}
        spec: {devices: {requests: [{name: gpu, exactly: {deviceClassName: gpu}}]}}
        status:
          allocation:
            devices: {results: [{request: gpu, driver: gpu.example.com, pool: a, device: gpu-0}]}
            nodeSelector: {nodeSelectorTerms: [{matchFields: [{key: metadata.name, operator: In, values: [a]}]}]}
          reservedFor: [{resource: pods, name: trainer, uid: trainer-uid}]
        """)
    trainer = running("trainer", "a", meta=OWNED + ", uid: trainer-uid",
                      extra_spec="resourceClaims: [{name: gpu, resourceClaimName: gpu-claim}]")
    objects = load(GPU_CLASS, node("a", cpu="8"), gpu_slice("a", count=4), node("b", cpu="8"), gpu_slice("b"),
                   claim, trainer, running("w", "b", cpu="5"))
    plan = plan_scale_down(objects, settings=SETTINGS)
    assert plan.removable == ["a"]
    assert plan.moved == {"default/trainer": "b"}
    assert plan.trial is not None
    moved_claim = plan.trial.scheduler.snapshot.claims[("default", "gpu-claim")]
    assert moved_claim.status is not None and moved_claim.status.allocation is not None
    assert [r.pool for r in moved_claim.status.allocation.devices.results] == ["b"]


def test_pending_pods_that_fit_today_must_still_fit() -> None:
    objects = load(node("a", cpu="4"), node("b", cpu="4"), running("w", "b", cpu="1"), pod("waiting", cpu="3500m"))
    plan = plan_scale_down(objects, settings=SETTINGS)
    # Removing either node leaves no room for both the 3.5-CPU pending pod and w.
    assert plan.removable == []
    assert any("pending pod default/waiting would fit nowhere" in b.reason or "no place to move" in b.reason
               for b in plan.blocked)


def test_the_plan_is_deterministic() -> None:
    objects = load(node("a", cpu="4"), node("b", cpu="4"), node("c", cpu="4"), running("w1", "a"),
                   running("w2", "b"), running("w3", "c"))
    assert plan_scale_down(objects, settings=SETTINGS).to_dict() == \
        plan_scale_down(objects, settings=SETTINGS).to_dict()


PDB = textwrap.dedent("""\
    apiVersion: policy/v1
    kind: PodDisruptionBudget
    metadata: {name: web-pdb, namespace: default}
    spec: {minAvailable: 2, selector: {matchLabels: {app: web}}}
    status: {disruptionsAllowed: %d, currentHealthy: 2, desiredHealthy: 2, expectedPods: 2}
    """)


def test_a_budget_that_allows_no_disruption_blocks_and_one_that_allows_it_does_not() -> None:
    web = OWNED + ", labels: {app: web}"
    docs = [node("a", cpu="4"), node("b", cpu="4"), running("w1", "a", meta=web), running("big", "b", cpu="3")]
    _, blocked = verdicts(load(*docs, PDB % 0))
    assert blocked["a"] == "not enough pod disruption budget to move default/w1"
    removable, _ = verdicts(load(*docs, PDB % 1))
    assert removable == ["a"]


def test_local_storage_blocks_unless_listed_as_safe() -> None:
    volumes = "volumes: [{name: scratch, emptyDir: {}}, {name: shm, emptyDir: {medium: Memory}}]"
    docs = [node("a", cpu="4"), node("b", cpu="4"), running("big", "b", cpu="3")]
    _, blocked = verdicts(load(*docs, running("cache", "a", extra_spec=volumes)))
    assert blocked["a"] == "pod with local storage present: cache"
    safe = OWNED + ', annotations: {cluster-autoscaler.kubernetes.io/safe-to-evict-local-volumes: "scratch"}'
    removable, _ = verdicts(load(*docs, running("cache", "a", meta=safe, extra_spec=volumes)))
    assert removable == ["a"]
