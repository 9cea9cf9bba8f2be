"""DRA device selectors: the Kubernetes environment, its libraries and upstream's error texts."""

from __future__ import annotations

import io

import pytest

from dralloc import load
from dralloc.cel import CELCompileError, CELRuntimeError, check_selector, compile_expression, compile_selector

SLICE = """\
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: s}
spec:
  driver: gpu.example.com
  nodeName: n
  pool: {name: n, resourceSliceCount: 1}
  devices:
  - name: gpu-0
    allowMultipleAllocations: true
    attributes:
      model: {string: a100}
      index: {int: 3}
      healthy: {bool: true}
      driverVersion: {version: 1.2.3}
      dra.example.com/numa: {int: 1}
      links: {ints: [1, 2, 3]}
    capacity:
      memory: {value: 80Gi}
  - name: bad-version
    attributes:
      driverVersion: {version: not-a-version}
"""

DRIVER = "gpu.example.com"


@pytest.fixture(scope="module")
def devices():
    (s,) = load(io.StringIO(SLICE))
    return {d.name: d for d in s.spec.devices}


def match(expr: str, device) -> bool:
    return compile_selector(expr).matches(device, DRIVER)


@pytest.mark.parametrize(
    ("expr", "want"),
    [
        ('device.driver == "gpu.example.com"', True),
        ('device.attributes["gpu.example.com"].model == "a100"', True),
        ('device.attributes["gpu.example.com"].index > 2 && device.attributes["gpu.example.com"].healthy', True),
        ('device.attributes["dra.example.com"].numa == 1', True),  # a qualified name lives in its own domain
        ('device.capacity["gpu.example.com"].memory.compareTo(quantity("40Gi")) >= 0', True),
        ('device.capacity["gpu.example.com"].memory.isGreaterThan(quantity("80Gi"))', False),
        ('device.attributes["gpu.example.com"].driverVersion.isGreaterThan(semver("1.2.0"))', True),
        ('device.attributes["gpu.example.com"].driverVersion.major() == 1', True),
        ('device.allowMultipleAllocations', True),
        ('"gpu.example.com" in device.attributes', True),
        ('"other.example.com" in device.attributes', False),
        ('has(device.attributes["other.example.com"].model)', False),  # unknown domain: an empty map
        ('device.attributes["gpu.example.com"].?missing.orValue("x") == "x"', True),
        ('cel.bind(a, device.attributes["gpu.example.com"], a.model == "a100" && a.index == 3)', True),
        ('device.attributes["gpu.example.com"].links.includes(2)', True),
        ('device.attributes["gpu.example.com"].model.includes("a100")', True),
        ('device.attributes["gpu.example.com"].model.matches("^a1")', True),
        ('device.attributes["gpu.example.com"].exists(k, k == "model")', True),
    ],
)
def test_selectors_evaluate_as_upstream(devices, expr, want):
    assert match(expr, devices["gpu-0"]) is want


def test_a_missing_attribute_is_a_runtime_error_naming_the_key(devices):
    with pytest.raises(CELRuntimeError, match="^no such key: nosuch$"):
        match('device.attributes["gpu.example.com"].nosuch == 1', devices["gpu-0"])


def test_an_unparsable_version_attribute_fails_every_expression_on_that_device(devices):
    with pytest.raises(CELRuntimeError, match="parse semantic version"):
        match("true", devices["bad-version"])


@pytest.mark.parametrize(
    ("expr", "fragment"),
    [
        ("device.driver == ", "Syntax error"),
        ('device.capacity["gpu.example.com"].memory < quantity("1Gi")', "found no matching overload for '_<_'"),
        ('semver("1.0.0") < semver("2.0.0")', "found no matching overload for '_<_'"),
        ("device.attributes.size() + 1", "must evaluate to bool"),
        ("foo.bar == 1", "undeclared reference to 'foo'"),
        ('device.driver + 1 == 2', "found no matching overload for '_+_'"),
        ("[1, 'a'].size() == 2", "expected type 'int' but found 'string'"),  # homogeneous aggregate literals
        ("device.nosuch", "undefined field 'nosuch'"),
    ],
)
def test_compile_errors_are_reported_with_position(expr, fragment):
    with pytest.raises(CELCompileError) as err:
        compile_selector(expr)
    assert fragment in str(err.value)


def test_compile_errors_have_cel_go_position_and_caret():
    with pytest.raises(CELCompileError) as err:
        compile_selector("device.driver == ")
    lines = str(err.value).splitlines()
    assert lines[0].startswith("ERROR: <input>:1:18: Syntax error: mismatched input '<EOF>'")
    assert lines[1] == " | device.driver == "
    assert lines[2] == " | .................^"


def test_expressions_over_the_length_limit_are_rejected():
    expr = "true && " * 1300 + "true"
    assert check_selector(expr) and "too long" in check_selector(expr)[0]


def test_a_hostile_comprehension_hits_the_cost_limit_instead_of_hanging(devices):
    expr = "lists.range(1000).all(i, lists.range(1000).all(j, lists.range(10).all(k, true)))"
    with pytest.raises(CELRuntimeError, match="cost limit exceeded"):
        match(expr, devices["gpu-0"])


def test_logical_operators_absorb_errors_commutatively(devices):
    assert match('device.attributes["gpu.example.com"].nosuch == 1 || true', devices["gpu-0"]) is True
    assert match('false && device.attributes["gpu.example.com"].nosuch == 1', devices["gpu-0"]) is False
    assert match('device.attributes["gpu.example.com"].nosuch == 1 && false', devices["gpu-0"]) is False


@pytest.mark.parametrize(
    ("expr", "want"),
    [
        ('quantity("1.5Gi").add(quantity("512Mi")) == quantity("2Gi")', True),
        ('sign(quantity("1").sub(1)) == 0', True),
        ('quantity("1500m").isInteger()', False),
        ('quantity("5k").asInteger() == 5000', True),
        ('quantity("1.5").asApproximateFloat() == 1.5', True),
        ('isQuantity("1 Gi")', False),
        ('semver("v1.2", true) == semver("1.2.0")', True),
        ('isSemver("1.2")', False),
        ('semver("1.0.0-alpha").isLessThan(semver("1.0.0"))', True),
        ('[1, 2, 3].sum() == 6 && [3, 1].min() == 1 && [1, 2].isSorted()', True),
        ('"abc123".find("[0-9]+") == "123"', True),
        ('"a1b2".findAll("[0-9]") == ["1", "2"]', True),
        ('ip("10.0.0.1").family() == 4 && cidr("10.0.0.0/8").containsIP("10.1.2.3")', True),
        ('url("https://example.com:8080/x").getPort() == "8080"', True),
        ('sets.contains([1, 2, 3], [2]) && sets.intersects([1], [1, 5])', True),
        ('[[1], [2, 3]].flatten() == [1, 2, 3] && [3, 1, 2].sort() == [1, 2, 3]', True),
        ('{"a": 1, "b": 2}.transformMap(k, v, v * 2) == {"a": 2, "b": 4}', True),
        ('"%d items".format([3]) == "3 items"', True),
        ('format.dns1123Label().validate("Bad_Name").hasValue()', True),
    ],
)
def test_kubernetes_libraries_give_upstreams_results(expr, want):
    assert compile_expression(expr).evaluate() is want


@pytest.mark.parametrize("expr", ['quantity("1 Gi")', "1 / 0", "9223372036854775807 + 1", '[1][5]'])
def test_runtime_failures_raise(expr):
    with pytest.raises(CELRuntimeError):
        compile_expression(expr).evaluate()


def test_compiled_selectors_are_cached_by_expression():
    assert compile_selector("device.driver == 'x'") is compile_selector("device.driver == 'x'")


def test_a_comprehension_over_a_scalar_attribute_fails_as_cel_go_does(devices):
    with pytest.raises(CELRuntimeError, match="got 'types.Int', expected iterable type"):
        match('device.attributes["gpu.example.com"].index.exists(x, x > 0)', devices["gpu-0"])


def test_a_non_boolean_result_is_an_error(devices):
    with pytest.raises(CELRuntimeError, match="CEL result of type list could not be converted to bool"):
        match('device.attributes["gpu.example.com"].links', devices["gpu-0"])


def test_a_non_boolean_literal_result_is_a_compile_error():
    with pytest.raises(CELCompileError, match="must evaluate to bool or the unknown type, not int"):
        compile_selector("1")


def test_cost_estimate_flags_nested_comprehensions_only() -> None:
    from dralloc.cel.device import estimate_cost

    nested = "".join(f"[1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all({v}, " for v in ("a", "b", "c", "d", "e", "f", "g"))
    assert estimate_cost(nested + "true" + ")" * 7) > 1_000_000
    assert estimate_cost('device.attributes["x"].strings.exists(s, s == "a")') < 1_000
    assert estimate_cost('device.driver == "gpu.example.com"') < 10


@pytest.mark.parametrize(("expr", "want"), [
    ("device.attributes.size() == 2", True),  # two domains: the driver's and dra.example.com
    ("size(device.capacity) == 1", True),
    ('device.attributes == {"x": {}}', False),
    ('device.attributes["gpu.example.com"].size() == 5', True),
    ('"%s".format([device.capacity]) != ""', True),
])
def test_the_device_domain_maps_are_maps_at_evaluation(devices, expr, want):
    assert match(expr, devices["gpu-0"]) is want


def test_int64_boundaries_of_attribute_arithmetic_overflow(devices):
    with pytest.raises(CELRuntimeError, match="integer overflow"):
        match('device.attributes["gpu.example.com"].index + 9223372036854775807 > 0', devices["gpu-0"])
    with pytest.raises(CELRuntimeError, match="integer overflow"):
        match('-9223372036854775808 / (device.attributes["gpu.example.com"].index - 4) > 0', devices["gpu-0"])
