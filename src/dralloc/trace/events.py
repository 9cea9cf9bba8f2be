"""The event-driven replay (``dralloc replay --events``): pods arrive at their creation time and leave at their
deletion time; a pod that finds no node waits in the queue until a departure makes room.

The arrivals are the protocol's (:func:`dralloc.trace.replay.prepare`: the seed picks the inflated copies,
which keep their source's times), ordered by creation time; among pods created at the same second the
protocol's order decides. At each event time, in this order:

1. the pods whose deletion time it is leave: a placed pod frees its node share (the scheduler cache's
   ``remove_pod``) and its claims (the simulator's claim release: out of ``reservedFor``, deallocated); a
   waiting pod is dropped from the queue, never scheduled;
2. the pods created then enter the scheduling queue (a pod deleted no later than it was created never does:
   never scheduled);
3. if anything left, every pod of the unschedulable pool moves back to activeQ (kube-scheduler's move on
   an assigned pod's deletion; the replay has no backoff clock, as the simulator without ``now``);
4. activeQ is drained (priority, then queue order): each pod gets one attempt; a pod that fails waits in
   the unschedulable pool.

After each event time one point is recorded: GPUs allocated and fragmentation (% of the cluster's
milli-GPU) and the pods waiting. A scheduled pod's wait is the time from its creation to its placement.
"""

from __future__ import annotations

import time
from collections import defaultdict

from msgspec.structs import replace

from dralloc.errors import InputError
from dralloc.scheduler.nodeinfo import NodeInfo
from dralloc.scheduler.plugins.trace_policies.registry import Profile
from dralloc.scheduler.podinfo import PodInfo
from dralloc.scheduler.queue import SchedulingQueue
from dralloc.scheduler.snapshot import claim_key
from dralloc.simulator.simulator import release_pod_claims
from dralloc.trace.replay import EventSeries, ReplayResult, discretise, prepare
from dralloc.trace.workload import Workload, WorkPod


def _with_uid(work: WorkPod) -> WorkPod:
    """A pod's claims name it in ``reservedFor`` by uid: give each arrival its own (its name)."""
    pod = work.pod
    if pod.metadata.uid:
        return work
    named = replace(pod, metadata=replace(pod.metadata, uid=pod.metadata.name))
    return WorkPod(named, work.claims, work.demand, work.models, work.created, work.deleted)


def replay_events(workload: Workload, profile: Profile, *, seed: int, inflate: float,
                  memo: bool = True) -> ReplayResult:
    started = time.perf_counter()
    gpus = workload.total_gpus
    capacity = gpus * 1000
    setup = prepare(workload, profile, seed=seed, inflate=inflate, memo=memo)
    snapshot, framework, frag = setup.snapshot, setup.framework, setup.frag
    pods = [_with_uid(p) for p in setup.pods]
    for work in pods:
        if work.created is None:
            raise InputError(f"pod {work.pod.metadata.namespace}/{work.pod.metadata.name}: --events needs its "
                             f"creation time (the trace CSV's creation_time column)")
    arriving: dict[int, list[int]] = defaultdict(list)
    leaving: dict[int, list[int]] = defaultdict(list)
    for i, work in enumerate(pods):
        arriving[work.created or 0].append(i)
        if work.deleted is not None:
            leaving[work.deleted].append(i)
    cache: dict[bytes, tuple[dict[str, int], int, int]] = {}
    infos = [PodInfo.build(w.pod, i, w.pod.spec.priority or 0, cache) for i, w in enumerate(pods)]
    index = {info.key: i for i, info in enumerate(infos)}
    queue = SchedulingQueue()
    placed: dict[int, NodeInfo] = {}
    waiting: set[int] = set()  # arrived, not placed, not gone
    events = EventSeries()
    arrived = allocated = 0
    rows: list[tuple[float, float, float]] = []
    for now in sorted(arriving.keys() | leaving.keys()):
        departed = False
        for i in leaving.get(now, ()):
            node = placed.pop(i, None)
            if node is not None:
                framework.cache.remove_pod(infos[i], node)
                release_pod_claims(snapshot, pods[i].pod, [snapshot.claims[claim_key(c)] for c in pods[i].claims])
                allocated -= pods[i].demand.total
                frag.update(node)
                departed = True
            elif i in waiting:
                waiting.discard(i)
                queue.unschedulable.pop(infos[i].key, None)
                events.never_scheduled += 1
        for i in arriving.get(now, ()):
            arrived += pods[i].demand.total
            deleted = pods[i].deleted
            if deleted is not None and deleted <= now:
                events.never_scheduled += 1
                continue
            waiting.add(i)
            queue.add(infos[i])
        if departed:
            queue.move_all_to_active()
        while len(queue):
            info = queue.pop()
            i = index[info.key]
            attempt = framework.attempt(info)
            if attempt.node is None:
                queue.add_unschedulable(info)
                continue
            waiting.discard(i)
            placed[i] = attempt.node
            allocated += pods[i].demand.total
            frag.update(attempt.node)
            events.waits.append(now - (pods[i].created or 0))
        events.times.append(now)
        events.allocated.append(round(allocated * 100 / capacity, 4))
        events.fragmentation.append(round(frag.total * 100 / capacity, 4))
        events.waiting.append(len(waiting))
        rows.append((arrived * 100 / capacity, allocated * 100 / capacity, frag.total * 100 / capacity))
    events.never_scheduled += len(waiting)
    return ReplayResult(profile.name, seed, gpus, len(pods), events.never_scheduled,
                        time.perf_counter() - started, discretise([(a, u) for a, u, _ in rows]),
                        discretise([(a, f) for a, _, f in rows]), rows, events)

