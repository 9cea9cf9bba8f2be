"""DefaultPreemption: victims, the node picked, eviction side effects and 1.36's DRA rule."""

from __future__ import annotations

from sched_builders import (
    GPU_CLASS,
    GPU_TEMPLATE,
    TEMPLATE_CLAIM,
    by_name,
    gpu_slice,
    node,
    pod,
    running_with_claim,
)


def test_a_high_priority_pod_evicts_only_the_victims_it_needs(simulate) -> None:
    docs = [node("n1", cpu="4"),
            pod("low-a", cpu="2", priority=10, node_name="n1"),
            pod("low-b", cpu="1", priority=5, node_name="n1"),
            pod("high", cpu="3", priority=1000)]
    _, result = simulate(*docs)
    pods = by_name(result)
    # Both are removed, then reprieved most important first: low-a (2 + 3 > 4) stays a victim,
    # low-b (1 + 3 = 4) is reprieved.
    assert pods["high"].node == "n1"
    assert pods["low-a"].status == "evicted" and pods["low-b"].status == "running"
    assert [(e.name, e.node, e.by) for e in result.evicted] == [("low-a", "n1", "default/high")]
    assert pods["low-a"].message == "preempted by default/high on node n1"


def test_reprieve_keeps_the_most_important_victim_that_still_leaves_room(simulate) -> None:
    docs = [node("n1", cpu="4"),
            pod("keep", cpu="1", priority=10, node_name="n1"),
            pod("go", cpu="2", priority=5, node_name="n1"),
            pod("high", cpu="3", priority=1000)]
    _, result = simulate(*docs)
    pods = by_name(result)
    assert pods["high"].node == "n1" and pods["keep"].status == "running" and pods["go"].status == "evicted"


def test_the_node_with_the_lowest_priority_victims_is_picked(simulate) -> None:
    docs = [node("a", cpu="2"), node("b", cpu="2"),
            pod("on-a", cpu="2", priority=50, node_name="a"),
            pod("on-b", cpu="2", priority=20, node_name="b"),
            pod("high", cpu="2", priority=100)]
    _, result = simulate(*docs)
    pods = by_name(result)
    assert pods["high"].node == "b" and pods["on-b"].status == "evicted" and pods["on-a"].status == "running"


def test_equal_priority_pods_are_not_victims(simulate) -> None:
    _, result = simulate(node("n1", cpu="2"), pod("a", cpu="2", priority=5, node_name="n1"),
                         pod("b", cpu="2", priority=5))
    assert by_name(result)["b"].message.endswith(
        "preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.")


def test_dra_rejections_are_not_resolved_by_preemption_in_1_36(simulate) -> None:
    # The running low-priority pod holds the only GPU; evicting it would free the device, but a
    # DynamicResources rejection is UnschedulableAndUnresolvable, so preemption does not try.
    low, low_claim = running_with_claim("low", "n1", cpu="1", priority=1)
    _, result = simulate(node("n1"), gpu_slice("n1", 1), GPU_CLASS, GPU_TEMPLATE, low_claim, low,
                         pod("high", priority=100, claims=TEMPLATE_CLAIM))
    pods = by_name(result)
    assert pods["low"].status == "running" and not result.evicted
    assert pods["high"].message == (
        "0/1 nodes are available: 1 cannot allocate all claims. still not schedulable, "
        "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.")


def test_an_evicted_pods_generated_claim_is_released(simulate) -> None:
    # low holds the only GPU and 2 of 2 cpus; high needs cpu only and evicts it: low's claim is deleted
    # and its device freed, so a later GPU pod fits.
    low, low_claim = running_with_claim("low", "n1", cpu="2", priority=1)
    sched, result = simulate(node("n1", cpu="2"), gpu_slice("n1", 1), GPU_CLASS, GPU_TEMPLATE, low_claim, low,
                             pod("high", cpu="2", priority=100))
    assert by_name(result)["high"].node == "n1"
    assert ("default", "low-gpu") not in sched.snapshot.claims
    assert not sched.snapshot.dra.allocator.state.is_allocated("gpu.example.com/n1/gpu-0")
