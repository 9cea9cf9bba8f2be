"""How many pending pods of each shape one empty node of a template holds: the planner's first guess of how
many nodes a template needs (Cluster Autoscaler's binpacking estimate, made with the simulator's filters)."""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from msgspec.structs import replace

from dralloc.api.codec import encode_json
from dralloc.api.core_v1 import Pod, PodStatus
from dralloc.simulator.planner.templates import NodeTemplate
from dralloc.simulator.planner.trial import PlanSettings


def shape_key(pod: Pod) -> bytes:
    """Pods stamped from one template (a Deployment's replicas) have one shape: their spec, unbound."""
    return encode_json(replace(pod.spec, node_name=None))


@dataclass(frozen=True)
class Estimate:
    """How many nodes the pending pods need, from how many copies of each shape fit on one empty node:
    ``lower`` ≤ nodes needed ≤ ``upper`` when the shapes do not interfere (a guess to start the exact search
    from, not a bound it relies on)."""

    lower: int
    upper: int

    @property
    def helps(self) -> bool:
        return self.upper > 0


_CONTEXT_KINDS = frozenset({"DeviceClass", "ResourceClaim", "ResourceClaimTemplate", "DeviceTaintRule",
                            "PriorityClass", "Namespace", "DaemonSet"})


def _context(obj: Any) -> bool:
    kind = type(obj).__name__
    if kind == "ResourceSlice":
        return not obj.spec.node_name
    return kind in _CONTEXT_KINDS


def _fresh_copy(pod: Pod, name: str) -> Pod:
    """A pending copy of ``pod`` that gets its own claims from the pod's templates."""
    templated = {pc.name for pc in pod.spec.resource_claims or () if pc.resource_claim_template_name}
    statuses = [s for s in (pod.status.resource_claim_statuses or ()) if s.name not in templated] \
        if pod.status is not None else []
    meta = replace(pod.metadata, name=name, uid=None, resource_version=None)
    return replace(pod, metadata=meta, spec=replace(pod.spec, node_name=None),
                   status=PodStatus(resource_claim_statuses=statuses or None))


def estimate(objects: list[Any], template: NodeTemplate, pending: Iterable[Pod], settings: PlanSettings) -> Estimate:
    """Fill one empty clone of ``template`` (with the DaemonSet pods it would run) with copies of each pending
    shape until the next copy does not fit."""
    groups: dict[bytes, list[Pod]] = {}
    for pod in pending:
        groups.setdefault(shape_key(pod), []).append(pod)
    node, local = template.clone(f"{template.name}-estimate")
    # The cluster around one empty node: its classes, claims and templates, the slices not local to any node,
    # and the DaemonSets (their pods take room on every node); no other node, pod or workload.
    context = [o for o in objects if _context(o)]
    lower = 0.0
    upper = 0
    for pods in groups.values():
        sched = settings.build([*context, node, *local])
        sched.schedule()
        base = pods[0]
        count = 0
        while count < len(pods):
            outcome = sched.schedule_pod(_fresh_copy(base, f"{base.metadata.name}-estimate-{count}"))
            if outcome.node is None:
                break
            count += 1
        if count:
            lower += len(pods) / count
            upper += math.ceil(len(pods) / count)
    return Estimate(math.ceil(lower - 1e-9), upper)
