"""Every issue of an expression, as cel-go reports them: its parser's visitor reports what the grammar lets
through (out-of-range literals, reserved identifiers, malformed macro arguments) and goes on, and
Errors.ToDisplayString prints each issue with its line, column and caret, sorted by position."""

from __future__ import annotations

import pytest

from dralloc.cel import CELCompileError, compile_expression, compile_selector


def issues(expression: str) -> str:
    with pytest.raises(CELCompileError) as err:
        compile_expression(expression)
    return str(err.value)


def test_every_out_of_range_literal_is_reported_in_order():
    assert issues("[9223372036854775808, 18446744073709551616u, -9223372036854775809]") == (
        "ERROR: <input>:1:2: invalid int literal\n"
        " | [9223372036854775808, 18446744073709551616u, -9223372036854775809]\n"
        " | .^\n"
        "ERROR: <input>:1:23: invalid uint literal\n"
        " | [9223372036854775808, 18446744073709551616u, -9223372036854775809]\n"
        " | ......................^\n"
        "ERROR: <input>:1:46: invalid int literal\n"
        " | [9223372036854775808, 18446744073709551616u, -9223372036854775809]\n"
        " | .............................................^")


def test_macro_errors_on_several_lines_each_carry_their_line():
    text = "has(a) ||\n  x.all(1, true) ||\n  y.all(k, k, true)"
    assert issues(text) == (
        "ERROR: <input>:1:5: invalid argument to has() macro\n"
        " | has(a) ||\n"
        " | ....^\n"
        "ERROR: <input>:2:9: argument must be a simple name\n"
        " |   x.all(1, true) ||\n"
        " | ........^\n"
        "ERROR: <input>:3:12: duplicate variable name: k\n"
        " |   y.all(k, k, true)\n"
        " | ...........^")


def test_reserved_identifiers_are_each_reported():
    text = issues("if == 1 && var == 2")
    assert text.count("ERROR: ") == 2
    assert "<input>:1:1: reserved identifier: if" in text and "<input>:1:12: reserved identifier: var" in text


def test_a_syntax_error_comes_with_the_issues_reported_before_it():
    text = issues("9223372036854775808 +")
    first, second = text.split("\nERROR: ")
    assert first.startswith("ERROR: <input>:1:1: invalid int literal")
    assert second.startswith("<input>:1:22: Syntax error: mismatched input '<EOF>'")


def test_a_selector_reports_them_after_kube_apiservers_prefix():
    with pytest.raises(CELCompileError) as err:
        compile_selector('has(device.x) || has(device) || device.attributes["a"].all(1, true)')
    assert err.value.detail.startswith("compilation failed: ERROR: <input>:1:22: invalid argument to has() macro\n")
    assert "\nERROR: <input>:1:60: argument must be a simple name\n" in err.value.detail


def test_a_two_variable_macro_reports_only_its_first_bad_variable():
    text = issues("x.all(1, 2, true)")
    assert text.count("ERROR: ") == 1 and "<input>:1:7: argument must be a simple name" in text


OPERAND = ("{'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, "
           "IDENTIFIER}")


def positions_and_messages(expression: str) -> list[str]:
    return [line for line in issues(expression).splitlines() if line.startswith("ERROR: ")]


def test_the_lexer_skips_what_it_cannot_read_and_goes_on():
    assert positions_and_messages('device.driver == "a" $ && # device.driver != "b"') == [
        "ERROR: <input>:1:22: Syntax error: token recognition error at: '$'",
        "ERROR: <input>:1:27: Syntax error: token recognition error at: '#'"]


def test_a_lone_bar_swallows_the_character_after_it():
    # '|' starts '||'; ANTLR reports both characters it read and skips them, the rest then has one token too many
    assert positions_and_messages('device.driver == "a" | device.driver == "b"') == [
        "ERROR: <input>:1:22: Syntax error: token recognition error at: '| '",
        "ERROR: <input>:1:24: Syntax error: mismatched input 'device' expecting <EOF>"]


def test_one_stray_token_is_deleted_and_the_parse_goes_on():
    assert positions_and_messages('* device.driver == "a"') == [
        f"ERROR: <input>:1:1: Syntax error: extraneous input '*' expecting {OPERAND}"]
    assert positions_and_messages('device.driver == "a" )') == [
        "ERROR: <input>:1:22: Syntax error: extraneous input ')' expecting <EOF>"]


def test_a_missing_operand_is_reported_and_the_parse_goes_on():
    assert positions_and_messages("(device.driver ==) && (device.driver ==)") == [
        f"ERROR: <input>:1:18: Syntax error: mismatched input ')' expecting {OPERAND}",
        f"ERROR: <input>:1:40: Syntax error: mismatched input ')' expecting {OPERAND}"]
    assert positions_and_messages("device.driver + +") == [
        f"ERROR: <input>:1:17: Syntax error: mismatched input '+' expecting {OPERAND}",
        f"ERROR: <input>:1:18: Syntax error: mismatched input '<EOF>' expecting {OPERAND}"]


def test_a_map_literal_expects_its_own_tokens_first():
    expected = ("{'[', '{', '}', '(', '.', ',', '-', '!', '?', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, "
                "STRING, BYTES, IDENTIFIER}")
    assert positions_and_messages("{: 1}") == [
        f"ERROR: <input>:1:2: Syntax error: extraneous input ':' expecting {expected}",
        "ERROR: <input>:1:5: Syntax error: mismatched input '}' expecting ':'"]


def test_an_empty_list_or_map_may_have_a_trailing_comma():
    assert compile_expression("[,] == [] && {,} == {}").evaluate() is True


def test_a_message_literal_expects_its_own_tokens_first():
    assert positions_and_messages("x{.") == [
        "ERROR: <input>:1:3: Syntax error: mismatched input '.' expecting {'}', ',', '?', IDENTIFIER, ESC_IDENTIFIER}"]


def test_a_missing_closing_parenthesis_is_taken_as_there():
    # kube-apiserver's own tests expect "Syntax error: missing ')' at" for an unclosed call
    assert positions_and_messages('device.driver.startsWith("gpu"') == [
        "ERROR: <input>:1:31: Syntax error: missing ')' at '<EOF>'"]
    assert positions_and_messages('(device.driver == "a"') == [
        "ERROR: <input>:1:22: Syntax error: missing ')' at '<EOF>'"]


def test_a_stray_token_before_a_closing_bracket_is_deleted():
    assert positions_and_messages('(device.driver == "a" "b")') == [
        "ERROR: <input>:1:23: Syntax error: extraneous input '\"b\"' expecting ')'"]
    assert positions_and_messages("[1, 2 3] == []") == [
        "ERROR: <input>:1:7: Syntax error: extraneous input '3' expecting {',', ']'}"]
    assert positions_and_messages("[1, 2") == [
        "ERROR: <input>:1:6: Syntax error: mismatched input '<EOF>' expecting {',', ']'}"]


def test_a_missing_colon_before_an_operand_is_taken_as_there():
    assert positions_and_messages("device.driver == 'a' ? true false") == [
        "ERROR: <input>:1:29: Syntax error: missing ':' at 'false'"]


def test_a_double_literal_beyond_the_range_of_a_double_is_invalid():
    assert positions_and_messages("[1e999, 2e999] == []") == [
        "ERROR: <input>:1:2: invalid double literal", "ERROR: <input>:1:9: invalid double literal"]
    assert compile_expression("1e-400 == 0.0").evaluate() is True  # underflow is no error in Go's ParseFloat
