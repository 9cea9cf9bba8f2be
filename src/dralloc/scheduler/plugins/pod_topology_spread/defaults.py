"""The cluster-level default constraints (``defaultingType: System``) and the selector they spread by.

A pod without ``topologySpreadConstraints`` gets kube-scheduler's system defaults, both ScheduleAnyway (so
they only score): maxSkew 3 on ``kubernetes.io/hostname`` and maxSkew 5 on ``topology.kubernetes.io/zone``.
Their selector is ``helper.DefaultSelector``: the union of the selectors of the Services in the pod's namespace
that select it, then the selector of its controller (the controller ownerReference) when that is a
ReplicationController (``v1``), ReplicaSet or StatefulSet (``apps/v1``) found in the pod's namespace. A pod no
such object selects gets no default constraints.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from dralloc.api.core_v1 import Pod
from dralloc.scheduler.labels import Selector, selector_from_set
from dralloc.scheduler.plugins.pod_topology_spread.constraints import (
    HOSTNAME,
    ZONE,
    SpreadConstraint,
    SpreadConstraintError,
    parse_selector,
)

# (topologyKey, maxSkew) of the system default constraints, in upstream's order.
SYSTEM_DEFAULTS = ((HOSTNAME, 3), (ZONE, 5))

EVERYTHING = Selector()  # the empty selector: nothing selects the pod
_RC = ("", "v1", "ReplicationController")
_RS = ("apps", "v1", "ReplicaSet")
_SS = ("apps", "v1", "StatefulSet")


@dataclass
class WorkloadSelectors:
    """What ``DefaultSelector`` lists: Services' selectors by namespace (unset ones select nothing and are
    left out) and the ReplicationControllers', ReplicaSets' and StatefulSets' selectors by namespace and name."""

    services: dict[str, list[dict[str, str]]] = field(default_factory=dict)
    controllers: dict[tuple[str, str, str, str, str], Any] = field(default_factory=dict)

    @classmethod
    def build(cls, services: Iterable[Any] = (), controllers: Iterable[Any] = ()) -> WorkloadSelectors:
        out = cls()
        for svc in services:
            if svc.spec.selector is not None:
                out.services.setdefault(svc.metadata.namespace or "default", []).append(dict(svc.spec.selector))
        for obj in controllers:
            group, _, version = (obj.api_version or "").rpartition("/")
            gvk = (group, version, obj.kind)
            if gvk in (_RC, _RS, _SS):
                spec = getattr(obj, "spec", None)
                out.controllers[(*gvk, obj.metadata.namespace or "default", obj.metadata.name or "")] = (
                    getattr(spec, "selector", None))
        return out

    def default_selector(self, pod: Pod) -> Selector:
        """``helper.DefaultSelector`` for ``pod``."""
        if not self.services and not self.controllers:
            return EVERYTHING
        meta = pod.metadata
        namespace = meta.namespace or "default"
        labels = meta.labels or {}
        label_set: dict[str, str] = {}
        for wanted in self.services.get(namespace, ()):
            if all(labels.get(k) == v for k, v in wanted.items()):
                label_set.update(wanted)
        selector = selector_from_set(label_set)
        owner = next((o for o in meta.owner_references or () if o.controller), None)
        if owner is None:
            return selector
        group, slash, version = (owner.api_version or "").partition("/")
        if not slash:
            group, version = "", group
        elif "/" in version:
            return selector  # not a group/version: schema.ParseGroupVersion fails
        gvk = (group, version, owner.kind or "")
        key = (*gvk, namespace, owner.name or "")
        if key not in self.controllers:
            return selector
        found = self.controllers[key]
        if gvk == _RC:
            return selector_from_set({**label_set, **(found or {})})
        try:
            other = parse_selector(found, "spec.selector")
        except SpreadConstraintError:
            return selector
        return selector if other.nothing else selector.add(other.requirements)


def system_default_constraints(selector: Selector) -> tuple[SpreadConstraint, ...]:
    """The system defaults with ``selector``; none when it is empty (nothing selects the pod)."""
    if selector.empty:
        return ()
    return tuple(SpreadConstraint(skew, key, selector) for key, skew in SYSTEM_DEFAULTS)
