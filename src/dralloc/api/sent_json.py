"""What a JSON text wrote that decoding it forgets, for the errors Go's decoder words from the text itself.

Go's decoder hands some values to their type as the text wrote them, not as they decode:

- an integer field quotes a number it refuses as written (``json: cannot unmarshal number 1e2 into ...``),
  where decoded JSON only has the float 100.0;
- ``resource.Quantity``'s UnmarshalJSON strips a string's quotes and parses what is between them, escapes
  and all: ``"\\u0031"`` is not the quantity 1 but text the parser refuses (a backslash is no quantity's
  character, wherever it stands: always ``quantities must match the regular expression ...``).

Decoding is done by msgspec, at C speed, on every body; these are read again from the text only for a body
that needs them (a number refused, a string written with escapes that a quantity may hold).
"""

from __future__ import annotations

import functools
import json
import re
from json.decoder import scanstring  # type: ignore[attr-defined]  # (typeshed leaves these two out)
from json.scanner import py_make_scanner  # type: ignore[attr-defined]
from typing import Any

from dralloc.api.quantity import ERR_FORMAT_WRONG, Quantity


class SentNumber:
    """A number of a JSON text with the text it was written as (``1e2``, ``1.50``)."""

    __slots__ = ("value", "text")

    def __init__(self, value: int | float, text: str) -> None:
        self.value = value
        self.text = text


class EscapedString:
    """A string a JSON text wrote with an escape (``"\\u0031"``): ``value`` is what it decodes to."""

    __slots__ = ("value",)

    def __init__(self, value: str) -> None:
        self.value = value


def _int(text: str) -> SentNumber:
    return SentNumber(int(text), text)


def _float(text: str) -> SentNumber:
    return SentNumber(float(text), text)


# A JSON string holding at least one escape. Searched from the start of a text, a match can only begin at a
# string's opening quote: from a closing quote the pattern meets the next opening quote before any backslash
# (there is none outside strings), and a string with an escape is matched whole from its opening quote.
_ESCAPED_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)+"')


def escaped_strings(text: bytes | str) -> set[str]:
    """What each string ``text`` writes with an escape decodes to (keys and values alike)."""
    raw = text.encode() if isinstance(text, str) else text
    if b"\\" not in raw:
        return set()
    return {json.loads(match) for match in _ESCAPED_STRING.findall(raw)}


def quantity_suspects(text: bytes | str) -> frozenset[str]:
    """The strings ``text`` writes with an escape whose decoded value Python would read as a quantity otherwise
    than Go reads the escaped text (always ERR_FORMAT_WRONG): a body holding none has its quantities
    rightly read from decoded JSON."""
    if text.find(b"\\" if isinstance(text, bytes) else "\\") < 0:  # type: ignore[arg-type]
        return _NONE  # (the common body: no escape at all; find, as `in` words a TypeError for an int first)
    return frozenset(value for value in escaped_strings(text) if _reads_otherwise(value))


_NONE: frozenset[str] = frozenset()


@functools.lru_cache(maxsize=1024)
def _reads_otherwise(value: str) -> bool:
    try:
        # (Go's strings.TrimSpace around the text; the blanks it removes and str.strip does not are control
        # characters, which a JSON text never writes unescaped)
        Quantity(value.strip())
    except ValueError as exc:
        return str(exc) != ERR_FORMAT_WRONG
    return True


def sent_tree(text: bytes | str, marked: frozenset[str] = frozenset()) -> Any:
    """``text`` decoded with every number a :class:`SentNumber`, and every string value in ``marked`` that it
    writes with an escape an :class:`EscapedString` (read in Python then: only for a body that needs it)."""
    if not marked:
        return json.loads(text, parse_int=_int, parse_float=_float)
    decoder = _MarkingDecoder(marked)
    return decoder.decode(text.decode() if isinstance(text, bytes) else text)


def with_escapes_as_written(text: bytes | str, marked: frozenset[str]) -> Any:
    """``text`` decoded, but every string value in ``marked`` that it writes with an escape is the text between
    its quotes as written (``\\u0031``): what a quantity's UnmarshalJSON parses, for a decoder of plain data."""
    decoder = _MarkingDecoder(marked, as_written=True)
    return decoder.decode(text.decode() if isinstance(text, bytes) else text)


class _MarkingDecoder(json.JSONDecoder):
    """Python's JSON scanner (the C one reads strings itself) with a string reader that marks escaped values
    in ``marked`` (an EscapedString, or with ``as_written`` the text as written, numbers then left plain);
    object keys are read by the module's own reader, unmarked."""

    def __init__(self, marked: frozenset[str], as_written: bool = False) -> None:
        if as_written:
            super().__init__()
        else:
            super().__init__(parse_int=_int, parse_float=_float)

        def parse_string(text: str, end: int, strict: bool) -> tuple[Any, int]:
            value, after = scanstring(text, end, strict)
            if value in marked and "\\" in text[end:after]:
                return (text[end:after - 1] if as_written else EscapedString(value)), after
            return value, after

        self.parse_string = parse_string
        self.scan_once = py_make_scanner(self)
