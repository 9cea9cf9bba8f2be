"""IP addresses as kube-apiserver's legacy IP fields read them in 1.36 (StrictIPCIDRValidation on): the
historical parser's reach, the strict rules on top of it, ratcheting, dual stack and the warnings."""

from __future__ import annotations

import ipaddress

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dralloc.validation import ips
from dralloc.validation.field import go_quote


@pytest.mark.parametrize("value", ["1.2.3.4", "0.0.0.0", "255.255.255.255", "1234::abcd", "::", "::1",
                                   "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "1:2:3:4:5:6:7::", "::1:2:3:4:5:6:7",
                                   "1:2:3:4:5:6:1.2.3.4", "1::1.2.3.4", "0:0:0:0:0:0:0:0", "2001:DB8::1"])
def test_a_valid_address_has_no_error_even_when_not_canonical(value: str) -> None:
    assert ips.legacy_ip_errors("status.podIPs[0]", value) == []


@pytest.mark.parametrize("value,detail", [
    ("1.1.1.01", "must not have leading 0s"),
    ("010.002.003.004", "must not have leading 0s"),
    ("00001::", "must not have leading 0s"),  # more than four digits in a group
    ("::1.02.3.4", "must not have leading 0s"),
    ("::ffff:1.1.1.1", "must not be an IPv4-mapped IPv6 address"),
    ("::ffff:101:101", "must not be an IPv4-mapped IPv6 address"),
    ("", "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"),
    ("aaaaaaa", "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"),
    ("1.2.3.0/24", "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"),
    ("1.2.3.400", "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"),
    ("-1.0.0.0", "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"),
    ("2001:db8::10005", "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"),
    ("1.2.3.4:80", "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"),
    ("[2001:db8::1]", "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"),
    ("1234::abcd%eth0", "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"),
    ("1:2:3:4:5:6:7:8::", "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"),
    ("1:2:3:4:5:1.2.3.4", "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"),
    ("1" * 5000 + ".1.1.1", "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"),
])
def test_an_address_strict_validation_refuses_gets_upstreams_one_error(value: str, detail: str) -> None:
    errors = ips.legacy_ip_errors("status.podIPs[1]", value)
    assert [str(e) for e in errors] == [f"status.podIPs[1]: Invalid value: {go_quote(value)}: {detail}"]
    # a value the old object had is kept as it is (validation ratcheting)
    assert ips.legacy_ip_errors("status.podIPs[1]", value, [value]) == []


def test_dual_stack_wants_one_address_of_each_family_and_says_which_one_it_could_not_parse() -> None:
    assert ips.dual_stack(["10.0.0.1", "fd00::1"]) == (True, None)
    assert ips.dual_stack(["10.0.0.1", "::ffff:10.0.0.2"]) == (False, None)  # an IPv4-mapped address is IPv4
    assert ips.dual_stack(["10.0.0.1", "x"]) == (False, "invalid IP[1]: x")


@pytest.mark.parametrize("value,warning", [
    ("2001:DB8:0:0::1", 'IPv6 address "2001:DB8:0:0::1" should be in RFC 5952 canonical format ("2001:db8::1")'),
    ("1:0:0:1:0:0:0:1", 'IPv6 address "1:0:0:1:0:0:0:1" should be in RFC 5952 canonical format ("1:0:0:1::1")'),
    ("010.1.1.1", 'non-standard IP address "010.1.1.1" will be considered invalid in a future Kubernetes release: '
                  'use "10.1.1.1"'),
    ("::ffff:1.2.3.4", 'non-standard IP address "::ffff:1.2.3.4" will be considered invalid in a future '
                       'Kubernetes release: use "1.2.3.4"'),
])
def test_an_address_in_a_form_other_than_its_standard_one_is_warned_of(value: str, warning: str) -> None:
    assert ips.warnings_for_ip("status.podIPs[0].ip", value) == [f"status.podIPs[0].ip: {warning}"]
    assert ips.warnings_for_ip("x", "2001:db8::1") == ips.warnings_for_ip("x", "10.1.1.1") == []


IPISH = st.text(alphabet="0123456789abcdefABCDEF:.%x/ ", max_size=45)
ADDRESSES = st.ip_addresses().flatmap(lambda a: st.sampled_from([str(a), a.exploded, str(a).upper()]))


@pytest.mark.slow
@settings(max_examples=2000, deadline=None)
@given(st.one_of(IPISH, ADDRESSES, st.text(max_size=20)))
def test_strict_validity_is_what_pythons_ipaddress_takes_and_the_bytes_agree(value: str) -> None:
    # Python's ipaddress takes what Go's netip.ParseAddr takes, but for IPv6 zones (not IP addresses here)
    try:
        expected = ipaddress.ip_address(value) if "%" not in value else None
    except ValueError:
        expected = None
    parsed = ips.parse(value)
    strict = parsed is not None and parsed.strict
    assert strict == (expected is not None), value
    if expected is not None and parsed is not None:
        packed = expected.packed if expected.version == 6 else bytes(10) + b"\xff\xff" + expected.packed
        assert parsed.packed == packed
        assert parsed.mapped == (expected.version == 6 and expected.ipv4_mapped is not None)
        if not parsed.mapped:
            assert ips.canonical(parsed) == str(expected)  # RFC 5952, as Go prints it
    # and no input ever raises
    ips.legacy_ip_errors("p", value, ())
    ips.warnings_for_ip("p", value)
