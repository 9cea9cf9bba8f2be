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

from typing import Any, NamedTuple

from dralloc.api.codec import decode
from dralloc.api.scheduling_v1 import PriorityClass
from dralloc.controllers.priority import (
    POD_GROUPS,
    SYSTEM_PRIORITY_CLASSES,
    AdmittedPriority,
    PriorityAdmissionError,
    admitted_priority,
)
from dralloc.errors import DecodeError
from dralloc.server.clock import now
from dralloc.server.http.errors import ApiError
from dralloc.server.registry.strategy import Strategy
from dralloc.server.types import Obj
from dralloc.server.uids import new_uid
from dralloc.server.views import ObjectView
from dralloc.store import Conflict, NotFound, SQLStore
from dralloc.store.cache import cached
from dralloc.validation.field import FieldError

PRIORITY_CLASSES = "priorityclasses"
SYSTEM_CLASS_NAMES = frozenset(pc.metadata.name for pc in SYSTEM_PRIORITY_CLASSES)


def ensure_system_classes(store: SQLStore) -> None:
    """Create the system priority classes that are not stored (kube-apiserver does at start)."""
    for system in SYSTEM_PRIORITY_CLASSES:
        name = system.metadata.name or ""
        try:
            store.get(PRIORITY_CLASSES, "", name)
            continue
        except NotFound:
            pass
        pc = {"kind": "PriorityClass", "apiVersion": "scheduling.k8s.io/v1", "metadata": {"name": name},
              "value": system.value, "description": system.description, "preemptionPolicy": system.preemption_policy}

        def build(_old: Any, rv: str, pc: dict[str, Any] = pc) -> dict[str, Any]:
            meta = {**pc["metadata"], "uid": new_uid(), "creationTimestamp": now(), "resourceVersion": rv}
            return {**pc, "metadata": meta}

        try:
            store.create(PRIORITY_CLASSES, "", name, build)
        except Conflict:  # another replica made it meanwhile
            pass


def _forbidden(name: str, why: str) -> ApiError:
    return ApiError(403, f'priorityclasses.scheduling.k8s.io "{name}" is forbidden: {why}', "Forbidden",
                    details={"name": name, "group": "scheduling.k8s.io", "kind": "priorityclasses"})


def check_delete(name: str) -> None:
    if name in SYSTEM_CLASS_NAMES:
        raise _forbidden(name, "this is a system priority class and cannot be deleted")


def _default_class(store: SQLStore) -> dict[str, Any] | None:
    """The global default class; of several (written concurrently), the lowest value, as upstream."""
    classes = cached(store, PRIORITY_CLASSES).objects()
    defaults = [classes[key] for key in sorted(classes) if classes[key].get("globalDefault") is True]  # (name order)
    return min(defaults, key=lambda pc: pc.get("value") or 0) if defaults else None


def admit_class(store: SQLStore, pc: dict[str, Any], name: str) -> None:
    """Refuse a second global default class."""
    if pc.get("globalDefault") is not True:
        return
    default = _default_class(store)
    if default is not None and ObjectView(default).name != name:
        theirs = ObjectView(default).name
        raise _forbidden(name, f"PriorityClass {theirs} is already marked as default. Only "
                                                  f"one default can exist")


def admit_pod(store: SQLStore, pod: dict[str, Any]) -> dict[str, Any]:
    """The pod with the priority its class gives it (a new dict; 403 as the Priority admission plugin), by
    the rule ``dralloc.controllers.priority`` holds for typed pods."""
    spec = pod.get("spec")
    if not isinstance(spec, dict):
        return pod  # not a pod the decoder takes: its 400 comes next
    class_name, asked, asked_policy = spec.get("priorityClassName"), spec.get("priority"), spec.get("preemptionPolicy")
    # A pod that sets neither priority nor policy (most) gets what its class name gives (the pod's name only
    # shows in a refusal): the answer of a cached class, or of the defaults, is kept with the classes it came
    # from.
    plain = asked is None and asked_policy is None
    if not isinstance(class_name, str | None) or not plain and (
            not isinstance(asked_policy, str | None)
            or (asked is not None and (isinstance(asked, bool) or not isinstance(asked, int)))):
        return pod  # a field of the wrong type: the decoder's 400 comes next
    typed = cached(store, PRIORITY_CLASSES).derived(_typed_classes)
    admitted = typed.admitted.get(class_name or "") if plain else None
    if admitted is None:
        name = ObjectView(pod).name
        try:
            admitted = admitted_priority(str(name), class_name, asked, asked_policy,
                                         _classes_in(store, typed, class_name))
        except PriorityAdmissionError as exc:
            raise ApiError(403, str(exc), "Forbidden", details={"name": name, "kind": "pods"}) from None
        if plain and (not class_name or class_name in typed.by_name):
            typed.admitted[class_name or ""] = admitted
    out = {**spec, "priority": admitted.priority}
    if admitted.class_name:
        out["priorityClassName"] = admitted.class_name
    out["preemptionPolicy"] = admitted.preemption_policy
    return {**pod, "spec": out}


def admit_pod_group(store: SQLStore, group: dict[str, Any]) -> dict[str, Any]:
    """The PodGroup with the priority its class gives it (``WorkloadAwarePreemption``: the Priority admission
    plugin admits PodGroups as it admits pods, without a preemption policy), by the same rule."""
    spec = group.get("spec")
    if not isinstance(spec, dict):
        return group  # the decoder's 400 comes next
    name = ObjectView(group).name
    class_name, asked = spec.get("priorityClassName"), spec.get("priority")
    if not isinstance(class_name, str | None) or (asked is not None and (isinstance(asked, bool)
                                                                          or not isinstance(asked, int))):
        return group
    try:
        admitted = admitted_priority(str(name), class_name, asked, None, _classes(store, class_name),
                                     resource=POD_GROUPS)
    except PriorityAdmissionError as exc:
        raise ApiError(403, str(exc), "Forbidden",
                       details={"name": name, "group": "scheduling.k8s.io", "kind": "podgroups"}) from None
    out = {**spec, "priority": admitted.priority}
    if admitted.class_name:
        out["priorityClassName"] = admitted.class_name
    return {**group, "spec": out}

def _classes(store: SQLStore, class_name: str | None) -> list[PriorityClass]:
    """The classes the rule needs: the one named, or (none named) the global defaults. As kube-apiserver's
    plugin, from the informer's cache (:mod:`dralloc.store.cache`): this server's own writes are in it at
    once; a class named but not cached yet (another replica's, just written) is looked up in the store."""
    return _classes_in(store, cached(store, PRIORITY_CLASSES).derived(_typed_classes), class_name)


def _classes_in(store: SQLStore, typed: _TypedClasses, class_name: str | None) -> list[PriorityClass]:
    """:func:`_classes`, from the cached classes ``typed``."""
    if not class_name:
        return typed.defaults
    found = typed.by_name.get(class_name)
    if found is not None:
        return [found]
    try:
        return _decoded([store.get(PRIORITY_CLASSES, "", class_name)])
    except NotFound:
        return []


class _TypedClasses(NamedTuple):
    by_name: dict[str, PriorityClass]
    defaults: list[PriorityClass]  # those marked globalDefault
    # what a pod that names this class ("": none) and sets no priority nor policy is admitted with, filled as
    # pods come (dropped with these classes when the cached ones change)
    admitted: dict[str, AdmittedPriority]


def _typed_classes(objects: dict[tuple[str, str], dict[str, Any]]) -> _TypedClasses:
    """The cached classes decoded (once per change of the cache, not once per pod)."""
    by_name = {pc.metadata.name or "": pc for pc in _decoded([objects[key] for key in sorted(objects)])}  # name order
    return _TypedClasses(by_name, [pc for pc in by_name.values() if pc.global_default is True], {})


def _decoded(stored: list[dict[str, Any]]) -> list[PriorityClass]:
    out = []
    for pc in stored:
        try:
            out.append(decode(pc))
        except DecodeError:
            continue  # (a stored class was validated when written)
    return out


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
