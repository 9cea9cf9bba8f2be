"""The pod strategy, as kube-apiserver's registry treats core/v1 Pods: admission (service account, priority),
the defaults a create and an update fill in, the status subresource (``registry/pod_status.py``), graceful
deletion, binding to a node, and the columns ``kubectl get`` prints. Pods are stored as the JSON clients sent;
their rules are in ``dralloc.validation.pod_object`` and ``dralloc.validation.pod_status``."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from typing import Any

from dralloc.api.core_v1 import SCHEDULING_GATED_MESSAGE
from dralloc.controllers.preemption import DEFAULT_GRACE_SECONDS
from dralloc.server.clock import now, timestamp
from dralloc.server.http.errors import ApiError
from dralloc.server.names import generated_name
from dralloc.server.registry import core_defaults, limit_ranges, priorities
from dralloc.server.registry import pod_status as status_strategy
from dralloc.server.registry import service_accounts as accounts
from dralloc.server.registry.strategy import CoreStrategy, Server
from dralloc.server.types import Obj
from dralloc.server.views import ObjectView
from dralloc.store import NotFound, Outcome, SQLStore
from dralloc.validation.field import FieldError
from dralloc.validation.pod_object import pod_create_errors, pod_update_errors

TERMINAL_PHASES = ("Succeeded", "Failed")


# --- create -----------------------------------------------------------------------------------------


def qos_class(spec: dict[str, Any]) -> str:
    """Guaranteed (every container limits cpu and memory, requests equal to limits), BestEffort (nothing
    requested or limited), else Burstable — kube-apiserver's QOS class of a pod."""
    any_set, guaranteed = False, True
    for kind in ("containers", "initContainers"):
        for c in spec.get(kind) or ():
            if not isinstance(c, dict):
                continue
            resources = c.get("resources") or {}
            requests, limits = resources.get("requests") or {}, resources.get("limits") or {}
            if requests or limits:
                any_set = True
            if guaranteed:  # (once one container is not, the others need not be compared)
                for name in ("cpu", "memory"):
                    if name not in limits or str(requests.get(name, limits[name])) != str(limits[name]):
                        guaranteed = False
                        break
    if not any_set:
        return "BestEffort"
    return "Guaranteed" if guaranteed else "Burstable"


def decode_pod_defaults(pod: dict[str, Any]) -> None:
    """What kube-apiserver's decoding of a v1 Pod fills in, which the writer's managedFields entry owns:
    SetDefaults_Pod (requests from limits, host network ports, service links) before the defaults of every
    pod spec, and the conversion's mirror of the service account name in ``serviceAccount``."""
    spec = pod.get("spec")
    if not isinstance(spec, dict):
        return
    core_defaults.default_pod_only_fields(spec)  # first, as SetDefaults_Pod runs before the spec's defaults
    core_defaults.default_pod_spec(spec)
    spec.setdefault("enableServiceLinks", True)
    mirror_service_account(spec)


def mirror_service_account(spec: dict[str, Any]) -> None:
    """The v1 conversion's service account: ``serviceAccountName``, else the deprecated ``serviceAccount``,
    and the v1 form written back carries the name in both."""
    name = spec.get("serviceAccountName") or spec.get("serviceAccount")
    if name and isinstance(name, str):
        spec["serviceAccountName"] = spec["serviceAccount"] = name


# what the Priority admission gives a pod that no class names and no default class exists for
_PRIORITY_ADMISSION_DEFAULTS = {"priority": 0, "preemptionPolicy": "PreemptLowerPriority"}


def apply_pod_defaults(pod: dict[str, Any]) -> None:
    """All that kube-apiserver fills in a pod's spec, for a pod written without the server's create steps
    (what a scheduler or ``kubectl get -o yaml`` sees): decoding's defaults, the priority of no class, and the
    tolerations of its DefaultTolerationSeconds admission."""
    decode_pod_defaults(pod)
    spec = pod.get("spec")
    if not isinstance(spec, dict):
        return
    for key, value in _PRIORITY_ADMISSION_DEFAULTS.items():
        spec.setdefault(key, value)
    add_default_tolerations(spec)


NODE_NOT_READY = "node.kubernetes.io/not-ready"
NODE_UNREACHABLE = "node.kubernetes.io/unreachable"
DEFAULT_TOLERATION_SECONDS = 300


def add_default_tolerations(spec: dict[str, Any]) -> None:
    """kube-apiserver's DefaultTolerationSeconds admission (on by default, on every create and update of a
    pod, not of its subresources): a pod that does not tolerate a node's not-ready or unreachable NoExecute
    taint tolerates it for 300 s, so that a node's short outage does not evict it at once. A toleration with
    no key tolerates every key, one with no effect every effect."""
    tolerations = spec.get("tolerations")
    if tolerations is not None and not isinstance(tolerations, list):
        return  # not a pod the decoder takes: its 400 comes next
    present = [t for t in tolerations if isinstance(t, dict)] if tolerations else None
    added = []
    for key in (NODE_NOT_READY, NODE_UNREACHABLE):
        if not present or not any(t.get("key") in (key, "", None) and t.get("effect") in ("NoExecute", "", None)
                                  for t in present):
            added.append({"key": key, "operator": "Exists", "effect": "NoExecute",
                          "tolerationSeconds": DEFAULT_TOLERATION_SECONDS})
    if added:
        spec["tolerations"] = [*tolerations, *added] if tolerations else added


def prepare_pod_create(pod: dict[str, Any]) -> None:
    """As kube-apiserver's pod strategy: defaults filled in, and a new pod is Pending with its QOS class,
    whatever status it sent."""
    apply_pod_defaults(pod)
    STRATEGY.prepare_for_create(pod)


def admit_pod_update(merged: dict[str, Any], old: dict[str, Any]) -> None:
    """The mutating admission of a pod's update: Priority keeps the priority and preemption policy it gave
    the pod when the update leaves them out, DefaultTolerationSeconds adds its tolerations again."""
    spec, old_spec = merged.get("spec"), old.get("spec")
    if not isinstance(spec, dict):
        return
    if isinstance(old_spec, dict):
        for key in _PRIORITY_ADMISSION_DEFAULTS:
            if spec.get(key) is None and old_spec.get(key) is not None:
                spec[key] = old_spec[key]
    add_default_tolerations(spec)


# --- binding ----------------------------------------------------------------------------------------


def _bind(old: dict[str, Any], node: str, name: str, labels: dict[str, str] | None = None,
          annotations: dict[str, str] | None = None) -> dict[str, Any]:
    """kube-apiserver's assignment of a pod to a node: refused (409) for a pod being deleted, already
    assigned or still gated; else spec.nodeName set, status.nominatedNodeName cleared, the binding's labels
    and annotations added, and PodScheduled=True."""
    meta = old.get("metadata") or {}
    spec = old.get("spec") or {}

    def conflict(why: str) -> ApiError:
        return ApiError(409, f'Operation cannot be fulfilled on pods/binding "{name}": {why}', "Conflict",
                        details={"name": name, "kind": "pods/binding"})

    if meta.get("deletionTimestamp"):
        raise conflict(f"pod {name} is being deleted, cannot be assigned to a host")
    if spec.get("nodeName"):
        raise conflict(f'pod {name} is already assigned to node "{spec["nodeName"]}"')
    if spec.get("schedulingGates"):
        raise conflict(f"pod {name} has non-empty .spec.schedulingGates")
    status = dict(old.get("status") or {})
    status.pop("nominatedNodeName", None)
    conditions = [c for c in status.get("conditions") or [] if isinstance(c, dict) and c.get("type") != "PodScheduled"]
    conditions.append({"type": "PodScheduled", "status": "True", "lastProbeTime": None,
                       "lastTransitionTime": now()})
    status["conditions"] = conditions
    if labels or annotations:
        meta = dict(meta)
        for key, extra in (("labels", labels), ("annotations", annotations)):
            if extra:
                meta[key] = {**(meta.get(key) or {}), **extra}
    return {**old, "metadata": meta, "spec": {**spec, "nodeName": node}, "status": status}


def bind(store: SQLStore, namespace: str, name: str, node: str, uid: str | None = None,
         labels: dict[str, str] | None = None, annotations: dict[str, str] | None = None) -> dict[str, Any]:
    """Bind a pod to a node (``spec.nodeName`` once, condition PodScheduled=True): what ``POST
    pods/<name>/binding`` does, and the in-process scheduler too. ``uid``: the pod must still be that one."""
    def build(old: dict[str, Any], rv: str) -> dict[str, Any]:
        if uid is not None and (old.get("metadata") or {}).get("uid") != uid:
            raise NotFound(name)
        return _with_rv(_bind(old, node, name, labels, annotations), rv)

    return store.update("pods", namespace, name, build)


def _with_rv(obj: dict[str, Any], rv: str) -> dict[str, Any]:
    return {**obj, "metadata": {**(obj.get("metadata") or {}), "resourceVersion": rv}}


# --- graceful deletion ------------------------------------------------------------------------------


def grace_period(pod: dict[str, Any], options: dict[str, Any], query: Any) -> int:
    """The seconds a deleted pod is given: the request's gracePeriodSeconds, else the pod's own, else 30;
    0 for a pod no kubelet runs (not bound) or one that already finished."""
    view = ObjectView(pod)
    spec = view.spec
    if not spec.get("nodeName") or view.status.get("phase") in TERMINAL_PHASES:
        return 0
    value = options.get("gracePeriodSeconds", query.get("gracePeriodSeconds"))
    if value is None:
        value = spec.get("terminationGracePeriodSeconds", DEFAULT_GRACE_SECONDS)
    try:
        return max(int(value), 0)
    except (TypeError, ValueError):
        return DEFAULT_GRACE_SECONDS


def mark_terminating(old: dict[str, Any], grace: int) -> Outcome | None:
    """A bound pod is only marked (deletionTimestamp = now + grace) for its kubelet to stop; a later delete
    may shorten the grace period. None: remove now."""
    meta = old.get("metadata") or {}
    if grace <= 0 and not meta.get("finalizers"):
        return None
    current = meta.get("deletionGracePeriodSeconds")
    if meta.get("deletionTimestamp") and current is not None and current <= grace:
        return Outcome(old, "MODIFIED")  # already terminating sooner
    when = datetime.now(UTC) + timedelta(seconds=grace)
    meta = {**meta, "deletionTimestamp": timestamp(when), "deletionGracePeriodSeconds": grace}
    return Outcome({**old, "metadata": meta}, "MODIFIED")


def remove_if_expired(server: Server, namespace: str, name: str, uid: str) -> None:
    """Stand in for the kubelet: remove a terminating pod once its grace period is over (finalizers still
    hold it)."""
    def build(old: Obj, rv: str) -> Any:
        pod = ObjectView(old)
        if pod.uid != uid or not pod.deletion_timestamp or pod.finalizers:
            return old
        return Outcome(_with_rv(old, rv), "DELETED")

    try:
        server.store.update("pods", namespace, name, build)
    except NotFound:
        pass


def schedule_removal(server: Server, obj: Obj) -> None:
    pod = ObjectView(obj)
    deadline = pod.deletion_timestamp
    if not deadline:
        return
    try:
        when = datetime.strptime(deadline, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    except ValueError:
        return
    delay = max((when - datetime.now(UTC)).total_seconds(), 0.0)
    loop = asyncio.get_running_loop()
    args = (server, pod.namespace, pod.name, pod.uid)
    loop.call_later(delay, lambda: server.background(asyncio.to_thread(remove_if_expired, *args)))


# --- the strategy -----------------------------------------------------------------------------------


class PodStrategy(CoreStrategy):
    tracks_generation = True  # kube-apiserver's pod strategy keeps metadata.generation since 1.33

    def decode_defaults(self, obj: Obj, sub: str) -> None:
        if sub != "status":  # (a status write keeps the stored spec)
            decode_pod_defaults(obj)

    def admit(self, store: SQLStore, sent: Obj, namespace: str) -> Obj:
        """Mutating admission in kube-apiserver's order: LimitRanger, ServiceAccount, Priority,
        DefaultTolerationSeconds."""
        sent = limit_ranges.admit_pod(store, sent, namespace)
        pod = priorities.admit_pod(store, accounts.admit_pod(store, sent, namespace, generated_name))
        spec = pod.get("spec")
        if isinstance(spec, dict):
            add_default_tolerations(spec)
        return pod

    def create_admission_errors(self, store: SQLStore, namespace: str, name: str, stored: Obj) -> list[FieldError]:
        """Validating admission: LimitRanger's bounds (a 403)."""
        limit_ranges.check_pod(store, namespace, stored)
        return []

    def prepare_for_create(self, stored: Obj) -> None:
        """PrepareForCreate: a new pod is Pending with its QOS class, whatever status it sent."""
        spec = stored.get("spec") or {}
        status: dict[str, Any] = {"phase": "Pending", "qosClass": qos_class(spec)}
        stored["status"] = status
        if spec.get("schedulingGates"):
            # applySchedulingGatedCondition: a gated pod says so from its creation (the scheduler never tries it)
            status["conditions"] = [{"type": "PodScheduled", "status": "False", "lastProbeTime": None,
                                     "lastTransitionTime": now(), "reason": "SchedulingGated",
                                     "message": SCHEDULING_GATED_MESSAGE}]

    def create_errors(self, typed: Any, stored: Obj | None, namespaced: bool) -> list[FieldError]:
        return pod_create_errors(stored or {}, typed.metadata)

    def merge_status(self, sent: Obj, meta: Obj, old: Obj) -> Obj:
        # the pod status strategy keeps only the spec, the owner references and the deletion timestamp:
        # labels, annotations and finalizers may change through pods/status
        return status_strategy.prepare(sent, meta, old)

    def prepare_for_update(self, merged: Obj, old: Obj, sub: str) -> None:
        if sub != "status":
            admit_pod_update(merged, old)

    def update_errors(self, merged: Obj, old: Obj, sub: str, typed_meta: Any) -> list[FieldError]:
        if sub == "status":
            return status_strategy.errors(merged, old)  # the metadata rules too, in kube-apiserver's order
        return super().update_errors(merged, old, sub, typed_meta) + pod_update_errors(merged, old)

    def update_warnings(self, written: Obj, sub: str) -> list[str]:
        return status_strategy.warnings(written) if sub == "status" else []

    def mark_deleted(self, old: Obj, options: Obj, query: Any, collection: bool) -> Outcome | None:
        return mark_terminating(old, grace_period(old, options, query))

    def after_delete(self, server: Server, result: Obj, collection: bool) -> None:
        schedule_removal(server, result)

    def delete_answers_with_object(self, result: Obj, dry: bool) -> bool:
        return not dry and ObjectView(result).deletion_timestamp is not None  # terminating: 200, as upstream


STRATEGY = PodStrategy()


# --- kubectl get columns ----------------------------------------------------------------------------


def pod_ready(obj: Obj) -> str:
    pod = ObjectView(obj)
    statuses = pod.status.get("containerStatuses") or []
    total = len(pod.spec.get("containers") or [])
    ready = sum(1 for s in statuses if isinstance(s, dict) and s.get("ready"))
    return f"{ready}/{total}"


def pod_status(obj: Obj) -> str:
    """kubectl's STATUS: Terminating, a container's waiting/terminated reason, the pod's reason, else its phase."""
    pod = ObjectView(obj)
    if pod.deletion_timestamp:
        return "Terminating"
    status = pod.status
    for s in status.get("containerStatuses") or []:
        state = (s.get("state") or {}) if isinstance(s, dict) else {}
        for kind in ("waiting", "terminated"):
            reason = (state.get(kind) or {}).get("reason")
            if reason:
                return str(reason)
    for c in status.get("conditions") or []:
        if isinstance(c, dict) and c.get("type") == "PodScheduled" and c.get("status") == "False" \
                and c.get("reason") == "SchedulingGated":
            return "SchedulingGated"
    return str(status.get("reason") or status.get("phase") or "Pending")


def pod_restarts(obj: Obj) -> int:
    statuses = ObjectView(obj).status.get("containerStatuses") or []
    return sum(int(s.get("restartCount") or 0) for s in statuses if isinstance(s, dict))


def readiness_gates(obj: Obj) -> str:
    pod = ObjectView(obj)
    gates = pod.spec.get("readinessGates") or []
    if not gates:
        return "<none>"
    true = {c.get("type") for c in pod.status.get("conditions") or []
            if isinstance(c, dict) and c.get("status") == "True"}
    return f"{sum(1 for g in gates if isinstance(g, dict) and g.get('conditionType') in true)}/{len(gates)}"
