"""The cycle around the plugins: queue order, node sampling and rotation, ties, determinism."""

from __future__ import annotations

import pytest
from sched_builders import by_name, load, node, pod

from dralloc.scheduler.schedule_one import num_feasible_nodes_to_find


def test_adaptive_percentage_of_nodes_to_score() -> None:
    assert [num_feasible_nodes_to_find(n) for n in (50, 100, 500, 1000, 3125, 5000, 6000)] == \
        [50, 100, 230, 420, 781, 500, 300]
    assert num_feasible_nodes_to_find(5000, 100) == 5000
    assert num_feasible_nodes_to_find(500, 10) == 100


def test_priority_then_creation_time_orders_the_queue(simulate) -> None:
    docs = [node("n1", cpu="1"),
            pod("late", cpu="1").replace("namespace: default}", "namespace: default, creationTimestamp: '2026-01-02T00:00:00Z'}"),
            pod("early", cpu="1").replace("namespace: default}", "namespace: default, creationTimestamp: '2026-01-01T00:00:00Z'}")]
    _, result = simulate(*docs)
    assert by_name(result)["early"].node == "n1" and by_name(result)["late"].node is None
    _, result = simulate(*docs, pod("urgent", cpu="1", priority=10))
    assert by_name(result)["urgent"].node == "n1"


def test_sampling_stops_after_enough_feasible_nodes_and_rotates(simulate) -> None:
    nodes = [node(f"n{i:03d}", cpu="100") for i in range(200)]
    sched, _ = simulate(*nodes, pod("a"), pod("b"), percentage=50)
    # 50 % of 200 = 100 nodes examined per pod: the second pod starts where the first stopped.
    assert sched.framework.next_start_node_index == 200 % 200
    sched, _ = simulate(*nodes, pod("a"), percentage=50)
    assert sched.framework.next_start_node_index == 100


def test_the_same_seed_gives_the_same_placements_and_another_seed_may_not(simulate) -> None:
    docs = [node(f"n{i}") for i in range(20)] + [pod(f"p{i}") for i in range(20)]
    _, first = simulate(*docs, seed=1)
    _, again = simulate(*docs, seed=1)
    assert first.to_dict() == again.to_dict()
    placements = {tuple(p.node for p in simulate(*docs, seed=s)[1].pods) for s in range(5)}
    assert len(placements) > 1


def test_least_allocated_spreads_pods(simulate) -> None:
    _, result = simulate(node("a", cpu="4"), node("b", cpu="4"), pod("x", cpu="2"), pod("y", cpu="2"))
    assert {p.node for p in result.pods} == {"a", "b"}


@pytest.mark.slow
def test_grouping_equal_nodes_never_changes_the_answer() -> None:
    """Sharing filter/score work and allocator answers between nodes in the same state gives the same
    placements, claims and messages as filtering every node on its own."""
    import random

    from sched_builders import GPU_CLASS, GPU_TEMPLATE, TEMPLATE_CLAIM, gpu_slice, load

    from dralloc.scheduler import Scheduler

    rng = random.Random(7)
    docs = [GPU_CLASS, GPU_TEMPLATE]
    for i in range(120):
        docs.append(node(f"n{i:03d}", cpu=str(rng.choice([2, 4, 8]))))
        if i % 3:
            docs.append(gpu_slice(f"n{i:03d}", rng.choice([1, 2, 4])))
    for i in range(400):
        claims = TEMPLATE_CLAIM if rng.random() < 0.6 else ""
        docs.append(pod(f"p{i:03d}", cpu=rng.choice(["500m", "1", "2"]), claims=claims,
                        priority=rng.choice([0, 0, 0, 10])))
    objs = load(*docs)
    grouped = Scheduler.from_objects(objs, seed=3).schedule().to_dict()
    plain = Scheduler(**_kwargs(objs), seed=3, group_nodes=False).schedule().to_dict()
    assert grouped == plain
    assert grouped["unschedulable"] > 0 and grouped["scheduled"] > 100


def _kwargs(objs: list) -> dict:
    from dralloc.controllers.names import NameGenerator
    from dralloc.simulator.loading import sort_objects

    o = sort_objects(objs, NameGenerator(0))
    return {"nodes": o.nodes, "pods": o.pods, "slices": o.slices, "classes": o.classes, "claims": o.claims,
            "templates": o.templates}


def test_profiles_share_one_start_index_and_one_random_source() -> None:
    """kube-scheduler keeps nextStartNodeIndex and its random source on the Scheduler, not per profile: pods
    alternating between two profiles with the same plugins land where they would under one profile."""
    from dralloc.scheduler import Scheduler
    from dralloc.scheduler.profile import Profile

    nodes = [node(f"n{i:03d}", cpu="100") for i in range(200)]

    def placements(second: str) -> list[str | None]:
        pods = [pod(f"p{i}", extra_spec=f"schedulerName: {second}" if i % 2 else "") for i in range(6)]
        sched = Scheduler.from_objects(load(*nodes, *pods), seed=3, percentage_of_nodes_to_score=50,
                                       profiles=[Profile("second-scheduler")])
        return [p.node for p in sched.schedule().pods]

    one_profile = placements("default-scheduler")
    two_profiles = placements("second-scheduler")
    assert two_profiles == one_profile
    # 50 % of 200 nodes examined per pod: each pod's search starts where the previous pod's (of whichever
    # profile) stopped, so the second pod is placed among the second hundred.
    assert two_profiles[1] is not None and two_profiles[1] >= "n100"


def test_a_long_lived_simulator_takes_pods_in_and_out() -> None:
    """``add_pod``/``forget_pod``/``run``, as ``dralloc serve`` keeps one simulator: a pod taken out no longer
    counts on its node, and the next run places a pending pod in the room it left."""
    from dralloc.scheduler import Scheduler

    sched = Scheduler.from_objects(load(node("n1", cpu="1")))
    (running,) = load(pod("old", cpu="1", node_name="n1"))
    (waiting,) = load(pod("new", cpu="1"))
    sched.add_pod(running)
    sched.add_pod(waiting)
    sched.run()
    assert sched.results["default/new"].status == "unschedulable"
    sched.forget_pod("default/new")
    sched.forget_pod("default/old")
    assert sched.snapshot.by_name["n1"].pods == [] and "default/old" not in sched.results
    sched.add_pod(waiting)
    sched.run()
    assert sched.results["default/new"].node == "n1"
