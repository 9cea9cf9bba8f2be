"""What the endpoints controllers keep between passes so that a change costs in proportion to what it concerns,
not to the Services and EndpointSlices of its namespace:

* :class:`Selectors`: the Services that select pods, grouped by namespace and selector (a pod's change concerns
  the Services whose selector matches its labels, before or after: a few selectors to try, however many
  Services share them);
* :class:`PodsByLabel`: the pods of the namespaces where some Service selects pods, by label (a selector's pods
  found from its rarest label, not by going through every pod of the namespace on each pass);
* :class:`KnownSlices`: the EndpointSlices of a namespace, each with the Service it is labelled for, the
  controller that manages it and its uid (a Service's slices found without listing the namespace's, and a slice
  known to be missing created without reading it first), kept up to date from the controllers' own writes and
  the change feed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from dralloc.server.controllers.snapshot import Key, Obj

SERVICE_NAME = "kubernetes.io/service-name"
MANAGED_BY = "endpointslice.kubernetes.io/managed-by"

SelectorKey = tuple[tuple[str, str], ...]


def selects_pods(svc: Obj) -> bool:
    spec = svc.get("spec") or {}
    return isinstance(spec.get("selector"), dict) and spec.get("type") != "ExternalName"


def selector_key(svc: Obj) -> SelectorKey | None:
    """The selector of a Service that selects pods, as a key (None for one that selects none)."""
    if not selects_pods(svc):
        return None
    return tuple(sorted((str(k), str(v)) for k, v in svc["spec"]["selector"].items()))


def _matches(selector: SelectorKey, labels: dict[str, Any]) -> bool:
    return all(labels.get(k) == v for k, v in selector)


@dataclass
class Selectors:
    """The Services that select pods by namespace and selector, kept up to date Service by Service."""

    groups: dict[str, dict[SelectorKey, set[Key]]] = field(default_factory=dict)
    of: dict[Key, SelectorKey] = field(default_factory=dict)

    def put(self, key: Key, svc: Obj | None) -> None:
        """The Service ``key`` is ``svc`` now (None: gone)."""
        selector = selector_key(svc) if svc is not None else None
        old = self.of.get(key)
        if old == selector:
            return
        if old is not None:
            namespace = self.groups[key[0]]
            namespace[old].discard(key)
            if not namespace[old]:
                del namespace[old]
            del self.of[key]
        if selector is not None:
            self.groups.setdefault(key[0], {}).setdefault(selector, set()).add(key)
            self.of[key] = selector

    def selecting(self, namespace: str, *label_sets: dict[str, Any] | None) -> set[Key]:
        """The Services of ``namespace`` whose selector matches any of these labels."""
        found: set[Key] = set()
        for selector, members in (self.groups.get(namespace) or {}).items():
            if any(labels is not None and _matches(selector, labels) for labels in label_sets):
                found |= members
        return found


@dataclass
class PodsByLabel:
    """The labels of the pods of some namespaces, and those pods by label (see the module docstring). A
    namespace is indexed whole (:meth:`index`) and then kept up to date pod by pod (:meth:`put`)."""

    labels: dict[Key, dict[str, Any]] = field(default_factory=dict)  # each indexed pod's labels
    by_label: dict[str, dict[tuple[str, Any], set[Key]]] = field(default_factory=dict)  # namespace -> label -> pods
    in_namespace: dict[str, set[Key]] = field(default_factory=dict)  # the indexed namespaces' pods

    def indexed(self, namespace: str) -> bool:
        return namespace in self.in_namespace

    def index(self, namespace: str, pods: list[tuple[Key, dict[str, Any]]]) -> None:
        """Index ``namespace`` whole: these are its pods, each with its labels."""
        self.drop(namespace)
        self.in_namespace[namespace] = set()
        self.by_label[namespace] = {}
        for key, labels in pods:
            self.put(key, labels)

    def drop(self, namespace: str) -> None:
        """No longer index ``namespace`` (its pods' changes are no longer taken in)."""
        for key in self.in_namespace.pop(namespace, ()):
            del self.labels[key]
        self.by_label.pop(namespace, None)

    def put(self, key: Key, labels: dict[str, Any] | None) -> None:
        """The pod ``key`` of an indexed namespace has these labels now (None: it is gone)."""
        namespace = key[0]
        by_label = self.by_label[namespace]
        old = self.labels.pop(key, None)
        if old is not None:
            for label in old.items():
                if type(label[1]) is not str:  # (not indexed: no selector value, a string, equals it)
                    continue
                members = by_label[label]
                members.discard(key)
                if not members:
                    del by_label[label]
            self.in_namespace[namespace].discard(key)
        if labels is not None:
            self.labels[key] = labels
            self.in_namespace[namespace].add(key)
            for label in labels.items():
                if type(label[1]) is str:
                    by_label.setdefault(label, set()).add(key)

    def matching(self, namespace: str, selector: SelectorKey) -> set[Key]:
        """The pods of the indexed ``namespace`` whose labels match ``selector`` (every pod for an empty one,
        as an empty label set selects everything)."""
        if not selector:
            return set(self.in_namespace[namespace])
        by_label = self.by_label[namespace]
        candidates = min((by_label.get(label) or set() for label in selector), key=len)
        if len(selector) == 1:
            return set(candidates)
        return {key for key in candidates if _matches(selector, self.labels[key])}


# A slice as known: the Service named by its kubernetes.io/service-name label, its managed-by label, its uid
Known = tuple[Any, Any, Any]


def known_of(eps: Obj) -> Known:
    meta = eps.get("metadata") or {}
    labels = meta.get("labels") or {}
    return labels.get(SERVICE_NAME), labels.get(MANAGED_BY), meta.get("uid")


@dataclass
class KnownSlices:
    """The EndpointSlices of one namespace by name (see the module docstring). ``unsure``: the names another
    client wrote since, read again before the next use."""

    slices: dict[str, Known] = field(default_factory=dict)
    by_service: dict[Any, set[str]] = field(default_factory=dict)  # service-name label -> the slices' names
    unsure: set[str] = field(default_factory=set)

    def put(self, name: str, known: Known | None) -> None:
        """The slice ``name`` is as ``known`` says now (None: there is none)."""
        old = self.slices.pop(name, None)
        if old is not None:
            names = self.by_service[old[0]]
            names.discard(name)
            if not names:
                del self.by_service[old[0]]
        if known is not None:
            self.slices[name] = known
            self.by_service.setdefault(known[0], set()).add(name)

    def of_service(self, service: Any) -> list[tuple[str, Known]]:
        """The slices labelled for the Service named ``service``, by name."""
        return [(name, self.slices[name]) for name in sorted(self.by_service.get(service) or ())]
