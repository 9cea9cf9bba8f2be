"""What-if verbs: add nodes like one, remove a node, how many more copies fit."""

from __future__ import annotations

from sched_builders import (
    GPU_CLASS,
    GPU_TEMPLATE,
    TEMPLATE_CLAIM,
    by_name,
    gpu_slice,
    load,
    node,
    pod,
    running_with_claim,
)

from dralloc.scheduler import Scheduler


def cluster(pods: int) -> list:
    return load(node("gpu-1"), gpu_slice("gpu-1", 2), GPU_CLASS, GPU_TEMPLATE,
                *(pod(f"p{i}", claims=TEMPLATE_CLAIM) for i in range(pods)))


def test_added_nodes_bring_their_own_slices_renamed_as_a_driver_publishes_them() -> None:
    sched = Scheduler.from_objects(cluster(6))
    assert sched.add_nodes(2, "gpu-1") == ["gpu-1-whatif-1", "gpu-1-whatif-2"]
    result = sched.schedule()
    assert len(result.scheduled) == 6
    pools = {r.pool for p in result.scheduled for c in p.claims for r in c.status.allocation.devices.results}
    assert pools == {"gpu-1", "gpu-1-whatif-1", "gpu-1-whatif-2"}
    for p in result.scheduled:
        (c,) = p.claims
        assert c.status.allocation.devices.results[0].pool == p.node
        assert c.status.allocation.node_selector.node_selector_terms[0].match_fields[0].values == [p.node]


def test_removing_a_node_makes_its_pods_pending_and_frees_their_claims() -> None:
    running, claim = running_with_claim("old", "gpu-1")
    objs = load(node("gpu-1"), node("gpu-2"), gpu_slice("gpu-1", 1), gpu_slice("gpu-2", 1), GPU_CLASS, claim,
                running)
    sched = Scheduler.from_objects(objs)
    assert sched.remove_node("gpu-1") == ["default/old"]
    result = sched.schedule()
    old = by_name(result)["old"]
    assert old.node == "gpu-2" and old.status == "scheduled"
    assert old.claims[0].status.allocation.devices.results[0].pool == "gpu-2"


def test_max_copies_counts_what_still_fits_and_why_the_next_does_not() -> None:
    sched = Scheduler.from_objects(cluster(1))
    sched.schedule()
    count, per_node, why = sched.max_copies("p0")
    assert count == 1 and per_node == {"gpu-1": 1}
    assert why.startswith("0/1 nodes are available: 1 cannot allocate all claims.")


def test_max_copies_accepts_a_workload_name() -> None:
    deployment = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: default}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: c, image: nginx, resources: {requests: {cpu: "1"}}}]}
"""
    for target in ("web", "Deployment/web", "default/web"):
        sched = Scheduler.from_objects(load(node("n1", cpu="4"), deployment))
        assert len(sched.schedule().scheduled) == 2
        count, per_node, why = sched.max_copies(target)
        assert (count, per_node) == (2, {"n1": 2}), target
        assert why.startswith("0/1 nodes are available: 1 Insufficient cpu.")
