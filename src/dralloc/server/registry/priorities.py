"""PriorityClasses in the server: the system classes kube-apiserver keeps, and its Priority admission plugin.

- At start the server makes the system classes that are missing (``system-node-critical``,
  ``system-cluster-critical``); they cannot be deleted (403).
- A PriorityClass marked ``globalDefault`` is refused (403) while another class is the default.
- A pod being created gets ``spec.priority`` (and ``spec.preemptionPolicy``) from its
  ``priorityClassName``: the named class must exist (403 ``no PriorityClass with name X was found``); with no
  name, the default class (whose name the pod then carries), else priority 0 and ``PreemptLowerPriority``.
  A priority or preemption policy the pod sets itself must be the class's (403 otherwise). The scheduler
  (queue order, preemption) reads ``spec.priority``, so a pod only gets a priority through a class.
"""

from __future__ import annotations

from typing import Any

from dralloc.api.defaults import PREEMPT_LOWER_PRIORITY
from dralloc.server.clock import now
from dralloc.server.http.errors import ApiError
from dralloc.server.registry.strategy import Strategy
from dralloc.server.types import Obj
from dralloc.server.uids import new_uid
from dralloc.server.views import ObjectView
from dralloc.store import Conflict, NotFound, SQLStore
from dralloc.validation.field import FieldError
from dralloc.validation.scheduling import SYSTEM_PRIORITY_CLASSES

PRIORITY_CLASSES = "priorityclasses"
SYSTEM_CLASS_DESCRIPTIONS = {
    "system-node-critical": "Used for system critical pods that must not be moved from their current node.",
    "system-cluster-critical": "Used for system critical pods that must run in the cluster, but can be moved to "
                               "another node if necessary.",
}


def ensure_system_classes(store: SQLStore) -> None:
    """Create the system priority classes that are not stored (kube-apiserver does at start)."""
    for name, (value, _default) in SYSTEM_PRIORITY_CLASSES.items():
        try:
            store.get(PRIORITY_CLASSES, "", name)
            continue
        except NotFound:
            pass
        pc = {"kind": "PriorityClass", "apiVersion": "scheduling.k8s.io/v1", "metadata": {"name": name},
              "value": value, "description": SYSTEM_CLASS_DESCRIPTIONS[name], "preemptionPolicy": PREEMPT_LOWER_PRIORITY}

        def build(_old: Any, rv: str, pc: dict[str, Any] = pc) -> dict[str, Any]:
            meta = {**pc["metadata"], "uid": new_uid(), "creationTimestamp": now(), "resourceVersion": rv}
            return {**pc, "metadata": meta}

        try:
            store.create(PRIORITY_CLASSES, "", name, build)
        except Conflict:  # another replica made it meanwhile
            pass


def _forbidden(resource: str, name: str, why: str) -> ApiError:
    if resource == "priorityclasses":
        return ApiError(403, f'priorityclasses.scheduling.k8s.io "{name}" is forbidden: {why}', "Forbidden",
                        details={"name": name, "group": "scheduling.k8s.io", "kind": "priorityclasses"})
    return ApiError(403, f'pods "{name}" is forbidden: {why}', "Forbidden", details={"name": name, "kind": "pods"})


def check_delete(name: str) -> None:
    if name in SYSTEM_PRIORITY_CLASSES:
        raise _forbidden("priorityclasses", name, "this is a system priority class and cannot be deleted")


def _default_class(store: SQLStore) -> dict[str, Any] | None:
    """The global default class; of several (written concurrently), the lowest value, as upstream."""
    classes, _ = store.list(PRIORITY_CLASSES)
    defaults = [pc for pc in classes if pc.get("globalDefault") is True]
    return min(defaults, key=lambda pc: pc.get("value") or 0) if defaults else None


def admit_class(store: SQLStore, pc: dict[str, Any], name: str) -> None:
    """Refuse a second global default class."""
    if pc.get("globalDefault") is not True:
        return
    default = _default_class(store)
    if default is not None and ObjectView(default).name != name:
        theirs = ObjectView(default).name
        raise _forbidden("priorityclasses", name, f"PriorityClass {theirs} is already marked as default. Only "
                                                  f"one default can exist")


def admit_pod(store: SQLStore, pod: dict[str, Any]) -> dict[str, Any]:
    """The pod with the priority its class gives it (a new dict; 403 as the Priority admission plugin)."""
    spec = pod.get("spec")
    if not isinstance(spec, dict):
        return pod  # not a pod the decoder takes: its 400 comes next
    name = ObjectView(pod).name
    class_name = spec.get("priorityClassName") or ""
    if not isinstance(class_name, str):
        return pod
    if class_name:
        try:
            pc: dict[str, Any] | None = store.get(PRIORITY_CLASSES, "", class_name)
        except NotFound:
            raise _forbidden("pods", name, f"no PriorityClass with name {class_name} was found") from None
    else:
        pc = _default_class(store)
        if pc is not None:
            class_name = ObjectView(pc).name
    value = int(pc.get("value") or 0) if pc is not None else 0
    policy = pc.get("preemptionPolicy") if pc is not None else PREEMPT_LOWER_PRIORITY
    asked = spec.get("priority")
    if asked is not None and (isinstance(asked, bool) or not isinstance(asked, int)):
        return pod  # a priority of the wrong type: the decoder's 400 comes next
    if asked is not None and asked != value:
        raise _forbidden("pods", name, f"the integer value of priority ({asked}) must not be provided in pod spec; "
                                       f"priority admission controller computed {value} from the given "
                                       f"PriorityClass name")
    admitted = {**spec, "priority": value}
    if class_name:
        admitted["priorityClassName"] = class_name
    if policy:
        asked_policy = spec.get("preemptionPolicy")
        if asked_policy is not None and asked_policy != policy:
            raise _forbidden("pods", name, f"the string value of PreemptionPolicy ({asked_policy}) must not be "
                                           f"provided in pod spec; priority admission controller computed "
                                           f"{policy} from the given PriorityClass name")
        admitted["preemptionPolicy"] = policy
    return {**pod, "spec": admitted}


class PriorityClassStrategy(Strategy):
    """The typed strategy, with the Priority admission of classes (one global default) and the system classes
    that may not be deleted."""

    def create_admission_errors(self, store: SQLStore, namespace: str, name: str,
                                stored: Obj) -> list[FieldError]:
        admit_class(store, stored, name)
        return []

    def admit_update(self, store: SQLStore, sent: Obj, name: str) -> None:
        admit_class(store, sent, name)

    def check_delete(self, name: str) -> None:
        check_delete(name)


STRATEGY = PriorityClassStrategy()
