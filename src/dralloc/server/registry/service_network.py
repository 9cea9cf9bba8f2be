"""The Service network of ``dralloc serve``: the cluster IP range (``--service-cluster-ip-range``, 10.96.0.0/12 by
default) and the node port range (30000-32767), and kube-apiserver's two allocators over them.

What is allocated is what the stored Services hold (read from the services cache, so a deleted Service's
addresses are free again at once), plus what a create or update took a moment ago and has not committed yet:
held by the Service that took it until its create is stored (:meth:`ServiceNetwork.release`), its stored
version changes (an update committed) or for :data:`PENDING_SECONDS` at most, so that two concurrent creates never get the same address, while a dry run
followed by the create of the same Service gets the same one.

Allocation is deterministic, unlike kube-apiserver's (which picks a random free address): a Service that asks
for none gets the lowest free cluster IP of the range (the network's own address and, for IPv4, its broadcast
address are never given) and the lowest free node port. A requested address is honoured when it is free and
in range, else refused with upstream's text.
"""

from __future__ import annotations

import ipaddress
import threading
import time
import weakref
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TypeVar

from dralloc.store import SQLStore
from dralloc.store.cache import cached

DEFAULT_CIDR = "10.96.0.0/12"  # kubeadm's, what most clusters use
NODE_PORTS = (30000, 32767)  # kube-apiserver's default --service-node-port-range
PENDING_SECONDS = 30.0

Obj = dict[str, object]
K = TypeVar("K", str, int)
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network


class AllocationError(Exception):
    """A requested address that cannot be had (upstream's message)."""


def parse_cidr(text: str) -> IPNetwork:
    """A --service-cluster-ip-range value; ValueError with a message when it is none (or too small to use)."""
    try:
        network = ipaddress.ip_network(text.strip(), strict=True)
    except ValueError as exc:
        raise ValueError(f"invalid service cluster IP range {text!r}: {exc}") from None
    if network.num_addresses < 4:
        raise ValueError(f"service cluster IP range {text!r} is too small: it needs at least 4 addresses")
    return network


def _ips_of(objects: dict[tuple[str, str], dict[str, object]]) -> frozenset[str]:
    taken: set[str] = set()
    for svc in objects.values():
        spec = svc.get("spec")
        if isinstance(spec, dict):
            taken.update(str(ip) for ip in spec.get("clusterIPs") or [] if ip != "None")
    return frozenset(taken)


def _node_ports_of(objects: dict[tuple[str, str], dict[str, object]]) -> frozenset[int]:
    taken: set[int] = set()
    for svc in objects.values():
        spec = svc.get("spec")
        if not isinstance(spec, dict):
            continue
        for port in spec.get("ports") or []:
            if isinstance(port, dict) and isinstance(port.get("nodePort"), int):
                taken.add(port["nodePort"])
        if isinstance(spec.get("healthCheckNodePort"), int):
            taken.add(spec["healthCheckNodePort"])
    return frozenset(taken)


def _versions_of(objects: dict[tuple[str, str], dict[str, object]]) -> dict[str, str]:
    versions: dict[str, str] = {}
    for (namespace, name), svc in objects.items():
        meta = svc.get("metadata")
        versions[f"{namespace}/{name}"] = str(meta.get("resourceVersion") if isinstance(meta, dict) else "")
    return versions


@dataclass
class ServiceNetwork:
    cidr: IPNetwork = field(default_factory=lambda: parse_cidr(DEFAULT_CIDR))
    node_ports: tuple[int, int] = NODE_PORTS
    # address -> (the namespace/name of the Service that took it, when, that Service's stored version then)
    _pending_ips: dict[str, tuple[str, float, str | None]] = field(default_factory=dict)
    _pending_ports: dict[int, tuple[str, float, str | None]] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def first_ip(self) -> str:
        """The range's first address: the ``default/kubernetes`` Service's."""
        return str(self.cidr.network_address + 1)

    def _usable(self, ip: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
        if ip not in self.cidr or ip == self.cidr.network_address:
            return False
        return not (self.cidr.version == 4 and ip == self.cidr.broadcast_address)

    @staticmethod
    def _others(pending: dict[K, tuple[str, float, str | None]], owner: str, versions: dict[str, str]) -> set[K]:
        """The addresses other Services took a moment ago and have not stored yet (``versions``: each stored
        Service's resourceVersion by namespace/name)."""
        now = time.monotonic()
        for key in [k for k, (by, at, rv) in pending.items()
                    if now - at > PENDING_SECONDS or versions.get(by) != rv]:
            del pending[key]
        return {k for k, (by, _, _) in pending.items() if by != owner}

    def allocate_ip(self, store: SQLStore, requested: str | None, owner: str) -> str:
        """A cluster IP for the Service ``owner`` (namespace/name): ``requested`` if free and in range, else
        the lowest free one."""
        services = cached(store, "services")
        taken, versions = services.derived(_ips_of), services.derived(_versions_of)
        with self._lock:
            busy = taken | self._others(self._pending_ips, owner, versions)
            if requested:
                ip = ipaddress.ip_address(requested)
                if not self._usable(ip):
                    raise AllocationError(f"provided IP is not in the valid range. The range of valid IPs is "
                                          f"{self.cidr}")
                if str(ip) in busy:
                    raise AllocationError("provided IP is already allocated")
                chosen = str(ip)
            else:
                chosen = self._lowest_free(busy)
            self._pending_ips[chosen] = (owner, time.monotonic(), versions.get(owner))
            return chosen

    def release(self, owner: str) -> None:
        """The Service ``owner`` is stored: the store holds what it took."""
        with self._lock:
            for ip in [k for k, (by, _, _) in self._pending_ips.items() if by == owner]:
                del self._pending_ips[ip]
            for port in [k for k, (by, _, _) in self._pending_ports.items() if by == owner]:
                del self._pending_ports[port]

    def _lowest_free(self, busy: set[str] | frozenset[str]) -> str:
        start = int(self.cidr.network_address) + 1
        last = int(self.cidr.broadcast_address) - (1 if self.cidr.version == 4 else 0)
        for value in range(start, last + 1):
            candidate = str(ipaddress.ip_address(value))
            if candidate not in busy:
                return candidate
        raise AllocationError("range is full")

    def allocate_node_port(self, store: SQLStore, requested: int, owner: str, own: Iterable[int] = (),
                           avoid: Iterable[int] = ()) -> int:
        """A node port for the Service ``owner``: ``requested`` (non-zero) if free and in range, else the
        lowest free one (``own``: the node ports the Service already holds; ``avoid``: those it asks for)."""
        low, high = self.node_ports
        services = cached(store, "services")
        stored, versions = services.derived(_node_ports_of), services.derived(_versions_of)
        with self._lock:
            busy = (stored - set(own)) | self._others(self._pending_ports, owner, versions) | set(avoid)
            if requested:
                if not low <= requested <= high:
                    raise AllocationError(f"provided port is not in the valid range. The range of valid ports is "
                                          f"{low}-{high}")
                if requested in busy:
                    raise AllocationError("provided port is already allocated")
                chosen = requested
            else:
                chosen = next((p for p in range(low, high + 1) if p not in busy), 0)
                if not chosen:
                    raise AllocationError("range is full")
            self._pending_ports[chosen] = (owner, time.monotonic(), versions.get(owner))
            return chosen


_NETWORKS: weakref.WeakKeyDictionary[SQLStore, ServiceNetwork] = weakref.WeakKeyDictionary()


def configure(store: SQLStore, network: ServiceNetwork) -> None:
    """The Service network of the server on ``store`` (its start)."""
    _NETWORKS[store] = network


def network_of(store: SQLStore) -> ServiceNetwork:
    network = _NETWORKS.get(store)
    if network is None:
        network = _NETWORKS[store] = ServiceNetwork()
    return network
