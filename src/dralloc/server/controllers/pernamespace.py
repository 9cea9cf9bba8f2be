"""What the controllers that keep one object in every namespace share (the default service account, the root
CA ConfigMap): the namespaces to look at (every one on the first pass, then those a change named), and
whether a namespace may take new content."""

from __future__ import annotations

from dataclasses import dataclass, field

from dralloc.server.controllers.writes import Writer
from dralloc.store import NotFound


@dataclass
class PerNamespace:
    writer: Writer
    todo: set[str] = field(default_factory=set)  # namespaces to look at
    scanned: bool = False  # the first pass looks at every namespace

    @property
    def due(self) -> bool:
        return not self.scanned or bool(self.todo)

    def take_todo(self) -> list[str]:
        """The namespaces to look at now, in order (every namespace on the first call)."""
        if not self.scanned:
            self.scanned = True
            self.todo |= {str((ns.get("metadata") or {}).get("name"))
                          for ns in self.writer.store.list("namespaces")[0]}
        todo, self.todo = sorted(self.todo), set()
        return todo

    def accepts_content(self, namespace: str) -> bool:
        """The namespace exists and is not terminating (a terminating one takes no new content)."""
        try:
            ns = self.writer.store.get("namespaces", "", namespace)
        except NotFound:
            return False
        return not (ns.get("metadata") or {}).get("deletionTimestamp")
