"""The scheduling queue: PrioritySort, PreEnqueue gating, the unschedulable pool and backoff."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from sched_builders import load, pod

from dralloc.scheduler.framework import Status, unschedulable
from dralloc.scheduler.podinfo import PodInfo
from dralloc.scheduler.queue import SchedulingQueue, backoff_seconds


def info(name: str, priority: int = 0, order: int = 0) -> PodInfo:
    return PodInfo.build(load(pod(name, priority=priority))[0], order, priority, {})


def drain(queue: SchedulingQueue) -> list[str]:
    out = []
    while queue:
        out.append(queue.pop().name)
    return out


def test_priority_first_then_input_order_and_requeued_pods_behind() -> None:
    queue = SchedulingQueue()
    for i, (name, prio) in enumerate([("a", 0), ("b", 10), ("c", 0)]):
        queue.add(info(name, prio, i))
    first = queue.pop()
    assert first.name == "b"
    queue.requeue(first)
    queue.requeue(info("d", 0, 3))
    assert drain(queue) == ["b", "a", "c", "d"]


def test_a_gated_pod_waits_aside_until_its_gate_opens() -> None:
    closed = {"held"}

    def gate(p: PodInfo) -> Status | None:
        return unschedulable("Gate", "closed") if p.name in closed else None

    queue = SchedulingQueue(gate)
    held = info("held")
    assert queue.add(held) == unschedulable("Gate", "closed")
    assert queue.add(info("free")) is None
    assert drain(queue) == ["free"] and "default/held" in queue.gated
    assert queue.activate(held) is not None  # still closed
    closed.clear()
    assert queue.activate(held) is None
    assert drain(queue) == ["held"] and not queue.gated


def test_unschedulable_pods_move_back_in_the_order_they_failed() -> None:
    queue = SchedulingQueue()
    for name in ("x", "y"):
        queue.add_unschedulable(info(name))
    assert not queue
    queue.move_all_to_active()
    assert drain(queue) == ["x", "y"] and not queue.unschedulable


def test_with_a_clock_moved_pods_wait_out_their_backoff() -> None:
    queue = SchedulingQueue()
    p = info("p")
    for _ in range(3):
        queue.add_unschedulable(p)  # three failed attempts: 4 s of backoff
    queue.move_all_to_active(now=100.0)
    queue.flush_backoff(103.9)
    assert not queue
    queue.flush_backoff(104.0)
    assert drain(queue) == ["p"]


@given(st.integers(min_value=1, max_value=64))
def test_backoff_doubles_from_one_second_up_to_ten(attempts: int) -> None:
    assert backoff_seconds(attempts) == min(2.0 ** (attempts - 1), 10.0)


def test_the_cache_assumes_forgets_and_keeps_bound_pods() -> None:
    from sched_builders import node

    from dralloc.scheduler.cache import SchedulerCache
    from dralloc.simulator import Simulator

    sim = Simulator.from_objects(load(node("n1")))
    cache = SchedulerCache(sim.snapshot)
    n1 = sim.snapshot.by_name["n1"]
    p, q = info("p"), info("q", order=1)
    cache.assume_pod(p, n1)
    assert cache.is_assumed(p) and n1.requested["cpu"] == 100
    cache.forget_pod(p)
    assert not cache.is_assumed(p) and n1.pods == [] and n1.requested["cpu"] == 0
    cache.assume_pod(q, n1)
    cache.finish_binding(q)
    assert not cache.is_assumed(q) and n1.pods == [q]
    cache.remove_pod(q, n1)
    assert n1.pods == [] and cache.placed == {}
