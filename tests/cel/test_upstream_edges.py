"""Selector expressions on the edges where cel-go and the Kubernetes CEL libraries (1.36) behave in ways a
straightforward implementation would not: int64 extremes, Semver attributes under == and string(), has()
on the domain maps, quantities that Go keeps as inf.Dec, the list functions on values that do not order.
Each expected answer is upstream's, with the reason from its source beside it."""

from __future__ import annotations

import io

import pytest

from dralloc import load
from dralloc.cel import CELRuntimeError, compile_selector

DRIVER = "gpu.example.com"

SLICE = """\
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: edges}
spec:
  driver: gpu.example.com
  nodeName: n
  pool: {name: n, resourceSliceCount: 1}
  devices:
  - name: edges
    attributes:
      maxInt: {int: 9223372036854775807}
      minInt: {int: -9223372036854775808}
      version: {version: 1.2.3}
      versions: {versions: ["1.2.3", "1.0.0"]}
      model: {string: a100}
    capacity:
      big: {value: 100Ei}
      digits19: {value: "9223372036854775807"}
      pebi: {value: 1Pi}
      tebi: {value: 1Ti}
"""

A = 'device.attributes["gpu.example.com"]'
C = 'device.capacity["gpu.example.com"]'

CASES = [
    # int64 extremes: the attribute holds the exact value; overflow is a runtime error, as cel-go's checked math
    (f"{A}.maxInt == 9223372036854775807", True),
    (f"{A}.minInt == -9223372036854775808", True),
    (f"{A}.maxInt == 9223372036854775807u", True),
    (f"{A}.minInt / -1 == 0", "integer overflow"),
    (f"{A}.minInt % -1 == 0", "integer overflow"),
    (f"-{A}.minInt > 0", "integer overflow"),
    (f"{A}.maxInt + 1 > 0", "integer overflow"),
    (f"{A}.maxInt / 0 == 0", "division by zero"),
    # doubleToInt64Checked refuses only at or beyond ±2^63: the largest double below 2^63 converts
    (f"int(double({A}.maxInt)) > 0", "integer overflow"),
    (f"int(double({A}.maxInt - 1023)) == 9223372036854774784", True),
    # Semver.Equal answers "no such overload" for another type; String.Equal(semver) is false; != never fails
    (f'{A}.version == "1.2.3"', "no such overload"),
    (f'"1.2.3" == {A}.version', False),
    (f'{A}.version != "1.2.3"', True),
    (f'{A}.version == semver("1.2.3")', True),
    (f'{A}.version == null', False),
    (f'{A}.version in ["1.2.3"]', False),
    # list equality stops only at an element that is false: the erring Semver comparisons count as equal
    (f'{A}.versions == ["x", "y"]', True),
    (f'{A}.versions == ["x"]', False),
    # string() has no overload for a Semver (it reaches string() as dyn, so the check passes)
    (f'string({A}.version) == "1.2.3"', "no such overload: string(kubernetes.Semver)"),
    # the domain maps find every domain (an empty map for an unknown one): has() and .? see it, `in` does not
    ("has(device.attributes.other)", True),
    ("has(device.capacity.other)", True),
    ("device.attributes.?other.hasValue()", True),
    ('device.attributes[?"other"].orValue({"x": 1}).size() == 0', True),
    ('"other" in device.attributes', False),
    ('has(device.attributes["other"].model)', False),
    (f"has({A}.model)", True),
    (f"has({A}.nosuch)", False),
    # quantities Go holds as inf.Dec never convert with AsInt64: 100Ei (capped at 2^63-1), 19 digits, 1Pi
    (f"{C}.big.isInteger()", False),
    (f"{C}.big.asInteger() > 0", "cannot convert value to integer"),
    (f"{C}.digits19.isInteger()", False),
    (f"{C}.pebi.isInteger()", False),
    (f"{C}.tebi.asInteger() == 1099511627776", True),
    ('quantity("1000m").isInteger()', False),  # int64Amount{1000, -3}: a negative scale never converts
    ('quantity("1.0").isInteger()', False),
    ('quantity("50k").add(20).sub(quantity("100k")).sub(-50000).asInteger() == 20', True),
    ('quantity("1Ti").add(quantity("3Ti")).isInteger()', True),
    ('quantity("1023Ti").isInteger()', False),  # 15 - 4 digits - 40*3/10 - 1 < 0: off the fast path
    # int64Amount + int64Amount that fits stays one, though its 19-digit string would parse to inf.Dec
    ('quantity("1E").add(1).isInteger()', True),
    ('quantity("1Pi").sub(quantity("1Pi")).isInteger()', False),  # an inf.Dec stays one, even at zero
    (f"{C}.tebi.add({C}.pebi).isInteger()", False),
    # cel-go's sort(): the first element must be a Comparer; Kubernetes' Semver is not one
    (f"{A}.versions.sort().size() == 2", "list elements must be comparable"),
    # the Kubernetes lists library dispatches a dyn list on its first element's type
    (f"{A}.versions.isSorted()", "no such overload: isSorted(list)"),
    (f'{A}.versions.min() == semver("1.0.0")', "no such overload: min(list)"),
    # and ignores a comparison that errs between two Comparers
    ('[0, 1].map(x, x == 0 ? dyn(1) : dyn("a")).isSorted()', True),
    ('[0, 1, 2].map(x, x == 1 ? dyn("a") : dyn(2 - x)).min() == 0', True),
]


@pytest.fixture(scope="module")
def device():
    (s,) = load(io.StringIO(SLICE))
    return s.spec.devices[0]


@pytest.mark.parametrize(("expression", "want"), CASES, ids=[c[0] for c in CASES])
def test_selector_answers_as_upstream(device, expression, want):
    selector = compile_selector(expression)
    if isinstance(want, bool):
        assert selector.matches(device, DRIVER) is want
    else:
        with pytest.raises(CELRuntimeError) as err:
            selector.matches(device, DRIVER)
        assert str(err.value) == want


PROGRAMS = [
    # the lists library's sum keeps the element type (uint stays uint) and checks its overflow
    ("[1u, 2u, 3u].sum() == 6u", True),
    ("[18446744073709551615u, 1u].sum()", "unsigned integer overflow"),
    ('[0, 1].map(x, x == 0 ? dyn(1) : dyn(2.5)).sum()', "no such overload"),
    ('[0, 1].map(x, x == 0 ? dyn("a") : dyn("b")).sum()', "no such overload: sum(list)"),
    # add() and sub() return a pointer to the library's Quantity wrapper, whose Equal wants a wrapper value
    ('quantity("1").add(1) == quantity("2")', True),
    ('quantity("2") == quantity("1").add(1)', False),
    ('quantity("1").add(1) == quantity("1").sub(-1)', False),
    ('quantity("2") in [quantity("1").add(1)]', False),  # Contains asks the sought value's Equal
    ('[quantity("1").add(1)].indexOf(quantity("2")) == 0', True),  # indexOf asks each element's Equal
    # durations and timestamps are Comparers, so cel-go's sort() orders them
    ('[duration("2s"), duration("1s")].sort() == [duration("1s"), duration("2s")]', True),
]


@pytest.mark.parametrize(("expression", "want"), PROGRAMS, ids=[c[0] for c in PROGRAMS])
def test_program_answers_as_upstream(expression, want):
    from dralloc.cel import compile_expression

    program = compile_expression(expression)
    if isinstance(want, bool):
        assert program.evaluate() is want
    else:
        with pytest.raises(CELRuntimeError) as err:
            program.evaluate()
        assert str(err.value) == want


def test_a_semver_typed_statically_is_refused_by_the_checker_and_through_dyn_at_evaluation():
    from dralloc.cel import CELCompileError, compile_expression

    with pytest.raises(CELCompileError, match=r"found no matching overload for '_==_' applied to "
                                              r"'\(kubernetes.Semver, string\)'"):
        compile_expression('semver("1.2.3") == "1.2.3"')
    with pytest.raises(CELCompileError, match=r"found no matching overload for 'string' applied to "
                                              r"'\(kubernetes.Semver\)'"):
        compile_expression('string(semver("1.2.3"))')
    with pytest.raises(CELRuntimeError, match="^no such overload$"):
        compile_expression('dyn(semver("1.2.3")) == "1.2.3"').evaluate()
