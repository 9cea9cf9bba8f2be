"""Where upstream's search provably runs past kube-scheduler's DRA filter timeout, that timeout is the answer.

The pruned search counts the steps upstream's plain search takes for certain (the nodes it visits, the
recorded size of each subtree the failure memo answers with a key that holds the whole visible state, and
for a cut subtree the ways of filling the cut request that upstream surely walks). That count is a lower
bound: wherever the plain search answers within a budget of steps, the proof never fires.
"""

from __future__ import annotations

import time

import pytest
from cases_loader import expand
from hard_inputs import HardCase
from hypothesis import HealthCheck, given, settings
from hypothesis.internal.conjecture.data import ConjectureData
from test_properties import clusters

from dralloc.allocator import AllocationError, Allocator, search
from dralloc.allocator.errors import AllocationTimeout
from dralloc.allocator.upstream_cost import TIMEOUT_STEPS
from dralloc.api import codec


def _plain(alloc: Allocator, node, claims) -> tuple[str, int]:
    """The plain search's answer and its exact step count (upstream's allocateOne calls), errors included."""
    s = alloc.search(node, claims)
    try:
        found = s.run()
    except AllocationError as exc:
        return f"error: {exc}", s.steps
    return ("allocated" if found else "unschedulable"), s.steps


def _pruned(alloc: Allocator, node, claims) -> str:
    try:
        out = alloc.allocate(node, claims)
    except AllocationTimeout:
        return "timeout"
    except AllocationError as exc:
        return f"error: {exc}"
    return out.status


def _never_fires_within_budget(slices, classes, allocated, node, pending) -> int:
    """Check the proof against the plain search on one input; return how often it fired below the plain
    search's step count (it may: upstream takes more steps than those budgets)."""
    plain, steps = _plain(Allocator(slices, classes, allocated, prune=False), node, pending)
    fired = 0
    for budget in (steps, steps // 4):
        alloc = Allocator(slices, classes, allocated, hard_after=0, timeout_steps=budget)
        got = _pruned(alloc, node, pending)
        if budget >= steps:
            assert got == plain, (budget, steps)
        elif got == "timeout":
            fired += 1
    return fired


def test_the_proof_never_fires_where_the_plain_search_answers_within_the_budget(monkeypatch):
    monkeypatch.setattr(search, "PROVE_AFTER", 0)  # prove from the first step, as small inputs are short
    fired = 0
    for seed in range(0, 240, 3):
        case = HardCase(seed, small=True)
        fired += _never_fires_within_budget(case.slices, case.classes, case.allocated, case.node, case.pending)
    assert fired >= 20  # and it does fire where upstream takes longer than the budget


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                                                 HealthCheck.function_scoped_fixture])
@given(clusters())
def test_the_proof_never_fires_on_random_clusters_within_the_budget(monkeypatch, objs):
    monkeypatch.setattr(search, "PROVE_AFTER", 0)
    kinds = [type(o).__name__ for o in objs]
    node = next(o for o, k in zip(objs, kinds) if k == "Node")
    _never_fires_within_budget([o for o, k in zip(objs, kinds) if k == "ResourceSlice"],
                               [o for o, k in zip(objs, kinds) if k == "DeviceClass"],
                               [o for o, k in zip(objs, kinds) if k == "ResourceClaim" and o.status is not None],
                               node,
                               [o for o, k in zip(objs, kinds) if k == "ResourceClaim" and o.status is None])


def test_a_fixed_random_cluster_is_checked_too(monkeypatch):
    # one drawn cluster, as the benchmark draws them, so this check does not depend on hypothesis' choices
    import random

    monkeypatch.setattr(search, "PROVE_AFTER", 0)
    objs = ConjectureData(random=random.Random(11)).draw(clusters())
    kinds = [type(o).__name__ for o in objs]
    _never_fires_within_budget([o for o, k in zip(objs, kinds) if k == "ResourceSlice"],
                               [o for o, k in zip(objs, kinds) if k == "DeviceClass"],
                               [o for o, k in zip(objs, kinds) if k == "ResourceClaim" and o.status is not None],
                               next(o for o, k in zip(objs, kinds) if k == "Node"),
                               [o for o, k in zip(objs, kinds) if k == "ResourceClaim" and o.status is None])


@pytest.mark.slow
def test_a_search_upstream_cannot_finish_in_time_answers_with_its_timeout_within_a_second():
    # distinctAttribute over three NUMA nodes for claim 0 (7 + 12 devices), then 10 devices of one NUMA node
    # for claim 1: upstream walks the alternations of claim 0 for far longer than 10 s; dralloc's own search
    # had no answer in 20 s, and now proves the timeout
    case = HardCase(385)
    alloc = Allocator(case.slices, case.classes, case.allocated)
    started = time.process_time()
    with pytest.raises(AllocationTimeout) as info:
        alloc.allocate(case.node, case.pending)
    assert time.process_time() - started < 1.0
    exc = info.value
    assert str(exc) == "filter operation aborted: context deadline exceeded"
    assert exc.filter_message == "node node-0: timed out trying to allocate devices"
    assert exc.steps > TIMEOUT_STEPS
    assert "at an assumed 5 µs a step" in exc.note() and "past its 10 s DRA filter timeout" in exc.note()


def test_the_budget_is_kube_schedulers_timeout_at_the_assumed_cost_per_step():
    assert TIMEOUT_STEPS == 2_000_000


def test_a_search_that_needs_no_proof_is_not_stopped():
    # a short search never proves anything, whatever the budget: the proof only starts once the search is long
    objs = [{"kind": "DeviceClass", "name": "any", "driver": "d.example.com"},
            {"kind": "Node", "name": "node-1"},
            {"kind": "ResourceSlice", "name": "s", "driver": "d.example.com", "pool": "p", "nodeName": "node-1",
             "devices": [f"dev-{i}" for i in range(8)]},
            {"kind": "ResourceClaim", "name": "a", "requests": [{"name": "r", "class": "any", "count": 9}]}]
    decoded = [codec.decode(expand(o)) for o in objs]
    node = next(o for o in decoded if type(o).__name__ == "Node")
    claims = [o for o in decoded if type(o).__name__ == "ResourceClaim"]
    out = Allocator.from_objects(decoded, timeout_steps=1).allocate(node, claims)
    assert out.status == "unschedulable"
