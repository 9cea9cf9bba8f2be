"""The service account controller, as kube-controller-manager's: every active namespace has a ServiceAccount
named ``default`` (made when the namespace appears, made again when it is deleted). Test frameworks wait for
it before they create pods in a new namespace."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

from dralloc.server.controllers.pernamespace import PerNamespace
from dralloc.server.registry.service_accounts import DEFAULT, default_account_object
from dralloc.store import Change, Conflict, NotFound


@dataclass
class DefaultServiceAccounts(PerNamespace):
    NOTED: ClassVar[frozenset[str] | None] = frozenset(("namespaces", "serviceaccounts"))

    def note(self, change: Change) -> None:
        """Take in one change from the store's feed: a new namespace, a deleted default service account."""
        if change.resource == "namespaces" and change.type == "ADDED":
            self.todo.add(change.name)
        elif change.resource == "serviceaccounts" and change.type == "DELETED" and change.name == DEFAULT:
            self.todo.add(change.namespace)

    def notes(self, changes: Sequence[Change]) -> None:
        """Take in changes of one resource from the store's feed, in the log's order."""
        for change in changes:
            self.note(change)

    def cycle(self) -> bool:
        """Make the missing default service accounts; True when one was made."""
        made = False
        for name in self.take_todo():
            try:
                self.writer.store.get("serviceaccounts", name, DEFAULT)
            except NotFound:
                made |= self._make(name)
        return made

    def _make(self, namespace: str) -> bool:
        if not self.accepts_content(namespace):
            return False
        try:
            self.writer.create("serviceaccounts", namespace, default_account_object(namespace))
        except Conflict:
            return False  # made meanwhile
        return True
