"""The custom resources a server serves: one resource table row per established CustomResourceDefinition, in its
group, with its served versions (kube-apiserver's priority order: GA, beta, alpha, newest first), short names,
categories and subresources, and the strategy its CRD makes (``custom_resources``). Rows appear when a CRD is
created and go when it is deleted; a CRD whose plural another served resource already uses is not served, since
objects are stored by plural."""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Mapping
from typing import Any

from dralloc.server.crds.custom_resources import CustomResourceStrategy
from dralloc.server.crds.definitions import RESOURCE, is_established
from dralloc.server.registry.kinds import CORE, GATED_RESOURCES, GROUP_RESOURCES, Resource
from dralloc.store import SQLStore

Groups = Mapping[str, dict[str, Resource]]
_KUBE_VERSION = re.compile(r"^v(\d+)(?:(alpha|beta)(\d+))?$")
# How long a table is used before the CRDs are read again when no write of this server changed them (a CRD
# written by another server sharing the database)
REFRESH_SECONDS = 1.0


def version_priority(name: str) -> tuple[int, int, int, str]:
    """A sort key putting versions in kube-apiserver's order: v2, v1, v1beta2, v1beta1, v1alpha1, then others
    alphabetically."""
    match = _KUBE_VERSION.match(name)
    if match is None:
        return (3, 0, 0, name)
    major, level, minor = int(match.group(1)), match.group(2), int(match.group(3) or 0)
    rank = {None: 0, "beta": 1, "alpha": 2}[level]
    return (rank, -major, -minor, name)


def resource_of(crd: dict[str, Any]) -> Resource | None:
    """The row of an established CRD with at least one served version (None otherwise)."""
    if not is_established(crd) or (crd.get("metadata") or {}).get("deletionTimestamp"):
        return None
    spec = crd.get("spec") or {}
    # served under the names the naming controller accepted (the spec's until it has)
    names = (crd.get("status") or {}).get("acceptedNames") or spec.get("names") or {}
    served = [v for v in spec.get("versions") or () if isinstance(v, dict) and v.get("served")]
    if not served or not names.get("plural") or not names.get("kind"):
        return None
    served.sort(key=lambda v: version_priority(str(v.get("name", ""))))
    status = any((v.get("subresources") or {}).get("status") is not None for v in served)
    scale = any((v.get("subresources") or {}).get("scale") is not None for v in served)
    return Resource(str(names["plural"]), str(names["kind"]), spec.get("scope") == "Namespaced",
                    group=str(spec.get("group", "")), versions=tuple(str(v["name"]) for v in served),
                    status=status, short_names=tuple(names.get("shortNames") or ()),
                    categories=tuple(names.get("categories") or ()), subresources=("scale",) if scale else (),
                    singular_name=str(names.get("singular") or ""), list_kind_name=str(names.get("listKind") or ""),
                    strategy=CustomResourceStrategy(str(spec.get("group", "")), str(names["kind"]), served))


RowOf = Callable[[dict[str, Any]], Resource | None]


def custom_groups(crds: list[dict[str, Any]], static: Groups,
                  row_of: RowOf = resource_of) -> dict[str, dict[str, Resource]]:
    """The groups of the custom resources (a group the server serves itself gets none: kube-apiserver's own
    groups are not extended by CRDs here); ``row_of`` makes a CRD's row."""
    taken = {r.name for r in CORE.values()} | {r.name for table in static.values() for r in table.values()}
    out: dict[str, dict[str, Resource]] = {}
    for crd in sorted(crds, key=lambda c: str((c.get("metadata") or {}).get("name", ""))):
        row = row_of(crd)
        if row is None or row.group in static or row.name in taken:
            continue
        taken.add(row.name)
        out.setdefault(row.group, {})[row.name] = row
    return out


class CustomResources:
    """The served groups, the static ones and those of the stored CRDs, read again after a CRD write (or every
    :data:`REFRESH_SECONDS`, for writes of other servers sharing the database)."""

    def __init__(self, store: SQLStore, static: Groups) -> None:
        self.store = store
        self.static = static
        self._key: tuple[int, int] | None = None
        self._groups: Groups = static
        self._custom: dict[str, dict[str, Resource]] = {}
        # each CRD's row as of its resourceVersion: a CRD written makes its own row again, not every other's
        self._rows: dict[str, tuple[str, Resource | None]] = {}

    def _row(self, crd: dict[str, Any]) -> Resource | None:
        meta = crd.get("metadata") or {}
        name, version = str(meta.get("name", "")), str(meta.get("resourceVersion", ""))
        known = self._rows.get(name)
        if known is None or known[0] != version:
            known = self._rows[name] = (version, resource_of(crd))
        return known[1]

    def groups(self) -> Groups:
        key = (self.store.written(RESOURCE), int(time.monotonic() / REFRESH_SECONDS))
        if key != self._key:
            crds, _ = self.store.list(RESOURCE)
            names = {str((c.get("metadata") or {}).get("name", "")) for c in crds}
            for gone in [n for n in self._rows if n not in names]:
                del self._rows[gone]
            self._custom = custom_groups(crds, self.static, self._row)
            self._groups = {**self.static, **self._custom} if self._custom else self.static
            self._key = key
        return self._groups

    def custom(self) -> dict[str, dict[str, Resource]]:
        """Only the custom resources' groups."""
        self.groups()
        return self._custom


def namespaced_custom_resources(store: SQLStore) -> dict[str, str]:
    """The namespaced custom resources of the stored CRDs: plural → ``<plural>.<group>`` (what the namespace
    controller deletes in a namespace being deleted, and how it names them)."""
    crds, _ = store.list(RESOURCE)
    static = {**GROUP_RESOURCES, **{r.group: {} for r in GATED_RESOURCES.values()}}
    return {r.name: r.group_resource for table in custom_groups(crds, static).values() for r in table.values()
            if r.namespaced}
