"""The Kubernetes CIDR library (library/cidr.go): cidr(), isCIDR(), containsIP(), containsCIDR(), ip(),
masked(), prefixLength()."""

from __future__ import annotations

import ipaddress
from typing import Any

from dralloc.cel.errors import CELError
from dralloc.cel.library.ip import IPValue, parse_ip
from dralloc.cel.library.registry import GLOBALS, MEMBERS, function, member, want
from dralloc.cel.values import no_overload


class CIDRValue:
    cel_type = "net.CIDR"
    __slots__ = ("net", "ip")

    def __init__(self, net: ipaddress.IPv4Network | ipaddress.IPv6Network, ip: Any) -> None:
        self.net = net
        self.ip = ip

    def __eq__(self, other: object) -> bool:
        return isinstance(other, CIDRValue) and other.net == self.net and other.ip == self.ip

    def __hash__(self) -> int:
        return hash(self.net)

    def __str__(self) -> str:
        return f"{self.ip}/{self.net.prefixlen}"


def _parse_cidr(s: str) -> CIDRValue:
    if "/" not in s:
        raise CELError(f"network address parse error during conversion from string: {s!r}")
    addr, _, _prefix = s.partition("/")
    ip = parse_ip(addr)
    try:
        net = ipaddress.ip_network(s, strict=False)
    except ValueError:
        raise CELError(f"network address parse error during conversion from string: {s!r}") from None
    return CIDRValue(net, ip.addr)


@function("cidr", "net.CIDR")
def _cidr(s: Any) -> CIDRValue:
    want("cidr", type(s) is str, s)
    return _parse_cidr(s)


@function("isCIDR", "bool")
def _is_cidr(s: Any) -> bool:
    want("isCIDR", type(s) is str, s)
    try:
        _parse_cidr(s)
    except CELError:
        return False
    return True


@member("containsIP", "bool")
def _contains_ip(c: Any, ip: Any) -> bool:
    want("containsIP", type(c) is CIDRValue, c, ip)
    addr = parse_ip(ip).addr if type(ip) is str else (ip.addr if type(ip) is IPValue else None)
    if addr is None:
        raise no_overload("containsIP", c, ip)
    return addr.version == c.net.version and addr in c.net


@member("containsCIDR", "bool")
def _contains_cidr(c: Any, other: Any) -> bool:
    want("containsCIDR", type(c) is CIDRValue, c, other)
    o = _parse_cidr(other) if type(other) is str else other
    if type(o) is not CIDRValue:
        raise no_overload("containsCIDR", c, other)
    return o.net.version == c.net.version and o.net.subnet_of(c.net)


@member("masked", "net.CIDR")
def _masked(c: Any) -> CIDRValue:
    want("masked", type(c) is CIDRValue, c)
    return CIDRValue(c.net, c.net.network_address)


@member("prefixLength", "int")
def _prefix_length(c: Any) -> int:
    want("prefixLength", type(c) is CIDRValue, c)
    return c.net.prefixlen


def _cidr_ip(c: Any) -> IPValue:
    return IPValue(c.ip)


# ip(cidr) as a global function, folded into ip(string)

_plain_ip = GLOBALS["ip"]


def _ip_any(v: Any) -> IPValue:
    if type(v) is CIDRValue:
        return _cidr_ip(v)
    return _plain_ip(v)


GLOBALS["ip"] = _ip_any
MEMBERS["ip"] = lambda c: _cidr_ip(c) if type(c) is CIDRValue else (_ for _ in ()).throw(no_overload("ip", c))
