"""The Service network of ``dralloc serve``: the cluster IP range (``--service-cluster-ip-range``, 10.96.0.0/12 by
default) and the node port range (30000-32767), and kube-apiserver's two allocators over them.

What is allocated is what the stored Services hold (an index of the services cache, kept up to date write by
write, so a deleted Service's addresses are free again at once and a create among thousands of Services looks
at none of them), plus what a create or update took a moment ago and has not committed yet:
held by the Service that took it until its create is stored (:meth:`ServiceNetwork.release`), its stored
version changes (an update committed) or for :data:`PENDING_SECONDS` at most, so that two concurrent creates never get the same address, while a dry run
followed by the create of the same Service gets the same one.

Allocation is deterministic, unlike kube-apiserver's (which picks a random free address): a Service that asks
for none gets the lowest free cluster IP of the range (the network's own address and, for IPv4, its broadcast
address are never given) and the lowest free node port. A requested address is honoured when it is free and
in range, else refused with upstream's text.
"""

from __future__ import annotations

import bisect
import ipaddress
import socket
import threading
import time
import weakref
from collections.abc import Callable, Iterable
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


def ip_text(value: int, version: int) -> str:
    """An address of IP ``version`` as Go writes it (``ipaddress``'s text; IPv4's from the C library)."""
    if version == 4:
        return socket.inet_ntoa(value.to_bytes(4, "big"))
    return str(ipaddress.IPv6Address(value))


class _Runs:
    """Distinct numbers held, as sorted runs of consecutive ones (the addresses given out lowest first form one
    long run): the lowest number not held is one bisection away, however many are held."""

    def __init__(self) -> None:
        self.starts: list[int] = []
        self.ends: list[int] = []  # ends[i]: the last number of the run that starts at starts[i]

    def add(self, value: int) -> None:
        """Hold ``value`` (not held yet)."""
        starts, ends = self.starts, self.ends
        i = bisect.bisect_right(starts, value)  # the run before value is i - 1, the one after it i
        joins_before = i > 0 and ends[i - 1] == value - 1
        joins_after = i < len(starts) and starts[i] == value + 1
        if joins_before and joins_after:
            ends[i - 1] = ends[i]
            del starts[i], ends[i]
        elif joins_before:
            ends[i - 1] = value
        elif joins_after:
            starts[i] = value
        else:
            starts.insert(i, value)
            ends.insert(i, value)

    def discard(self, value: int) -> None:
        """Hold ``value`` no more (nothing when it is not held)."""
        starts, ends = self.starts, self.ends
        i = bisect.bisect_right(starts, value) - 1
        if i < 0 or ends[i] < value:
            return
        start, end = starts[i], ends[i]
        if start == end:
            del starts[i], ends[i]
        elif value == start:
            starts[i] = value + 1
        elif value == end:
            ends[i] = value - 1
        else:
            ends[i] = value - 1
            starts.insert(i + 1, value + 1)
            ends.insert(i + 1, end)

    def lowest_free(self, first: int, last: int, busy: Callable[[int], bool] | None) -> int | None:
        """The lowest number of [first, last] not held for which ``busy`` (what is not held yet: taken a moment
        ago; None: nothing) says no; None when every one is taken."""
        starts, ends = self.starts, self.ends
        candidate = first
        while candidate <= last:
            i = bisect.bisect_right(starts, candidate) - 1
            if i >= 0 and ends[i] >= candidate:  # held: the first number after its run is next
                candidate = ends[i] + 1
                continue
            if busy is None or not busy(candidate):
                return candidate
            candidate += 1
        return None


class _Taken:
    """What the stored Services hold, kept up to date write by write (a cache index: a create among thousands of
    Services must not look at every one): each cluster IP and node port with the Services holding it, the
    addresses of the network's range as runs of numbers (to find the lowest free one by bisection), and each
    Service's stored version."""

    def __init__(self, network: IPNetwork, node_ports: tuple[int, int]) -> None:
        self._network = network
        self._node_ports = node_ports
        # (the range as numbers: an address of the other IP version is never in it)
        self._low = int(network.network_address) if network.version == 4 else -1
        self._high = int(network.broadcast_address) if network.version == 4 else -1
        self.ips: dict[str, int] = {}  # address -> how many stored Services hold it
        self.ports: dict[int, int] = {}
        self.versions: dict[str, str] = {}  # namespace/name -> resourceVersion
        self._ip_values = _Runs()  # the held addresses of the range, as numbers
        self._port_values = _Runs()

    @staticmethod
    def _addresses(svc: Obj) -> list[str]:
        spec = svc.get("spec")
        if not isinstance(spec, dict):
            return []
        return [str(ip) for ip in spec.get("clusterIPs") or [] if ip != "None"]

    @staticmethod
    def _node_ports_of(svc: Obj) -> list[int]:
        spec = svc.get("spec")
        if not isinstance(spec, dict):
            return []
        ports = [port["nodePort"] for port in spec.get("ports") or []
                 if isinstance(port, dict) and isinstance(port.get("nodePort"), int)]
        if isinstance(spec.get("healthCheckNodePort"), int):
            ports.append(spec["healthCheckNodePort"])
        return ports

    def _in_range(self, ip: str) -> int | None:
        if self._low >= 0:  # an IPv4 range
            try:
                value = int.from_bytes(socket.inet_pton(socket.AF_INET, ip), "big")
            except (OSError, ValueError):  # (not an IPv4 address: not in the range)
                return None
            return value if self._low <= value <= self._high else None
        try:
            address = ipaddress.ip_address(ip)
        except ValueError:
            return None
        return int(address) if address in self._network else None

    def add(self, key: tuple[str, str], svc: Obj) -> None:
        meta = svc.get("metadata")
        self.versions[f"{key[0]}/{key[1]}"] = str(meta.get("resourceVersion") if isinstance(meta, dict) else "")
        for ip in self._addresses(svc):
            held = self.ips.get(ip, 0)
            self.ips[ip] = held + 1
            if not held and (value := self._in_range(ip)) is not None:
                self._ip_values.add(value)
        for port in set(self._node_ports_of(svc)):
            held = self.ports.get(port, 0)
            self.ports[port] = held + 1
            if not held:
                self._port_values.add(port)

    def remove(self, key: tuple[str, str], svc: Obj) -> None:
        self.versions.pop(f"{key[0]}/{key[1]}", None)
        for ip in self._addresses(svc):
            held = self.ips.get(ip, 0)
            if held > 1:
                self.ips[ip] = held - 1
                continue
            self.ips.pop(ip, None)
            if held and (value := self._in_range(ip)) is not None:
                self._ip_values.discard(value)
        for port in set(self._node_ports_of(svc)):
            held = self.ports.get(port, 0)
            if held > 1:
                self.ports[port] = held - 1
                continue
            self.ports.pop(port, None)
            if held:
                self._port_values.discard(port)

    def lowest_free_ip(self, first: int, last: int, busy: Callable[[int], bool] | None) -> int | None:
        return self._ip_values.lowest_free(first, last, busy)

    def lowest_free_port(self, first: int, last: int, busy: Callable[[int], bool] | None) -> int | None:
        return self._port_values.lowest_free(first, last, busy)


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

    def _taken(self) -> _Taken:
        return _Taken(self.cidr, self.node_ports)

    def allocate_ip(self, store: SQLStore, requested: str | None, owner: str) -> str:
        """A cluster IP for the Service ``owner`` (namespace/name): ``requested`` if free and in range, else
        the lowest free one."""
        services = cached(store, "services")
        with services.feed.locked(), self._lock:
            taken = services.index(self._taken)
            pending = self._others(self._pending_ips, owner, taken.versions)
            if requested:
                ip = ipaddress.ip_address(requested)
                if not self._usable(ip):
                    raise AllocationError(f"provided IP is not in the valid range. The range of valid IPs is "
                                          f"{self.cidr}")
                if str(ip) in taken.ips or str(ip) in pending:
                    raise AllocationError("provided IP is already allocated")
                chosen = str(ip)
            else:
                first = int(self.cidr.network_address) + 1
                last = int(self.cidr.broadcast_address) - (1 if self.cidr.version == 4 else 0)
                version = self.cidr.version
                # (a pending address is compared as text, as Services hold it: written as Go writes it)
                value = taken.lowest_free_ip(first, last, (lambda v: ip_text(v, version) in pending) if pending
                                             else None)
                if value is None:
                    raise AllocationError("range is full")
                chosen = ip_text(value, version)
            self._pending_ips[chosen] = (owner, time.monotonic(), taken.versions.get(owner))
            return chosen

    def release(self, owner: str) -> None:
        """The Service ``owner`` is stored: the store holds what it took."""
        with self._lock:
            for ip in [k for k, (by, _, _) in self._pending_ips.items() if by == owner]:
                del self._pending_ips[ip]
            if self._pending_ports:  # (most Services take none)
                for port in [k for k, (by, _, _) in self._pending_ports.items() if by == owner]:
                    del self._pending_ports[port]

    def allocate_node_port(self, store: SQLStore, requested: int, owner: str, own: Iterable[int] = (),
                           avoid: Iterable[int] = ()) -> int:
        """A node port for the Service ``owner``: ``requested`` (non-zero) if free and in range, else the
        lowest free one (``own``: the node ports the Service already holds; ``avoid``: those it asks for)."""
        low, high = self.node_ports
        services = cached(store, "services")
        with services.feed.locked(), self._lock:
            taken = services.index(self._taken)
            mine = set(own)
            extra = self._others(self._pending_ports, owner, taken.versions) | set(avoid)

            def busy(port: int) -> bool:
                return (port in taken.ports and port not in mine) or port in extra

            if requested:
                if not low <= requested <= high:
                    raise AllocationError(f"provided port is not in the valid range. The range of valid ports is "
                                          f"{low}-{high}")
                if busy(requested):
                    raise AllocationError("provided port is already allocated")
                chosen = requested
            elif mine:  # (the Service's own ports count as free: looked at one by one, the range is small)
                chosen = next((p for p in range(low, high + 1) if not busy(p)), 0)
                if not chosen:
                    raise AllocationError("range is full")
            else:
                found = taken.lowest_free_port(low, high, extra.__contains__ if extra else None)
                if found is None:
                    raise AllocationError("range is full")
                chosen = found
            self._pending_ports[chosen] = (owner, time.monotonic(), taken.versions.get(owner))
            return chosen


_NETWORKS: weakref.WeakKeyDictionary[SQLStore, ServiceNetwork] = weakref.WeakKeyDictionary()
# The store asked for last and its network (a server has one store, and a Service create asks twice: no weak
# reference made per look-up, as a WeakKeyDictionary's get makes one)
_last: tuple[weakref.ref[SQLStore], ServiceNetwork] | None = None


def configure(store: SQLStore, network: ServiceNetwork) -> None:
    """The Service network of the server on ``store`` (its start)."""
    global _last
    _NETWORKS[store] = network
    _last = None


def network_of(store: SQLStore) -> ServiceNetwork:
    global _last
    last = _last
    if last is not None and last[0]() is store:
        return last[1]
    network = _NETWORKS.get(store)
    if network is None:
        network = _NETWORKS[store] = ServiceNetwork()
    _last = (weakref.ref(store), network)
    return network
