"""The root CA certificate publisher, as kube-controller-manager's: every namespace has a ConfigMap
``kube-root-ca.crt`` whose ``ca.crt`` is the CA that verifies the API server (what the projected token volume
of every pod mounts). It is made when a namespace appears, made again when deleted, and its data and
description put back when a client changes them. Test frameworks wait for it in a new namespace."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from dralloc.server.controllers.pernamespace import PerNamespace
from dralloc.store import Change, Conflict, NotFound

Obj = dict[str, Any]

NAME = "kube-root-ca.crt"
DESCRIPTION_ANNOTATION = "kubernetes.io/description"
DESCRIPTION = ("Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints "
               "such as the internal service IP or kubernetes.default.svc. No other usage is guaranteed across "
               "distributions of Kubernetes clusters.")


# A namespace's ConfigMap changed again within this many seconds of a mend waits that long for the next one:
# replicas sharing a database (each running these controllers, none elected) but not their pki would
# otherwise put back each other's CA in an endless loop of writes.
MEND_EVERY = 60.0


@dataclass
class RootCAPublisher(PerNamespace):
    NOTED: ClassVar[frozenset[str] | None] = frozenset(("namespaces", "configmaps"))
    ca: str = ""  # the PEM text published ("" when the server has none: plain HTTP)
    clock: Callable[[], float] = time.time
    mended: dict[str, float] = field(default_factory=dict)  # namespace → when this publisher last mended it
    waiting: dict[str, float] = field(default_factory=dict)  # namespace → when it may be mended again

    @property
    def next_due(self) -> float | None:
        return min(self.waiting.values(), default=None)

    @property
    def due(self) -> bool:
        return super().due or (self.next_due is not None and self.next_due <= self.clock())

    def note(self, change: Change) -> None:
        """Take in one change: a namespace added or changed, the ConfigMap changed or deleted."""
        if change.resource == "namespaces" and change.type != "DELETED":
            self.todo.add(change.name)
        elif change.resource == "configmaps" and change.name == NAME and change.type != "ADDED":
            self.todo.add(change.namespace)

    def notes(self, changes: Sequence[Change]) -> None:
        """Take in changes of one resource from the store's feed, in the log's order."""
        for change in changes:
            self.note(change)

    def cycle(self) -> bool:
        """Make or mend the ConfigMaps; True when one was written."""
        now = self.clock()
        self.mended = {ns: when for ns, when in self.mended.items() if now - when < MEND_EVERY}
        for namespace, when in list(self.waiting.items()):
            if when <= now:
                del self.waiting[namespace]
                self.todo.add(namespace)
        wrote = False
        for namespace in self.take_todo():
            try:
                current = self.writer.store.get("configmaps", namespace, NAME)
            except NotFound:
                wrote |= self._make(namespace)
                continue
            if self._published(current):
                continue
            last = self.mended.get(namespace)
            if last is not None and now - last < MEND_EVERY:
                self.waiting[namespace] = last + MEND_EVERY
                continue
            if self.writer.update("configmaps", namespace, NAME, self._mend) is not None:
                self.mended[namespace] = now
                wrote = True
        return wrote

    def _published(self, cm: Obj) -> bool:
        annotations = (cm.get("metadata") or {}).get("annotations") or {}
        return cm.get("data") == {"ca.crt": self.ca} and bool(annotations.get(DESCRIPTION_ANNOTATION))

    def _mend(self, cm: Obj) -> Obj | None:
        """The data set to the CA alone and the description annotation put back (other keys, binaryData and
        annotations stay, as upstream's update leaves them)."""
        if self._published(cm):
            return None
        meta = cm.setdefault("metadata", {})
        meta["annotations"] = {**(meta.get("annotations") or {}), DESCRIPTION_ANNOTATION: DESCRIPTION}
        cm["data"] = {"ca.crt": self.ca}
        return cm

    def _make(self, namespace: str) -> bool:
        if not self.accepts_content(namespace):
            return False
        obj = {"apiVersion": "v1", "kind": "ConfigMap",
               "metadata": {"name": NAME, "namespace": namespace,
                            "annotations": {DESCRIPTION_ANNOTATION: DESCRIPTION}},
               "data": {"ca.crt": self.ca}}
        try:
            self.writer.create("configmaps", namespace, obj)
        except Conflict:
            return False  # made meanwhile
        return True
