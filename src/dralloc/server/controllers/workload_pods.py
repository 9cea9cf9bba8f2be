"""What the workload controllers share: the pods (and other objects) each workload controls, how a pod is made
from a pod template and written as a client's create would be (ServiceAccount and Priority admission, the pod
defaults), how pods rank for deletion, and writing a controller's status only when it changed."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Protocol

from dralloc.server.clock import now, timestamp
from dralloc.server.controllers.writes import Writer
from dralloc.server.json_copy import json_copy
from dralloc.server.names import generated_name
from dralloc.server.registry import pods as pod_registry
from dralloc.store import Conflict, NotFound

log = logging.getLogger(__name__)

Obj = dict[str, Any]
DeletePod = Callable[[str, str, str | None], Any]  # graceful, as a client's delete (namespace, name, uid)


class Recorder(Protocol):
    def record(self, obj: Obj, type_: str, reason: str, message: str, component: str) -> None: ...


@dataclass
class PodControl:
    """How the workload controllers write: pods made and deleted (controller.PodControl, with its events
    ``SuccessfulCreate`` ``Created pod: NAME`` and ``SuccessfulDelete`` ``Deleted pod: NAME`` on the owner, or
    the owner's own texts), other objects and statuses through ``writer``."""

    writer: Writer
    delete_pod: DeletePod
    recorder: Recorder | None = None

    def event(self, obj: Obj, reason: str, message: str, component: str, type_: str = "Normal") -> None:
        if self.recorder is not None:
            self.recorder.record(obj, type_, reason, message, component)

    def create(self, owner: Obj, pod: Obj, component: str, message: str = "Created pod: {}") -> bool:
        made = create_pod(self.writer, pod)
        if made is not None:
            self.event(owner, "SuccessfulCreate", message.format(meta(made).get("name")), component)
        return made is not None

    def delete(self, owner: Obj, pod: Obj, component: str, message: str = "Deleted pod: {}") -> bool:
        self.delete_pod(meta(pod).get("namespace") or "default", meta(pod).get("name") or "", meta(pod).get("uid"))
        self.event(owner, "SuccessfulDelete", message.format(meta(pod).get("name")), component)
        return True


def meta(obj: Obj) -> Obj:
    value = obj.get("metadata")
    return value if isinstance(value, dict) else {}


def spec_of(obj: Obj) -> Obj:
    value = obj.get("spec")
    return value if isinstance(value, dict) else {}


def status_of(obj: Obj) -> Obj:
    value = obj.get("status")
    return value if isinstance(value, dict) else {}


def replicas(obj: Obj) -> int:
    value = spec_of(obj).get("replicas")
    return max(value, 0) if isinstance(value, int) and not isinstance(value, bool) else 1


def controller_uid(obj: Obj) -> str | None:
    for ref in meta(obj).get("ownerReferences") or []:
        if isinstance(ref, dict) and ref.get("controller") is True:
            return str(ref.get("uid"))
    return None


def controller_ref(owner: Obj) -> Obj:
    return {"apiVersion": owner.get("apiVersion"), "kind": owner.get("kind"), "name": meta(owner).get("name"),
            "uid": meta(owner).get("uid"), "controller": True, "blockOwnerDeletion": True}


# --- pod states -------------------------------------------------------------------------------------


def is_active(pod: Obj) -> bool:
    """controller.IsPodActive: not finished and not being deleted."""
    return status_of(pod).get("phase") not in pod_registry.TERMINAL_PHASES and not meta(pod).get("deletionTimestamp")


def _ready_condition(pod: Obj) -> Obj | None:
    for c in status_of(pod).get("conditions") or []:
        if isinstance(c, dict) and c.get("type") == "Ready":
            return c
    return None


def is_ready(pod: Obj) -> bool:
    condition = _ready_condition(pod)
    return condition is not None and condition.get("status") == "True"


def _parse(stamp: Any) -> datetime | None:
    try:
        return datetime.strptime(str(stamp), "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    except ValueError:
        return None


def seconds_at(stamp: Any) -> float | None:
    """An RFC 3339 timestamp as seconds since the epoch (None: not one), to compare with a controller's clock."""
    when = _parse(stamp)
    return None if when is None else when.timestamp()


def stamp(seconds: float) -> str:
    """A controller clock's reading as a timestamp (RFC 3339, to the second)."""
    return timestamp(datetime.fromtimestamp(int(seconds), UTC))


def is_available(pod: Obj, min_ready_seconds: int) -> bool:
    """podutil.IsPodAvailable: ready for at least ``min_ready_seconds``."""
    if not is_ready(pod):
        return False
    if min_ready_seconds <= 0:
        return True
    since = _parse((_ready_condition(pod) or {}).get("lastTransitionTime"))
    return since is not None and (datetime.now(UTC) - since).total_seconds() >= min_ready_seconds


@dataclass
class PodSummary:
    """A controller's pods read once: the active ones, and when each ready one became ready (what the replica
    counts of a ReplicaSet and its Deployment come from)."""

    active: list[Obj]
    ready_since: list[Any]  # the Ready condition's lastTransitionTime of the active pods that are ready

    @classmethod
    def of(cls, pods: Iterable[Obj]) -> PodSummary:
        active, since = [], []
        for pod in pods:
            if not is_active(pod):
                continue
            active.append(pod)
            condition = _ready_condition(pod)
            if condition is not None and condition.get("status") == "True":
                since.append(condition.get("lastTransitionTime"))  # (parsed only for minReadySeconds)
        return cls(active, since)

    @property
    def ready(self) -> int:
        return len(self.ready_since)

    def available(self, min_ready_seconds: int) -> int:
        """podutil.IsPodAvailable's count: ready for at least ``min_ready_seconds``."""
        if min_ready_seconds <= 0:
            return len(self.ready_since)
        current = datetime.now(UTC)
        times = (_parse(t) for t in self.ready_since)
        return sum(1 for t in times if t is not None and (current - t).total_seconds() >= min_ready_seconds)


def scaled_value(value: Any, total: int, round_up: bool) -> int | None:
    """intstr.GetScaledValueFromIntOrPercent: an integer as it is, ``N%`` as that share of ``total`` (rounded up
    or down); None for anything else."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str) and value.endswith("%") and value[:-1].isdigit():
        share = int(value[:-1]) * total
        return -(-share // 100) if round_up else share // 100
    return None


def min_ready_seconds(obj: Obj) -> int:
    value = spec_of(obj).get("minReadySeconds")
    return value if isinstance(value, int) else 0


_PHASE_RANK = {"Pending": 0, "Unknown": 1, "Running": 2}


def deletion_order(pods: Iterable[Obj]) -> list[Obj]:
    """ActivePodsWithRanks' order, the pods to delete first first: not on a node before on one; Pending,
    Unknown, then Running; not ready before ready; more restarts first; the newest first."""
    def restarts(pod: Obj) -> int:
        return sum(int(s.get("restartCount") or 0) for s in status_of(pod).get("containerStatuses") or []
                   if isinstance(s, dict))

    newest_first = sorted(pods, key=lambda p: (str(meta(p).get("creationTimestamp") or ""), str(meta(p).get("name"))),
                          reverse=True)
    return sorted(newest_first, key=lambda p: (bool(spec_of(p).get("nodeName")),
                                               _PHASE_RANK.get(str(status_of(p).get("phase")), 0),
                                               is_ready(p), -restarts(p)))


# --- writing ----------------------------------------------------------------------------------------


def pod_from_template(template: Obj, owner: Obj, *, name: str = "", generate_name: str = "",
                      labels: dict[str, str] | None = None, annotations: dict[str, str] | None = None) -> Obj:
    """GetPodFromTemplate: the template's labels, annotations, finalizers and spec, in the owner's namespace,
    with a controller reference to it; named ``name`` or from ``generate_name``."""
    raw_meta = template.get("metadata")
    template_meta: Obj = raw_meta if isinstance(raw_meta, dict) else {}
    pod_meta: Obj = {"name": name or generated_name(generate_name)}
    if generate_name:
        pod_meta["generateName"] = generate_name
    pod_meta["namespace"] = meta(owner).get("namespace") or "default"
    all_labels = {**(template_meta.get("labels") or {}), **(labels or {})}
    all_annotations = {**(template_meta.get("annotations") or {}), **(annotations or {})}
    if all_labels:
        pod_meta["labels"] = all_labels
    if all_annotations:
        pod_meta["annotations"] = all_annotations
    if template_meta.get("finalizers"):
        pod_meta["finalizers"] = list(template_meta["finalizers"])
    pod_meta["ownerReferences"] = [controller_ref(owner)]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": pod_meta,
            "spec": json_copy(template.get("spec") if isinstance(template.get("spec"), dict) else {})}


def create_pod(writer: Writer, pod: Obj) -> Obj | None:
    """Create a pod as kube-apiserver would take it from the controller: ServiceAccount and Priority admission,
    the pod defaults and a Pending status. None when admission refuses it (a missing service account: the
    controller tries again on a later pass)."""
    namespace = meta(pod).get("namespace") or "default"
    base = meta(pod).get("generateName") or ""
    try:  # (kube-apiserver refuses a create in a namespace being deleted)
        if status_of(writer.store.get("namespaces", "", namespace)).get("phase") == "Terminating":
            return None
    except NotFound:
        return None
    try:
        admitted = pod_registry.STRATEGY.admit(writer.store, pod, namespace)
    except Exception as exc:  # an ApiError of admission: as a controller's failed create, logged
        log.info("pod %s/%s not created: %s", namespace, meta(pod).get("name"), exc)
        return None
    pod_registry.prepare_pod_create(admitted)
    new_name = (lambda: generated_name(base)) if base else None
    try:
        return writer.create("pods", namespace, admitted, new_name)
    except Conflict:
        return None  # (a fixed name taken: the next pass sees the pod that has it)


def write_status(writer: Writer, resource: str, obj: Obj, status: Obj) -> bool:
    """Write ``status`` when it differs from the stored one; True when it did."""
    if status_of(obj) == status:
        return False
    uid = meta(obj).get("uid")

    def mutate(current: Obj) -> Obj | None:
        if current.get("status") == status:
            return None
        current["status"] = status
        return current

    writer.update(resource, meta(obj).get("namespace") or "", meta(obj).get("name") or "", mutate, uid=str(uid))
    return True


def condition(type_: str, status: str, reason: str, message: str, old: Iterable[Any],
              update_time: bool = False) -> Obj:
    """A workload condition; its transition time kept from ``old`` while its status stays (and its update time
    while nothing in it changes)."""
    stamp = now()
    previous = next((c for c in old if isinstance(c, dict) and c.get("type") == type_), None)
    same = previous is not None and previous.get("status") == status
    out: Obj = {"type": type_, "status": status}
    if update_time:
        unchanged = same and previous is not None and (previous.get("reason"), previous.get("message")) == \
            (reason, message)
        out["lastUpdateTime"] = previous.get("lastUpdateTime", stamp) if unchanged and previous else stamp
    else:
        out["lastProbeTime"] = previous.get("lastProbeTime", stamp) if same and previous else stamp
    out["lastTransitionTime"] = previous.get("lastTransitionTime", stamp) if same and previous else stamp
    out["reason"], out["message"] = reason, message
    return out


def without_zeros(status: Obj, *omitempty: str) -> Obj:
    """The status as Go encodes it: the ``omitempty`` counts left out when zero."""
    return {k: v for k, v in status.items() if not (k in omitempty and not v)}
