"""The resourcequota controller of kube-controller-manager (pkg/controller/resourcequota): every ResourceQuota's
status — ``hard`` its spec's, ``used`` counted from the objects of its namespace (server/registry/quota.py says
what counts).

A quota is counted in full when it is new or its spec changes, and all of them every ``RESYNC_SECONDS``
(``--resource-quota-sync-period``); in between, each change of an object a quota counts moves its count by what
that object used before and uses now (``quota_tally``), so a create in a namespace of thousands of objects costs
one object's look, not a recount. The quota's own status changes are not looked at, as upstream ignores them.

When the status is written, as upstream: after a full count, and when an object's use went down or changed (it
was deleted, a pod finished, a Service changed type) — the count then replaces ``used``. A new object is charged
by the ResourceQuota admission before it is stored, so the count of the objects stored so far is below ``used``
while creates are in flight; it is not written back then (that would undo the charges of those creates). Only
where it counts more than ``used`` — the objects the controllers make, which no admission charged — is ``used``
raised to it."""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import ClassVar

from dralloc.api.quantity import Quantity
from dralloc.server.controllers.quota_tally import QuotaTally
from dralloc.server.controllers.snapshot import Mirror
from dralloc.server.controllers.writes import Writer
from dralloc.server.registry.kinds import CORE, GROUP_RESOURCES
from dralloc.server.registry.quota import (
    DEVICES_SUFFIX,
    LEGACY_COUNTS,
    decode_quota,
    enforced,
)
from dralloc.server.registry.quota_charges import usage_of
from dralloc.server.types import Obj
from dralloc.store import Change, NotFound
from dralloc.store.cache import cached

RESYNC_SECONDS = 300.0  # kube-controller-manager's --resource-quota-sync-period default

_POD_NAMES = ("pods", "cpu", "memory", "ephemeral-storage")
_SERVED = {(r.name, ""): r for r in CORE.values()} | {
    (r.name, group): r for group, table in GROUP_RESOURCES.items() for r in table.values() if r.stored_as is None}
_GROUP_OF = {resource: group for resource, group in _SERVED}
QuotaKey = tuple[str, str]  # (namespace, name)


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
class _Counted:
    """A quota as it was counted: the spec the count is for, and the count."""

    uid: str
    spec: str  # the stored spec's JSON: a change of it counts the quota again
    hard: dict[str, str]
    resources: frozenset[str]  # the resource names whose objects it counts
    tally: QuotaTally


def _raised(charged: dict[str, str], counted: dict[str, str]) -> dict[str, str] | None:
    """``used`` with each name at least what was counted (None when nothing was counted beyond the charges)."""
    before = usage_of(charged)
    out, raised = {}, False
    for name, text in counted.items():
        if name not in before or Quantity(text) > before[name]:
            out[name], raised = text, True
        else:
            out[name] = str(charged[name])
    return out if raised else None


@dataclass
class ResourceQuotaController:
    NOTED: ClassVar[frozenset[str] | None] = None  # (every resource but events)
    writer: Writer
    everything: bool = True
    next_due: float | None = None  # the next full count (seconds since the epoch), while there are quotas
    _counted: dict[QuotaKey, _Counted] = field(default_factory=dict)
    _by_namespace: dict[str, list[QuotaKey]] = field(default_factory=dict)
    _quotas_changed: set[str] = field(default_factory=set)  # namespaces whose quotas were written
    _objects_changed: set[tuple[str, str, str]] = field(default_factory=set)  # (resource, namespace, name)

    def notes(self, changes: Sequence[Change]) -> None:
        """Take in changes of one resource: a quota's, or an object's that a quota of its namespace counts."""
        resource = changes[0].resource
        if resource == "resourcequotas":
            self._quotas_changed.update([c.namespace for c in changes])
        elif resource != "events" and self._by_namespace:
            by_namespace = self._by_namespace
            self._objects_changed.update([(resource, c.namespace, c.name) for c in changes
                                          if c.namespace in by_namespace])

    @property
    def due(self) -> bool:
        return self.everything or bool(self._quotas_changed) or bool(self._objects_changed) or \
            (self.next_due is not None and time.time() >= self.next_due)

    def cycle(self, mirror: Mirror | None = None) -> bool:
        """Count what changed since the last pass; True when a status was written. ``mirror``: the controllers'
        mirror, current with the changes taken in (the objects of the resources it holds are read there, not
        from the store)."""
        quotas = cached(self.writer.store, "resourcequotas").objects()
        touched: set[QuotaKey] = set()  # counted again, or an object's use went down or changed: written as counted
        raised: set[QuotaKey] = set()  # a new object's use: written only where the count exceeds status.used
        if self.everything or (self.next_due is not None and time.time() >= self.next_due):
            self.everything = False
            self._counted, self._quotas_changed = {}, set()
            touched |= self._count_again(quotas, {key[0] for key in quotas})
        elif self._quotas_changed:
            namespaces, self._quotas_changed = self._quotas_changed, set()
            touched |= self._count_again(quotas, namespaces)
        objects, self._objects_changed = self._objects_changed, set()
        for resource, namespace, name in sorted(objects):
            counting = [key for key in self._by_namespace.get(namespace, ())
                        if resource in self._counted[key].resources]
            if not counting:
                continue
            obj: Obj | None
            if mirror is not None and mirror.synced and mirror.holds(resource):
                obj = mirror.peek(resource, (namespace, name))
            else:
                try:
                    obj = self.writer.store.get(resource, namespace, name)
                except (KeyError, NotFound):
                    obj = None
            for key in counting:
                how = self._counted[key].tally.take((resource, _GROUP_OF.get(resource, ""), name), obj)
                if how:
                    (raised if how == "new" else touched).add(key)
        self._index()
        wrote = False
        for key in sorted(touched | raised):
            stored, counted = quotas.get(key), self._counted.get(key)
            if stored is not None and counted is not None:
                wrote |= self._write_status(stored, counted, only_raise=key not in touched)
        return wrote

    def _count_again(self, quotas: dict[QuotaKey, Obj], namespaces: set[str]) -> set[QuotaKey]:
        """Bring the counts of the quotas of ``namespaces`` in line with their specs: a new quota, or one whose
        spec changed, is counted in full; a deleted one is dropped. The quotas counted again."""
        counted = set()
        for key in [k for k in self._counted if k[0] in namespaces and k not in quotas]:
            del self._counted[key]
        for key, stored in sorted(quotas.items()):
            if key[0] not in namespaces:
                continue
            meta, spec = stored.get("metadata") or {}, stored.get("spec") or {}
            text = json.dumps(spec, sort_keys=True)
            known = self._counted.get(key)
            if known is not None and known.uid == meta.get("uid") and known.spec == text:
                continue
            fresh = self._count(stored, text)
            if fresh is None:
                self._counted.pop(key, None)
                continue
            self._counted[key] = fresh
            counted.add(key)
        return counted

    def _count(self, stored: Obj, spec_text: str) -> _Counted | None:
        quota = decode_quota(stored)
        if quota is None:
            return None
        meta = stored.get("metadata") or {}
        namespace = str(meta.get("namespace"))
        hard = dict((stored.get("spec") or {}).get("hard") or {})
        tally = QuotaTally(quota, frozenset(hard))
        resources = sorted(resources_for(set(hard))) if enforced(quota) else []
        for resource, group in resources:
            try:
                listed, _ = self.writer.store.list(resource, namespace)
            except (KeyError, NotFound):
                continue
            for obj in listed:
                tally.take((resource, group, str((obj.get("metadata") or {}).get("name"))), obj)
        return _Counted(str(meta.get("uid")), spec_text, hard, frozenset(r for r, _ in resources), tally)

    def _index(self) -> None:
        by_namespace: dict[str, list[QuotaKey]] = {}
        for key in sorted(self._counted):
            by_namespace.setdefault(key[0], []).append(key)
        self._by_namespace = by_namespace
        if not by_namespace:
            self.next_due = None
        elif self.next_due is None or time.time() >= self.next_due:
            self.next_due = time.time() + RESYNC_SECONDS

    def _write_status(self, stored: Obj, counted: _Counted, only_raise: bool) -> bool:
        hard = counted.hard
        used: dict[str, str] | None = counted.tally.used()
        if only_raise and used is not None:
            used = _raised(((stored.get("status") or {}).get("used")) or {}, used)
        if used is None:
            return False
        status = {"hard": hard, "used": used}
        if stored.get("status") == status:
            return False
        meta = stored.get("metadata") or {}
        namespace = str(meta.get("namespace"))

        def mutate(current: Obj) -> Obj | None:
            if (current.get("spec") or {}).get("hard") != hard:
                self._quotas_changed.add(namespace)  # changed meanwhile: counted again in the next pass
                return None
            return {**current, "status": status}

        written = self.writer.update("resourcequotas", namespace, str(meta.get("name")), mutate, uid=meta.get("uid"))
        return written is not None and written.get("status") == status
