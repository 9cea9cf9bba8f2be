"""Documents nested too deep are refused while they are read, with the document's position, whatever the
syntax (JSON, flow or block YAML, aliases, merge keys): nothing recursive ever walks them."""

from __future__ import annotations

import json
import subprocess
import sys
import time
import unittest.mock
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from dralloc.api import parsing
from dralloc.api.codec import parse_text
from dralloc.errors import DecodeError

LIMIT = parsing.MAX_DEPTH
DEEP = 100_000
TOO_DEEP = f"exceeded max depth of {LIMIT}"


def _flow_lists(levels: int) -> str:
    return "[" * levels + "]" * levels


def _flow_maps(levels: int) -> str:
    return "{a: " * levels + "1" + "}" * levels


def _block_lists(levels: int) -> str:
    return "- " * levels + "1\n"


@pytest.mark.parametrize("text", [_flow_lists(DEEP), _flow_maps(DEEP), _block_lists(DEEP),
                                  '{"a":' * DEEP + "1" + "}" * DEEP, "spec:\n  " + _flow_lists(DEEP)],
                         ids=["flow-lists", "flow-maps", "block-lists", "json", "yaml-then-flow"])
def test_a_document_a_hundred_thousand_levels_deep_is_refused_at_once(text: str) -> None:
    started = time.monotonic()
    with pytest.raises(DecodeError, match=f"^<stream>: document 1: .*{TOO_DEEP}$"):
        parse_text(text)
    assert time.monotonic() - started < 3  # (milliseconds; the pure-Python reader took seconds)


@pytest.mark.parametrize("document", [lambda n: "a: " + _flow_lists(n - 1), lambda n: "a: " + _flow_maps(n - 1),
                                      _block_lists], ids=["flow-lists", "flow-maps", "block-lists"])
def test_the_limit_itself_is_read_and_one_level_more_is_not(document) -> None:  # type: ignore[no-untyped-def]
    [doc] = parse_text(document(LIMIT))
    assert parsing.height(doc.data, {}) == LIMIT
    with pytest.raises(DecodeError, match=TOO_DEEP):
        parse_text(document(LIMIT + 1))


def test_the_refusal_says_where_the_document_went_over() -> None:
    with pytest.raises(DecodeError) as refused:
        parse_text("a: 1\n---\nb: " + _flow_maps(LIMIT + 5))
    assert str(refused.value) == f"<stream>: document 2: line 3, column {4 * LIMIT}: {TOO_DEEP}"


def test_json_one_level_over_the_limit_is_refused_and_at_the_limit_read() -> None:
    at_limit = '{"a":' * (LIMIT - 1) + "[]" + "}" * (LIMIT - 1)
    assert parsing.height(parse_text(at_limit)[0].data, {}) == LIMIT
    with pytest.raises(DecodeError, match=f"^<stream>: document 1: {TOO_DEEP}$"):
        parse_text('{"a":' * LIMIT + "[]" + "}" * LIMIT)


def test_aliases_that_stack_shallow_collections_into_a_deep_one_are_refused() -> None:
    # each anchor is 60 levels deep and holds the previous one: four of them nest 240 levels
    lines, previous = [], "1"
    for i in range(4):
        lines.append(f"a{i}: &a{i} " + "[" * 60 + previous + "]" * 60)
        previous = f"*a{i}"
    with pytest.raises(DecodeError, match=TOO_DEEP):
        parse_text("\n".join(lines))
    [doc] = parse_text("\n".join(lines[:3]))  # three of them: 180 levels, read
    assert parsing.height(doc.data, {}) == 181


def test_documents_the_event_builder_leaves_to_pyyaml_are_bounded_too() -> None:
    merged = "base: &b {x: 1}\nderived:\n  <<: *b\n  deep: " + _flow_lists(LIMIT)
    with pytest.raises(DecodeError, match=TOO_DEEP):
        parse_text(merged)
    assert parse_text(merged.replace(_flow_lists(LIMIT), _flow_lists(LIMIT - 2)))[0].data["derived"]["x"] == 1


def test_a_recursive_alias_still_reads_as_a_collection_holding_itself() -> None:
    [(_, data, _)] = parsing.load_yaml_documents("a: &r [1, *r]\n")
    assert data["a"][1] is data["a"] and parsing.height(data, {}) == 2  # (the cycle adds no level)


def test_the_refusal_is_a_marked_yaml_error() -> None:
    with pytest.raises(yaml.MarkedYAMLError) as refused:
        parsing.load_yaml_documents(_flow_lists(DEEP))
    assert isinstance(refused.value, parsing.NestingTooDeep) and refused.value.problem == TOO_DEEP


@pytest.mark.slow
@pytest.mark.parametrize("command", [["validate"], ["simulate"]])
@pytest.mark.parametrize("suffix,text", [(".yaml", _flow_lists(DEEP)), (".yaml", _flow_maps(DEEP)),
                                         (".json", "[" * DEEP + "]" * DEEP)])
def test_the_cli_says_the_file_is_nested_too_deep_and_exits_2(tmp_path: Path, command: list[str], suffix: str,
                                                               text: str) -> None:
    f = tmp_path / f"deep{suffix}"
    f.write_text(text)
    started = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "dralloc", *command, "-f", str(f)], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr and f"{f}: document 1: " in proc.stderr and TOO_DEEP in proc.stderr
    assert time.monotonic() - started < 30  # (a process start; the refusal itself takes milliseconds)


# JSON values whose strings hold what the text measure must not take for structure: brackets, quotes and
# backslashes, escaped or not
_tricky_strings = st.text(alphabet='[]{}"\\ax\n', max_size=6)
_json_values = st.recursive(st.none() | st.integers() | _tricky_strings,
                            lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_tricky_strings, inner,
                                                                                        max_size=3),
                            max_leaves=40)


@settings(max_examples=200)
@given(_json_values, st.integers(0, 12))
def test_the_depth_measured_on_a_json_text_is_the_depth_of_what_it_decodes_to(value: object, limit: int) -> None:
    text = json.dumps(value)
    with unittest.mock.patch.object(parsing, "SAFE_BRACKETS", 0):  # (measured, however few its brackets)
        assert parsing.too_deep_to_decode(text, limit) == (parsing.height(value, {}) > limit)
        assert parsing.too_deep_to_decode(text.encode(), limit) == (parsing.height(value, {}) > limit)


def test_a_text_with_few_brackets_is_not_measured_at_all() -> None:
    assert not parsing.too_deep_to_decode("[" * parsing.SAFE_BRACKETS)  # (no decoder's stack overflows on it)
    assert parsing.too_deep_to_decode("[" * (parsing.SAFE_BRACKETS + 1))
    # (after a string that never ends a decoder reads no structure: the text is refused as broken, not as deep)
    assert not parsing.too_deep_to_decode('["' + "[" * (parsing.SAFE_BRACKETS + 1))


# A process whose recursion limit is far above what the C stack holds (the allocator's search raises it): a
# decoder that recursed down a hundred thousand levels would kill it.
_DEEP_BODIES = """
import sys
sys.setrecursionlimit(1_000_000)
from dralloc.api.codec import parse_text
from dralloc.errors import DecodeError
from dralloc.server.http.bodies import parse
from dralloc.server.http.errors import ApiError
from dralloc.server.protobuf import forms
from dralloc.server.protobuf.wire import ProtobufError


def varint(n):
    out = b""
    while n >= 0x80:
        out, n = out + bytes([n & 0x7F | 0x80]), n >> 7
    return out + bytes([n])


for text in ('{"a":' * 100_000 + '1' + '}' * 100_000, '[' * 100_000 + ']' * 100_000):
    raw = text.encode()
    try:  # (a protobuf body's embedded JSON: a RawExtension of {1: raw})
        forms._raw_json(b"\\x0a" + varint(len(raw)) + raw, "RawExtension")
    except ProtobufError as exc:
        assert "nested too deeply" in str(exc), exc
    try:
        parse(text.encode(), "application/json", "ConfigMap", "v1")
    except ApiError as exc:
        assert "exceeded max depth" in exc.message, exc.message
    try:
        parse_text(text)
    except DecodeError as exc:
        assert "exceeded max depth" in str(exc), exc
print("refused")
"""


def test_json_nested_past_the_stack_is_refused_before_it_is_decoded_whatever_the_recursion_limit() -> None:
    proc = subprocess.run([sys.executable, "-c", _DEEP_BODIES], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and proc.stdout.strip() == "refused", (proc.returncode, proc.stderr[-2000:])
