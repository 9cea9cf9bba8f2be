"""The endpoints controllers of kube-controller-manager (pkg/controller/endpointslice and pkg/controller/endpoint):
each Service with a selector gets EndpointSlices (discovery.k8s.io/v1) and an Endpoints object (core/v1) listing
the pods it selects that have an IP, ready or not, kept up to date as pods and the Service change.

* A pod counts when it is in the Service's namespace, its labels match the selector, it has an IP and it is not
  Succeeded nor Failed. In a slice its conditions are ``ready`` (Ready and not terminating, or the Service
  publishes not-ready addresses), ``serving`` (Ready) and ``terminating``; a terminating pod is left out of the
  Endpoints object, and a pod not ready is among its ``notReadyAddresses``.
* Each Service port's target port is resolved against the pod (a named one by its containers' ports; a pod
  without that name lacks that port), and pods with the same resolved ports share a slice (an Endpoints
  subset), in pod name order; a Service selecting no pod still has one empty slice.
* A slice is named after its Service (``<service>-<5 characters>``, derived from the Service's uid and the
  slice's place rather than random, so the same inputs write the same objects and a Service's first slice
  keeps its name as its pods come and go), labelled
  ``kubernetes.io/service-name`` and ``endpointslice.kubernetes.io/managed-by:
  endpointslice-controller.k8s.io`` (with the Service's own labels, and ``service.kubernetes.io/headless`` for
  a headless one), and owned by the Service (the garbage collector removes it with it).
* A Service without a selector has the Endpoints its clients write, which the endpointslicemirroring
  controller mirrors into EndpointSlices (managed by ``endpointslicemirroring-controller.k8s.io``, owned by
  the Endpoints; not those labelled ``endpointslice.kubernetes.io/skip-mirror: "true"``).

Not done: the ``endpoints.kubernetes.io/last-change-trigger-time`` annotation, topology hints, slices of more
than 100 endpoints each, dual-stack Services' second address type.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol

import msgspec

from dralloc.server.controllers.endpoints_index import (
    MANAGED_BY,
    SERVICE_NAME,
    KnownSlices,
    PodsByLabel,
    SelectorKey,
    Selectors,
    known_of,
)
from dralloc.server.controllers.snapshot import Key, Obj, Snapshot
from dralloc.server.controllers.writes import Writer
from dralloc.store import Change, Conflict, NotFound

CONTROLLER = "endpointslice-controller.k8s.io"
MIRRORING = "endpointslicemirroring-controller.k8s.io"
SKIP_MIRROR = "endpointslice.kubernetes.io/skip-mirror"
HEADLESS = "service.kubernetes.io/headless"
ZONE = "topology.kubernetes.io/zone"
_RESERVED = (SERVICE_NAME, MANAGED_BY, HEADLESS)  # not copied from the Service's labels


def is_ready(pod: Obj) -> bool:
    return any(isinstance(c, dict) and c.get("type") == "Ready" and c.get("status") == "True"
               for c in (pod.get("status") or {}).get("conditions") or [])


def pod_ip(pod: Obj) -> str:
    return str((pod.get("status") or {}).get("podIP") or "")


def in_endpoints(pod: Obj) -> bool:
    """ShouldPodBeInEndpoints (terminating pods included, as the EndpointSlice controller asks)."""
    return bool(pod_ip(pod)) and (pod.get("status") or {}).get("phase") not in ("Succeeded", "Failed")


def resolve_port(pod: Obj, port: Obj) -> int | None:
    """FindPort: the target port's number on this pod (a named one from its containers' ports, same
    protocol); None when the pod has no port of that name."""
    target = port.get("targetPort", port.get("port"))
    if isinstance(target, int) and not isinstance(target, bool):
        return target
    protocol = port.get("protocol") or "TCP"
    for container in (pod.get("spec") or {}).get("containers") or []:
        for declared in (container or {}).get("ports") or []:
            if isinstance(declared, dict) and declared.get("name") == target \
                    and (declared.get("protocol") or "TCP") == protocol:
                number = declared.get("containerPort")
                return number if isinstance(number, int) else None
    return None


def _pod_ports(svc: Obj, pod: Obj) -> tuple[tuple[str, str, int, str | None], ...]:
    """(name, protocol, number, appProtocol) of each Service port this pod serves."""
    out = []
    for port in (svc.get("spec") or {}).get("ports") or []:
        if not isinstance(port, dict):
            continue
        number = resolve_port(pod, port)
        if number is not None:
            out.append((str(port.get("name") or ""), str(port.get("protocol") or "TCP"), number,
                        port.get("appProtocol")))
    return tuple(out)


def _labels(svc: Obj, for_slice: bool) -> dict[str, str]:
    meta = svc.get("metadata") or {}
    labels = {k: v for k, v in (meta.get("labels") or {}).items() if k not in _RESERVED}
    if (svc.get("spec") or {}).get("clusterIP") == "None":
        labels[HEADLESS] = ""
    if for_slice:
        labels[SERVICE_NAME] = str(meta.get("name"))
        labels[MANAGED_BY] = CONTROLLER
    return labels


def _reference(pod: Obj) -> Obj:
    meta = pod.get("metadata") or {}
    return {"kind": "Pod", "namespace": meta.get("namespace"), "name": meta.get("name"), "uid": meta.get("uid")}


class Nodes(Protocol):
    """The nodes by name (a dict, or the mirror's nodes looked up one by one)."""

    def get(self, name: str, /) -> Obj | None: ...


class _NodesOf:
    """The mirror's nodes by name, each looked up when asked for (not every node of the cluster on each pass)."""

    def __init__(self, snap: Snapshot) -> None:
        self._mirror = snap.mirror

    def get(self, name: str, /) -> Obj | None:
        return self._mirror.get("nodes", ("", name))


def _endpoint(svc: Obj, pod: Obj, nodes: Nodes) -> Obj:
    spec = pod.get("spec") or {}
    terminating = bool((pod.get("metadata") or {}).get("deletionTimestamp"))
    ready = is_ready(pod)
    publish = bool((svc.get("spec") or {}).get("publishNotReadyAddresses"))
    endpoint: Obj = {"addresses": [pod_ip(pod)],
                     "conditions": {"ready": publish or (ready and not terminating), "serving": publish or ready,
                                    "terminating": terminating}}
    if spec.get("hostname") and spec.get("subdomain") == (svc.get("metadata") or {}).get("name"):
        endpoint["hostname"] = spec["hostname"]
    endpoint["targetRef"] = _reference(pod)
    if spec.get("nodeName"):
        endpoint["nodeName"] = spec["nodeName"]
        zone = ((nodes.get(spec["nodeName"]) or {}).get("metadata") or {}).get("labels", {}).get(ZONE)
        if zone:
            endpoint["zone"] = zone
    return endpoint


_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"  # (the alphabet of generated names)
# byte value -> its letter: the suffix's letters are the digest's first five bytes, each modulo the alphabet's size
_LETTER_OF_BYTE = bytes(ord(_ALPHABET[b % len(_ALPHABET)]) for b in range(256))


def slice_name(svc: Obj, index: int) -> str:
    meta = svc.get("metadata") or {}
    suffix = hashlib.sha256(f"{meta.get('uid')}/{index}".encode()).digest()[:5].translate(_LETTER_OF_BYTE)
    return f"{str(meta.get('name'))[:57]}-{suffix.decode()}"


# What one pod gives one Service: its resolved ports, its slice endpoint, its Endpoints address (None when
# it is terminating) and whether that address is ready.
Entry = tuple[tuple[Any, ...], Obj, Obj | None, bool]
Memo = dict[tuple[Any, ...], Entry]


def _entry(svc: Obj, pod: Obj, nodes: Nodes) -> Entry:
    meta, spec = pod.get("metadata") or {}, pod.get("spec") or {}
    address: Obj | None = None
    if not meta.get("deletionTimestamp"):
        address = {"ip": pod_ip(pod)}
        if spec.get("hostname") and spec.get("subdomain") == (svc.get("metadata") or {}).get("name"):
            address["hostname"] = spec["hostname"]
        if spec.get("nodeName"):
            address["nodeName"] = spec["nodeName"]
        address["targetRef"] = _reference(pod)
    ready = bool((svc.get("spec") or {}).get("publishNotReadyAddresses")) or is_ready(pod)
    return _pod_ports(svc, pod), _endpoint(svc, pod, nodes), address, ready


def entries(svc: Obj, pods: list[Obj], nodes: Nodes, memo: Memo | None = None) -> list[Entry]:
    """Each pod's entry, in pod name order (``memo``: the entries of a previous pass, by pod version and node
    version, reused; the pass's own kept in it)."""
    out = []
    fresh: Memo = {}
    for pod in sorted(pods, key=lambda p: str((p.get("metadata") or {}).get("name"))):
        meta = pod.get("metadata") or {}
        node = nodes.get(str((pod.get("spec") or {}).get("nodeName")))
        key = (meta.get("uid"), meta.get("resourceVersion"), ((node or {}).get("metadata") or {}).get("resourceVersion"))
        found = memo.get(key) if memo is not None else None
        entry = found if found is not None else _entry(svc, pod, nodes)
        fresh[key] = entry
        out.append(entry)
    if memo is not None:
        memo.clear()
        memo.update(fresh)
    return out


# What the slices of a Service hold, in their order before they are named: each one's endpoints and ports
SliceContents = list[tuple[list[Obj] | None, list[Obj] | None]]


def slice_contents(listed: list[Entry]) -> SliceContents:
    """The endpoints and ports of each slice of a Service whose pods' entries are ``listed`` (never changed
    once made: the Services whose entries are the same share them)."""
    groups: dict[tuple[Any, ...], list[Obj]] = {}
    for ports, endpoint, _, _ in listed:
        groups.setdefault(ports, []).append(endpoint)
    if not groups:
        groups[()] = []
    contents: SliceContents = []
    for ports, endpoints in sorted(groups.items(), key=lambda g: repr(g[0])):
        shown = [{"name": name, "protocol": protocol, "port": number,
                  **({"appProtocol": app} if app is not None else {})} for name, protocol, number, app in ports]
        contents.append((endpoints or None, shown or None))
    return contents


def desired_slices(svc: Obj, listed: list[Entry], contents: SliceContents | None = None) -> list[Obj]:
    """The EndpointSlices of one Service, by name order (``contents``: :func:`slice_contents` of ``listed``,
    made already)."""
    meta = svc.get("metadata") or {}
    owner = {"apiVersion": "v1", "kind": "Service", "name": meta.get("name"), "uid": meta.get("uid"),
             "controller": True, "blockOwnerDeletion": True}
    family = ((svc.get("spec") or {}).get("ipFamilies") or ["IPv4"])[0]
    slices = []
    for index, (endpoints, ports) in enumerate(slice_contents(listed) if contents is None else contents):
        slices.append({
            "apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
            "metadata": {"name": slice_name(svc, index), "namespace": meta.get("namespace"),
                         "labels": _labels(svc, True), "ownerReferences": [owner]},
            "addressType": family, "endpoints": endpoints, "ports": ports})
    return sorted(slices, key=lambda s: s["metadata"]["name"])


def endpoints_subsets(listed: list[Entry]) -> list[Obj]:
    """The subsets of the core/v1 Endpoints of a Service whose pods' entries are ``listed`` (never changed
    once made, as :func:`slice_contents`)."""
    subsets: dict[tuple[Any, ...], tuple[list[Obj], list[Obj]]] = {}
    for ports, _, address, ready in listed:
        if address is None or not ports:
            continue
        ready_ones, not_ready = subsets.setdefault(ports, ([], []))
        (ready_ones if ready else not_ready).append(address)
    shown = []
    for ports, (ready_ones, not_ready) in subsets.items():
        subset: Obj = {}
        if ready_ones:
            subset["addresses"] = sorted(ready_ones, key=lambda a: a["ip"])
        if not_ready:
            subset["notReadyAddresses"] = sorted(not_ready, key=lambda a: a["ip"])
        subset["ports"] = [{"name": name, "port": number, "protocol": protocol,
                            **({"appProtocol": app} if app is not None else {})}
                           for name, protocol, number, app in ports]
        shown.append(subset)
    return shown


def desired_endpoints(svc: Obj, listed: list[Entry], subsets: list[Obj] | None = None) -> Obj:
    """The core/v1 Endpoints of one Service: a subset per set of resolved ports, addresses by IP (terminating
    pods left out); ``subsets``: :func:`endpoints_subsets` of ``listed``, made already."""
    meta = svc.get("metadata") or {}
    shown = endpoints_subsets(listed) if subsets is None else subsets
    endpoints: Obj = {"apiVersion": "v1", "kind": "Endpoints",
                      "metadata": {"name": meta.get("name"), "namespace": meta.get("namespace")}}
    labels = _labels(svc, False)
    if labels:
        endpoints["metadata"]["labels"] = labels
    if shown:
        endpoints["subsets"] = shown
    return endpoints


# What a Service's pod entries are made of: its selector's group, its ports and publishNotReadyAddresses, and
# its name where a pod's hostname is published under it (a pod whose subdomain is the Service's name)
ContentKey = tuple[tuple[str, SelectorKey], bytes, bool, str | None]


def _subdomains(pods: list[Obj]) -> set[Any]:
    """The subdomains of the pods that have a hostname (a Service of that name lists the hostname)."""
    return {spec.get("subdomain") for spec in (p.get("spec") or {} for p in pods) if spec.get("hostname")}


def _content_key(group: tuple[str, SelectorKey], svc: Obj, subdomains: set[Any]) -> ContentKey:
    spec, name = svc.get("spec") or {}, (svc.get("metadata") or {}).get("name")
    return (group, msgspec.json.encode(spec.get("ports")), bool(spec.get("publishNotReadyAddresses")),
            name if name in subdomains else None)


def _mirrors(svc: Obj) -> bool:
    spec = svc.get("spec") or {}
    return spec.get("selector") is None and spec.get("type") != "ExternalName"


def mirrored_slices(endpoints: Obj) -> list[Obj]:
    """The EndpointSlices mirroring a client's Endpoints: one per subset's ports (IPv4 and IPv6 apart), each
    address an endpoint whose ``ready`` condition says which list it was in; owned by the Endpoints."""
    meta = endpoints.get("metadata") or {}
    owner = {"apiVersion": "v1", "kind": "Endpoints", "name": meta.get("name"), "uid": meta.get("uid"),
             "controller": True, "blockOwnerDeletion": True}
    labels = {k: v for k, v in (meta.get("labels") or {}).items() if k not in _RESERVED}
    labels[SERVICE_NAME], labels[MANAGED_BY] = str(meta.get("name")), MIRRORING
    groups: dict[tuple[str, tuple[Any, ...]], list[Obj]] = {}
    for subset in endpoints.get("subsets") or []:
        if not isinstance(subset, dict):
            continue
        ports = tuple((p.get("name") or "", p.get("protocol") or "TCP", p.get("port"), p.get("appProtocol"))
                      for p in subset.get("ports") or [] if isinstance(p, dict))
        for part, ready in (("addresses", True), ("notReadyAddresses", False)):
            for address in subset.get(part) or []:
                if not isinstance(address, dict):
                    continue
                ip = str(address.get("ip") or "")
                endpoint: Obj = {"addresses": [ip], "conditions": {"ready": ready}}
                for field_name in ("hostname", "targetRef", "nodeName"):
                    if address.get(field_name):
                        endpoint[field_name] = address[field_name]
                groups.setdefault(("IPv6" if ":" in ip else "IPv4", ports), []).append(endpoint)
    slices = []
    for index, ((family, ports), listed) in enumerate(sorted(groups.items(), key=lambda g: repr(g[0]))):
        shown = [{"name": name, "protocol": protocol, "port": number,
                  **({"appProtocol": app} if app is not None else {})} for name, protocol, number, app in ports]
        slices.append({"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
                       "metadata": {"name": slice_name(endpoints, index), "namespace": meta.get("namespace"),
                                    "labels": dict(labels), "ownerReferences": [owner]},
                       "addressType": family, "endpoints": listed, "ports": shown or None})
    return sorted(slices, key=lambda s: s["metadata"]["name"])


_CONTENT = ("addressType", "endpoints", "ports", "subsets")


def _same(stored: Obj, wanted: Obj) -> bool:
    smeta, wmeta = stored.get("metadata") or {}, wanted["metadata"]
    return all(stored.get(k) == wanted.get(k) for k in _CONTENT) \
        and (smeta.get("labels") or {}) == (wmeta.get("labels") or {}) \
        and (smeta.get("ownerReferences") or []) == (wmeta.get("ownerReferences") or [])


_MINE_KEPT = 100_000  # own writes remembered at most (their changes come in the log's order)


@dataclass
class EndpointsControllers:
    NOTED: ClassVar[frozenset[str] | None] = frozenset(("services", "pods", "endpoints", "endpointslices"))
    writer: Writer
    dirty_services: set[Key] = field(default_factory=set)
    dirty_namespaces: set[str] = field(default_factory=set)
    everything: bool = True  # the first pass looks at every Service
    # what each Service's objects were last seen to hold (written or found so): a pass whose result is the same
    # reads nothing from the store; a change to endpoints objects of the namespace makes it look again
    written: dict[Key, tuple[list[Obj], Obj]] = field(default_factory=dict)
    # the pod entries of the last pass that used them, by what they were made of (see _content_key)
    memos: dict[ContentKey, Memo] = field(default_factory=dict)
    # the resourceVersions of this controller's own creates and updates not yet seen in the feed: their objects
    # hold what ``written`` says already, so their changes are no news (a client's change still is)
    mine: set[int] = field(default_factory=set)
    dirty_pods: set[Key] = field(default_factory=set)
    selectors: Selectors = field(default_factory=Selectors)
    # the pods of the namespaces where Services select pods, by label, as a pass last looked at them: a pod
    # whose labels changed concerns the Services its old labels matched too
    pod_index: PodsByLabel = field(default_factory=PodsByLabel)
    # the EndpointSlices of each namespace looked at (listed once, then kept up to date)
    known_slices: dict[str, KnownSlices] = field(default_factory=dict)

    def notes(self, changes: Sequence[Change]) -> None:
        """Take in changes of one resource from the store's feed, in the log's order."""
        resource = changes[0].resource
        if resource == "pods":  # (the common case: many at once)
            self.dirty_pods.update([(c.namespace, c.name) for c in changes])
            return
        mine = self.mine
        for change in changes:
            if mine and change.rv in mine and resource != "services":
                mine.discard(change.rv)
                continue
            self._note(change)
        if len(mine) > _MINE_KEPT:  # (writes whose changes were never seen, the feed having lost them: let go)
            self.mine = {rv for rv in mine if rv > changes[-1].rv}

    def _note(self, change: Change) -> None:
        if change.resource == "services":
            self.dirty_services.add((change.namespace, change.name))
            self.written.pop((change.namespace, change.name), None)
        elif change.resource == "pods":
            self.dirty_pods.add((change.namespace, change.name))
        elif change.resource in ("endpoints", "endpointslices"):
            # (a client's change, or a delete of this controller's: compared with the store in the next pass)
            known = self.known_slices.get(change.namespace) if change.resource == "endpointslices" else None
            if known is not None:
                if change.type == "DELETED":
                    known.put(change.name, None)
                else:
                    known.unsure.add(change.name)
            for key in [k for k in self.written if k[0] == change.namespace]:
                del self.written[key]
            if change.resource == "endpoints":
                self.dirty_services.add((change.namespace, change.name))  # (mirrored for a Service without selector)
            if change.type == "DELETED":
                self.dirty_namespaces.add(change.namespace)

    @property
    def due(self) -> bool:
        return self.everything or bool(self.dirty_services or self.dirty_namespaces or self.dirty_pods)

    def cycle(self, snap: Snapshot) -> bool:
        """Bring the endpoints of every Service that may have changed to what its pods say; True when it wrote."""
        if self.everything:
            self.known_slices = {}
            services = snap.mirror.items("services")
            keys = set(services)
            self.selectors = Selectors()
            for key, listed_svc in services.items():
                self.selectors.put(key, listed_svc)
            self.pod_index = PodsByLabel()  # (each namespace's pods indexed below: every Service is looked at)
        else:
            for key in self.dirty_services:
                self.selectors.put(key, snap.mirror.get("services", key))
            keys = self.dirty_services | self._concerned(snap, self.dirty_pods)
            if self.dirty_namespaces:
                keys |= {k for k in snap.mirror.items("services") if k[0] in self.dirty_namespaces}
            # (only the Services looked at: not every one decoded or gone through in each pass)
            services = {k: found for k in keys if (found := snap.mirror.get("services", k)) is not None}
        changed_services = self.dirty_services  # (a Service written, or its Endpoints)
        self.everything, self.dirty_services, self.dirty_namespaces, self.dirty_pods = False, set(), set(), set()
        wrote = False
        for key in sorted(k for k in keys if k in services and _mirrors(services[k]) and k not in self.written):
            if key in changed_services:  # (a selector removed: this controller's slices go)
                wrote |= self._sync_slices(services[key], [])
            wrote |= self._mirror(services[key])
        selecting_of = self.selectors.of  # (each Service's selector: those that select pods are there)
        selecting = [k for k in keys if k in services and k in selecting_of]
        if not selecting and all(k in services for k in keys):
            return wrote  # (no Service of theirs selects pods, none went: the pods need not be looked at)
        nodes = _NodesOf(snap)
        pod_index = self.pod_index
        # (the Services of one selector share its pods; those whose entries are made the same way share them
        # and what their objects hold)
        selected: dict[tuple[str, SelectorKey], tuple[list[Obj], set[Any]]] = {}
        contents: dict[ContentKey, tuple[list[Entry], SliceContents, list[Obj]]] = {}
        for key in sorted(keys):
            svc = services.get(key)
            if svc is None:
                self.written.pop(key, None)
                wrote |= self._remove_endpoints(key)
                continue
            selector = selecting_of.get(key)
            if selector is None:
                continue
            group = (key[0], selector)
            selection = selected.get(group)
            if selection is None:
                if not pod_index.indexed(key[0]):
                    self._index_namespace(snap, key[0])
                matched = (snap.mirror.get("pods", k) for k in sorted(pod_index.matching(key[0], selector)))
                pods = [p for p in matched if p is not None and in_endpoints(p)]
                selection = selected[group] = (pods, _subdomains(pods))
            pods, subdomains = selection
            content_key = _content_key(group, svc, subdomains)
            shared = contents.get(content_key)
            if shared is None:
                listed = entries(svc, pods, nodes, self.memos.setdefault(content_key, {}))
                shared = contents[content_key] = (listed, slice_contents(listed), endpoints_subsets(listed))
            listed, in_slices, subsets = shared
            wanted = (desired_slices(svc, listed, in_slices), desired_endpoints(svc, listed, subsets))
            if self.written.get(key) == wanted:
                continue
            wrote |= self._sync_slices(svc, wanted[0])
            wrote |= self._write("endpoints", wanted[1])
            self.written[key] = wanted
        if len(self.memos) > 2 * len(self.selectors.of) + 16:  # (those of Services gone or changed: dropped)
            self.memos = {k: memo for k, memo in self.memos.items() if k in contents}
        return wrote

    def _concerned(self, snap: Snapshot, pods: set[Key]) -> set[Key]:
        """The Services a change of these pods concerns: those whose selector matches a pod's labels as they
        are or as they were (the pods' labels are then noted as they are)."""
        keys: set[Key] = set()
        groups = self.selectors.groups
        pod_index = self.pod_index
        for key in pods:
            indexed = pod_index.indexed(key[0])
            if not groups.get(key[0]):  # (no Service of its namespace selects pods: none lists it)
                if indexed:
                    pod_index.drop(key[0])
                continue
            labels = snap.mirror.labels("pods", key)
            keys |= self.selectors.selecting(key[0], pod_index.labels.get(key), labels)
            if indexed:  # (a namespace not indexed yet is, whole, when a pass first lists its pods)
                pod_index.put(key, labels)
        return keys

    def _index_namespace(self, snap: Snapshot, namespace: str) -> None:
        mirror = snap.mirror
        self.pod_index.index(namespace, [(key, mirror.labels("pods", key) or {})
                                         for key in mirror.keys_in("pods", namespace)])

    def _mirror(self, svc: Obj) -> bool:
        """The endpointslicemirroring controller: a Service without a selector gets EndpointSlices mirroring
        the Endpoints its clients write (unless labelled ``endpointslice.kubernetes.io/skip-mirror``)."""
        meta = svc.get("metadata") or {}
        key = (str(meta.get("namespace")), str(meta.get("name")))
        try:
            endpoints = self.writer.store.get("endpoints", *key)
        except NotFound:
            endpoints = None
        skip = endpoints is None or ((endpoints.get("metadata") or {}).get("labels") or {}).get(SKIP_MIRROR) == "true"
        wanted = [] if skip or endpoints is None else mirrored_slices(endpoints)
        wrote = self._sync_slices(svc, wanted, MIRRORING)
        self.written[key] = (wanted, endpoints or {})
        return wrote

    def _remove_endpoints(self, key: Key) -> bool:
        """A Service gone: its Endpoints and its slices go (the garbage collector would take the slices, by
        their owner reference, as well)."""
        gone = {"metadata": {"namespace": key[0], "name": key[1]}}
        wrote = self._sync_slices(gone, []) | self._sync_slices(gone, [], MIRRORING)
        try:
            self.writer.store.get("endpoints", *key)
        except NotFound:
            return wrote
        return self.writer.delete("endpoints", *key) is not None or wrote

    def _sync_slices(self, svc: Obj, wanted: list[Obj], manager: str = CONTROLLER) -> bool:
        """Write the Service's slices; remove the other slices of it ``manager`` (this controller, or the
        mirroring one) made."""
        meta = svc.get("metadata") or {}
        namespace = str(meta.get("namespace"))
        known = self._known_slices(namespace)
        names = {s["metadata"]["name"] for s in wanted}
        wrote = False
        for old_name, (_, managed_by, uid) in known.of_service(meta.get("name")):
            if managed_by == manager and old_name not in names:
                gone = self.writer.delete("endpointslices", namespace, old_name, uid=uid)
                wrote |= gone is not None
                if gone is None or (gone.get("metadata") or {}).get("deletionTimestamp"):
                    known.unsure.add(old_name)  # (replaced meanwhile, or only marked: read again)
                else:
                    known.put(old_name, None)
        for slice_ in wanted:
            wrote |= self._write("endpointslices", slice_, generation=True, known=known)
        return wrote

    def _known_slices(self, namespace: str) -> KnownSlices:
        """The namespace's EndpointSlices as known (listed the first time; those another client wrote since
        read again)."""
        known = self.known_slices.get(namespace)
        if known is None:
            known = self.known_slices[namespace] = KnownSlices()
            for eps in self.writer.store.list("endpointslices", namespace)[0]:
                known.put(eps["metadata"]["name"], known_of(eps))
        for name in sorted(known.unsure):
            try:
                known.put(name, known_of(self.writer.store.get("endpointslices", namespace, name)))
            except NotFound:
                known.put(name, None)
        known.unsure.clear()
        return known

    def _write(self, resource: str, wanted: Obj, generation: bool = False, known: KnownSlices | None = None) -> bool:
        """Create ``wanted`` or make the stored one say the same; True when it wrote. ``known``: the namespace's
        slices as known (one that is not there is created without a read first; what is written is noted)."""
        namespace, name = wanted["metadata"]["namespace"], wanted["metadata"]["name"]

        changing = [False]  # whether the last mutate (of the last attempt) changed something

        def mutate(current: Obj) -> Obj | None:
            changing[0] = not _same(current, wanted)
            if not changing[0]:
                return None
            meta = {**current["metadata"], "labels": wanted["metadata"].get("labels")}
            if wanted["metadata"].get("ownerReferences"):
                meta["ownerReferences"] = wanted["metadata"]["ownerReferences"]
            if not meta["labels"]:
                meta.pop("labels")
            if generation:
                meta["generation"] = int(meta.get("generation") or 1) + 1
            updated = {**{k: v for k, v in current.items() if k not in _CONTENT}, "metadata": meta}
            updated.update({k: wanted[k] for k in _CONTENT if k in wanted})
            return updated

        try:
            if known is not None and name not in known.slices:
                raise NotFound(name)
            current = self.writer.store.get(resource, namespace, name)
        except NotFound:
            created = {**wanted, "metadata": {**wanted["metadata"], **({"generation": 1} if generation else {})}}
            try:
                made = self.writer.create(resource, namespace, created)
            except Conflict:
                if known is not None:
                    known.unsure.add(name)
                return False  # made meanwhile: the next pass compares
            self._own(made)
            if known is not None:
                known.put(name, known_of(made))
            return True
        if _same(current, wanted):
            return False
        updated = self.writer.update(resource, namespace, name, mutate)
        if updated is not None and changing[0]:  # (not when it found nothing to change: it returns a read then)
            self._own(updated)
        if known is not None:
            known.put(name, None if updated is None else known_of(updated))
        return updated is not None

    def _own(self, written: Obj) -> None:
        self.mine.add(int(written["metadata"]["resourceVersion"]))
