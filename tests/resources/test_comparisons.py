"""The nine comparisons: the design note's truth tables, their definitions and identities (hypothesis)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dralloc.cli.main import main
from dralloc.errors import InputError
from dralloc.resources import COMPARISONS, ResourceList, compare_all

# Seed 001 ("Resource Comparison", volcano design note): L, R, default → Less, LessEqual, LessPartly, LessEqualPartly.
SEED_TABLES = [
    ("cpu=1,memory=1G", "cpu=2,memory=2G,gpu=2", "zero", (True, True, True, True)),
    ("cpu=1,memory=1G", "cpu=2,memory=2G,gpu=2", "infinity", (False, False, True, True)),
    ("cpu=1,memory=1G,gpu=1", "cpu=2,memory=2G", "zero", (False, False, True, True)),
    ("cpu=1,memory=1G,gpu=1", "cpu=2,memory=2G", "infinity", (True, True, True, True)),
    ("cpu=1,memory=1G", "gpu=2", "zero", (False, False, True, True)),
    ("cpu=1,memory=1G", "gpu=2", "infinity", (False, False, True, True)),
]

# The "Example" column of the note's function table.
SEED_EXAMPLES = [
    ("less", "cpu=1,memory=2G", "cpu=2,memory=4G"),
    ("less_equal", "cpu=1,memory=2G", "cpu=1,memory=4G"),
    ("less_partly", "cpu=4,memory=2G", "cpu=2,memory=4G"),
    ("less_equal_partly", "cpu=4,memory=2G", "cpu=2,memory=2G"),
    ("equal", "cpu=1,memory=2G", "cpu=1,memory=2G"),
    ("greater", "cpu=2,memory=4G", "cpu=1,memory=2G"),
    ("greater_equal", "cpu=2,memory=4G", "cpu=2,memory=2G"),
    ("greater_partly", "cpu=4,memory=2G", "cpu=2,memory=4G"),
    ("greater_equal_partly", "cpu=2,memory=2G", "cpu=2,memory=4G"),
]


@pytest.mark.parametrize("left,right,missing,expected", SEED_TABLES)
def test_seed_truth_tables(left: str, right: str, missing: str, expected: tuple[bool, ...]) -> None:
    lhs, rhs = ResourceList.parse(left), ResourceList.parse(right)
    got = (lhs.less(rhs, missing), lhs.less_equal(rhs, missing), lhs.less_partly(rhs, missing),
           lhs.less_equal_partly(rhs, missing))
    assert got == expected


@pytest.mark.parametrize("name,left,right", SEED_EXAMPLES)
def test_seed_examples_hold(name: str, left: str, right: str) -> None:
    assert getattr(ResourceList.parse(left), name)(ResourceList.parse(right), "zero")


# Seed identities: each greater* is the negation of a less* form.
NEGATIONS = {"greater": "less_equal_partly", "greater_equal": "less_partly",
             "greater_partly": "less_equal", "greater_equal_partly": "less"}

names = st.sampled_from(["cpu", "memory", "pods", "nvidia.com/gpu", "hugepages-2Mi"])
values = st.integers(min_value=0, max_value=5).map(str) | st.sampled_from(["500m", "1.5", "1Gi", "1G", "0"])
lists = st.dictionaries(names, values, max_size=4)


def _reference(name: str, left: dict[str, str], right: dict[str, str], missing: str) -> bool:
    """The definition, written independently: values as exact rationals, infinity as None."""
    from fractions import Fraction

    from dralloc.api.quantity import Quantity

    def value(side: dict[str, str], k: str) -> Fraction | None:
        if k in side:
            return Quantity(side[k]).as_fraction()
        return Fraction(0) if missing == "zero" else None

    def rel(op: str, a: Fraction | None, b: Fraction | None) -> bool:
        inf_a, inf_b = a is None, b is None
        if inf_a or inf_b:  # only one side can be infinite
            return {"<": inf_b, "<=": inf_b, "==": False, ">": inf_a, ">=": inf_a}[op]
        return {"<": a < b, "<=": a <= b, "==": a == b, ">": a > b, ">=": a >= b}[op]

    op = {"less": "<", "less_equal": "<=", "equal": "==", "greater": ">", "greater_equal": ">="}[
        name.replace("_partly", "")]
    dims = set(left) | set(right)
    checks = [rel(op, value(left, k), value(right, k)) for k in dims]
    return any(checks) if name.endswith("_partly") else all(checks)


@given(lists, lists, st.sampled_from(["zero", "infinity"]))
def test_all_nine_agree_with_their_definitions(left: dict[str, str], right: dict[str, str], missing: str) -> None:
    got = compare_all(left, right, missing)
    for name in COMPARISONS:
        assert got[name] == _reference(name, left, right, missing), name


@given(lists, lists, st.sampled_from(["zero", "infinity"]))
def test_greater_forms_negate_the_less_forms(left: dict[str, str], right: dict[str, str], missing: str) -> None:
    got = compare_all(left, right, missing)
    for greater, less in NEGATIONS.items():
        assert got[greater] == (not got[less])


@given(lists, lists)
def test_equal_is_symmetric(left: dict[str, str], right: dict[str, str]) -> None:
    assert ResourceList(left).equal(right) == ResourceList(right).equal(left)


def test_comparison_is_exact_not_epsilon() -> None:
    # Volcano treats |l - r| < 0.1 as equal; dralloc does not.
    assert ResourceList.parse("cpu=1m").less(ResourceList.parse("cpu=2m"))
    assert not ResourceList.parse("memory=1").equal(ResourceList.parse("memory=0"))


def test_empty_union() -> None:
    empty = ResourceList()
    assert empty.less(empty) and empty.equal(empty) and not empty.less_partly(empty)


def test_parse_and_arithmetic() -> None:
    a = ResourceList.parse(" cpu=1500m , memory=1.5Gi,nvidia.com/gpu=2")
    assert a.as_dict() == {"cpu": "1500m", "memory": "1536Mi", "nvidia.com/gpu": "2"}
    assert list(a) == ["cpu", "memory", "nvidia.com/gpu"]
    b = ResourceList({"cpu": "500m", "pods": 1})
    assert (a + b).as_dict()["cpu"] == "2"
    assert (a - b).as_dict()["cpu"] == "1"
    assert a.scale(2).as_dict() == {"cpu": "3", "memory": "3Gi", "nvidia.com/gpu": "4"}
    assert a.max(b).as_dict() == {"cpu": "1500m", "memory": "1536Mi", "nvidia.com/gpu": "2", "pods": "1"}
    assert a.min(b).as_dict()["memory"] == "0"
    assert (a - a).is_zero()
    assert ResourceList.parse("") == ResourceList()


@pytest.mark.parametrize("text", ["cpu", "cpu=", "=1", "cpu=1,cpu=2", "cpu=1 Gi", "cpu=abc"])
def test_parse_errors_are_input_errors(text: str) -> None:
    with pytest.raises(InputError):
        ResourceList.parse(text)


def test_missing_must_be_zero_or_infinity() -> None:
    with pytest.raises(InputError):
        ResourceList().less(ResourceList(), "none")


def test_compare_cli_json(capsys) -> None:
    assert main(["compare", "cpu=1,memory=1G", "cpu=2,memory=2G,gpu=2", "--missing", "infinity", "-o", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert list(out) == list(COMPARISONS)
    assert out["less"] is False and out["less_partly"] is True


@pytest.mark.slow
def test_compare_cli_process() -> None:
    proc = subprocess.run([sys.executable, "-m", "dralloc", "compare", "cpu=1", "cpu=2"], capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 0
    assert proc.stdout.splitlines()[0].split() == ["less", "true"]
    bad = subprocess.run([sys.executable, "-m", "dralloc", "compare", "cpu=1", "cpu=x"], capture_output=True,
                         text=True, timeout=60)
    assert bad.returncode == 2 and "Traceback" not in bad.stderr
