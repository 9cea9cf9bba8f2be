"""resource.Quantity: parsing, canonical form, ordering and arithmetic as k8s.io/apimachinery does them."""

from __future__ import annotations

import time
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dralloc import Quantity
from dralloc.api.quantity import ERR_FORMAT_WRONG, ERR_SUFFIX

CANONICAL = [
    # input, canonical string, format
    ("0", "0", "DecimalSI"),
    ("1", "1", "DecimalSI"),
    ("1000m", "1", "DecimalSI"),
    ("0.5", "500m", "DecimalSI"),
    ("0.1", "100m", "DecimalSI"),
    ("1.5", "1500m", "DecimalSI"),
    ("1.2345", "1234500u", "DecimalSI"),
    ("1000", "1k", "DecimalSI"),
    ("1500k", "1500k", "DecimalSI"),
    ("1000000k", "1G", "DecimalSI"),
    ("100M", "100M", "DecimalSI"),
    ("1.5Gi", "1536Mi", "BinarySI"),
    ("1024Ki", "1Mi", "BinarySI"),
    ("1536Ki", "1536Ki", "BinarySI"),
    ("80Gi", "80Gi", "BinarySI"),
    ("0.5Ki", "512", "BinarySI"),  # below 1024 a BinarySI value prints as DecimalSI
    ("0.1Ki", "102400m", "BinarySI"),
    ("8Ei", "9223372036854775807", "BinarySI"),  # BinarySI is capped at 2^63-1
    ("1e3", "1e3", "DecimalExponent"),
    ("12e6", "12e6", "DecimalExponent"),
    ("1000e0", "1e3", "DecimalExponent"),
    ("0.9n", "1n", "DecimalSI"),  # finer than nano rounds away from zero
    ("0.000000001", "1n", "DecimalSI"),
    ("1.0000000001", "1000000001n", "DecimalSI"),
    ("-1500m", "-1500m", "DecimalSI"),
    ("-0.5Ki", "-512", "BinarySI"),
    ("18446744073709551616", "18446744073709551616", "DecimalSI"),  # decimals are not capped
    ("1000E", "1e21", "DecimalSI"),  # beyond "E" there is no suffix: e-notation keeps the value
    ("1E3", "1E3", "DecimalExponent"),  # already-canonical input is kept verbatim, as upstream does
    ("+1", "+1", "DecimalSI"),
    ("1.", "1.", "DecimalSI"),
    (".5", "500m", "DecimalSI"),
    ("Gi", "0", "BinarySI"),  # upstream's scanner reads a missing number as zero
]


@pytest.mark.parametrize(("text", "canonical", "fmt"), CANONICAL)
def test_parse_gives_upstreams_canonical_string_and_format(text, canonical, fmt):
    q = Quantity(text)
    assert str(q) == canonical
    assert q.format == fmt


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", ERR_FORMAT_WRONG),
        ("1 Gi", ERR_FORMAT_WRONG),
        ("1.2.3", ERR_FORMAT_WRONG),
        ("1KiB", ERR_FORMAT_WRONG),
        (" 1", ERR_FORMAT_WRONG),
        ("1 ", ERR_FORMAT_WRONG),
        ("abc", ERR_FORMAT_WRONG),
        ("1i", ERR_SUFFIX),
        ("1K", ERR_SUFFIX),
        ("1e", ERR_SUFFIX),
        ("1Gb", ERR_FORMAT_WRONG),
        ("1mi", ERR_SUFFIX),
        ("1e2147483648", ERR_SUFFIX),  # the exponent must fit an int32
    ],
)
def test_malformed_strings_are_rejected_with_upstreams_message(text, message):
    with pytest.raises(ValueError) as err:
        Quantity(text)
    assert str(err.value) == message


def test_a_hostile_exponent_is_rejected_or_kept_symbolic_quickly():
    start = time.perf_counter()
    with pytest.raises(ValueError):
        Quantity("1e2147483648")
    big = Quantity("1e2147483647")
    assert big > Quantity("1") and str(big) == "10e2147483646"  # exponent lowered to a multiple of 3
    assert time.perf_counter() - start < 0.1


def test_value_and_milli_value_round_away_from_zero():
    assert Quantity("1500m").value() == 2
    assert Quantity("-1500m").value() == -2
    assert Quantity("1.0001m").milli_value() == 2
    assert Quantity("1Gi").value() == 1 << 30
    assert Quantity("1").milli_value() == 1000


def test_equal_values_compare_and_hash_equal_across_formats():
    assert Quantity("1Gi") == Quantity("1073741824")
    assert hash(Quantity("1Gi")) == hash(Quantity("1073741824"))
    assert Quantity("1k") == Quantity("1e3") == Quantity("1000000m")
    assert Quantity("1Ki") > Quantity("1k")


def test_addition_keeps_the_left_format_unless_it_is_zero():
    assert str(Quantity("1Gi") + Quantity("512Mi")) == "1536Mi"
    assert str(Quantity("1") + Quantity("500m")) == "1500m"
    assert (Quantity("0") + Quantity("1Ki")).format == "BinarySI"
    assert str(Quantity("1Gi") - Quantity("1Gi")) == "0"
    assert str(Quantity("1Ki") * 3) == "3Ki"
    assert str(-Quantity("1Ki")) == "-1Ki"


def test_integers_become_decimal_si_quantities():
    assert str(Quantity(1000)) == "1k"
    assert str(Quantity(1536)) == "1536"
    assert Quantity(5) == Quantity("5")


def test_as_int64_is_none_for_fractions_and_overflow():
    assert Quantity("1k").as_int64() == 1000
    assert Quantity("1500m").as_int64() is None
    assert Quantity("1e19").as_int64() is None


# --- properties -------------------------------------------------------------------------------------

_DECIMAL = ["n", "u", "m", "", "k", "M", "G", "T", "P", "E"]
_BINARY = ["Ki", "Mi", "Gi", "Ti", "Pi"]
_SCALE = {"n": Fraction(1, 10**9), "u": Fraction(1, 10**6), "m": Fraction(1, 1000), "": 1, "k": 10**3,
          "M": 10**6, "G": 10**9, "T": 10**12, "P": 10**15, "E": 10**18,
          "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50}


@st.composite
def quantity_texts(draw):
    whole = draw(st.integers(0, 10**6))
    frac = draw(st.one_of(st.just(""), st.integers(0, 999).map(lambda f: f".{f:03d}")))
    suffix = draw(st.sampled_from(_DECIMAL + _BINARY))
    sign = draw(st.sampled_from(["", "-"]))
    return f"{sign}{whole}{frac}{suffix}"


def _exact(text: str) -> Fraction:
    sign = -1 if text.startswith("-") else 1
    body = text.lstrip("-")
    for suffix in sorted(_SCALE, key=len, reverse=True):
        if suffix and body.endswith(suffix):
            return sign * Fraction(body[: -len(suffix)]) * _SCALE[suffix]
    return sign * Fraction(body)


@given(quantity_texts())
def test_canonical_strings_parse_back_to_themselves(text):
    canonical = str(Quantity(text))
    assert str(Quantity(canonical)) == canonical
    assert Quantity(canonical) == Quantity(text)


@given(quantity_texts(), quantity_texts())
def test_ordering_agrees_with_exact_rationals(a, b):
    qa, qb = Quantity(a), Quantity(b)
    fa, fb = qa.as_fraction(), qb.as_fraction()
    assert (qa < qb) == (fa < fb)
    assert (qa == qb) == (fa == fb)


@given(quantity_texts())
def test_values_are_exact_up_to_nano_rounding(text):
    exact = _exact(text)
    q = Quantity(text)
    if exact.denominator == 1 or (exact * 10**9).denominator == 1:
        assert q.as_fraction() == exact or (q.format == "BinarySI" and abs(exact) > 2**63 - 1)


@given(quantity_texts(), quantity_texts())
def test_addition_then_subtraction_is_identity(a, b):
    qa, qb = Quantity(a), Quantity(b)
    assert (qa + qb) - qb == qa


@given(quantity_texts())
def test_value_and_milli_value_are_ceilings_away_from_zero(text):
    q = Quantity(text)
    f = q.as_fraction()
    v, mv = q.value(), q.milli_value()
    assert abs(v) >= abs(f) and abs(v) - abs(f) < 1
    assert abs(mv) >= abs(f * 1000) and abs(mv) - abs(f * 1000) < 1


# Cases of the same kind as upstream's parse table: input → (exact value as mantissa, exponent), format.
PARSE_TABLE = [
    ("0n", 0, 0, "DecimalSI"), ("0Ki", 0, 0, "BinarySI"), ("0T", 0, 0, "DecimalSI"),
    ("7Mi", 7 * 2**20, 0, "BinarySI"), ("3Ei", 3 * 2**60, 0, "BinarySI"), ("100Ti", 100 * 2**40, 0, "BinarySI"),
    ("5n", 5, -9, "DecimalSI"), ("50k", 5, 4, "DecimalSI"), ("300T", 3, 14, "DecimalSI"), ("1E", 1, 18, "DecimalSI"),
    ("1E-3", 1, -3, "DecimalExponent"), ("1E18", 1, 18, "DecimalExponent"), ("100.035k", 100035, 0, "DecimalSI"),
    ("0.0005k", 5, -1, "DecimalSI"), ("0.00050k", 5, -1, "DecimalSI"), ("0.5e-2", 5, -3, "DecimalExponent"),
    ("1.3E+6", 13, 5, "DecimalExponent"), ("1.53E12", 153, 10, "DecimalExponent"), ("6.987654321G", 6987654321, 0,
    "DecimalSI"), ("1.01E", 101, 16, "DecimalSI"), ("3.001n", 4, -9, "DecimalSI"), ("1.1E-9", 2, -9,
    "DecimalExponent"), ("0.0000000005", 1, -9, "DecimalSI"), ("0.00000012354", 124, -9, "DecimalSI"),
    ("9Ei", 2**63 - 1, 0, "BinarySI"), ("9223372036854775807Ki", 2**63 - 1, 0, "BinarySI"), ("12E", 12, 18,
    "DecimalSI"), ("100.035Ki", 10243584, -2, "BinarySI"), ("0.05Gi", 536870912, -1, "BinarySI"),
    ("0.000000000001Ki", 2, -9, "DecimalSI"), (".0001k", 100, -3, "DecimalSI"), ("1.G", 1, 9, "DecimalSI"),
]


@pytest.mark.parametrize(("text", "mantissa", "exponent", "fmt"), PARSE_TABLE)
def test_parse_table_values_and_formats(text, mantissa, exponent, fmt):
    q = Quantity(text)
    assert q.as_fraction() == Fraction(mantissa) * Fraction(10) ** exponent
    assert q.format == fmt
    neg = Quantity("-" + text)
    assert neg.as_fraction() == -q.as_fraction() and neg.format == fmt
    assert Quantity("+" + text) == q


@pytest.mark.parametrize("text", ["1.1.M", "1+1.0M", "0.1mi", "0.1am", "aoeu", ".5i", "1i", "-3.01i", "-3.01e-"])
def test_upstreams_invalid_inputs_are_rejected(text):
    with pytest.raises(ValueError):
        Quantity(text)


@pytest.mark.parametrize(
    ("value", "fmt", "expect"),
    [((1024**3, 0), "BinarySI", "1Gi"), ((300 * 2**20, 0), "BinarySI", "300Mi"), ((5, 0), "BinarySI", "5"),
     ((500, -3), "BinarySI", "500m"), ((1000, 6), "DecimalSI", "1G"), ((108, -2), "DecimalSI", "1080m"),
     ((1234567, -3), "BinarySI", "1234567m"), ((1025, 0), "BinarySI", "1025"), ((1, 9), "DecimalExponent", "1e9"),
     ((80, -3), "DecimalExponent", "80e-3"), ((300, 6), "DecimalExponent", "300e6")],
)
def test_string_table(value, fmt, expect):
    assert str(Quantity.from_scaled(*value, format=fmt)) == expect


def test_negation_is_exact():
    assert str(-Quantity.from_scaled(901, -2)) == "-9010m"
