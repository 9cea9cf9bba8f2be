"""Scale-up plans: the fewest template nodes that make pending pods fit, on the simulator's rules."""

from __future__ import annotations

import textwrap
from fractions import Fraction

import pytest
from sched_builders import GPU_CLASS, GPU_TEMPLATE, TEMPLATE_CLAIM, gpu_slice, load, node, pod

from dralloc.errors import InputError
from dralloc.simulator import Scheduler
from dralloc.simulator.planner import NodeTemplate, plan_scale_up
from dralloc.simulator.planner.templates import template_from_objects
from dralloc.simulator.planner.trial import PlanSettings, run_trial

SETTINGS = PlanSettings(Scheduler)


def template(name: str, *docs: str) -> NodeTemplate:
    return template_from_objects(name, load(*docs))


def pending_after(objects: list, tmpl: NodeTemplate, count: int) -> int:
    trial = run_trial(objects, SETTINGS, add={tmpl: count} if count else None)
    return len(trial.result.unschedulable)


def test_adds_the_fewest_nodes_and_one_fewer_leaves_a_pod_pending() -> None:
    objects = load(node("full", cpu="1"), *(pod(f"p{i}", cpu="1500m") for i in range(5)))
    tmpl = template("small", node("small-template", cpu="4"))
    plan = plan_scale_up(objects, [tmpl], settings=SETTINGS)
    assert plan.add == {"small": 3}  # two 1.5-CPU pods per 4-CPU node
    assert plan.unschedulable == 0
    assert {p.node for p in plan.pods} == {"small-1", "small-2", "small-3"}
    assert pending_after(objects, tmpl, 2) == 1


def test_nothing_to_add_when_every_pending_pod_already_fits() -> None:
    objects = load(node("roomy", cpu="8"), pod("p", cpu="1"))
    plan = plan_scale_up(objects, [template("small", node("small-template", cpu="4"))], settings=SETTINGS)
    assert plan.add == {}
    assert plan.pods[0].node == "roomy"
    assert plan.to_dict()["kind"] == "ScaleUpPlan"


def test_device_claims_decide_the_count() -> None:
    # Plenty of CPU but two GPUs a node: four one-GPU pods need two GPU nodes.
    objects = load(GPU_CLASS, GPU_TEMPLATE, node("cpu-only", cpu="64"),
                   *(pod(f"train-{i}", claims=TEMPLATE_CLAIM) for i in range(4)))
    tmpl = template("gpu", node("gpu-template", cpu="64"), gpu_slice("gpu-template", count=2))
    plan = plan_scale_up(objects, [tmpl], settings=SETTINGS)
    assert plan.add == {"gpu": 2}
    assert pending_after(objects, tmpl, 1) == 2
    nodes = {p.node for p in plan.pods}
    assert nodes == {"gpu-1", "gpu-2"}


def test_mig_partitions_and_counters_of_the_example_cluster() -> None:
    from dralloc.simulator.loading import load_validated
    from dralloc.simulator.planner import load_template

    objects, _ = load_validated(["examples/cluster/"])
    tmpl = load_template("h100", "examples/templates/gpu-h100x2.yaml")
    plan = plan_scale_up(objects, [tmpl], settings=SETTINGS)
    assert plan.add == {"h100": 1}
    left = [p for p in plan.pods if p.node is None]
    assert [f"{p.namespace}/{p.name}" for p in left] == ["finance/report-builder-0"]
    assert "didn't match Pod's node affinity/selector" in left[0].message
    # Without the node the two training pods stay pending.
    assert pending_after(objects, tmpl, 0) > pending_after(objects, tmpl, 1)


def test_a_template_whose_taint_the_pods_do_not_tolerate_adds_nothing() -> None:
    objects = load(node("full", cpu="1"), pod("p", cpu="2"))
    tainted = template("tainted", node("t", cpu="8", extra="spec: {taints: [{key: dedicated, value: x, effect: NoSchedule}]}"))
    plan = plan_scale_up(objects, [tainted], settings=SETTINGS)
    assert plan.add == {}
    assert plan.unschedulable == 1
    assert plan.pods[0].message.startswith("0/1 nodes are available: 1 Insufficient cpu.")


def test_max_nodes_exhausted_places_what_it_can() -> None:
    objects = load(node("full", cpu="1"), *(pod(f"p{i}", cpu="3") for i in range(3)))
    tmpl = template("small", node("small-template", cpu="4"))
    plan = plan_scale_up(objects, [tmpl], max_nodes={"small": 2}, settings=SETTINGS)
    assert plan.add == {"small": 2}
    assert plan.unschedulable == 1
    stuck = next(p for p in plan.pods if p.node is None)
    # kube-scheduler's message from the simulation with both nodes added: the small input node can never
    # hold 3 CPUs (preemption is not helpful there), the added ones are taken.
    assert stuck.message == "0/3 nodes are available: 3 Insufficient cpu. no new claims to deallocate, " \
        "preemption: 0/3 nodes are available: 1 Preemption is not helpful for scheduling, " \
        "2 No preemption victims found for incoming pod."


def test_node_affinity_no_template_satisfies() -> None:
    objects = load(node("a", cpu="1", labels="{zone: a}"),
                   pod("picky", cpu="2", extra_spec="nodeSelector: {zone: b}"))
    plan = plan_scale_up(objects, [template("za", node("za-template", cpu="8", labels="{zone: a}"))],
                         settings=SETTINGS)
    assert plan.add == {}
    assert plan.unschedulable == 1
    assert "didn't match Pod's node affinity/selector" in plan.pods[0].message


def test_each_pod_goes_to_the_template_that_can_host_it() -> None:
    objects = load(node("full", cpu="1", labels="{zone: a}"),
                   pod("in-a", cpu="2", extra_spec="nodeSelector: {zone: a}"),
                   pod("in-b", cpu="2", extra_spec="nodeSelector: {zone: b}"))
    za = template("za", node("za-template", cpu="4", labels="{zone: a}"))
    zb = template("zb", node("zb-template", cpu="4", labels="{zone: b}"))
    plan = plan_scale_up(objects, [za, zb], settings=SETTINGS)
    assert plan.add == {"za": 1, "zb": 1}
    assert {p.name: p.node for p in plan.pods} == {"in-a": "za-1", "in-b": "zb-1"}


SMALL = node("small-template", cpu="2", memory="4Gi")
BIG = node("big-template", cpu="16", memory="64Gi")


def _two_kinds() -> tuple[list, NodeTemplate, NodeTemplate]:
    objects = load(node("full", cpu="1"), *(pod(f"p{i}", cpu="2") for i in range(2)))
    return objects, template("small", SMALL), template("big", BIG)


def test_least_waste_picks_the_template_that_wastes_least() -> None:
    objects, small, big = _two_kinds()
    plan = plan_scale_up(objects, [big, small], settings=SETTINGS)
    assert plan.add == {"small": 2}  # 2 small nodes waste nothing of their CPU; 1 big wastes 12 of 16


def test_price_and_priority_expanders() -> None:
    objects, small, big = _two_kinds()
    cheap_big = plan_scale_up(objects, [big, small], expander=["price"], settings=SETTINGS,
                              prices={"small": Fraction(3), "big": Fraction(5)})
    assert cheap_big.add == {"big": 1}  # 5 < 2 × 3
    preferred = plan_scale_up(objects, [big, small], expander=["priority", "least-waste"], priorities={"big": 10},
                              settings=SETTINGS)
    assert preferred.add == {"big": 1}
    most = plan_scale_up(objects, [big, small], expander=["most-pods"], settings=SETTINGS)
    assert most.add == {"big": 1}  # both place 2 pods; the tie goes to fewer nodes


def test_the_plan_is_deterministic() -> None:
    objects = load(GPU_CLASS, GPU_TEMPLATE, node("cpu-only", cpu="64"),
                   *(pod(f"train-{i}", claims=TEMPLATE_CLAIM) for i in range(5)))
    tmpl = template("gpu", node("gpu-template", cpu="64"), gpu_slice("gpu-template", count=2))
    first = plan_scale_up(objects, [tmpl], settings=PlanSettings(Scheduler, seed=7)).to_dict()
    again = plan_scale_up(objects, [tmpl], settings=PlanSettings(Scheduler, seed=7)).to_dict()
    assert first == again
    assert first["add"] == {"gpu": 3}


def test_library_entry_point_on_the_scheduler() -> None:
    objects = load(node("full", cpu="1"), pod("p", cpu="2"))
    sched = Scheduler.from_objects(objects)
    plan = sched.plan_scale_up([template("small", node("small-template", cpu="4"))], max_nodes={"small": 5})
    assert plan.add == {"small": 1}


def test_a_template_holds_one_node_and_only_its_own_slices() -> None:
    with pytest.raises(InputError, match="exactly one Node, found 2"):
        template("two", node("a"), node("b"))
    with pytest.raises(InputError, match="spec.nodeName is 'other', not the template's node 'a'"):
        template("foreign", node("a"), gpu_slice("other"))
    with pytest.raises(InputError, match="only its Node and the ResourceSlices"):
        template("pod", node("a"), pod("p"))


def test_max_nodes_must_name_a_template() -> None:
    objects = load(node("full", cpu="1"), pod("p", cpu="2"))
    with pytest.raises(InputError, match="no template named 'nope'"):
        plan_scale_up(objects, [template("small", node("s", cpu="4"))], max_nodes={"nope": 1}, settings=SETTINGS)


def test_generated_template_scales_from_zero_with_complete_pools() -> None:
    """A template needs no existing node: ``dralloc generate node`` writes one whose pools are complete
    (resourceSliceCount = the slices of the pool), so the allocator uses its devices."""
    from dralloc.api import codec
    from dralloc.api.resource_v1 import ResourceSlice
    from dralloc.simulator.generate import cluster_documents, node_template_documents

    docs = node_template_documents("gpu-h100", "h100-template")
    tmpl = template_from_objects("h100", [codec.decode(d) for d in docs])
    counts = {s.spec.pool.resource_slice_count for s in tmpl.slices if isinstance(s, ResourceSlice)}
    assert counts == {len(tmpl.slices)}
    classes = [codec.decode(d) for d in cluster_documents(0, "gpu-h100")]
    claim_template = textwrap.dedent("""\
        apiVersion: resource.k8s.io/v1
        kind: ResourceClaimTemplate
        metadata: {name: mig, namespace: default}
        spec: {spec: {devices: {requests: [{name: m, exactly: {deviceClassName: mig.nvidia.com,
          selectors: [{cel: {expression: 'device.attributes["gpu.nvidia.com"].profile == "3g.40gb"'}}]}}]}}}
        """)
    pods = [pod(f"infer-{i}", claims="[{name: m, resourceClaimTemplateName: mig}]") for i in range(17)]
    plan = plan_scale_up(classes + load(claim_template, *pods), [tmpl], settings=SETTINGS)
    # Two 3g.40gb partitions per H100, eight H100s a node: 16 per node, so 17 pods need two nodes.
    assert plan.add == {"h100": 2}
    assert plan.unschedulable == 0
