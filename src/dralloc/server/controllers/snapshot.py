"""What the controllers read: a mirror of the resources they look at (an informer's store, kept up to date
from the store's event log, so a pass reads only what changed since the last one), and per pass a snapshot of
it (sorted lists, decoded into dralloc's models on demand; decoded objects are kept by resourceVersion, so a
pass over a thousand unchanged pods decodes none of them)."""

from __future__ import annotations

from bisect import bisect_left, insort
from collections.abc import Iterable
from functools import partial
from typing import Any, cast

import msgspec

from dralloc.api.codec import decode
from dralloc.api.resource_v1 import ResourceClaimTemplate
from dralloc.errors import DecodeError
from dralloc.store import Change, SQLStore

# The workload objects and Services are what default topology spreading reads (their selectors), Namespaces
# what pod affinity's namespaceSelector reads (their labels).
WORKLOAD_SELECTORS = ("services", "replicationcontrollers", "replicasets", "statefulsets")
# PodGroups (scheduling.k8s.io/v1alpha2, served with GenericWorkload): what a pod group cycle schedules by.
# Deployments, DaemonSets, Jobs and CronJobs: what the workload controllers (server/controllers/workloads.py)
# sync, and the ControllerRevisions of StatefulSets and DaemonSets.
# The storage kinds: what the volume controllers bind and the scheduler's volume plugins read.
STORAGE_INPUTS = ("persistentvolumeclaims", "persistentvolumes", "storageclasses", "csinodes", "csidrivers",
                  "csistoragecapacities")
# PodDisruptionBudgets: what the disruption controller keeps the status of, and preemption respects.
RESOURCES = ("pods", "nodes", "resourceslices", "deviceclasses", "resourceclaims", "resourceclaimtemplates",
             "devicetaintrules", "namespaces", *WORKLOAD_SELECTORS, "podgroups", "deployments", "daemonsets", "jobs",
             "controllerrevisions", "cronjobs", *STORAGE_INPUTS, "poddisruptionbudgets")

Obj = dict[str, Any]
Key = tuple[str, str]  # (namespace, name); namespace "" for cluster-scoped objects
_decode_json = msgspec.json.Decoder(dict[str, Any]).decode


class _Metadata(msgspec.Struct):
    labels: dict[str, Any] | None = None


class _Labelled(msgspec.Struct):
    metadata: _Metadata | None = None


# an object's labels read from its text alone (the rest skipped, not built)
_decode_labels = msgspec.json.Decoder(_Labelled).decode
_ALLOCATED = " allocated claims"  # the mirror's sorted lists of these, beside the resources' own
_TERMINATING = " terminating pods"
_UNBOUND = " unbound pods"
_TEMPLATE_FIELD = '"resourceClaimTemplateName"'  # a pod's claim made from a template
VOLUME_FIELDS = ('"persistentVolumeClaim"', '"ephemeral"')  # a pod's volume that uses a PVC


def _uses_claims(pod: Obj) -> bool:
    """Whether a parsed pod has a volume on a PersistentVolumeClaim (named or ephemeral)."""
    volumes = (pod.get("spec") or {}).get("volumes")
    return isinstance(volumes, list) and any(
        isinstance(v, dict) and ("persistentVolumeClaim" in v or "ephemeral" in v) for v in volumes)


def _allocated(claim: Obj | None) -> bool:
    return claim is not None and bool((claim.get("status") or {}).get("allocation"))


def _names_template(pod: Obj) -> bool:
    """Whether a pod has a spec.resourceClaims entry naming a template (what :data:`_TEMPLATE_FIELD` finds in
    its text, for a pod already parsed)."""
    entries = (pod.get("spec") or {}).get("resourceClaims")
    return isinstance(entries, list) and any(isinstance(e, dict) and _TEMPLATE_FIELD[1:-1] in e for e in entries)


def _pods_named(claim: Obj | None, namespace: str) -> set[Key]:
    """The pods a claim names: those it is reserved for and the one that owns it (both in its namespace)."""
    if claim is None:
        return set()
    refs = [r for r in (claim.get("status") or {}).get("reservedFor") or []
            if isinstance(r, dict) and r.get("resource") == "pods" and not r.get("apiGroup")]
    refs += [r for r in (claim.get("metadata") or {}).get("ownerReferences") or []
             if isinstance(r, dict) and r.get("kind") == "Pod" and r.get("apiVersion") == "v1"]
    return {(namespace, str(r.get("name") or "")) for r in refs}


class DecodeCache:
    """Typed objects by (resource, namespace, name) while the resourceVersion is the same."""

    def __init__(self) -> None:
        self._items: dict[tuple[str, str, str], tuple[str, Any]] = {}

    def typed(self, resource: str, obj: Obj) -> Any:
        meta = obj.get("metadata") or {}
        key = (resource, meta.get("namespace") or "", meta.get("name") or "")
        rv = str(meta.get("resourceVersion"))
        hit = self._items.get(key)
        if hit is not None and hit[0] == rv:
            return hit[1]
        try:
            value = decode(obj)
        except DecodeError:
            value = None  # an object dralloc cannot read takes no part (as an informer that fails to decode)
        self._items[key] = (rv, value)
        return value

    def forget(self, resource: str, key: Key) -> None:
        self._items.pop((resource, *key), None)

    def clear(self) -> None:
        self._items.clear()


class Mirror:
    """The objects of :data:`RESOURCES` as stored, by key. Filled by one list of each resource (at the first
    pass, and again when the event log no longer reaches back far enough), then kept current by
    :meth:`apply` for every event after that. An object's text is parsed when a controller first reads it
    (a burst of ResourceSlices with no pod waiting costs no parse). Objects are shared with every snapshot:
    read-only.

    It also notes what changed between two calls of :meth:`take_changes`, so that a controller whose inputs
    did not change can skip its look at every object."""

    def __init__(self, store: SQLStore) -> None:
        self.store = store
        self._items: dict[str, dict[Key, Obj | str]] = {r: {} for r in RESOURCES}  # str: not parsed yet
        self._unparsed: dict[str, set[Key]] = {r: set() for r in RESOURCES}  # the keys whose value is a str
        self._keys: dict[str, list[Key]] = {}  # a resource's keys in order, kept as objects come and go
        self.cache = DecodeCache()
        self.synced = False
        self.allocated: set[Key] = set()  # the claims with an allocation (the taint controller's only interest)
        self.terminating: set[Key] = set()  # the pods with a deletionTimestamp (pod termination's interest)
        self.unbound: set[Key] = set()  # the pods without a node (the scheduler's candidates among them)
        # the pods whose text names a claim template (maybe in a label): only those may need claims made, so a
        # pass over new pods without one parses none of them
        self.templated: set[Key] = set()
        self.tainted_slices: set[Key] = set()  # slices whose text names a NoExecute taint (maybe in a label)
        # the pods whose text names a PVC-backed volume (maybe in a label): the volume controllers look only at
        # those, so a pass over new pods without one parses none of them
        self.volume_users: set[Key] = set()
        self._claims_of_pod: dict[Key, set[Key]] = {}  # pod -> the claims reserved for it or owned by it
        self._pods_of_claim: dict[Key, set[Key]] = {}
        self._sorted: dict[str, list[Obj]] = {}
        self._changed: dict[str, set[Key]] = {}
        self._allocations_changed = False
        self._everything_changed = True

    def relist(self) -> None:
        """Replace every resource by what the store holds now. Events already applied or still to come may be
        older than the list: applying them in order still ends at each object's latest state."""
        for resource in RESOURCES:
            rows, _ = self.store.list_raw(resource)
            objs = map(_decode_json, rows)
            self._items[resource] = {((o.get("metadata") or {}).get("namespace") or "",
                                      (o.get("metadata") or {}).get("name") or ""): o for o in objs}
            self._unparsed[resource] = set()
        self._keys.clear()
        self.allocated = {k for k, c in self.items("resourceclaims").items() if _allocated(c)}
        self._claims_of_pod, self._pods_of_claim = {}, {}
        for k, c in self.items("resourceclaims").items():
            self._index_claim(k, _pods_named(c, k[0]))
        self.tainted_slices = {k for k, s in self.items("resourceslices").items() if "NoExecute" in str(s)}
        self.terminating = {k for k, p in self.items("pods").items() if (p.get("metadata") or {}).get("deletionTimestamp")}
        self.unbound = {k for k, p in self.items("pods").items() if not (p.get("spec") or {}).get("nodeName")}
        self.templated = {k for k, p in self.items("pods").items() if _names_template(p)}
        self.volume_users = {k for k, p in self.items("pods").items() if _uses_claims(p)}
        self.cache.clear()
        self._sorted.clear()
        self.synced = True
        self._everything_changed = True

    def apply_all(self, changes: list[Change]) -> None:
        """Events of the log in order; of several changes to one object only the last one counts."""
        last: dict[tuple[str, str, str], Change] = {}
        mirrored = self._items
        for change in changes:
            if change.resource in mirrored:
                last[(change.resource, change.namespace, change.name)] = change
        # (objects are independent of each other here: each resource's changes are taken in one go)
        runs: dict[str, list[Change]] = {}
        for change in last.values():
            run = runs.get(change.resource)
            if run is None:
                run = runs[change.resource] = []
            run.append(change)
        for resource, run in runs.items():
            self._apply_run(resource, run)

    def apply(self, change: Change) -> None:
        """One event of the log (its object's text is in ``change.data`` for the mirrored resources)."""
        if change.resource in self._items:
            self._apply_run(change.resource, [change])

    def _apply_run(self, resource: str, changes: list[Change]) -> None:
        """Events of one resource, at most one per object, in the log's order."""
        if not self.synced:
            return
        items = self._items[resource]
        unparsed, keys = self._unparsed[resource], self._keys.get(resource)
        self._sorted.pop(resource, None)
        changed = self._changed.get(resource)
        if changed is None:
            changed = self._changed[resource] = set()
        pods = resource == "pods"
        if pods:
            terminating, unbound_pods, templated, volume_users = \
                self.terminating, self.unbound, self.templated, self.volume_users
            unbound_listed = False  # whether the sorted list of unbound pods must be made anew
        for change in changes:
            key = (change.namespace, change.name)
            data = change.data
            if change.type == "DELETED":
                if items.pop(key, None) is not None and keys is not None:
                    del keys[bisect_left(keys, key)]
                unparsed.discard(key)
                self.cache.forget(resource, key)
                data = None
            elif data is None:  # read without its object: list again before the next use
                self.synced = False
                return
            else:
                if keys is not None and key not in items:
                    insort(keys, key)
                items[key] = data
                unparsed.add(key)
            changed.add(key)
            # The subsets the controllers look at; only a text that names the field can have it (the others stay
            # unparsed).
            if pods:
                # (change.deleting: the feed found '"deletionTimestamp"' in the text already)
                deleting = data is not None and change.deleting \
                    and bool(((self.get("pods", key) or {}).get("metadata") or {}).get("deletionTimestamp"))
                if deleting or key in terminating:
                    self._mark(terminating, _TERMINATING, key, deleting)
                unbound = data is not None and ('"nodeName"' not in data or not (
                    (self.get("pods", key) or {}).get("spec") or {}).get("nodeName"))
                if unbound:  # (as _mark, the sorted list made anew once for the run)
                    unbound_pods.add(key)
                    unbound_listed = True
                elif key in unbound_pods:
                    unbound_pods.discard(key)
                    unbound_listed = True
                if data is not None and _TEMPLATE_FIELD in data:
                    templated.add(key)
                else:
                    templated.discard(key)
                if data is not None and (VOLUME_FIELDS[0] in data or VOLUME_FIELDS[1] in data):
                    volume_users.add(key)
                else:
                    volume_users.discard(key)
            elif resource == "resourceslices":
                if data is not None and "NoExecute" in data:
                    self.tainted_slices.add(key)
                else:
                    self.tainted_slices.discard(key)
            elif resource == "resourceclaims":
                names_pods = data is not None and ('"reservedFor"' in data or '"ownerReferences"' in data)
                self._index_claim(key, _pods_named(self.get(resource, key), key[0]) if names_pods else set())
                allocated = data is not None and '"allocation"' in data and _allocated(self.get(resource, key))
                if self._mark(self.allocated, _ALLOCATED, key, allocated):
                    self._allocations_changed = True
        if pods and unbound_listed:
            self._sorted.pop(_UNBOUND, None)

    def _mark(self, members: set[Key], listed: str, key: Key, member: bool) -> bool:
        """Keep ``key`` in ``members`` or out of it; True when it was or is in (its sorted list is made anew)."""
        if not member and key not in members:
            return False
        self._sorted.pop(listed, None)
        if member:
            members.add(key)
        else:
            members.discard(key)
        return True

    def _index_claim(self, claim: Key, pods: set[Key]) -> None:
        for pod in self._pods_of_claim.pop(claim, set()) - pods:
            claims = self._claims_of_pod.get(pod)
            if claims is not None:
                claims.discard(claim)
                if not claims:
                    del self._claims_of_pod[pod]
        if pods:
            self._pods_of_claim[claim] = pods
            for pod in pods:
                self._claims_of_pod.setdefault(pod, set()).add(claim)

    def claims_of_pods(self, pods: Iterable[Key]) -> set[Key]:
        """The claims reserved for or owned by any of these pods (by namespace and name)."""
        out: set[Key] = set()
        claims_of_pod = self._claims_of_pod
        for pod in claims_of_pod.keys() & pods:  # (most pods that change have none: not looked up one by one)
            out |= claims_of_pod[pod]
        return out

    def has_all(self, resource: str, keys: Iterable[Key]) -> bool:
        """Whether every one of these objects is there (none parsed)."""
        return self._items[resource].keys() >= set(keys)

    def any_of(self, resources: Iterable[str]) -> bool:
        """Whether there is any object of these resources (none parsed)."""
        items = self._items
        return any([items[r] for r in resources])

    def size(self, resource: str) -> int:
        """How many objects of ``resource`` there are (none parsed)."""
        return len(self._items[resource])

    def holds(self, resource: str) -> bool:
        return resource in self._items

    def has(self, resource: str, key: Key) -> bool:
        """Whether the object is there (without parsing its text)."""
        return key in self._items[resource]

    def mentions(self, resource: str, key: Key, text: str) -> bool:
        """Whether the object is there and ``text`` is in its JSON (not parsed to find out; an object parsed
        already is looked at as its JSON would be: the text among its keys or string values)."""
        value = self._items[resource].get(key)
        if value is None:
            return False
        if isinstance(value, str):
            return text in value
        return text in msgspec.json.encode(value).decode()

    def get(self, resource: str, key: Key) -> Obj | None:
        items = self._items[resource]
        value = items.get(key)
        if isinstance(value, str):
            value = items[key] = _decode_json(value)
            self._unparsed[resource].discard(key)
        return value

    def labels(self, resource: str, key: Key) -> dict[str, Any] | None:
        """The object's labels ({} when it has none), None when it is not there; an object not parsed yet stays
        so (its labels read from its text alone: a controller that selects by label parses only the objects
        it selects)."""
        value = self._items[resource].get(key)
        if value is None:
            return None
        if isinstance(value, str):
            try:
                meta = _decode_labels(value).metadata
            except msgspec.ValidationError:  # (a metadata or labels of another type: read as a whole)
                value = self.get(resource, key)
            else:
                return (meta.labels if meta is not None else None) or {}
        labels = ((value or {}).get("metadata") or {}).get("labels")
        return labels if isinstance(labels, dict) else {}

    def peek(self, resource: str, key: Key) -> Obj | None:
        """The object (None when it is not there), parsed for this look only when not parsed yet: for a
        controller that reads each new object once (thousands of pods kept parsed would weigh on the
        collector for nothing). Read-only."""
        value = self._items[resource].get(key)
        return _decode_json(value) if isinstance(value, str) else value

    def keys_in(self, resource: str, namespace: str) -> list[Key]:
        """The keys of ``namespace``'s objects of one resource (none parsed)."""
        return [key for key in self._items[resource] if key[0] == namespace]

    def items(self, resource: str) -> dict[Key, Obj]:
        """Every object of one resource by key."""
        items = self._items[resource]
        unparsed = self._unparsed[resource]
        if unparsed:  # (only the objects not parsed yet are looked at: thousands of pods, a few new ones)
            for key in unparsed:
                value = items[key]
                if isinstance(value, str):
                    items[key] = _decode_json(value)  # (a value replaced, the dict's size unchanged)
            unparsed.clear()
        return cast(dict[Key, Obj], items)

    def listed(self, resource: str) -> list[Obj]:
        """The objects of one resource in (namespace, name) order, as the store lists them (kept until the
        resource changes; never modified in place, so a snapshot's list stays as it was)."""
        objs = self._sorted.get(resource)
        if objs is None:
            items = self.items(resource)
            keys = self._keys.get(resource)
            if keys is None:
                keys = self._keys[resource] = sorted(items)
            objs = self._sorted[resource] = list(map(items.__getitem__, keys))
        return objs

    def allocated_claims(self) -> list[Obj]:
        """The claims with an allocation, in (namespace, name) order (kept as :meth:`listed`)."""
        return self._subset(_ALLOCATED, "resourceclaims", self.allocated)

    def terminating_pods(self) -> list[Obj]:
        """The pods being deleted, in (namespace, name) order (kept as :meth:`listed`)."""
        return self._subset(_TERMINATING, "pods", self.terminating)

    def volume_user_pods(self) -> list[Obj]:
        """The pods that may have a PVC-backed volume, in (namespace, name) order."""
        pods = (self.get("pods", k) for k in sorted(self.volume_users))
        return [p for p in pods if p is not None]

    def unbound_pods(self) -> list[Obj]:
        """The pods without a node, in (namespace, name) order (kept as :meth:`listed`)."""
        return self._subset(_UNBOUND, "pods", self.unbound)

    def _subset(self, name: str, resource: str, keys: set[Key]) -> list[Obj]:
        objs = self._sorted.get(name)
        if objs is None:
            objs = self._sorted[name] = [o for o in map(partial(self.get, resource), sorted(keys)) if o is not None]
        return objs

    def changed_since_taken(self, resource: str) -> bool:
        """Whether ``resource`` changed since the last :meth:`take_changes` (or everything did)."""
        return self._everything_changed or resource in self._changed

    def pending_changes(self) -> dict[str, set[Key]] | None:
        """The keys changed since the last :meth:`take_changes`, by resource (copies); None: everything may
        have (after a relist)."""
        return None if self._everything_changed else {r: set(keys) for r, keys in self._changed.items()}

    def take_changes(self) -> Changes:
        """What changed since the last call (everything, after a relist)."""
        changes = Changes(self._everything_changed, self._changed, self._allocations_changed)
        self._changed, self._allocations_changed, self._everything_changed = {}, False, False
        return changes

    def mark_everything_changed(self) -> None:
        """The next :meth:`take_changes` says that everything changed (a pass failed half-way)."""
        self._everything_changed = True


class Changes:
    """The objects that changed between two passes, by resource; ``everything``: look at every object."""

    def __init__(self, everything: bool, keys: dict[str, set[Key]], allocations: bool) -> None:
        self.everything = everything
        self.keys = keys
        self.allocations = allocations  # a claim was allocated, changed while allocated, or deallocated

    def any(self, *resources: str) -> bool:
        return self.everything or any(r in self.keys for r in resources)


class Snapshot:
    """The mirror as it was when each resource was first asked for in this pass."""

    def __init__(self, mirror: Mirror) -> None:
        self.mirror = mirror
        self.cache = mirror.cache
        self.objects = _Lists(mirror)
        self._templates: dict[tuple[str, str], Obj] | None = None
        self._pods_by_uid: dict[str, Obj] | None = None

    def typed(self, resource: str, objs: list[Obj] | None = None) -> list[Any]:
        out = [self.cache.typed(resource, o) for o in (self.objects[resource] if objs is None else objs)]
        return [o for o in out if o is not None]

    @property
    def pods(self) -> list[Obj]:
        return self.objects["pods"]

    @property
    def claims(self) -> list[Obj]:
        return self.objects["resourceclaims"]

    @property
    def allocated_claims(self) -> list[Obj]:
        return self.objects[_ALLOCATED]

    @property
    def terminating_pods(self) -> list[Obj]:
        return self.objects[_TERMINATING]

    @property
    def unbound_pods(self) -> list[Obj]:
        return self.objects[_UNBOUND]

    def pods_by_uid(self) -> dict[str, Obj]:
        if self._pods_by_uid is None:
            self._pods_by_uid = {str((p.get("metadata") or {}).get("uid")): p for p in self.pods}
        return self._pods_by_uid

    def pods_named_by(self, claims: list[Obj]) -> dict[str, Obj]:
        """By uid, the pods these claims are reserved for or owned by (looked up by name: a pod that went
        and came back under the same name has another uid, as a claim's reference then finds no pod)."""
        out: dict[str, Obj] = {}
        for claim in claims:
            namespace = (claim.get("metadata") or {}).get("namespace") or ""
            for key in _pods_named(claim, namespace):
                pod = self.mirror.get("pods", key)
                if pod is not None:
                    out[str((pod.get("metadata") or {}).get("uid"))] = pod
        return out

    def templates(self) -> dict[tuple[str, str], Obj]:
        if self._templates is None:
            self._templates = dict(self.mirror.items("resourceclaimtemplates"))
        return self._templates

    def template(self, namespace: str, name: str) -> ResourceClaimTemplate | None:
        """The ResourceClaimTemplate ``namespace/name``, typed; None when missing or unreadable."""
        stored = self.templates().get((namespace, name))
        typed = self.cache.typed("resourceclaimtemplates", stored) if stored is not None else None
        return typed if isinstance(typed, ResourceClaimTemplate) else None


class _Lists(dict[str, list[Obj]]):
    def __init__(self, mirror: Mirror) -> None:
        super().__init__()
        self._mirror = mirror

    def __missing__(self, resource: str) -> list[Obj]:
        mirror = self._mirror
        subsets = {_ALLOCATED: mirror.allocated_claims, _TERMINATING: mirror.terminating_pods,
                   _UNBOUND: mirror.unbound_pods}
        objs = self[resource] = subsets[resource]() if resource in subsets else mirror.listed(resource)
        return objs
