"""One ResourceQuota's usage, kept up to date object by object: each counted object's share is remembered, so a
change of one object moves the totals by the difference instead of a recount of the namespace.

The text of a total is the one a recount in the store's order gives (server/registry/quota.py
``namespace_usage``): its value is the exact sum, and its format (``1Gi`` or ``1073741824``) the format of the
first object in (resource, name) order whose share is not zero, as quantities keep the format of the first
non-zero addend."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from dralloc.api.core_v1_limits import ResourceQuota
from dralloc.api.quantity import Quantity
from dralloc.server.registry.quota import ZERO, Usage, in_scope, object_usage
from dralloc.server.types import Obj

ObjectKey = tuple[str, str, str]  # (resource, group, name): the order a recount adds the objects in


@dataclass
class QuotaTally:
    quota: ResourceQuota
    names: frozenset[str]  # the quota's hard names: the only ones counted
    shares: dict[ObjectKey, Usage] = field(default_factory=dict)  # each object's non-empty share
    totals: dict[str, Quantity] = field(default_factory=dict)
    # name -> how many shares of each format are not zero (one format: the total's format, whatever the order)
    formats: dict[str, Counter[str]] = field(default_factory=dict)

    def take(self, key: ObjectKey, obj: Obj | None) -> str:
        """The object at ``key`` is now ``obj`` (None: gone). How its share changed: "" (not), "new" (it had
        none), "changed" (it had another, or it is gone)."""
        resource = key[0]
        share: Usage = {}
        if obj is not None and in_scope(self.quota, resource, obj):
            share = {name: value for name, value in object_usage(resource, key[1], obj).items() if name in self.names}
        old = self.shares.pop(key, None)
        if old:
            for name, value in old.items():
                self.totals[name] = self.totals[name] - value
                if value:
                    self.formats[name][value.format] -= 1
        if share:
            self.shares[key] = share
            for name, value in share.items():
                self.totals[name] = self.totals.get(name, ZERO) + value
                if value:
                    self.formats.setdefault(name, Counter())[value.format] += 1
        if old == share or (not old and not share):
            return ""
        return "changed" if old else "new"

    def used(self) -> dict[str, str]:
        """status.used: every hard name's total, by name."""
        return {name: self._text(name) for name in sorted(self.names)}

    def _text(self, name: str) -> str:
        total = self.totals.get(name, ZERO)
        if not total:
            return "0"
        formats = [f for f, count in self.formats[name].items() if count]
        if len(formats) == 1:
            return str(Quantity(total, format=formats[0]))
        first = min(key for key, share in self.shares.items() if share.get(name))  # (formats mixed: rare)
        return str(Quantity(total, format=self.shares[first][name].format))
