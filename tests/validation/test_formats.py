"""String formats against their definitions (hypothesis) and upstream's table cases."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from dralloc.validation.field import aggregate_message, invalid, required, too_long, too_many
from dralloc.validation.formats import (
    is_c_identifier,
    is_dns1123_label,
    is_dns1123_subdomain,
    is_extended_resource_name,
    is_label_value,
    is_qualified_name,
    is_semver,
    uuid_problem,
)

ALPHABET = "abcXYZ019-_.:/ "
texts = st.text(alphabet=ALPHABET, max_size=70)


@given(texts)
def test_dns_label_matches_its_definition(value: str) -> None:
    ok = len(value) <= 63 and re.fullmatch(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?", value) is not None
    assert (is_dns1123_label(value) == []) == ok


@given(st.text(alphabet="abc0-.", max_size=300))
def test_dns_subdomain_matches_its_definition(value: str) -> None:
    label = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"
    ok = len(value) <= 253 and re.fullmatch(rf"{label}(\.{label})*", value) is not None
    assert (is_dns1123_subdomain(value) == []) == ok


@given(texts)
def test_c_identifier_matches_its_definition(value: str) -> None:
    assert (is_c_identifier(value) == []) == (re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", value) is not None)


@given(texts)
def test_label_value_matches_its_definition(value: str) -> None:
    ok = len(value) <= 63 and re.fullmatch(r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?", value) is not None
    assert (is_label_value(value) == []) == ok


def test_qualified_names() -> None:
    assert is_qualified_name("example.com/MyName") == []
    assert is_qualified_name("a/b/c")[0].startswith("a valid label key must consist of")
    assert is_qualified_name("/a") == ["prefix part must be non-empty"]
    assert is_qualified_name("a" * 64) == ["name part must be no more than 63 bytes"]


def test_label_errors_distinguish_dots() -> None:
    assert is_dns1123_label("a.b") == ["must not contain dots"]
    assert is_dns1123_label("a" * 64) == ["must be no more than 63 bytes"]


def test_semver() -> None:
    for good in ("1.0.0", "0.1.2-alpha.1+build.5", "535.104.5", "1.2.3-0a"):
        assert is_semver(good), good
    for bad in ("1.2", "v1.2.3", "01.2.3", "1.2.3-01", "1.2.3+", ""):
        assert not is_semver(bad), bad


def test_uuids() -> None:
    assert uuid_problem("7e2b6f2e-6a57-4c0e-9d55-2f1c1b0f6d0a") is None
    assert uuid_problem("abc") == "invalid UUID length: 3"
    assert uuid_problem("7e2b6f2e-6a57-4c0e-9d55-2f1c1b0f6d0z") == "invalid UUID format"


def test_extended_resource_names() -> None:
    assert is_extended_resource_name("example.com/gpu")
    for bad in ("gpu", "kubernetes.io/gpu", "requests.example.com/gpu", "example.com/a b"):
        assert not is_extended_resource_name(bad), bad


def test_error_texts_follow_upstream() -> None:
    assert str(required("spec.driver")) == "spec.driver: Required value"
    assert str(too_long("a", 64)) == "a: Too long: may not be more than 64 bytes"
    assert str(too_many("spec.devices", 129, 128)) == "spec.devices: Too many: 129: must have at most 128 items"
    assert str(invalid("x", 3, "bad")) == "x: Invalid value: 3: bad"
    assert str(invalid("x", "q\"", "bad")) == 'x: Invalid value: "q\\"": bad'
    assert str(invalid("x", None, "bad")) == "x: Invalid value: null: bad"


def test_aggregate_message_brackets_many_and_drops_repeats() -> None:
    a, b = required("a"), required("b")
    assert aggregate_message([a]) == "a: Required value"
    assert aggregate_message([a, b, a]) == "[a: Required value, b: Required value]"
