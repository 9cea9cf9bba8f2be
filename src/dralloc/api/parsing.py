"""Parsing manifest text while noting every repeated key, with its path.

kube-apiserver's strict decoding rejects (or, with ``Warn``, reports) a body that repeats a key:
``duplicate field "metadata.name"``. Go's decoders keep the last value, and so do these.

* ``load_json_checked(text)`` parses JSON with the C scanner; a pairs hook notes repeated keys as each
  object is built.
* ``load_yaml_documents(text)`` parses a YAML stream with libyaml and builds the objects from its parser
  events, resolving scalars as PyYAML's safe loader does (YAML 1.1, timestamps kept as text); it is
  several times faster than composing PyYAML nodes first. Streams using merge keys, other tags or
  recursive aliases go through ``CheckedYAMLLoader`` (the node-based loader, same results) instead.

Only a document with repeated keys is walked again, to name their paths.

Both YAML paths refuse a document nesting collections deeper than ``MAX_DEPTH`` while they read it
(:class:`NestingTooDeep`), before anything recursive walks it: a few hundred kilobytes of ``[[[[...`` must
be refused at once, not after a parse that takes seconds.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import msgspec
import yaml

from dralloc.api.yaml_keys import UnsupportedKey, float_key, key_text, unsupported_key

__all__ = ["MAX_DEPTH", "CheckedYAMLLoader", "DuplicateMarks", "NestingTooDeep", "duplicate_messages",
           "duplicate_paths", "height", "json_too_deep", "load_json_checked", "load_yaml_documents",
           "repeats_no_key", "too_deep_to_decode"]

# kube-apiserver's JSON decoder stops at 10000 levels; what reads a document here recurses (merge, apply,
# encode, the strict check's walks) and Python's stack is smaller, so the limit is lower, yet far above any
# Kubernetes object's depth.
MAX_DEPTH = 200


_LIBYAML_TOO_DEEP = "exceeded maximum nesting depth"


class NestingTooDeep(yaml.MarkedYAMLError):
    """A document nests collections more than MAX_DEPTH levels deep (``problem_mark``: where it went over)."""

    def __init__(self, mark: yaml.Mark | None) -> None:
        super().__init__(problem=f"exceeded max depth of {MAX_DEPTH}", problem_mark=mark)


def json_too_deep(data: Any, text: bytes | str, limit: int = MAX_DEPTH) -> bool:
    """Whether decoded JSON nests deeper than ``limit``; walked only when the text holds enough brackets."""
    brackets = text.count(b"[") + text.count(b"{") if isinstance(text, bytes) else text.count("[") + text.count("{")
    if brackets <= limit:
        return False
    stack: list[tuple[Any, int]] = [(data, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > limit:
            return True
        values = node.values() if isinstance(node, dict) else node
        stack.extend((v, depth + 1) for v in values if isinstance(v, (dict, list)))
    return False

# msgspec's decoder recurses once per level of nesting on the thread's C stack, stopped only by the interpreter's
# recursion limit, which a process may raise (the allocator's search does, as far as a search needs; a program
# that uses dralloc may raise it further): with a limit of 20 000, a JSON text nested a hundred thousand levels
# deep overflows an 8 MiB stack (msgspec 0.23 needs some 450 bytes a level) and the process dies. A text with
# at most this many opening brackets nests no deeper than any stack holds; one with more is measured on its
# text before it is decoded (too_deep_to_decode).
SAFE_BRACKETS = 4000
# A JSON string (group 1; its escapes skipped whole, so a quote or bracket in it is no structure), an opening
# (2) or closing (3) bracket, or a quote that starts a string that never ends (4)
_TOKEN = r'("[^"\\]*(?:\\.[^"\\]*)*")|([\[{])|([\]}])|(")'
_TOKENS = re.compile(_TOKEN, re.DOTALL)
_TOKENS_BYTES = re.compile(_TOKEN.encode(), re.DOTALL)


def too_deep_to_decode(text: bytes | str, limit: int = MAX_DEPTH) -> bool:
    """Whether a JSON text holds so many brackets that a C decoder could overflow the stack on it (see
    SAFE_BRACKETS) and nests deeper than ``limit``, measured on the text token by token (no copy of it made):
    exact for valid JSON; for a text that is not, at least as deep as a decoder goes before it stops at the
    error. Costs two byte counts for most texts."""
    brackets = text.count(b"[") + text.count(b"{") if isinstance(text, bytes) else text.count("[") + text.count("{")
    if brackets <= max(SAFE_BRACKETS, limit):
        return False
    tokens = _TOKENS_BYTES.finditer(text) if isinstance(text, bytes) else _TOKENS.finditer(text)
    depth = 0
    for token in tokens:
        kind = token.lastindex
        if kind == 2:
            depth += 1
            if depth > limit:
                return True
        elif kind == 3:
            depth -= 1
        elif kind == 4:  # (the rest is in a string that never ends: no decoder reads structure there)
            return False
    return False


# Both parsers record the objects that repeat a key while they build them ("marks"); only a document with
# marks is walked again to name the paths.

DuplicateMarks = list[tuple[dict[Any, Any], list[str]]]


_NOT_DECODED: Any = object()


def load_json_checked(raw: bytes | str, decoded: Any = _NOT_DECODED) -> tuple[Any, list[str]]:
    """Parse one JSON text; also return the path of every repeated key (``metadata.name``, ``items[2].kind``).
    ``decoded``: the text as msgspec already decoded it (it is not decoded again when no key can repeat).

    Raises ValueError (json.JSONDecodeError) on malformed JSON."""
    data = _decode_if_no_repeats(raw, decoded)
    if data is not _REPEATS_POSSIBLE:
        return data, []
    return _load_json_noting_repeats(raw)


def repeats_no_key(raw: bytes | str, decoded: Any) -> bool:
    """Whether the JSON text ``raw``, which msgspec decoded into ``decoded``, certainly repeats no key (False:
    it may; :func:`load_json_checked` then names the repeated keys)."""
    return _decode_if_no_repeats(raw, decoded) is not _REPEATS_POSSIBLE


def _load_json_noting_repeats(raw: bytes | str) -> tuple[Any, list[str]]:
    marks: DuplicateMarks = []

    def pairs_hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        obj = dict(pairs)
        if len(obj) != len(pairs):
            seen: set[str] = set()
            marks.append((obj, [k for k, _ in pairs if k in seen or seen.add(k)]))  # type: ignore[func-returns-value]
        return obj

    data = json.loads(raw, object_pairs_hook=pairs_hook)
    return data, duplicate_paths(data, marks) if marks else []


_REPEATS_POSSIBLE = object()
# A colon written as a \u escape. Go's encoder writes <, > and & as \u003c, \u003e and \u0026 (CEL
# expressions hold them): only the texts holding "\u003" at all are searched for the colon's escape.
_ESCAPED_COLON = re.compile(r"\\u003[aA]")
_ESCAPED_COLON_BYTES = re.compile(rb"\\u003[aA]")


def _decode_if_no_repeats(raw: bytes | str, decoded: Any = _NOT_DECODED) -> Any:
    """The decoded text when it certainly repeats no key, else _REPEATS_POSSIBLE; at msgspec's speed.

    Outside strings, a JSON text has a colon after each key and nowhere else; inside strings, msgspec's
    re-encoding of what it decoded writes every colon as it is. So the text and the re-encoding hold the same
    number of colons unless an entry was dropped for repeating a key (its colon, and every colon in its value,
    is missing from the re-encoding), or the text wrote a colon in a string as ``\\u003a``: such texts take
    the exact slow path, as do texts msgspec rejects (json words their errors). Counting single bytes, the
    text is scanned once, blanks between a key and its colon and escaped quotes change nothing."""
    if isinstance(raw, str):
        if "\\u003" in raw and _ESCAPED_COLON.search(raw):
            return _REPEATS_POSSIBLE
        colons = raw.count(":")
    else:
        if b"\\u003" in raw and _ESCAPED_COLON_BYTES.search(raw):
            return _REPEATS_POSSIBLE
        colons = raw.count(b":")
    if decoded is not _NOT_DECODED:
        data = decoded
    else:
        try:
            data = msgspec.json.decode(raw)
        except msgspec.DecodeError:
            return _REPEATS_POSSIBLE
    return data if _encoded_colons(data) == colons else _REPEATS_POSSIBLE


def _encoded_colons(data: Any) -> int:
    """The colons of msgspec's encoding of ``data``, counted a list item at a time down to the items of a
    top-level object's lists (a List's items): the encoding of a whole dump would be one more copy of it in
    memory at once; an object without lists at its top (a request's body) is encoded whole, in one call. A
    key's colons are written as they are (JSON escapes no colon)."""
    if isinstance(data, list):
        return sum(msgspec.json.encode(item).count(b":") for item in data)
    if isinstance(data, dict) and list in map(type, data.values()):  # (a top-level list: no generator's frames)
        count = 0
        for key, value in data.items():
            count += 1 + str(key).count(":")
            if isinstance(value, list):
                count += sum(msgspec.json.encode(item).count(b":") for item in value)
            else:
                count += msgspec.json.encode(value).count(b":")
        return count
    return msgspec.json.encode(data).count(b":")


def duplicate_paths(data: Any, marks: DuplicateMarks) -> list[str]:
    """The paths of the marked repeated keys within ``data``, in document order."""
    by_id = {id(obj): dups for obj, dups in marks}
    out: list[str] = []

    def visit(value: Any, path: str) -> None:
        if isinstance(value, dict):
            for k in by_id.get(id(value), ()):
                out.append(f"{path}.{k}" if path else str(k))
            for k, v in value.items():
                if isinstance(v, (dict, list)):
                    visit(v, f"{path}.{k}" if path else str(k))
        elif isinstance(value, list):
            for i, v in enumerate(value):
                if isinstance(v, (dict, list)):
                    visit(v, f"{path}[{i}]")

    visit(data, "")
    return out


def duplicate_messages(paths: list[str]) -> list[str]:
    return [f'duplicate field "{p}"' for p in paths]


# Go's json.Marshal writes a float64 in plain notation below this (and in exponent notation from it on)
_GO_PLAIN_FLOAT_LIMIT = 1e21


def construct_go_json_number(loader: Any, node: yaml.ScalarNode) -> float | int:
    """A YAML float as Kubernetes reads it: sigs.k8s.io/yaml turns a YAML document into JSON with Go's
    ``json.Marshal``, which writes an integral float below 1e21 as an integer (``80.0`` becomes ``80``), so
    an int field takes it and an object stores it as an int."""
    value: float = yaml.constructor.SafeConstructor.construct_yaml_float(loader, node)
    if value.is_integer() and abs(value) < _GO_PLAIN_FLOAT_LIMIT:
        return int(value)
    return value


_MERGE_TAG = "tag:yaml.org,2002:merge"


class CheckedYAMLLoader(yaml.CSafeLoader if hasattr(yaml, "CSafeLoader") else yaml.SafeLoader):  # type: ignore[misc]
    """libyaml's safe loader that records repeated mapping keys (``dup_marks``) and keeps timestamps as text
    (Kubernetes keeps RFC 3339 strings). Keys a ``<<`` merge brings in may be overridden, as in YAML 1.1."""

    def __init__(self, stream: Any) -> None:
        super().__init__(stream)
        self.dup_marks: DuplicateMarks = []

    def construct_checked_map(self, node: yaml.MappingNode) -> Iterator[dict[Any, Any]]:
        data: dict[Any, Any] = {}
        yield data
        pairs = node.value
        if any(k.tag == _MERGE_TAG for k, _ in pairs):
            own = [k for k, _ in pairs if k.tag != _MERGE_TAG]
            data.update(self.construct_mapping(node))
            keys = [self.json_key(k) for k in own]
        else:
            data.update(self.construct_mapping(node))
            if len(data) == len(pairs):
                return
            keys = [self.json_key(k) for k, _ in pairs]
        seen: set[Any] = set()
        dups = [str(k) for k in keys if k in seen or seen.add(k)]  # type: ignore[func-returns-value]
        if dups:
            self.dup_marks.append((data, dups))

    def construct_mapping(self, node: yaml.Node, deep: bool = False) -> dict[str, Any]:
        """A mapping with JSON's keys (see ``yaml_keys``), later keys winning, as Go's conversion."""
        if isinstance(node, yaml.MappingNode):
            self.flatten_mapping(node)
        mapping: dict[str, Any] = {}
        for key_node, value_node in node.value:
            if not isinstance(key_node, yaml.ScalarNode):  # (PyYAML's own refusal, as before)
                raise yaml.constructor.ConstructorError("while constructing a mapping", node.start_mark,
                                                        "found unhashable key", key_node.start_mark)
            value = self.construct_object(value_node, deep=deep)
            mapping[self.json_key(key_node, value)] = value
        return mapping

    def json_key(self, node: yaml.Node, value: Any = None) -> str:
        """A key node as its JSON key: a float from its own text (not the integer an integral float value
        becomes), the rest as constructed."""
        if isinstance(node, yaml.ScalarNode) and node.tag == _CORE + "float":
            return float_key(yaml.constructor.SafeConstructor.construct_yaml_float(self, node))
        key = self.construct_object(node, deep=True)
        text = key_text(key)
        if text is None:
            raise unsupported_key(key, value, node.start_mark)
        return text


CheckedYAMLLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG,
                                  CheckedYAMLLoader.construct_checked_map)
CheckedYAMLLoader.add_constructor("tag:yaml.org,2002:float", construct_go_json_number)
CheckedYAMLLoader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


class _NeedsFullLoader(Exception):
    """A YAML feature the event builder leaves to PyYAML's constructor (merge keys, other tags, ...)."""


_CORE = "tag:yaml.org,2002:"
_SCALAR_MAKERS: dict[str, Any] = {
    _CORE + "str": None,  # the text itself
    _CORE + "null": lambda loader, node: None,
    _CORE + "bool": yaml.constructor.SafeConstructor.construct_yaml_bool,
    _CORE + "int": yaml.constructor.SafeConstructor.construct_yaml_int,
    _CORE + "float": construct_go_json_number,
}


def load_yaml_documents(text: str | bytes) -> list[tuple[int, Any, list[str]]]:
    """Every document of a YAML stream as (1-based line, data, repeated-key paths).

    libyaml parses; the objects are built here from its events, resolving plain scalars as PyYAML's safe
    loader does (YAML 1.1, timestamps kept as text) and remembering each one, since manifests repeat the
    same keys and values thousands of times. That is several times faster than composing nodes first. A
    stream using merge keys, other tags or recursive aliases is handed to the node-based loader instead.
    Raises yaml.YAMLError (with its mark, and ``document_index``: the 1-based document it is in) on
    malformed YAML."""
    out: list[tuple[int, Any, list[str]]] = []
    try:
        try:
            return _build_from_events(text, out)
        except _NeedsFullLoader:
            pass
        out = []
        loader = CheckedYAMLLoader(text)
        try:
            while loader.check_node():
                node = loader.get_node()
                loader.dup_marks = []
                data = loader.construct_document(node)  # (PyYAML constructs nested collections without recursing)
                if height(data, {}) > MAX_DEPTH:
                    raise NestingTooDeep(node.start_mark)
                paths = duplicate_paths(data, loader.dup_marks) if loader.dup_marks else []
                out.append((node.start_mark.line + 1 if node is not None else 1, data, paths))
        finally:
            loader.dispose()
        return out
    except yaml.YAMLError as exc:
        if isinstance(exc, yaml.MarkedYAMLError) and exc.problem == _LIBYAML_TOO_DEEP:
            # libyaml's scanner looks ahead through flow collections ("[[[[") and stops at 1000 levels
            # before the events reach the limit here: the same refusal
            exc = NestingTooDeep(exc.problem_mark)
        exc.document_index = len(out) + 1  # type: ignore[attr-defined]
        raise exc from None


def height(value: Any, memo: dict[int, int]) -> int:
    """The levels of collections in ``value`` (a scalar: 0), each alias counted as the collection it shares.
    ``memo`` keeps every container's height by id, so shared containers are walked once; a container that
    holds itself (a recursive alias) counts its own level once."""
    if not isinstance(value, (dict, list)):
        return 0
    stack: list[tuple[Any, bool]] = [(value, False)]
    while stack:
        node, children_done = stack.pop()
        children = [v for v in (node.values() if isinstance(node, dict) else node) if isinstance(v, (dict, list))]
        if children_done:
            memo[id(node)] = 1 + max((memo.get(id(c), 1) for c in children), default=0)
            continue
        if id(node) in memo:
            continue
        memo[id(node)] = 0  # in progress: a cycle back here adds nothing
        stack.append((node, True))
        stack.extend((c, False) for c in children if id(c) not in memo)
    return memo[id(value)]


def _build_from_events(text: str | bytes, out: list[tuple[int, Any, list[str]]]) -> list[tuple[int, Any, list[str]]]:
    loader = CheckedYAMLLoader(text)
    resolve, get_event = loader.resolve, loader.get_event
    plain: dict[str, Any] = {}  # plain scalar text -> its value

    def scalar(event: Any) -> Any:
        tag = event.tag
        if tag is None or tag == "!":
            if event.implicit[0]:
                if event.value in plain:
                    return plain[event.value]
                tag = resolve(yaml.ScalarNode, event.value, event.implicit)
                value = _make_scalar(loader, tag, event.value)
                plain[event.value] = value
                return value
            return event.value  # quoted: a string
        return _make_scalar(loader, tag, event.value)

    try:
        while True:
            event = get_event()
            if isinstance(event, yaml.StreamEndEvent):
                return out
            if not isinstance(event, yaml.DocumentStartEvent):
                continue
            anchors: dict[str, Any] = {}
            heights: dict[int, int] = {}  # of the collections aliases share (see ``height``)
            marks: DuplicateMarks = []
            # Each open collection: [container, pending key or _NO_KEY, repeated keys]
            stack: list[list[Any]] = []
            root: Any = None
            line = 1
            first = True
            while True:
                event = get_event()
                etype = type(event)
                if etype is yaml.DocumentEndEvent:
                    break
                if first:
                    line, first = event.start_mark.line + 1, False
                if etype is yaml.ScalarEvent:
                    value = scalar(event)
                    if event.anchor is not None:
                        anchors[event.anchor] = value
                    if type(value) is not str and stack and stack[-1][1] is _NO_KEY and type(stack[-1][0]) is dict:
                        value = _scalar_key(loader, event, value)  # (a key that is not a string)
                elif etype is yaml.MappingStartEvent or etype is yaml.SequenceStartEvent:
                    is_map = etype is yaml.MappingStartEvent
                    if event.tag not in (None, "!", _CORE + ("map" if is_map else "seq")):
                        raise _NeedsFullLoader
                    container: Any = {} if is_map else []
                    if event.anchor is not None:
                        anchors[event.anchor] = container
                    if stack:
                        _add(stack[-1], container, marks)
                    else:
                        root = container
                    if len(stack) == MAX_DEPTH:
                        raise NestingTooDeep(event.start_mark)
                    stack.append([container, _NO_KEY, None])
                    continue
                elif etype is yaml.MappingEndEvent or etype is yaml.SequenceEndEvent:
                    frame = stack.pop()
                    if frame[2]:
                        marks.append((frame[0], frame[2]))
                    continue
                elif etype is yaml.AliasEvent:
                    if event.anchor not in anchors:
                        raise _NeedsFullLoader  # PyYAML words the error
                    value = anchors[event.anchor]
                    if any(value is frame[0] for frame in stack):
                        raise _NeedsFullLoader  # recursive
                    if isinstance(value, (dict, list)) and len(stack) + height(value, heights) > MAX_DEPTH:
                        raise NestingTooDeep(event.start_mark)  # nested aliases can add up to any depth
                else:
                    raise _NeedsFullLoader
                if stack:
                    _add(stack[-1], value, marks)
                else:
                    root = value
            out.append((line, root, duplicate_paths(root, marks) if marks else []))
    except UnsupportedKey as exc:
        if exc.problem_mark is None:
            exc.problem_mark = event.start_mark  # (the key's value: Go's error names it)
        raise
    finally:
        loader.dispose()


_NO_KEY = object()


def _add(frame: list[Any], value: Any, marks: DuplicateMarks) -> None:
    container = frame[0]
    if type(container) is list:
        container.append(value)
        return
    key = frame[1]
    if key is _NO_KEY:
        if isinstance(value, (dict, list)):
            raise _NeedsFullLoader  # a collection as a key
        if type(value) is not str and type(value) is not _BadKey:  # (an alias as a key)
            text = key_text(value)
            value = text if text is not None else _BadKey(value)
        frame[1] = value
        return
    frame[1] = _NO_KEY
    if type(key) is _BadKey:
        raise unsupported_key(key.key, value)
    if key in container:
        if frame[2] is None:
            frame[2] = []
        frame[2].append(str(key))
    container[key] = value


class _BadKey:
    """A key JSON has no form for (null): refused once its value is read, which Go's error names."""

    __slots__ = ("key",)

    def __init__(self, key: Any) -> None:
        self.key = key


def _scalar_key(loader: Any, event: Any, value: Any) -> str | _BadKey:
    """A scalar key that is not a string as its JSON key (see ``yaml_keys``); a float's from its own text."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        tag = event.tag if event.tag not in (None, "!") else loader.resolve(yaml.ScalarNode, event.value,
                                                                            event.implicit)
        if tag == _CORE + "float":
            value = yaml.constructor.SafeConstructor.construct_yaml_float(loader, yaml.ScalarNode(tag, event.value))
    text = key_text(value)
    return text if text is not None else _BadKey(value)


def _make_scalar(loader: Any, tag: str, value: str) -> Any:
    if tag not in _SCALAR_MAKERS:
        raise _NeedsFullLoader  # merge keys, binary, set, custom tags
    maker = _SCALAR_MAKERS[tag]
    return value if maker is None else maker(loader, yaml.ScalarNode(tag, value))
