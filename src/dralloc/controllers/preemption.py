"""How kube-scheduler's preemption leaves a victim (``prepareCandidate``): the DisruptionTarget condition
(reason PreemptionByScheduler, ``<schedulerName>: preempting to accommodate a higher priority <preemptor>``,
``pod`` or, for workload-aware preemption, ``podgroup``, with the pod's generation as its observedGeneration),
then a delete with default options, so the pod terminates for its grace period
(``terminationGracePeriodSeconds``, 30 when unset). A pod group preemptor's scheduler name is its first
member's.

``dralloc simulate`` applies :func:`mark_preempted` to its victims; ``dralloc serve`` writes
:func:`preemption_condition` into the stored victim and then deletes it through its API. Each victim also gets
a Normal ``Preempted`` event (action ``Preempting``) saying :func:`preempted_event_message`: the preemptor's
type and UID, and the node it was nominated to — for a pod group, whose candidate is the whole cluster,
``cluster``.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from msgspec.structs import replace

from dralloc.api.core_v1 import Pod, PodCondition, PodStatus
from dralloc.scheduler.plugins.default_preemption import DISRUPTION_TARGET, PREEMPTION_BY_SCHEDULER
from dralloc.scheduler.profile import DEFAULT_SCHEDULER

__all__ = ["DEFAULT_GRACE_SECONDS", "POD_GROUP_CANDIDATE", "PREEMPTING", "PREEMPTOR_POD", "PREEMPTOR_POD_GROUP",
           "mark_preempted", "preempted_event_message", "preemption_condition"]

DEFAULT_GRACE_SECONDS = 30  # a pod's terminationGracePeriodSeconds when unset
PREEMPTING = "preempting to accommodate a higher priority {preemptor}"  # after "<schedulerName>: "
PREEMPTOR_POD = "pod"  # the preemptor types (the executor's ``Type()``)
PREEMPTOR_POD_GROUP = "podgroup"
POD_GROUP_CANDIDATE = "cluster"  # the candidate's name in a pod group's preemption


def preemption_condition(victim: Pod, scheduler_name: str | None, preemptor: str = PREEMPTOR_POD) -> PodCondition:
    """The DisruptionTarget condition put on ``victim`` for a preemptor (``pod`` or ``podgroup``) of
    ``scheduler_name`` (its transition time is the writer's)."""
    message = f"{scheduler_name or DEFAULT_SCHEDULER}: {PREEMPTING.format(preemptor=preemptor)}"
    return PodCondition(type=DISRUPTION_TARGET, status="True", observed_generation=victim.metadata.generation,
                        reason=PREEMPTION_BY_SCHEDULER, message=message)


def mark_preempted(pod: Pod, at: str, scheduler_name: str | None, preemptor: str = PREEMPTOR_POD) -> Pod:
    """The victim after the condition and the delete at ``at``: deletionTimestamp ``at`` plus its grace
    period. A DisruptionTarget condition already True keeps its transition time."""
    status = pod.status or PodStatus()
    old = next((c for c in status.conditions or () if c.type == DISRUPTION_TARGET), None)
    since = old.last_transition_time if old is not None and old.status == "True" else at
    conds = [c for c in status.conditions or () if c.type != DISRUPTION_TARGET]
    conds.append(replace(preemption_condition(pod, scheduler_name, preemptor), last_transition_time=since))
    grace = pod.spec.termination_grace_period_seconds
    grace = DEFAULT_GRACE_SECONDS if grace is None else max(grace, 0)
    when = datetime.strptime(at, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC) + timedelta(seconds=grace)
    meta = replace(pod.metadata, deletion_timestamp=when.strftime("%Y-%m-%dT%H:%M:%SZ"),
                   deletion_grace_period_seconds=grace)
    return replace(pod, metadata=meta, status=replace(status, conditions=conds))


def preempted_event_message(preemptor: str, uid: str | None, candidate: str) -> str:
    """The ``Preempted`` event's message on a victim: ``Preempted by <type> <uid> on node <candidate>``."""
    return f"Preempted by {preemptor} {uid or ''} on node {candidate}"
