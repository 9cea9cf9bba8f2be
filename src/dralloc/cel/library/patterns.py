"""Regular expressions as Go's regexp: RE2 (google-re2), for matches(), find() and findAll().

google-re2 runs RE2 itself: time linear in the input whatever the pattern, as Go's regexp. Python's re
backtracks, and a selector such as '^(a+)+$' over a long attribute would stall the allocator for minutes."""

from __future__ import annotations

from typing import Any

import re2

from dralloc.cel.errors import CELError

# google-re2 runs RE2 itself: time linear in the input whatever the pattern, as Go's regexp. Python's re
# backtracks, and a selector such as '^(a+)+$' over a long attribute would stall the allocator for minutes.

_RE2_OPTIONS = re2.Options()
_RE2_OPTIONS.log_errors = False  # a bad pattern is the caller's error (a 422), not a line on stderr
# RE2's parse errors in Go's words (regexp/syntax ErrorCode texts), keyed by RE2's
_GO_REGEX_ERRORS = {"missing )": "missing closing )", "missing ]": "missing closing ]",
                    "invalid repetition size": "invalid repeat count",
                    "trailing \\": "trailing backslash at end of expression",
                    "invalid perl operator": "invalid or unsupported Perl syntax",
                    "no argument for repetition operator": "missing argument to repetition operator",
                    "bad repetition operator": "invalid nested repetition operator",
                    "invalid named capture group": "invalid named capture",
                    "pattern too large - compile failed": "expression too large",
                    "pattern too large - reverse compile failed": "expression too large"}


def _re2_unsupported(pattern: str) -> str | None:
    """What RE2 (Go's regexp) refuses that Python's re accepts: look-arounds, atomic groups, conditionals,
    backreferences and ``\\Z``. Returns Go's error text, or None."""
    i, n, in_class = 0, len(pattern), False
    while i < n:
        c = pattern[i]
        if c == "\\" and i + 1 < n:
            nxt = pattern[i + 1]
            if nxt in "123456789Z" and not in_class:
                return f"invalid escape sequence: `\\{nxt}`"
            i += 2
            continue
        if in_class:
            in_class = c != "]"
        elif c == "[":
            in_class = True
            if pattern[i + 1:i + 2] == "]" or pattern[i + 1:i + 3] == "^]":
                i += 2 if pattern[i + 1] == "]" else 3  # a leading ] is a literal member of the class
                continue
        elif c == "(" and pattern[i + 1:i + 2] == "?":
            rest = pattern[i + 2:i + 4]
            if rest[:1] in ("=", "!", ">", "(") or rest in ("<=", "<!"):
                return f"invalid or unsupported Perl syntax: `{pattern[i:i + 3]}`"
        i += 1
    return None


class ConstantPattern(str):
    """A pattern written as a literal, compiled once when its program is planned (as cel-go's regex
    optimisation does): the program keeps it; a pattern computed while evaluating is compiled each time."""

    __slots__ = ("compiled",)
    compiled: Any


def constant_pattern(pattern: str) -> ConstantPattern:
    """``pattern`` with its compiled RE2 program; CELError with Go's text when RE2 refuses it."""
    constant = ConstantPattern(pattern)
    constant.compiled = regex(pattern)
    return constant


def regex(pattern: str) -> Any:
    """The compiled RE2 pattern (``search``, ``finditer``); CELError with Go's text when RE2 refuses it."""
    if type(pattern) is ConstantPattern:
        return pattern.compiled
    unsupported = _re2_unsupported(pattern)
    if unsupported is not None:
        raise CELError(f"error parsing regexp: {unsupported}")
    try:
        return re2.compile(pattern, _RE2_OPTIONS)
    except re2.error as exc:
        raise CELError(f"error parsing regexp: {_go_regex_error(exc)}") from None


PATTERNS = (str, ConstantPattern)  # a pattern's types: computed or written as a literal


def _go_regex_error(exc: Exception) -> str:
    """RE2's "<what>: <where>" as Go's "<what>: `<where>`"."""
    raw = exc.args[0] if exc.args else ""
    text = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else str(raw)
    what, sep, where = text.partition(": ")
    return f"{_GO_REGEX_ERRORS.get(what, what)}: `{where}`" if sep else _GO_REGEX_ERRORS.get(text, text)
