"""The type checker, planner and declarations table: selectors kube-apiserver rejects are rejected with
cel-go's text, the ones it accepts compile (issue families: static checking, planning, library set per
version, maps and attributes, syntax)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dralloc.cel import CELCompileError, compile_expression, compile_selector
from dralloc.cel.cost import UNBOUNDED
from dralloc.cel.decls import environment


def detail(expression: str, version: str = "1.36") -> str:
    with pytest.raises(CELCompileError) as info:
        compile_selector(expression, version=version)
    return info.value.detail


# --- 1. static checking: every call resolves to an overload for its argument types ----------------------

@pytest.mark.parametrize("expression,message", [
    ("1 == 1.0", "1:3: found no matching overload for '_==_' applied to '(int, double)'"),
    ('[1] == ["1"]', "1:5: found no matching overload for '_==_' applied to '(list(int), list(string))'"),
    ('device.driver == "a" ? 1 : "x"', "found no matching overload for '_?_:_' applied to '(bool, int, string)'"),
    ('device.driver.startsWith(1)', "1:25: found no matching overload for 'startsWith' applied to 'string.(int)'"),
    ('device.driver.startsWith("a", "b")',
     "found no matching overload for 'startsWith' applied to 'string.(string, string)'"),
    ('"abc".substring(1, 2, 3) == ""', "applied to 'string.(int, int, int)'"),
    ('[1, 2].all(x, x)', "1:15: expected type 'bool' but found 'int'"),
    ('device.foo == 1', "1:7: undefined field 'foo'"),
    ('nope(1)', "1:5: undeclared reference to 'nope' (in container '')"),
    ('"a".nope()', "1:9: undeclared reference to 'nope' (in container '')"),
    ('[1, "a"].size() > 0', "1:5: expected type 'int' but found 'string'"),
    ('{"a": 1, "b": "c"}.size() > 0', "1:15: expected type 'int' but found 'string'"),
    ('[1, dyn(2)].size() > 0', "expected type 'int' but found 'dyn'"),
])
def test_the_checker_rejects_what_cel_go_rejects(expression, message):
    assert f"compilation failed: ERROR: <input>:{message}" in detail(expression) or message in detail(expression)


def test_an_error_carries_the_caret_line():
    assert detail("1 == 1.0") == ("compilation failed: ERROR: <input>:1:3: found no matching overload for '_==_' "
                                  "applied to '(int, double)'\n | 1 == 1.0\n | ..^")


def test_all_errors_are_reported_in_source_order():
    text = detail('1 == 1.0 || "a" + 1 == "b"')
    assert text.count("ERROR:") == 2
    assert text.index("'_==_'") < text.index("'_+_'")


@pytest.mark.parametrize("expression", [
    'device.driver == "gpu.example.com"',
    'device.attributes["x"].model == 1 || device.attributes["x"].model == "a"',
    '1 < 1.5 && 2u > 1 && 1.0 <= 1u',  # cross-type numeric comparisons
    'device.attributes["x"].v == null || true',
    '[1, 2].map(x, x * 2) == [2, 4]',
    '{"a": 1}.filter(k, k == "a") == ["a"]',
    'optional.of(1).orValue(2) == 1',
    'device.attributes["x"].?model.orValue("") == ""',
    'cel.bind(g, device.attributes["x"], g.model == "a")',
])
def test_the_checker_accepts_what_cel_go_accepts(expression):
    compile_selector(expression)


def test_the_result_must_be_bool_or_dyn():
    assert detail("device.driver") == "must evaluate to bool or the unknown type, not string"
    assert detail("[1]") == "must evaluate to bool or the unknown type, not list(int)"


def test_deduced_types_follow_cel_go():
    assert compile_expression("[[], [1]]").result_type == "list(list(int))"
    assert compile_expression("[1, 1.0]").result_type == "list(dyn)"
    assert compile_expression("optional.none()").result_type == "optional_type(dyn)"
    assert compile_expression("x.y", {"x": "map(string, int)"}).result_type == "int"


# --- 2. planning: constant conversions fold when the program is built ------------------------------------

@pytest.mark.parametrize("expression,message", [
    ('int("x") == 1', "program instantiation failed: type conversion error from 'string' to 'int'"),
    ('uint(-1) == 1u', "program instantiation failed: unsigned integer overflow"),
    ('int(1e20) == 1', "program instantiation failed: integer overflow"),
    ('int(string(int("1x"))) == 1', "program instantiation failed: type conversion error from 'string' to 'int'"),
])
def test_a_failing_constant_conversion_fails_the_program_instantiation(expression, message):
    assert detail(expression) == message


def test_an_invalid_regex_literal_is_a_compile_error():
    assert detail('device.driver.matches("a[")') == ("compilation failed: ERROR: <input>:1:23: invalid matches "
                                                      "argument\n | device.driver.matches(\"a[\")\n | "
                                                      "......................^")


def test_a_conversion_of_a_variable_still_fails_at_evaluation():
    compile_selector('int(device.driver) == 1')


# --- 3. the library set per Kubernetes version ------------------------------------------------------------

def test_each_version_declares_its_libraries():
    assert "lists.range" not in environment("1.33").functions
    assert "lists.range" in environment("1.34").functions
    assert "format.named" in environment("1.31").functions
    assert len([o for o in environment("1.32").functions["semver"]]) == 1
    assert len([o for o in environment("1.33").functions["semver"]]) == 2
    assert "includes" in environment("1.36").functions
    assert "includes" not in environment("1.35").functions


def test_an_older_version_rejects_a_newer_function():
    compile_selector('device.attributes["x"].v.isGreaterThan(semver("1.0.0", true))')
    assert "found no matching overload for 'semver' applied to '(string, bool)'" in detail(
        'device.attributes["x"].v.isGreaterThan(semver("1.0.0", true))', version="1.32")
    assert "undeclared reference to 'reverse'" in detail("[1].reverse() == [1]", version="1.33")
    compile_selector("[1].reverse() == [1]", version="1.34")


def test_an_unknown_version_is_refused():
    with pytest.raises(ValueError, match="unsupported Kubernetes version"):
        compile_selector("true", version="1.20")


@pytest.mark.parametrize("expression,message", [
    ('sign(quantity("1")) == 1.0', "'(int, double)'"),
    ('quantity("1").sign() == 1', "'sign' applied to 'kubernetes.Quantity.()'"),
    ('quantity("1").isInteger() == 1', "'(bool, int)'"),
    ('quantity("1").asInteger() == "1"', "'(int, string)'"),
    ('semver("1.0.0").isGreaterThan("1.0.0")', "'isGreaterThan' applied to 'kubernetes.Semver.(string)'"),
    ('string(semver("1.0.0")) == "1.0.0"', "'string' applied to '(kubernetes.Semver)'"),
    ('[quantity("1")].sort().size() == 1', "'sort' applied to 'list(kubernetes.Quantity).()'"),
    ('"%d".format(1) == "1"', "'format' applied to 'string.(int)'"),
    ('"".reverse() == ""', "'reverse' applied to 'string.()'"),
])
def test_library_signatures_are_upstreams(expression, message):
    assert message in detail(expression)


def test_quantity_sign_is_a_global_function_and_as_integer_stops_at_int64():
    from dralloc.cel import CELRuntimeError

    assert compile_expression('sign(quantity("-5Gi"))').evaluate() == -1
    assert compile_expression('quantity("922337203685477580").isInteger()').evaluate() is True
    # 19 digits leave ParseQuantity's int64 fast path: an inf.Dec, which AsInt64 never converts
    assert compile_expression('quantity("9223372036854775807").isInteger()').evaluate() is False
    assert compile_expression('quantity("9223372036854775808").isInteger()').evaluate() is False
    with pytest.raises(CELRuntimeError, match="cannot convert value to integer"):
        compile_expression('quantity("9223372036854775808").asInteger()').evaluate()


def test_list_sort_needs_comparable_elements_at_evaluation():
    from dralloc.cel import CELRuntimeError

    program = compile_expression("x.sort()", {"x": "list(dyn)"})
    with pytest.raises(CELRuntimeError, match="^list elements must be comparable$"):
        program.evaluate({"x": [[1], [2]]})
    with pytest.raises(CELRuntimeError, match="^list elements must have the same type$"):
        program.evaluate({"x": [1, "a"]})


# --- 4. maps and attributes ---------------------------------------------------------------------------

def test_the_device_maps_have_size_and_presence_tests():
    compile_selector("device.attributes.size() > 0 && size(device.capacity) > 0")
    compile_selector('has(device.attributes["x"].model)')
    compile_selector('"x" in device.attributes["d"]')


def test_int64_minimum_divided_by_minus_one_overflows():
    p = compile_expression("x / -1", {"x": "int"})
    from dralloc.cel import CELRuntimeError

    with pytest.raises(CELRuntimeError, match="overflow"):
        p.evaluate({"x": -(2**63)})


# --- 5. syntax ----------------------------------------------------------------------------------------

def test_a_backquoted_field_is_unsupported_syntax_in_kubernetes():
    assert detail('device.attributes["x"].`model` == "a"') == (
        "compilation failed: ERROR: <input>:1:24: unsupported syntax: '`'\n"
        " | device.attributes[\"x\"].`model` == \"a\"\n | .......................^")


def test_a_literal_keyword_is_not_a_field_name():
    # ANTLR finds no viable alternative after the dot; cel-go rewrites that for true, false and null
    assert "<input>:1:8: Syntax error: mismatched input 'true' expecting IDENTIFIER\n" in detail("device.true")


def test_a_reserved_word_is_not_a_variable():
    assert "reserved identifier: if" in detail("if == 1")


# --- cost --------------------------------------------------------------------------------------------

def test_the_cost_of_nested_comprehensions_multiplies_by_the_range_sizes():
    small = compile_selector("[1, 2, 3].all(x, x > 0)").max_cost
    nested = compile_selector("[1, 2, 3].all(x, [1, 2, 3].all(y, x < y))").max_cost
    assert nested > 3 * small
    assert compile_selector('device.driver == "a"').max_cost < 20


def test_a_device_map_range_is_bounded_by_the_declared_limits():
    cost = compile_selector('device.attributes["x"].all(k, k.startsWith("a"))').max_cost
    assert 32 <= cost < UNBOUNDED


# --- durations and timestamps (declared by the standard library, so they must also run) -----------------

@pytest.mark.parametrize("expression,expected", [
    ('duration("1h30m") > duration("45m")', True),
    ('string(duration("1h30m"))', "5400s"),
    ('string(duration("-1.5ms"))', "-0.0015s"),
    ('duration("1h30m").getMinutes()', 90),
    ('timestamp("2024-02-29T12:00:00Z").getDayOfWeek()', 4),
    ('timestamp("2024-01-01T00:30:00Z").getHours("-01:00")', 23),
    ('string(timestamp("2024-02-29T12:00:00+01:00") + duration("30m"))', "2024-02-29T11:30:00Z"),
    ('timestamp("2024-02-29T12:00:00Z") - timestamp("2024-02-28T12:00:00Z") == duration("24h")', True),
    ('int(timestamp("1970-01-02T00:00:00Z"))', 86400),
])
def test_durations_and_timestamps_evaluate_as_in_cel_go(expression, expected):
    assert compile_expression(expression).evaluate() == expected


def test_an_invalid_duration_literal_is_a_compile_error():
    assert detail('duration("1x") > duration("1s")') == (
        "compilation failed: ERROR: <input>:1:10: invalid duration argument\n"
        " | duration(\"1x\") > duration(\"1s\")\n | .........^")


@pytest.mark.parametrize("expression,cost", [  # figures from cel-go's checker/cost_test.go
    ('"Hello World!"', 0),
    ("[1, 2, 3]", 10),
    ('{"a": 1, "b": 2, "c": 3}', 30),
    ("[1, 2, 3].all(x, true)", 20),
    ("'123'.matches('[0-9]')", 2),
    ("true || false", 0),
    ("1 < 2", 1),
    ("2 in [1, 2, 3]", 13),
    ("true ? 1 : 2", 0),
    ('size("123")', 1),
    ("string(1)", 1),
    ("((5 != 6) == (1 == 2)) == ((3 <= 4) == (9 != 9))", 7),
    ("[1,2,3,4,5].filter(x, x % 2 == 0)", 101),
    ("[1,2,3,4,5].map(x, x)", 86),
])
def test_the_estimated_cost_is_cel_gos(expression, cost):
    assert compile_expression(expression).max_cost == cost


@pytest.mark.parametrize("expression,message", [
    ('"%d".format(["a"]) == ""',
     "1:14: error during formatting: decimal clause can only be used on integers, was given string"),
    ('"%q".format([1]) == ""', '1:12: could not parse formatting clause: unrecognized formatting clause "q"'),
    ('"%s %s".format([1]) == ""', "1:15: index 1 out of range"),
    ('"%s".format([1, 2]) == ""', "1:12: too many arguments supplied to string.format (expected 1, got 2)"),
    ('"%s".format([quantity("1")]) == ""', "was given kubernetes.Quantity"),
    ('"%f".format([1]) == ""', "fixed-point clause can only be used on doubles, was given int"),
])
def test_a_literal_format_string_is_checked_against_its_arguments(expression, message):
    assert message in detail(expression)


def test_a_format_argument_of_unknown_type_is_left_to_evaluation():
    compile_selector('"%d".format([device.attributes["a"].b]) == "1"')


def test_two_variable_comprehensions_arrive_in_1_32():
    compile_selector('device.attributes["x"].all(k, v, k != "")', version="1.32")
    assert "undeclared reference to 'all'" in detail('device.attributes["x"].all(k, v, k != "")', version="1.31")
    assert "undeclared reference to 'transformList'" in detail(
        "[1].transformList(i, v, v) == [1]", version="1.31")


def test_a_leading_dot_names_the_declared_variable_under_a_comprehension_variable():
    program = compile_expression("['a'].exists(y, .y == 'y')", {"y": "string"})
    assert program.evaluate({"y": "y"}) is True


def test_the_caret_line_uses_full_width_dots_for_wide_characters():
    assert detail('"☺" == 1').endswith(' | "☺" == 1\n | .\uff0e..^')


def test_a_missing_operand_names_what_the_grammar_expects():
    assert detail("device.driver ==") == (
        "compilation failed: ERROR: <input>:1:17: Syntax error: mismatched input '<EOF>' expecting {'[', '{', '(', "
        "'.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}\n"
        " | device.driver ==\n | ................^")


def test_in_is_a_keyword_not_a_field_name():
    assert ("<input>:1:24: Syntax error: no viable alternative at input '.in'\n"
            in detail('device.attributes["x"].in'))
    assert "<input>:1:19: Syntax error: no viable alternative at input '.\"a\"'\n" in detail('device.attributes.\"a\"')
    assert "mismatched input '1' expecting {IDENTIFIER, ESC_IDENTIFIER}" in detail('device.attributes.?1')


def test_registered_types_are_identifiers():
    assert compile_expression('type(ip("1.2.3.4")) == net.IP').evaluate() is True
    assert compile_expression('type(quantity("1")) == kubernetes.Quantity').evaluate() is True
    assert compile_expression('type(duration("1s")) == google.protobuf.Duration').evaluate() is True
    assert "undeclared reference to 'nope'" in detail("type(device.driver) == nope.IP")


_LITERALS = {"int": "1", "uint": "2u", "double": "1.5", "string": '"s"', "bytes": 'b"b"', "bool": "true",
             "null": "null", "list": "[1]", "map": '{"k": 1}'}
_ADDABLE = {"int", "uint", "double", "string", "bytes", "list"}


@given(st.sampled_from(sorted(_LITERALS)), st.sampled_from(sorted(_LITERALS)),
       st.sampled_from(["==", "+", "<"]))
def test_an_operator_compiles_exactly_for_the_operand_types_cel_go_declares(left, right, op):
    expression = f"{_LITERALS[left]} {op} {_LITERALS[right]}"
    numeric = {"int", "uint", "double"}
    if op == "==":
        accepted = left == right
    elif op == "+":
        accepted = left == right and left in _ADDABLE
    else:  # ordering: same type, or two numbers (cross-type numeric comparisons)
        accepted = (left == right and left in numeric | {"string", "bytes", "bool"}) or (
            left in numeric and right in numeric)
    # null is assignable to the nullable duration and timestamp parameters, so cel-go's checker accepts
    # null + null and null < null (they fail when evaluated)
    null_pair = left == right == "null" and op != "=="
    try:
        program = compile_expression(expression)
    except CELCompileError as exc:
        assert not (accepted or null_pair), str(exc)
        assert "found no matching overload" in str(exc)
        return
    assert accepted or null_pair, expression
    if not null_pair:
        program.evaluate()  # what the checker accepts runs without a "no such overload"


def test_a_constant_pattern_of_global_matches_or_find_fails_the_program_instantiation():
    assert detail('matches(device.driver, "a[")').startswith("program instantiation failed: error parsing regexp: ")
    assert detail('device.driver.find("(") == ""').startswith("program instantiation failed: error parsing regexp: ")
    # the literal validator looks at the first argument of the global form: the string itself
    assert "invalid matches argument" in detail('matches("a[", device.driver)')


@pytest.mark.parametrize("pattern", ["(?=a)", "a(?!b)", "(?<=x)y", "(a)\\\\1", "abc\\\\Z", "(?>a)"])
def test_a_pattern_re2_refuses_is_an_invalid_matches_argument(pattern):
    assert "invalid matches argument" in detail(f'device.driver.matches("{pattern}")')


def test_re2_patterns_python_shares_still_compile():
    compile_selector('device.driver.matches("(?i)^gpu[.]example\\\\.com$") && device.driver.matches("[]a]|a{2,3}")')


@pytest.mark.parametrize("version", ["1.31", "1.36"])
def test_every_declared_function_has_an_implementation(version):
    from dralloc.cel import library
    from dralloc.cel.generate import _OP_METHODS

    missing = []
    for name, overloads in environment(version).functions.items():
        if name in _OP_METHODS or name.startswith(("@", "cel.@")) or name == "_[?_]":
            continue  # operators and macro internals are generated code
        if any(not o.member for o in overloads) and name not in library.GLOBALS:
            missing.append(f"global {name}")
        if any(o.member for o in overloads) and name not in library.MEMBERS:
            missing.append(f"member {name}")
    assert missing == []


def test_lists_reverse_and_prefix_formats_run():
    assert compile_expression("[1, 2].reverse()").evaluate() == [2, 1]
    assert compile_expression('format.dns1123LabelPrefix().validate("abc-").hasValue()').evaluate() is False


def test_optional_unwrap_of_the_latest_optional_library():
    assert compile_expression("optional.unwrap([optional.of(1), optional.none()])").evaluate() == [1]
    assert compile_expression("[optional.of(1), optional.none()].unwrapOpt()").result_type == "list(int)"


def test_matches_takes_time_linear_in_the_input_whatever_the_pattern():
    # '^(a+)+$' over 'aaa…!' backtracks exponentially in Python's re (24 characters took half a second); RE2,
    # as Go's regexp, answers at once, so a claim's selector cannot stall the allocator
    import time

    from dralloc.cel.library import standard

    start = time.perf_counter()
    assert standard._matches("a" * 5000 + "!", "^(a+)+$") is False
    assert time.perf_counter() - start < 0.5


def test_re2_syntax_python_lacks_works_and_errors_read_as_gos():
    from dralloc.cel import library
    from dralloc.cel.library.standard import _matches
    from dralloc.cel.values import CELError

    assert _matches("GPU", "^[[:upper:]]+$") and _matches("αβ", r"^\p{Greek}+$")
    assert not _matches("a\n", "^a$")  # RE2's $ is the end of the text, Python's also before a newline
    with pytest.raises(CELError) as missing:
        library.regex("(a")
    assert str(missing.value) == "error parsing regexp: missing closing ): `(a`"
    with pytest.raises(CELError) as count:
        library.regex("a{1001}")
    assert str(count.value) == "error parsing regexp: invalid repeat count: `{1001}`"


def test_a_literal_pattern_is_compiled_once_with_its_program_and_a_computed_one_at_each_call(monkeypatch):
    # cel-go compiles a constant regex when it plans the program; no cache is shared between programs
    from dralloc.cel.library import patterns

    compiled: list[str] = []
    real = patterns.re2.compile
    monkeypatch.setattr(patterns.re2, "compile", lambda p, *a: compiled.append(p) or real(p, *a))
    literal = compile_expression("'gpu-7'.matches('^gpu-[0-9]+$') && 'x'.find('x') == 'x'")
    assert set(compiled) == {"^gpu-[0-9]+$", "x"}  # (checked, then compiled for the program)
    before = len(compiled)
    for _ in range(3):
        assert literal.evaluate() is True
    assert len(compiled) == before  # not again while evaluating
    computed = compile_expression("'gpu-7'.matches('^gpu-' + '[0-9]+$')")
    compiled.clear()
    assert computed.evaluate() is True and computed.evaluate() is True
    assert compiled == ["^gpu-[0-9]+$"] * 2
