"""The Kubernetes IP library (library/ip.go): ip(), isIP(), ip.isCanonical() and the address predicates."""

from __future__ import annotations

import ipaddress
from typing import Any

from dralloc.cel.errors import CELError
from dralloc.cel.library.registry import function, member, want


class IPValue:
    cel_type = "net.IP"
    __slots__ = ("addr",)

    def __init__(self, addr: ipaddress.IPv4Address | ipaddress.IPv6Address) -> None:
        self.addr = addr

    def __eq__(self, other: object) -> bool:
        return isinstance(other, IPValue) and other.addr == self.addr

    def __hash__(self) -> int:
        return hash(self.addr)

    def __str__(self) -> str:
        return str(self.addr)


def parse_ip(s: str) -> IPValue:
    if "%" in s:
        raise CELError("IP address with zone value is not allowed")
    try:
        addr = ipaddress.ip_address(s)
    except ValueError:
        raise CELError(f"IP Address {s!r} parse error during conversion from string") from None
    if isinstance(addr, ipaddress.IPv6Address) and addr.ipv4_mapped is not None and "." in s:
        raise CELError("IPv4-mapped IPv6 address is not allowed")
    return IPValue(addr)


@function("ip", "net.IP")
def _ip(s: Any) -> IPValue:
    want("ip", type(s) is str, s)
    return parse_ip(s)


@function("isIP", "bool")
def _is_ip(s: Any) -> bool:
    want("isIP", type(s) is str, s)
    try:
        parse_ip(s)
    except CELError:
        return False
    return True


@function("ip.isCanonical", "bool")
def _ip_is_canonical(s: Any) -> bool:
    want("ip.isCanonical", type(s) is str, s)
    return str(parse_ip(s).addr) == s


def _ipv(fn: str, v: Any) -> Any:
    want(fn, type(v) is IPValue, v)
    return v.addr


@member("family", "int")
def _family(v: Any) -> int:
    return _ipv("family", v).version


@member("isUnspecified", "bool")
def _is_unspecified(v: Any) -> bool:
    return _ipv("isUnspecified", v).is_unspecified


@member("isLoopback", "bool")
def _is_loopback(v: Any) -> bool:
    return _ipv("isLoopback", v).is_loopback


@member("isLinkLocalMulticast", "bool")
def _is_link_local_multicast(v: Any) -> bool:
    a = _ipv("isLinkLocalMulticast", v)
    if a.version == 4:
        return a in ipaddress.ip_network("224.0.0.0/24")
    return a in ipaddress.ip_network("ff02::/16")


@member("isLinkLocalUnicast", "bool")
def _is_link_local_unicast(v: Any) -> bool:
    a = _ipv("isLinkLocalUnicast", v)
    return a.is_link_local and not a.is_multicast


@member("isGlobalUnicast", "bool")
def _is_global_unicast(v: Any) -> bool:
    a = _ipv("isGlobalUnicast", v)
    if a.version == 4 and a == ipaddress.IPv4Address("255.255.255.255"):
        return False
    return not (a.is_unspecified or a.is_loopback or a.is_multicast or a.is_link_local)
