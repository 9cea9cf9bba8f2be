"""CEL errors. Compile errors carry cel-go's text (position and a caret line); runtime errors carry the
bare CEL message (e.g. ``no such key: model``); callers add upstream's prefixes.

    DrallocError
    ├── InputError
    │   └── CELCompileError     parse and type-check errors
    └── CELRuntimeError         evaluation errors (no such key, overflow, division by zero, cost limit)
"""

from __future__ import annotations

from dralloc.errors import DrallocError, InputError


class CELCompileError(InputError):
    """The expression does not compile. ``str()`` is cel-go's multi-line issue text; ``detail`` is the whole
    message kube-apiserver reports (``compilation failed: <issues>``, ``program instantiation failed: ...``
    or ``must evaluate to bool ...``)."""

    def __init__(self, message: str, *, prefix: str = "compilation failed: ") -> None:
        super().__init__(message)
        self.prefix = prefix

    @property
    def detail(self) -> str:
        return f"{self.prefix}{self}"


class CELRuntimeError(DrallocError):
    """The expression failed on a value (CEL's runtime error)."""


class CELError(Exception):
    """An error *value* during evaluation; logical operators may absorb it (CEL's commutative && / ||)."""

    __slots__ = ("message",)

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def format_issue(text: str, pos: int, message: str) -> str:
    """cel-go's issue format: ``ERROR: <input>:L:C: message`` plus the source line and a caret."""
    pos = max(0, min(pos, len(text)))
    line_no = text.count("\n", 0, pos) + 1
    line_start = text.rfind("\n", 0, pos) + 1
    line_end = text.find("\n", pos)
    line = text[line_start: line_end if line_end >= 0 else len(text)]
    col = pos - line_start
    head = f"ERROR: <input>:{line_no}:{col + 1}: {message}"
    if len(line.encode("utf-8")) > MAX_SNIPPET_BYTES:
        return head
    # cel-go counts columns in code points and pads to the caret with a dot per character, a full-width dot
    # (and caret) for a character that takes more than one byte in UTF-8
    pad = "".join("\uff0e" if ord(c) > 0x7F else "." for c in line[:col])
    caret = "\uff3e" if col < len(line) and ord(line[col]) > 0x7F else "^"
    return f"{head}\n | {line.replace(chr(9), ' ')}\n | {pad}{caret}"


MAX_SNIPPET_BYTES = 16384  # cel-go prints no source line for longer lines
MAX_ERRORS = 100  # cel-go's error reporting limit


def render_issues(text: str, issues: list[tuple[int, str]]) -> str:
    """cel-go's Errors.ToDisplayString: the issues sorted by position (stable: one position keeps the order
    they were reported in), one formatted issue each, joined by newlines, at most 100."""
    ordered = sorted(issues, key=lambda issue: issue[0])
    shown = [format_issue(text, pos, message) for pos, message in ordered[:MAX_ERRORS]]
    if len(ordered) > MAX_ERRORS:
        shown.append(f"{len(ordered) - MAX_ERRORS} more errors were truncated")
    return "\n".join(shown)
