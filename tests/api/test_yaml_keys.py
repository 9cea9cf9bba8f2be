"""YAML mapping keys that are not strings become JSON keys as sigs.k8s.io/yaml writes them (kubectl and
kube-apiserver both convert YAML that way), whichever of the two YAML builders reads the document."""

from __future__ import annotations

import math
import struct

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from dralloc.api.parsing import load_yaml_documents
from dralloc.api.yaml_keys import UnsupportedKey, float_key


@pytest.mark.parametrize(("value", "text"), [
    (1.5, "1.5"), (80.0, "80"), (1e6, "1e+06"), (123456.0, "123456"), (1234567.0, "1.234567e+06"),
    (0.0001, "0.0001"), (0.00001, "1e-05"), (3.14159265358979, "3.1415927"), (0.1, "0.1"),
    (16777217.0, "1.6777216e+07"), (-2.5, "-2.5"), (0.0, "0"), (-0.0, "-0"), (1e39, ".inf"),
    (-1e39, "-.inf"), (math.inf, ".inf"), (math.nan, ".nan"), (1.25e-7, "1.25e-07"),
])
def test_a_float_key_is_written_as_gos_shortest_float32_text(value: float, text: str) -> None:
    assert float_key(value) == text


def _float32(value: float) -> float:
    return float(struct.unpack("f", struct.pack("f", value))[0])


@given(st.floats(width=32, allow_nan=False, allow_infinity=False))
def test_a_float_key_reads_back_as_the_same_float32_with_no_digit_to_spare(value: float) -> None:
    text = float_key(value)
    assert _float32(float(text)) == value
    digits = text.lstrip("-").split("e")[0].replace(".", "").strip("0") or "0"  # (the significant ones)
    if len(digits) > 1:  # one digit fewer no longer names the same float32
        assert _float32(float(f"{value:.{len(digits) - 2}e}")) != value


BOTH_BUILDERS = [
    "",  # the event builder
    "base: &base {q: 1}\nmerged: {<<: *base, 7: x}\n",  # a merge key: the node-based loader reads it all
]


@pytest.mark.parametrize("prefix", BOTH_BUILDERS)
def test_keys_that_are_not_strings_become_their_json_text(prefix: str) -> None:
    text = prefix + "data: {1: a, 1.0e+6: b, 80.0: c, true: d, 0x1F: e, 2.50: f, '3': g}\n"
    data = load_yaml_documents(text)[0][1]
    assert data["data"] == {"1": "a", "1e+06": "b", "80": "c", "true": "d", "31": "e", "2.5": "f", "3": "g"}
    if prefix:
        assert data["merged"] == {"q": 1, "7": "x"}


@pytest.mark.parametrize("prefix", BOTH_BUILDERS)
@pytest.mark.parametrize(("body", "message"), [
    ("a: {~: x}\n", 'unsupported map key of type: %!s(<nil>), key: <nil>, value: "x"'),
    ("a: {null: 1}\n", "unsupported map key of type: %!s(<nil>), key: <nil>, value: 1"),
])
def test_a_null_key_is_refused_as_go_refuses_it(prefix: str, body: str, message: str) -> None:
    with pytest.raises(UnsupportedKey) as raised:
        load_yaml_documents(prefix + body)
    assert message in str(raised.value)


def test_a_collection_as_a_key_is_refused() -> None:
    with pytest.raises(yaml.YAMLError, match="found unhashable key"):
        load_yaml_documents("a: {[1]: x}\n")


def test_an_aliased_scalar_as_a_key_is_its_text() -> None:
    assert load_yaml_documents("x: &k 12\ny: {*k : 2}\n")[0][1] == {"x": 12, "y": {"12": 2}}
