"""IP addresses as kube-apiserver reads them in its "legacy" IP fields (a pod's ``status.podIPs`` and
``status.hostIPs``, ...), with the StrictIPCIDRValidation rules that are on by default in Kubernetes 1.36.

Two parsers are involved upstream: the historical one (k8s.io/utils' ParseIPSloppy, Go 1.16's net.ParseIP),
which takes IPv4 octets with leading zeros ("010.1.1.1" is 10.1.1.1) and IPv6 groups with more than four
digits as long as their value fits, and Go's current netip.ParseAddr, which refuses both. A value the first
does not take is not an IP at all; a value only the first takes has leading zeros; and a value both take may
still be an IPv4-mapped IPv6 address ("::ffff:1.2.3.4"), which strict validation refuses too. Values an update
keeps from the object it replaces are not checked again (validation ratcheting), so objects written before
the stricter rules can still be updated.

Non-canonical IPv6 spellings ("2001:DB8:0::1") stay valid in these fields: the server only warns of them.
"""

from __future__ import annotations

from collections.abc import Collection

from dralloc.validation import field as f

INVALID_IP = "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"
LEADING_ZEROS = "must not have leading 0s"
IPV4_MAPPED = "must not be an IPv4-mapped IPv6 address"

_DIGITS = frozenset("0123456789")
_HEX = frozenset("0123456789abcdefABCDEF")
_MAPPED_PREFIX = bytes(10) + b"\xff\xff"


class Parsed:
    """An address the historical parser takes: its 16 bytes (an IPv4 address as ::ffff:a.b.c.d, as Go keeps
    it), whether it was written as IPv4, and whether netip.ParseAddr takes the same text."""

    __slots__ = ("packed", "dotted", "strict")

    def __init__(self, packed: bytes, dotted: bool, strict: bool) -> None:
        self.packed, self.dotted, self.strict = packed, dotted, strict

    @property
    def is_ipv4(self) -> bool:
        """IPv4 by family (net.IP.To4): written as IPv4, or an IPv4-mapped IPv6 address."""
        return self.packed[:12] == _MAPPED_PREFIX

    @property
    def mapped(self) -> bool:
        """An IPv4-mapped IPv6 address written in IPv6 notation (netip's Is4In6)."""
        return not self.dotted and self.is_ipv4


def _ipv4(text: str) -> tuple[bytes, bool] | None:
    """Four decimal octets: their bytes and whether none has a leading zero; None when not IPv4."""
    parts = text.split(".")
    if len(parts) != 4:
        return None
    out = bytearray()
    strict = True
    for part in parts:
        if not part or not set(part) <= _DIGITS:
            return None
        significant = part.lstrip("0")  # (leading zeros add nothing: any number of them parses)
        if len(significant) > 3 or int(significant or "0") > 255:
            return None
        value = int(significant or "0")
        if len(part) > 1 and part[0] == "0":
            strict = False
        out.append(value)
    return bytes(out), strict


def _ipv6(text: str) -> tuple[bytes, bool] | None:
    """Up to eight hex groups with at most one "::" and an optional trailing dotted IPv4 address in the
    place of the last two: the 16 bytes and whether no group needs more than four digits (netip's limit)."""
    groups: list[bytes] = []
    strict = True
    ellipsis = -1
    rest = text
    if rest.startswith("::"):
        ellipsis = 0
        rest = rest[2:]
        if not rest:
            return bytes(16), True
    while len(groups) * 2 < 16:
        end = 0
        while end < len(rest) and rest[end] in _HEX:
            end += 1
        if end == 0:
            return None
        if end < len(rest) and rest[end] == ".":
            # a trailing IPv4 address stands for the last two groups
            if (ellipsis < 0 and len(groups) != 6) or len(groups) * 2 + 4 > 16:
                return None
            v4 = _ipv4(rest)
            if v4 is None:
                return None
            groups.extend((v4[0][:2], v4[0][2:]))
            strict = strict and v4[1]
            rest = ""
            break
        significant = rest[:end].lstrip("0")
        if len(significant) > 4:
            return None  # more than 0xFFFF
        value = int(significant or "0", 16)
        if end > 4:
            strict = False
        groups.append(value.to_bytes(2, "big"))
        rest = rest[end:]
        if not rest:
            break
        if rest[0] != ":" or len(rest) == 1:
            return None
        rest = rest[1:]
        if rest[0] == ":":
            if ellipsis >= 0:
                return None
            ellipsis = len(groups)
            rest = rest[1:]
            if not rest:
                break
    if rest:
        return None
    if len(groups) < 8:
        if ellipsis < 0:
            return None
        groups[ellipsis:ellipsis] = [b"\x00\x00"] * (8 - len(groups))
    elif ellipsis >= 0:
        return None  # "::" must stand for at least one group
    return b"".join(groups), strict


def parse(text: str) -> Parsed | None:
    """The address the historical parser reads in ``text`` (None: not an IP address at all)."""
    for ch in text:
        if ch == ".":
            v4 = _ipv4(text)
            return Parsed(_MAPPED_PREFIX + v4[0], True, v4[1]) if v4 else None
        if ch == ":":
            v6 = _ipv6(text)
            return Parsed(v6[0], False, v6[1]) if v6 else None
    return None


def legacy_ip_errors(path: str, value: str, valid_old: Collection[str] = ()) -> list[f.FieldError]:
    """IsValidIPForLegacyField with strict validation: the problems of ``value`` as an IP address, none for a
    value the old object already had."""
    if value in valid_old:
        return []
    parsed = parse(value)
    if parsed is None:
        return [f.invalid(path, value, INVALID_IP)]
    if not parsed.strict:
        return [f.invalid(path, value, LEADING_ZEROS)]
    if parsed.mapped:
        return [f.invalid(path, value, IPV4_MAPPED)]
    return []


def dual_stack(values: list[str]) -> tuple[bool, str | None]:
    """Whether ``values`` hold an IPv4 and an IPv6 address (k8s.io/utils' IsDualStackIPStrings), and the
    error it returns for a value it cannot parse."""
    v4 = v6 = False
    for i, value in enumerate(values):
        parsed = parse(value)
        if parsed is None:
            return False, f"invalid IP[{i}]: {value}"
        if parsed.is_ipv4:
            v4 = True
        else:
            v6 = True
    return v4 and v6, None


def canonical(parsed: Parsed) -> str:
    """Go's net.IP.String of the address: dotted quad for IPv4 (and IPv4-mapped) addresses, else lowercase
    groups without leading zeros and the longest run of two or more zero groups (the first of equals) as
    "::"."""
    if parsed.is_ipv4:
        return ".".join(str(b) for b in parsed.packed[12:])
    groups = [int.from_bytes(parsed.packed[i:i + 2], "big") for i in range(0, 16, 2)]
    best_at, best_len = -1, 0
    i = 0
    while i < 8:
        if groups[i] == 0:
            j = i
            while j < 8 and groups[j] == 0:
                j += 1
            if j - i > best_len:
                best_at, best_len = i, j - i
            i = j
        else:
            i += 1
    if best_len < 2:
        return ":".join(f"{g:x}" for g in groups)
    head = ":".join(f"{g:x}" for g in groups[:best_at])
    tail = ":".join(f"{g:x}" for g in groups[best_at + best_len:])
    return f"{head}::{tail}"


def warnings_for_ip(path: str, value: str) -> list[str]:
    """GetWarningsForIP: what the server says of a value a legacy IP field accepted but that is not in its
    standard form."""
    parsed = parse(value)
    if parsed is None:
        return []
    if not parsed.strict or parsed.mapped:
        return [f"{path}: non-standard IP address {f.go_quote(value)} will be considered invalid in a future "
                f"Kubernetes release: use {f.go_quote(canonical(parsed))}"]
    if not parsed.dotted and canonical(parsed) != value:
        return [f"{path}: IPv6 address {f.go_quote(value)} should be in RFC 5952 canonical format "
                f"({f.go_quote(canonical(parsed))})"]
    return []
