"""Each policy's score on hand-made nodes, against the paper's formulas (worked by hand here)."""

from __future__ import annotations

import math

from trace_helpers import cluster, cycle_for, node

from dralloc.scheduler.plugins.trace_policies.best_fit import BestFitScore
from dralloc.scheduler.plugins.trace_policies.dot_product import DotProductScore
from dralloc.scheduler.plugins.trace_policies.fgd import FgdScore
from dralloc.scheduler.plugins.trace_policies.fragmentation import Fragmentation, PodClass, typical_pods
from dralloc.scheduler.plugins.trace_policies.gpu_clustering import GpuClusteringScore
from dralloc.scheduler.plugins.trace_policies.gpu_packing import GpuPackingScore
from dralloc.scheduler.plugins.trace_policies.gpus import demand, node_gpus
from dralloc.scheduler.plugins.trace_policies.most_allocated import MostAllocated
from dralloc.scheduler.plugins.trace_policies.random_score import RandomScore
from dralloc.trace.alibaba import TraceNode, TracePod

G8 = TraceNode("big", 96_000, 393_216, 8, "G2")
T4 = TraceNode("small", 16_000, 65_536, 2, "T4")
SHARE = TracePod("share", 8_000, 1024, 1, 500)
WHOLE2 = TracePod("two", 16_000, 1024, 2, 1000)
CPU_ONLY = TracePod("cpu", 4_000, 1024, 0, 0)


def test_the_node_view_reads_milli_left_per_gpu_and_cpu_left() -> None:
    snap = cluster([G8], used={"big": [300, 0, 1000]}, cpu_used={"big": 6000})
    gpus = node_gpus(cycle_for(snap, SHARE), node(snap, "big"))
    assert gpus.free == (700, 1000, 0, 1000, 1000, 1000, 1000, 1000)
    assert gpus.cpu_left == 90_000 and gpus.model == "G2"
    assert demand(cycle_for(snap, WHOLE2)).total == 2000


def test_dot_product() -> None:
    snap = cluster([G8], used={"big": [300]}, cpu_used={"big": 32_000})
    # C = 64000, I = 7700; c = 8000, k·u = 500: 100·(1 − ½(0.5·0.0625 + 0.9625·0.0625)) = 95.43 → 95
    assert DotProductScore().score(cycle_for(snap, SHARE), node(snap, "big")) == 95


def test_best_fit_scores_the_leftover_then_normalises_min_max() -> None:
    snap = cluster([G8, T4], used={"small": [600]})
    plugin = BestFitScore()
    cyc = cycle_for(snap, SHARE)
    # big: ½·88000/128000 + ½·7500/8000 = 0.8125 → 18; small: ½·8000/128000 + ½·900/8000 = 0.0875 → 91
    raw = {"big": plugin.score(cyc, node(snap, "big")), "small": plugin.score(cyc, node(snap, "small"))}
    assert raw == {"big": 18, "small": 91}
    assert plugin.normalize(cyc, raw) == {"big": 0, "small": 100}
    assert plugin.normalize(cyc, {"a": 7, "b": 7}) == {"a": 0, "b": 0}


def test_gpu_packing_tiers() -> None:
    plugin = GpuPackingScore()
    idle = cluster([G8, T4])
    assert plugin.score(cycle_for(idle, SHARE), node(idle, "big")) == 25  # all free: max(33 − 8, 8)
    assert plugin.score(cycle_for(idle, SHARE), node(idle, "small")) == 31  # max(33 − 2, 2)
    assert plugin.score(cycle_for(idle, CPU_ONLY), node(idle, "small")) == 0
    used = cluster([G8], used={"big": [300, 1000]})
    # the share fits GPU 0 (700 left): no fresh GPU → max(100 − ⌊70/10⌋, 50) = 93
    assert plugin.score(cycle_for(used, SHARE), node(used, "big")) == 93
    # two whole GPUs on a used node: both picked GPUs are fresh → max(50 − 2, 33) = 48
    assert plugin.score(cycle_for(used, WHOLE2), node(used, "big")) == 48


def test_gpu_clustering_kinds() -> None:
    plugin = GpuClusteringScore()
    snap = cluster([G8])
    cyc = cycle_for(snap, SHARE)
    # no GPU pods: 25 + ⌊25·(8000 − 8000)/8000⌋
    assert plugin.score(cyc, node(snap, "big")) == 25
    assert plugin.score(cycle_for(snap, CPU_ONLY), node(snap, "big")) == 0
    small = cluster([T4])
    # a 2-GPU node: b = ⌊25·6000/8000⌋ = 18
    assert plugin.score(cycle_for(small, SHARE), node(small, "small")) == 43


def test_most_allocated_prefers_the_fuller_node() -> None:
    snap = cluster([G8, T4], cpu_used={"small": 8000})
    plugin = MostAllocated()
    cyc = cycle_for(snap, CPU_ONLY)
    # small: cpu (8000 + 4000)/16000 = 75, memory 1 GiB/64 GiB = 1 → 38; big: 4000/96000 = 4, 0 → 2
    assert plugin.score(cyc, node(snap, "small")) == 38
    assert plugin.score(cyc, node(snap, "big")) == 2


def test_random_scores_every_node_alike_and_draws_a_fitting_gpu() -> None:
    snap = cluster([G8], used={"big": [800, 1000, 1000, 1000, 1000, 1000, 0, 0]})
    plugin = RandomScore(seed=3)
    cyc = cycle_for(snap, SHARE)
    assert plugin.score(cyc, node(snap, "big")) == 0
    picks = {plugin.choose(cyc, node_gpus(cyc, node(snap, "big")), demand(cyc))[0] for _ in range(50)}
    assert picks == {6, 7}


def test_typical_pods_keep_the_most_common_classes_up_to_95_percent() -> None:
    pods = [(1000, 500, 1, ())] * 90 + [(2000, 0, 0, ())] * 6 + [(3000, 1000, 1, ("T4",))] * 4
    classes = typical_pods(pods)
    assert [(c.cpu, c.milli, c.count) for c in classes] == [(1000, 500, 1), (2000, 0, 0)]
    assert math.isclose(classes[0].share, 90 / 96)


def test_fragmentation_counts_gpus_too_small_for_each_class() -> None:
    frag = Fragmentation((PodClass(1000, 500, 1, None, 0.5), PodClass(1000, 0, 0, None, 0.25),
                          PodClass(1000, 1000, 1, frozenset({"T4"}), 0.25)))
    # share class fits (a GPU with ≥ 500): fragments are the GPUs below 500 → 300;
    # CPU-only and the T4-only class count all idle milli (1300 + ... ) on a G2 node
    assert frag.of("G2", 8000, (300, 1000)) == 0.5 * 300 + 0.25 * 1300 + 0.25 * 1300
    # no CPU left for any class: every idle milli is a fragment
    assert frag.of("G2", 0, (300, 1000)) == 1300


def test_fgd_puts_a_share_where_fragmentation_grows_least() -> None:
    snap = cluster([T4], used={"small": [400, 0]})
    workload = (PodClass(1000, 500, 1, None, 0.5), PodClass(1000, 1000, 1, None, 0.5))
    plugin = FgdScore(workload)
    cyc = cycle_for(snap, SHARE)
    gpus = node_gpus(cyc, node(snap, "small"))
    # before: F = ½·0 + ½·600 = 300. On GPU 0 (→ 100, 1000): F = ½·100 + ½·100 = 100, trunc(100·σ(0.2)) = 54;
    # on GPU 1 (→ 600, 500): the whole-GPU class no longer fits, F = ½·0 + ½·1100 = 550, σ(−0.25) → 43
    assert plugin.score(cyc, node(snap, "small")) == 54
    assert plugin.choose(cyc, gpus, demand(cyc)) == [0]
    # a whole GPU: only the lowest free one, F 300 → ½·0 + ½·600 (GPU 1 gone, 600 < 1000 stays) …
    whole = cycle_for(snap, TracePod("one", 1000, 1024, 1, 1000))
    assert plugin.choose(whole, gpus, demand(whole)) == [1]


def test_the_node_view_follows_a_change_of_slices() -> None:
    """A what-if that replaces the slices (snapshot.rebuild) is seen by the GPU view the policies read."""
    from dralloc.scheduler.snapshot import rebuild

    snap = cluster([G8])
    assert len(node_gpus(cycle_for(snap, SHARE), node(snap, "big")).free) == 8
    smaller = cluster([TraceNode("big", 96_000, 393_216, 2, "G2")])
    rebuild(snap, snap.node_list, smaller.slices)
    assert node_gpus(cycle_for(snap, SHARE), node(snap, "big")).free == (1000, 1000)
