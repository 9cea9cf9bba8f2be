"""CIDR values as kube-apiserver reads them in its "legacy" CIDR fields (a NetworkPolicy's ``ipBlock.cidr`` and
``except``), with the StrictIPCIDRValidation rules on (their default in Kubernetes 1.36): k8s.io/utils'
ParseCIDRSloppy must take the value, and Go's netip.ParsePrefix must take it too (no leading zeros in the
address nor in the prefix length), with no IPv4-mapped IPv6 address and no bits set beyond the prefix length.
A value the old object already had is not checked again (ratcheting)."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from dralloc.validation import field as f
from dralloc.validation.ips import parse

INVALID_CIDR = "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)"
LEADING_ZEROS = "must not have leading 0s in IP or prefix length"
IPV4_MAPPED = "must not have an IPv4-mapped IPv6 address"
BITS_BEYOND_PREFIX = "must not have bits set beyond the prefix length"


@dataclass(frozen=True)
class Network:
    """A parsed CIDR: its family's address bits (4 bytes for an IPv4 value, as Go's net.IPNet keeps it), the
    prefix length, and what a strict parser would say of the text."""

    address: bytes
    prefix: int
    strict: bool  # netip.ParsePrefix takes the text too
    mapped: bool  # an IPv4-mapped IPv6 address written in IPv6 notation

    @property
    def bits(self) -> int:
        return len(self.address) * 8

    def masked(self) -> bytes:
        whole, rest = divmod(self.prefix, 8)
        head = self.address[:whole]
        if rest:
            head += bytes([self.address[whole] & (0xFF << (8 - rest)) & 0xFF])
        return head + bytes(len(self.address) - len(head))

    def contains(self, other: Network) -> bool:
        """net.IPNet.Contains of ``other``'s address (an address of the other family is never in it)."""
        if len(other.address) != len(self.address):
            return False
        return Network(other.address, self.prefix, True, False).masked() == self.masked()


def parse_cidr(text: str) -> Network | None:
    """ParseCIDRSloppy: None when it does not take ``text``."""
    address, slash, length = text.partition("/")
    if not slash or not length or not length.isascii() or not length.isdigit():
        return None
    parsed = parse(address)
    if parsed is None:
        return None
    v4 = parsed.dotted
    packed = parsed.packed[12:] if v4 else parsed.packed
    prefix = int(length)
    if prefix > len(packed) * 8:
        return None
    strict_length = length == "0" or not length.startswith("0")
    return Network(packed, prefix, parsed.strict and strict_length, parsed.mapped)


def legacy_cidr_errors(path: str, value: str, valid_old: Collection[str] = ()) -> list[f.FieldError]:
    """IsValidCIDRForLegacyField with strict validation, ratcheting the values the old object had."""
    if value in valid_old:
        return []
    network = parse_cidr(value)
    if network is None:
        return [f.invalid(path, value, INVALID_CIDR)]
    if not network.strict:
        return [f.invalid(path, value, LEADING_ZEROS)]
    if network.mapped:
        return [f.invalid(path, value, IPV4_MAPPED)]
    if network.masked() != network.address:
        return [f.invalid(path, value, BITS_BEYOND_PREFIX)]
    return []
