"""The service account controller, as kube-controller-manager's: every active namespace has a ServiceAccount
named ``default`` (made when the namespace appears, made again when it is deleted). Test frameworks wait for
it before they create pods in a new namespace."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from dralloc.server.accounts import DEFAULT, default_account_object
from dralloc.server.controllers.writes import Writer
from dralloc.store import Change, Conflict, NotFound

Obj = dict[str, Any]


@dataclass
class DefaultServiceAccounts:
    writer: Writer
    todo: set[str] = field(default_factory=set)  # namespaces to look at
    scanned: bool = False  # the first pass looks at every namespace

    @property
    def due(self) -> bool:
        return not self.scanned or bool(self.todo)

    def note(self, change: Change) -> None:
        """Take in one change from the store's feed: a new namespace, a deleted default service account."""
        if change.resource == "namespaces" and change.type == "ADDED":
            self.todo.add(change.name)
        elif change.resource == "serviceaccounts" and change.type == "DELETED" and change.name == DEFAULT:
            self.todo.add(change.namespace)

    def cycle(self) -> bool:
        """Make the missing default service accounts; True when one was made."""
        store = self.writer.store
        if not self.scanned:
            self.scanned = True
            self.todo |= {str((ns.get("metadata") or {}).get("name")) for ns in store.list("namespaces")[0]}
        made = False
        todo, self.todo = sorted(self.todo), set()
        for name in todo:
            try:
                store.get("serviceaccounts", name, DEFAULT)
            except NotFound:
                made |= self._make(name)
        return made

    def _make(self, namespace: str) -> bool:
        try:
            ns = self.writer.store.get("namespaces", "", namespace)
        except NotFound:
            return False
        if (ns.get("metadata") or {}).get("deletionTimestamp"):
            return False  # a terminating namespace takes no new content
        try:
            self.writer.create("serviceaccounts", namespace, default_account_object(namespace))
        except Conflict:
            return False  # made meanwhile
        return True
