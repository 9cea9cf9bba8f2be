"""The resourcequota controller of kube-controller-manager (pkg/controller/resourcequota): every ResourceQuota's
status — ``hard`` its spec's, ``used`` counted from the objects of its namespace (server/registry/quota.py says
what counts) — written again whenever something in a namespace with quotas changed."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import ClassVar

from dralloc.server.controllers.writes import Writer
from dralloc.server.registry.kinds import CORE, GROUP_RESOURCES
from dralloc.server.registry.quota import (
    DEVICES_SUFFIX,
    LEGACY_COUNTS,
    decode_quota,
    enforced,
    namespace_usage,
)
from dralloc.server.types import Obj
from dralloc.store import Change, NotFound
from dralloc.store.cache import cached

_POD_NAMES = ("pods", "cpu", "memory", "ephemeral-storage")
_SERVED = {(r.name, ""): r for r in CORE.values()} | {
    (r.name, group): r for group, table in GROUP_RESOURCES.items() for r in table.values() if r.stored_as is None}


def resources_for(names: set[str]) -> set[tuple[str, str]]:
    """The (resource, group) whose objects a quota of these resource names counts."""
    out: set[tuple[str, str]] = set()
    for name in names:
        if name in _POD_NAMES or name.startswith(("requests.", "limits.")):
            out.add(("pods", ""))
        elif name.endswith(DEVICES_SUFFIX):
            out.add(("resourceclaims", "resource.k8s.io"))
        elif name.startswith("count/"):
            resource, _, group = name.removeprefix("count/").partition(".")
            out.add((resource, group))
        elif name in LEGACY_COUNTS:
            out.add((LEGACY_COUNTS[name], ""))
        elif name.startswith("services."):
            out.add(("services", ""))
    return {key for key in out if key in _SERVED}


@dataclass
class ResourceQuotaController:
    NOTED: ClassVar[frozenset[str] | None] = None  # (every resource but events)
    writer: Writer
    dirty: set[str] = field(default_factory=set)
    everything: bool = True

    def notes(self, changes: Sequence[Change]) -> None:
        """Take in changes of one resource (their namespaces' quotas are counted again; events count for none)."""
        if changes[0].resource != "events":
            self.dirty.update([c.namespace for c in changes])

    @property
    def due(self) -> bool:
        return self.everything or bool(self.dirty)

    def cycle(self) -> bool:
        """Recount the quotas of the namespaces where something changed; True when a status was written."""
        everything, namespaces = self.everything, self.dirty
        self.everything, self.dirty = False, set()
        quotas = cached(self.writer.store, "resourcequotas").objects()
        wrote = False
        for _, stored in sorted(quotas.items()):
            namespace = str((stored.get("metadata") or {}).get("namespace"))
            if everything or namespace in namespaces:
                wrote |= self._sync(stored)
        return wrote

    def _sync(self, stored: Obj) -> bool:
        quota = decode_quota(stored)
        if quota is None:
            return False
        meta = stored.get("metadata") or {}
        namespace = str(meta.get("namespace"))
        hard = dict((stored.get("spec") or {}).get("hard") or {})
        objects = []
        if enforced(quota):
            for resource, group in sorted(resources_for(set(hard))):
                try:
                    listed, _ = self.writer.store.list(resource, namespace)
                except (KeyError, NotFound):
                    continue
                objects += [(resource, group, obj) for obj in listed]
        used = {name: str(value) for name, value in sorted(namespace_usage(quota, objects).items())}
        status = {"hard": hard, "used": used}
        if stored.get("status") == status:
            return False

        def mutate(current: Obj) -> Obj | None:
            if (current.get("spec") or {}).get("hard") != hard:
                self.dirty.add(namespace)  # changed meanwhile: counted again in the next pass
                return None
            return {**current, "status": status}

        written = self.writer.update("resourcequotas", namespace, str(meta.get("name")), mutate, uid=meta.get("uid"))
        return written is not None and written.get("status") == status
