"""Documents nested too deep are refused while they are read, with the document's position, whatever the
syntax (JSON, flow or block YAML, aliases, merge keys): nothing recursive ever walks them."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

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
