"""NodeResourcesFit's scoring strategies and BalancedAllocation's resources, as kube-scheduler 1.36 scores."""

from __future__ import annotations

from typing import Any

from sched_builders import load, node, pod

from dralloc.scheduler.framework import Cycle
from dralloc.scheduler.nodeinfo import NodeInfo
from dralloc.scheduler.plugins.balanced_allocation import BalancedAllocation
from dralloc.scheduler.plugins.node_resources_fit import NodeResourcesFit, broken_linear, ratio_scorer
from dralloc.scheduler.podinfo import PodInfo


def _node(cpu: str, memory: str = "8Gi", used_cpu: str | None = None, extra: str = "") -> NodeInfo:
    (n,) = load(node("n", cpu=cpu, memory=memory, extra=extra))
    info = NodeInfo.build(n)
    if used_cpu:
        (running,) = load(pod("r", cpu=used_cpu, node_name="n"))
        info.add_pod(PodInfo.build(running, 0, 0))
    return info


def _cycle(cpu: str = "1", extra_spec: str = "") -> Cycle:
    (p,) = load(pod("p", cpu=cpu, extra_spec=extra_spec))
    return Cycle(PodInfo.build(p, 1, 0), None)  # type: ignore[arg-type]  # scoring reads no snapshot


def scores(plugin: Any, cycle: Cycle, *nodes: NodeInfo) -> list[int]:
    return [plugin.score(cycle, n) for n in nodes]


def test_least_allocated_prefers_the_emptier_node_and_most_allocated_the_fuller() -> None:
    empty, busy = _node("4"), _node("4", used_cpu="2")
    cycle = _cycle("1")
    # cpu: (4000-1000)/4000 → 75 and (4000-3000)/4000 → 25; memory: 200Mi default request on 8Gi both
    least = scores(NodeResourcesFit(), cycle, empty, busy)
    assert least[0] > least[1]
    most = scores(NodeResourcesFit("MostAllocated"), cycle, empty, busy)
    assert most[0] < most[1]
    # MostAllocated by hand: cpu 1000*100//4000 = 25, 3000*100//4000 = 75; memory (200Mi + 200Mi for the
    # running pod's default) → 200Mi*100//8Gi = 2 and 400Mi → 4; the mean of two, integer division.
    assert most == [(25 + 2) // 2, (75 + 4) // 2]


def test_weights_per_resource() -> None:
    busy = _node("4", used_cpu="2")
    cycle = _cycle("1")
    cpu_heavy = NodeResourcesFit("MostAllocated", resources=[("cpu", 3), ("memory", 1)])
    assert scores(cpu_heavy, cycle, busy) == [(75 * 3 + 4 * 1) // 4]


def test_requested_to_capacity_ratio_shape() -> None:
    busy = _node("4", used_cpu="2")
    cycle = _cycle("1")
    # Bin packing shape: 0 % → 0, 100 % → 10 (scaled to 100); cpu 75 % → 75, memory 400Mi/8Gi → 4 % → 4.
    plugin = NodeResourcesFit("RequestedToCapacityRatio", shape=[(0, 0), (100, 10)])
    assert scores(plugin, cycle, busy) == [round((75 + 4) / 2)]
    # A falling shape; Go truncates toward zero.
    spread = broken_linear([(0, 100), (100, 0)])
    assert (spread(0), spread(75), spread(100), spread(101)) == (100, 25, 0, 0)
    # Resources that score 0 are left out of the mean.
    assert ratio_scorer([(0, 0), (100, 10)])([0, 50], [100, 100], [1, 1]) == 50


GPU_NODE = 'apiVersion: v1\nkind: Node\nmetadata: {name: n}\n' \
    'status: {allocatable: {cpu: "8", memory: 8Gi, pods: "110", example.com/gpu: "4"}}\n'


def _gpu_node() -> NodeInfo:
    return NodeInfo.build(load(GPU_NODE)[0])
GPU_REQUEST = 'containers: [{name: c, resources: {requests: {cpu: "1", example.com/gpu: "2"}}}]'


def _gpu_cycle() -> Cycle:
    (p,) = load(pod("p", extra_spec=GPU_REQUEST).replace('  containers: [{name: c, resources: {requests: {cpu: "100m"}}}]\n', ""))
    return Cycle(PodInfo.build(p, 1, 0), None)  # type: ignore[arg-type]


def test_extended_resources_score_only_when_requested() -> None:
    gpu_node = _gpu_node()
    plugin = NodeResourcesFit("MostAllocated", resources=[("cpu", 1), ("example.com/gpu", 5)])
    assert scores(plugin, _cycle("1"), gpu_node) == [1000 * 100 // 8000]  # the GPU term is left out
    # cpu 12, gpu 2 of 4 → 50; weighted (12·1 + 50·5) // 6
    assert scores(plugin, _gpu_cycle(), gpu_node) == [(12 + 250) // 6]


def test_ignored_resources_are_not_checked_by_filter() -> None:
    (p,) = load(pod("p", extra_spec="containers: [{name: c, resources: {requests: {example.com/foo: \"1\"}}}]")
                .replace("  containers: [{name: c, resources: {requests: {cpu: \"100m\"}}}]\n", ""))
    cycle = Cycle(PodInfo.build(p, 1, 0), type("S", (), {"dra_extended_resources": frozenset()})())  # type: ignore[arg-type]
    n = _node("4")
    assert NodeResourcesFit().filter(cycle, n) is not None
    assert NodeResourcesFit(ignored_resources=["example.com/foo"]).filter(cycle, n) is None
    assert NodeResourcesFit(ignored_groups=["example.com"]).filter(cycle, n) is None


def test_balanced_allocation_over_three_resources() -> None:
    n = _gpu_node()
    cycle = _gpu_cycle()
    # actual requests: cpu 1/8, memory 0/8Gi; std of two = 0.0625 → 93
    assert scores(BalancedAllocation(), cycle, n) == [93]
    # with the GPU (2/4): fractions 0.125, 0, 0.5 → population std ≈ 0.2125 → 78
    assert scores(BalancedAllocation(["cpu", "memory", "example.com/gpu"]), cycle, n) == [78]
