"""core/v1 Pods and Events as kube-apiserver's registry treats them: what a create resets, the light validation
of a pod's spec (dralloc.validation.pod) and its pod-specific annotations, which updates of a pod are allowed, ``/binding`` (what kube-scheduler calls), graceful
deletion, and the columns ``kubectl get`` prints. Pods are stored as the JSON clients sent."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

import msgspec
from starlette.requests import Request
from starlette.responses import Response

from dralloc.api.core_v1 import PodSpec
from dralloc.api.quantity import quantity_dec_hook
from dralloc.server.clock import now, timestamp
from dralloc.server.http.bodies import parse, read_body
from dralloc.server.http.errors import ApiError, bad_request, not_found
from dralloc.server.http.responses import respond
from dralloc.server.http.routing import Target
from dralloc.server.protobuf import decoder as protobuf
from dralloc.server.registry.events import legacy_errors
from dralloc.store import NotFound, Outcome, SQLStore
from dralloc.validation import field as f
from dralloc.validation.meta import name_is_dns_subdomain, validate_object_meta
from dralloc.validation.pod import pod_spec_errors
from dralloc.validation.pod_annotations import (
    annotation_change_errors,
    keeps_invalid_deletion_cost,
    pod_annotation_errors,
)

if TYPE_CHECKING:
    from dralloc.server.app import ApiServer

MAX_INT32 = 2**31 - 1
DEFAULT_GRACE_SECONDS = 30
TERMINAL_PHASES = ("Succeeded", "Failed")
# The fields of a pod's spec an update may change (kube-apiserver's ValidatePodUpdate lists them in its error).
_MUTABLE_SPEC_MESSAGE = (
    "pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,"
    "`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),"
    "`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)")


# --- create -----------------------------------------------------------------------------------------


def qos_class(spec: dict[str, Any]) -> str:
    """Guaranteed (every container limits cpu and memory, requests equal to limits), BestEffort (nothing
    requested or limited), else Burstable — kube-apiserver's QOS class of a pod."""
    containers = [c for c in (spec.get("containers") or []) + (spec.get("initContainers") or [])
                  if isinstance(c, dict)]
    any_set, guaranteed = False, True
    for c in containers:
        resources = c.get("resources") or {}
        requests, limits = resources.get("requests") or {}, resources.get("limits") or {}
        if requests or limits:
            any_set = True
        for name in ("cpu", "memory"):
            if name not in limits or str(requests.get(name, limits[name])) != str(limits[name]):
                guaranteed = False
    if not any_set:
        return "BestEffort"
    return "Guaranteed" if guaranteed else "Burstable"


_SPEC_DEFAULTS = {"restartPolicy": "Always", "terminationGracePeriodSeconds": DEFAULT_GRACE_SECONDS,
                  "dnsPolicy": "ClusterFirst", "securityContext": {}, "schedulerName": "default-scheduler",
                  "enableServiceLinks": True, "priority": 0, "preemptionPolicy": "PreemptLowerPriority"}


def _default_container(container: Any) -> None:
    if not isinstance(container, dict):
        return
    container.setdefault("terminationMessagePath", "/dev/termination-log")
    container.setdefault("terminationMessagePolicy", "File")
    image = str(container.get("image") or "")
    tagged = ":" in image.rsplit("/", 1)[-1] or "@" in image
    latest = not tagged or image.endswith(":latest")
    container.setdefault("imagePullPolicy", "Always" if latest else "IfNotPresent")
    container.setdefault("resources", {})


def apply_pod_defaults(pod: dict[str, Any]) -> None:
    """The defaults kube-apiserver fills in a pod's spec (what a scheduler or ``kubectl get -o yaml`` sees):
    restart and DNS policy, scheduler name, grace period, priority, and per container the image pull policy
    and termination message settings; and the tolerations its DefaultTolerationSeconds admission adds."""
    spec = pod.get("spec")
    if not isinstance(spec, dict):
        return
    for key, value in _SPEC_DEFAULTS.items():
        spec.setdefault(key, value)
    for kind in ("containers", "initContainers"):
        for container in spec.get(kind) or []:
            _default_container(container)
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
    present = [t for t in tolerations or [] if isinstance(t, dict)]
    added = []
    for key in (NODE_NOT_READY, NODE_UNREACHABLE):
        if not any(t.get("key") in (key, "", None) and t.get("effect") in ("NoExecute", "", None) for t in present):
            added.append({"key": key, "operator": "Exists", "effect": "NoExecute",
                          "tolerationSeconds": DEFAULT_TOLERATION_SECONDS})
    if added:
        spec["tolerations"] = [*(tolerations or []), *added]


def prepare_pod_create(pod: dict[str, Any]) -> None:
    """As kube-apiserver's pod strategy: defaults filled in, and a new pod is Pending with its QOS class,
    whatever status it sent."""
    apply_pod_defaults(pod)
    pod["status"] = {"phase": "Pending", "qosClass": qos_class(pod.get("spec") or {})}


def validate_pod_spec(spec: Any, pod_name: str | None = None) -> list[f.FieldError]:
    """ValidatePodSpec's rules for what dralloc models (:func:`dralloc.validation.pod.pod_spec_errors`, images
    required), and the active deadline, which only the stored JSON holds."""
    if not isinstance(spec, dict):
        return [f.required("spec", "")]
    try:
        typed_spec = msgspec.convert(spec, PodSpec, dec_hook=quantity_dec_hook, str_keys=True)
    except (msgspec.ValidationError, ValueError, TypeError) as exc:
        return [f.invalid("spec", f.OMIT, str(exc))]
    errors = pod_spec_errors(typed_spec, "spec", pod_name, require_image=True)
    deadline = spec.get("activeDeadlineSeconds")
    if deadline is not None and not (isinstance(deadline, int) and 1 <= deadline <= MAX_INT32):
        errors.append(f.invalid("spec.activeDeadlineSeconds", deadline, f"must be between 1 and {MAX_INT32}, inclusive"))
    return errors


def _deadline_update_errors(new: Any, old: Any) -> tuple[list[f.FieldError], bool]:
    """ValidatePodUpdate's rule for spec.activeDeadlineSeconds: it may be set, or lowered, but not raised nor
    unset. The errors, and whether upstream stops there (a bad new value)."""
    where = "spec.activeDeadlineSeconds"
    if new is None:
        return ([f.invalid(where, None, "must not update from a positive integer to nil value")]
                if old is not None else []), False
    if not isinstance(new, int) or not 0 <= new <= MAX_INT32:
        return [f.invalid(where, new, f"must be between 0 and {MAX_INT32}, inclusive")], True
    if isinstance(old, int) and old < new:
        return [f.invalid(where, new, "must be less than or equal to previous value")], True
    return [], False


def validate_pod(pod: dict[str, Any], typed_meta: Any) -> list[f.FieldError]:
    return (validate_object_meta(typed_meta, True, name_is_dns_subdomain, require_namespace=True)
            + pod_annotation_errors((pod.get("metadata") or {}).get("annotations"), pod.get("spec"))
            + validate_pod_spec(pod.get("spec"), typed_meta.name))


def validate_event(event: dict[str, Any], typed_meta: Any) -> list[f.FieldError]:
    """A core/v1 Event: its metadata and kube-apiserver's legacy event rules (``events.legacy_errors``)."""
    return validate_object_meta(typed_meta, True, name_is_dns_subdomain, require_namespace=True) + legacy_errors(event)


# --- update -----------------------------------------------------------------------------------------


def _without_mutable(spec: Any) -> Any:
    if not isinstance(spec, dict):
        return spec
    out = {k: v for k, v in spec.items() if k not in ("activeDeadlineSeconds", "tolerations",
                                                      "terminationGracePeriodSeconds", "schedulingGates")}
    for kind in ("containers", "initContainers"):
        if isinstance(out.get(kind), list):
            out[kind] = [{k: v for k, v in c.items() if k != "image"} if isinstance(c, dict) else c
                         for c in out[kind]]
    return out


def pod_update_errors(new: dict[str, Any], old: dict[str, Any]) -> list[f.FieldError]:
    """The pod-specific annotation rules (an invalid deletion cost may be kept), then what may change: an
    update may change only images, the active deadline, tolerations (additions) and scheduling gates
    (removals); spec.nodeName is set through /binding."""
    new_annotations = (new.get("metadata") or {}).get("annotations")
    old_annotations = (old.get("metadata") or {}).get("annotations")
    annotations = (pod_annotation_errors(new_annotations, new.get("spec"), keeps_invalid_deletion_cost(old_annotations))
                   + annotation_change_errors(new_annotations, old_annotations))
    return annotations + _spec_update_errors(new, old)


def _spec_update_errors(new: dict[str, Any], old: dict[str, Any]) -> list[f.FieldError]:
    new_spec, old_spec = new.get("spec") or {}, old.get("spec") or {}
    deadline, stop = _deadline_update_errors(new_spec.get("activeDeadlineSeconds"),
                                             old_spec.get("activeDeadlineSeconds"))
    if stop:
        return validate_pod_spec(new_spec) + deadline
    if _without_mutable(new_spec) != _without_mutable(old_spec):
        return deadline + [f.forbidden("spec", _MUTABLE_SPEC_MESSAGE)]
    old_tolerations = old_spec.get("tolerations") or []
    new_tolerations = new_spec.get("tolerations") or []
    if any(t not in new_tolerations for t in old_tolerations):
        return deadline + [f.forbidden("spec.tolerations", "existing toleration can not be modified except its "
                                                           "tolerationSeconds")]
    new_gates = new_spec.get("schedulingGates") or []
    if any(g not in (old_spec.get("schedulingGates") or []) for g in new_gates):
        return deadline + [f.forbidden("spec.schedulingGates",
                                       "only deletion is allowed, but found new scheduling gate")]
    return validate_pod_spec(new_spec) + deadline


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


async def create_binding(api: ApiServer, request: Request, t: Target) -> Response:
    """POST pods/{name}/binding: set spec.nodeName (once) and the PodScheduled condition, as kube-scheduler's
    bind does through kube-apiserver."""
    raw, ctype = await read_body(request)
    if ctype == protobuf.CONTENT_TYPE:  # kube-scheduler binds with protobuf bodies
        try:
            binding: Any = protobuf.decode(raw)
        except protobuf.ProtobufError as exc:
            raise bad_request(f"couldn't decode the request body as protobuf: {exc}") from None
        if binding.get("kind") != "Binding":
            raise bad_request(f"the request body must be a Binding, not {binding.get('kind')}")
    else:
        binding = parse(raw, ctype, "Binding", "v1")
    if not isinstance(binding, dict):
        raise bad_request("the request body must be a JSON object")
    meta = binding.get("metadata") or {}
    target = binding.get("target") or {}
    if not isinstance(meta, dict) or not isinstance(target, dict):
        raise bad_request("Binding.metadata and Binding.target must be objects")
    # the handler's namespace check comes first, then the binding storage's own name check
    if meta.get("namespace") not in (None, "", t.namespace):
        raise bad_request("the namespace of the provided object does not match the namespace sent on the request")
    if meta.get("name") not in (None, t.name):
        raise bad_request("name in URL does not match name in Binding object")
    errors = []
    node = target.get("name")
    if not node or not isinstance(node, str):
        errors.append(f.required("target.name", ""))
    if target.get("kind") not in (None, "", "Node"):
        errors.append(f.not_supported("target.kind", target.get("kind"), ["Node", "<empty>"]))
    if errors:
        raise ApiError(422, f'Binding "{t.name}" is invalid: {f.aggregate_message(errors)}',
                       details={"name": t.name, "kind": "Binding",
                                "causes": [{"reason": e.type, "message": e.body(), "field": e.field} for e in errors]})
    extra = {key: value for key in ("labels", "annotations")
             if isinstance(value := meta.get(key), dict) and all(isinstance(v, str) for v in value.values())}
    try:
        await asyncio.to_thread(bind, api.store, t.namespace, t.name, str(node), None, extra.get("labels"),
                                extra.get("annotations"))
    except NotFound:
        raise not_found(t.resource, t.name) from None
    return respond(request, {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success",
                             "code": 201}, 201)


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
    spec = pod.get("spec") or {}
    if not spec.get("nodeName") or (pod.get("status") or {}).get("phase") in TERMINAL_PHASES:
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


def remove_if_expired(api: ApiServer, namespace: str, name: str, uid: str) -> None:
    """Stand in for the kubelet: remove a terminating pod once its grace period is over (finalizers still
    hold it)."""
    def build(old: dict[str, Any], rv: str) -> Any:
        meta = old.get("metadata") or {}
        if meta.get("uid") != uid or not meta.get("deletionTimestamp") or meta.get("finalizers"):
            return old
        return Outcome(_with_rv(old, rv), "DELETED")

    try:
        api.store.update("pods", namespace, name, build)
    except NotFound:
        pass


def schedule_removal(api: ApiServer, pod: dict[str, Any]) -> None:
    meta = pod.get("metadata") or {}
    deadline = meta.get("deletionTimestamp")
    if not deadline:
        return
    try:
        when = datetime.strptime(deadline, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    except ValueError:
        return
    delay = max((when - datetime.now(UTC)).total_seconds(), 0.0)
    loop = asyncio.get_running_loop()
    args = (api, meta.get("namespace") or "", meta.get("name") or "", meta.get("uid") or "")
    loop.call_later(delay, lambda: api.background(asyncio.to_thread(remove_if_expired, *args)))


# --- kubectl get columns ----------------------------------------------------------------------------


def pod_ready(pod: dict[str, Any]) -> str:
    statuses = (pod.get("status") or {}).get("containerStatuses") or []
    total = len((pod.get("spec") or {}).get("containers") or [])
    ready = sum(1 for s in statuses if isinstance(s, dict) and s.get("ready"))
    return f"{ready}/{total}"


def pod_status(pod: dict[str, Any]) -> str:
    """kubectl's STATUS: Terminating, a container's waiting/terminated reason, the pod's reason, else its phase."""
    if (pod.get("metadata") or {}).get("deletionTimestamp"):
        return "Terminating"
    status = pod.get("status") or {}
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


def pod_restarts(pod: dict[str, Any]) -> int:
    statuses = (pod.get("status") or {}).get("containerStatuses") or []
    return sum(int(s.get("restartCount") or 0) for s in statuses if isinstance(s, dict))


def readiness_gates(pod: dict[str, Any]) -> str:
    gates = (pod.get("spec") or {}).get("readinessGates") or []
    if not gates:
        return "<none>"
    true = {c.get("type") for c in (pod.get("status") or {}).get("conditions") or []
            if isinstance(c, dict) and c.get("status") == "True"}
    return f"{sum(1 for g in gates if isinstance(g, dict) and g.get('conditionType') in true)}/{len(gates)}"
