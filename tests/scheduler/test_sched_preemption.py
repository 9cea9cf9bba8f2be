"""DefaultPreemption: victims, the node picked, eviction side effects and 1.36's DRA rule."""

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
from dralloc.simulator.result import SimulationResult


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


# --- terminating victims (PodEligibleToPreemptOthers, graceful deletion) --------------------------------

PREEMPTED = "[{type: DisruptionTarget, status: 'True', reason: PreemptionByScheduler}]"
WAITING = ("0/1 nodes are available: 1 Insufficient cpu. no new claims to deallocate, "
           "preemption: not eligible due to a terminating pod on the nominated node.")


def terminating(name: str, cpu: str, priority: int, node_name: str, conditions: str = PREEMPTED) -> str:
    doc = pod(name, cpu=cpu, priority=priority, node_name=node_name)
    doc = doc.replace(f"metadata: {{name: {name}, ",
                      f"metadata: {{deletionTimestamp: '2026-01-01T00:00:30Z', name: {name}, ")
    return doc + f"status: {{phase: Running, conditions: {conditions}}}\n"


def nominated(name: str, cpu: str, priority: int, node_name: str) -> str:
    return pod(name, cpu=cpu, priority=priority) + f"status: {{nominatedNodeName: {node_name}}}\n"


def test_a_preemptor_waits_while_its_nominated_node_holds_a_lower_priority_pod_terminating_by_preemption(
        simulate) -> None:
    _, result = simulate(node("n1", cpu="4"), terminating("victim", "4", 1, "n1"),
                         nominated("high", "4", 100, "n1"))
    pods = by_name(result)
    assert pods["high"].status == "unschedulable" and pods["high"].message == WAITING
    assert pods["victim"].status == "running" and not result.evicted


def test_room_a_waiting_preemptor_is_nominated_for_is_not_given_to_a_lower_priority_pod(simulate) -> None:
    # The victim (3 CPUs) is still terminating; the preemptor (4 CPUs) waits for node n1. A 1-CPU pod of
    # lower priority would fit beside the victim, but kube-scheduler filters it with the nominated preemptor
    # counted on n1 (its nominatedNodeName, as the pod arrives from the API), so it does not take the room.
    _, result = simulate(node("n1", cpu="4"), terminating("victim", "3", 1, "n1"),
                         nominated("high", "4", 100, "n1"), pod("small", cpu="1", priority=1))
    pods = by_name(result)
    assert pods["high"].status == "unschedulable" and pods["small"].status == "unschedulable"
    assert pods["small"].message == ("0/1 nodes are available: 1 Insufficient cpu. no new claims to deallocate, "
                                     "preemption: 0/1 nodes are available: 1 No preemption victims found for "
                                     "incoming pod.")


def test_a_pod_terminating_without_the_preemption_condition_does_not_make_the_preemptor_wait(simulate) -> None:
    deleted = "[{type: DisruptionTarget, status: 'True', reason: DeletionByDeviceTaintManager}]"
    _, result = simulate(node("n1", cpu="4"), terminating("victim", "4", 1, "n1", deleted),
                         nominated("high", "4", 100, "n1"))
    assert by_name(result)["high"].node == "n1"
    assert [e.name for e in result.evicted] == ["victim"]


def test_a_terminating_pod_of_higher_priority_does_not_make_the_preemptor_wait(simulate) -> None:
    _, result = simulate(node("n1", cpu="4"), terminating("important", "1", 500, "n1"),
                         pod("low", cpu="3", priority=1, node_name="n1"), nominated("high", "3", 100, "n1"))
    pods = by_name(result)
    assert pods["high"].node == "n1" and pods["low"].status == "evicted"
    assert pods["important"].status == "running"


def test_a_nominated_node_that_became_unresolvable_lets_the_preemptor_preempt_elsewhere(simulate) -> None:
    cordoned = node("n1", cpu="4", extra="spec: {unschedulable: true}")
    _, result = simulate(cordoned, node("n2", cpu="4"), terminating("victim", "4", 1, "n1"),
                         pod("low", cpu="4", priority=1, node_name="n2"), nominated("high", "4", 100, "n1"))
    pods = by_name(result)
    assert pods["high"].node == "n2" and pods["low"].status == "evicted"


def _preempting_with_a_clock(grace: int) -> tuple[Scheduler, SimulationResult]:
    """One full node whose low-priority pod has this grace period, and a high-priority pod that preempts it;
    one schedule() at 2026-01-01T00:00:00Z."""
    docs = load(node("n1", cpu="4"), pod("low", cpu="4", priority=1, node_name="n1",
                                        extra_spec=f"terminationGracePeriodSeconds: {grace}"),
                pod("high", cpu="4", priority=100))
    sched = Scheduler.from_objects(docs, victims_terminate_at="2026-01-01T00:00:00Z")
    return sched, sched.schedule()


def test_with_a_clock_victims_terminate_for_their_grace_period_and_the_preemptor_waits(simulate) -> None:
    sched, result = _preempting_with_a_clock(2)
    pods = by_name(result)
    victim = pods["low"].pod
    assert (victim.metadata.deletion_timestamp, victim.metadata.deletion_grace_period_seconds) == (
        "2026-01-01T00:00:02Z", 2)
    (cond,) = victim.status.conditions
    assert (cond.type, cond.status, cond.reason, cond.message, cond.last_transition_time) == (
        "DisruptionTarget", "True", "PreemptionByScheduler",
        "default-scheduler: preempting to accommodate a higher priority pod", "2026-01-01T00:00:00Z")
    assert pods["low"].node == "n1" and [e.name for e in result.evicted] == ["low"]
    # The preempting cycle ends with the plain FitError (DefaultPreemption succeeded: no PostFilter part)
    # and is not retried within the call: the next cycle is the caller's.
    assert pods["high"].status == "unschedulable" and pods["high"].attempts == 1
    assert pods["high"].message == "0/1 nodes are available: 1 Insufficient cpu."
    assert pods["high"].pod.status.nominated_node_name == "n1"
    assert [p.name for p in sched.snapshot.by_name["n1"].pods] == ["low"]  # it still holds its cpu
    again = Scheduler(list(sched.snapshot.node_list), [pods["low"].pod, pods["high"].pod],
                      victims_terminate_at="2026-01-01T00:00:01Z").schedule()
    retried = by_name(again)["high"]
    assert retried.message == WAITING and retried.pod.status.nominated_node_name == "n1"
    assert again.evicted == []  # its victim was not preempted twice


def test_a_victims_disruption_condition_observes_its_generation() -> None:
    """prepareCandidate's condition carries the victim's metadata.generation as observedGeneration (pod
    generation tracking), in the simulator as in `dralloc serve`."""
    docs = load(node("n1", cpu="4"), pod("low", cpu="4", priority=1, node_name="n1").replace(
                    "namespace: default}", "namespace: default, generation: 3}"),
                pod("high", cpu="4", priority=100))
    result = Scheduler.from_objects(docs, victims_terminate_at="2026-01-01T00:00:00Z").schedule()
    (cond,) = by_name(result)["low"].pod.status.conditions
    assert (cond.type, cond.observed_generation) == ("DisruptionTarget", 3)


def test_with_a_clock_a_victim_without_grace_period_is_gone_at_once(simulate) -> None:
    sched, result = _preempting_with_a_clock(0)
    high = by_name(result)["high"]
    assert by_name(result)["low"].status == "evicted" and [p.name for p in sched.snapshot.by_name["n1"].pods] == []
    assert high.status == "unschedulable" and high.pod.status.nominated_node_name == "n1"
    again = Scheduler(list(sched.snapshot.node_list), [high.pod], victims_terminate_at="2026-01-01T00:00:01Z")
    assert by_name(again.schedule())["high"].node == "n1"  # the next cycle finds the room on its nominated node


def test_a_pending_pod_being_deleted_is_not_scheduled(simulate) -> None:
    doc = pod("going", cpu="1").replace("metadata: {name: going, ",
                                        "metadata: {deletionTimestamp: '2026-01-01T00:00:00Z', name: going, ")
    _, result = simulate(node("n1"), doc)
    assert by_name(result)["going"].status == "skipped" and by_name(result)["going"].node is None


def test_with_a_clock_a_victim_already_terminating_is_not_deleted_again(simulate) -> None:
    deleted = "[{type: Ready, status: 'False'}]"  # being deleted by a client, not by preemption
    docs = load(node("n1", cpu="4"), terminating("low", "4", 1, "n1", deleted), pod("high", cpu="4", priority=100))
    result = Scheduler.from_objects(docs, victims_terminate_at="2026-01-01T00:00:00Z").schedule()
    pods = by_name(result)
    assert result.evicted == [] and pods["low"].status == "running"
    assert pods["low"].pod.metadata.deletion_timestamp == "2026-01-01T00:00:30Z"  # untouched
    assert pods["high"].status == "unschedulable" and pods["high"].pod.status.nominated_node_name == "n1"


def test_a_pod_that_no_preemption_can_help_loses_its_nomination(simulate) -> None:
    # Its nominated node now holds a pod of higher priority: no victims anywhere, so Preempt's FitError
    # clears nominatedNodeName.
    _, result = simulate(node("n1", cpu="4"), pod("important", cpu="4", priority=500, node_name="n1"),
                         nominated("high", "4", 100, "n1"))
    high = by_name(result)["high"]
    assert high.message == ("0/1 nodes are available: 1 Insufficient cpu. no new claims to deallocate, "
                            "preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.")
    assert high.pod.status.nominated_node_name is None


def test_a_pod_not_eligible_to_preempt_keeps_its_nomination(simulate) -> None:
    _, result = simulate(node("n1", cpu="4"), terminating("victim", "4", 1, "n1"), nominated("high", "4", 100, "n1"))
    assert by_name(result)["high"].pod.status.nominated_node_name == "n1"


def test_a_preemptor_takes_the_nomination_of_lower_priority_pods_on_its_node() -> None:
    docs = load(node("n1", cpu="4"), pod("low", cpu="4", priority=1, node_name="n1",
                                        extra_spec="terminationGracePeriodSeconds: 30"),
                nominated("middle", "4", 50, "n1"), pod("high", cpu="4", priority=100))
    result = Scheduler.from_objects(docs, victims_terminate_at="2026-01-01T00:00:00Z").schedule()
    pods = by_name(result)
    assert pods["high"].pod.status.nominated_node_name == "n1"
    assert pods["middle"].pod.status.nominated_node_name is None


def test_a_held_pod_keeps_the_room_of_its_nomination_without_being_scheduled() -> None:
    docs = load(node("n1", cpu="8"), pod("small", cpu="3", priority=50))
    held = load(nominated("waiting", "6", 100, "n1"))
    sched = Scheduler.from_objects(docs)
    sched = Scheduler(list(sched.snapshot.node_list), [r.pod for r in sched.results.values()],
                      nominated=[o for o in held if o.kind == "Pod"])
    result = sched.schedule()
    assert [p.name for p in result.pods] == ["small"]  # the held pod is not scheduled, nor in the result
    assert by_name(result)["small"].status == "unschedulable"


def test_a_node_that_had_no_victims_is_looked_at_again_once_a_lower_priority_pod_lands_there() -> None:
    # The dry run remembers each node's lowest pod priority; a pod bound since must be seen as a victim.
    docs = load(node("n1", cpu="4"), pod("a", cpu="3", priority=5, node_name="n1"))
    sched = Scheduler.from_objects(docs)
    first = sched.schedule_pod(load(pod("b", cpu="2", priority=5))[0])
    assert first.message.endswith("1 No preemption victims found for incoming pod.")
    assert sched.schedule_pod(load(pod("c", cpu="1", priority=1))[0]).node == "n1"
    preemptor = sched.schedule_pod(load(pod("d", cpu="1", priority=5))[0])
    assert preemptor.pod.status.nominated_node_name == "n1"
    assert by_name(sched.schedule())["c"].status == "evicted"
