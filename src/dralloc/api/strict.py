"""Strict decoding: every unknown field and every duplicate key of a manifest, with its path.

kube-apiserver's ``fieldValidation=Strict`` (and ``kubectl --validate=strict``) rejects a body that names a
field the schema does not have or repeats a key; ``Warn`` reports the same problems as warnings. The texts
are upstream's: ``unknown field "spec.devices[0].foo"`` and ``duplicate field "metadata.name"``.
"""

from __future__ import annotations

import json
import types
import typing
from collections.abc import Iterator
from typing import Any

import msgspec
import yaml

from dralloc.api import conversion
from dralloc.api.quantity import Quantity


def field_problems(raw: bytes | str, *, yaml_input: bool = False, **kw: Any) -> list[str]:
    """Problems of one encoded object: duplicate keys first (as found), then unknown fields (document order)."""
    yaml_input = yaml_input or bool(kw.get("yaml"))
    duplicates: list[str] = []
    if yaml_input and raw.lstrip()[:1] in (b"{", "{"):
        yaml_input = False  # JSON is YAML too; the JSON scanner is much faster (kubectl sends JSON)
    try:
        data = _load_yaml(raw, duplicates) if yaml_input else _load_json(raw, duplicates)
    except (ValueError, yaml.YAMLError):
        return []  # not decodable at all: the caller reports the parse error itself
    return duplicates + unknown_fields(data)


def unknown_fields(data: Any) -> list[str]:
    """``unknown field "<path>"`` for each key of a decoded object that its kind's schema lacks.

    Every kind dralloc models is checked. Below a struct that models only part of its upstream type
    (``PARTIAL``: a Pod's or Node's spec and status) nothing is reported, since a field dralloc lacks there
    is not an unknown field."""
    if not isinstance(data, dict):
        return []
    api_version = data.get("apiVersion")
    from dralloc.api.codec import model_for

    model = model_for(api_version, data.get("kind"))
    if model is None:
        return []
    if api_version in conversion.SERVED_VERSIONS and api_version != conversion.V1:
        data = conversion.to_v1(data)
    node = _node(model)
    if not _has_unknown(data, node):  # the common case: one pass of C-level set comparisons
        return []
    found: list[str] = []
    _walk(data, node, "", found)
    return [f'unknown field "{p}"' for p in found]


# --- walking the schema -----------------------------------------------------------------------------
# Each model type compiles once into a small node tree, so the walk itself never touches ``typing``:
# (STRUCT, {json name: node}, frozenset of json names, ((json name, node) for the non-leaf fields)),
# (LIST, node), (MAP, node), or None for a leaf / free-form value.

_LEAF = None
_STRUCT, _LIST, _MAP = 0, 1, 2


def _strip_optional(tp: Any) -> Any:
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        return args[0] if len(args) == 1 else Any
    return tp


_NODES: dict[Any, Any] = {}  # model type -> compiled node; types never change, so neither do their nodes


def _node(tp: Any) -> Any:
    tp = _strip_optional(tp)
    if tp is Any or tp is Quantity:
        return _LEAF
    origin = typing.get_origin(tp)
    if origin is list:
        item = _node(typing.get_args(tp)[0])
        return (_LIST, item) if item is not _LEAF else _LEAF
    if origin is dict:
        item = _node(typing.get_args(tp)[1])
        return (_MAP, item) if item is not _LEAF else _LEAF
    if isinstance(tp, type) and issubclass(tp, msgspec.Struct):
        if getattr(tp, "PARTIAL", False):
            return _LEAF
        node = _NODES.get(tp)
        if node is None:
            fields: dict[str, Any] = {}
            children: list[tuple[str, Any]] = []
            # registered first (and filled in below): types may refer to themselves
            node = _NODES[tp] = (_STRUCT, fields, frozenset(f.encode_name for f in msgspec.structs.fields(tp)),
                                 children)
            hints = typing.get_type_hints(tp)
            for f in msgspec.structs.fields(tp):
                child = fields[f.encode_name] = _node(hints[f.name])
                if child is not _LEAF:
                    children.append((f.encode_name, child))
        return node
    return _LEAF


def _has_unknown(value: Any, node: Any) -> bool:
    """Whether any key below ``value`` is unknown to ``node`` (no paths: cheap enough for every object)."""
    kind = node[0]
    if kind == _STRUCT:
        if type(value) is not dict:
            return False
        if not value.keys() <= node[2]:
            return True
        for key, child in node[3]:
            item = value.get(key)
            if item is not None and _has_unknown(item, child):
                return True
        return False
    if kind == _LIST:
        if type(value) is not list:
            return False
        items: Any = value
    elif type(value) is dict:
        items = value.values()
    else:
        return False
    child = node[1]
    if child[0] == _STRUCT and not child[3]:  # structs of leaves (attributes, counters): keys only
        keys = child[2]
        for item in items:
            if type(item) is dict and not item.keys() <= keys:
                return True
        return False
    for item in items:
        if item is not None and _has_unknown(item, child):
            return True
    return False


def _walk(value: Any, node: Any, path: str, found: list[str]) -> None:
    kind = node[0]
    if kind == _STRUCT:
        if not isinstance(value, dict):
            return
        fields = node[1]
        for k, item in value.items():
            if k not in fields:
                found.append(f"{path}.{k}" if path else k)
            else:
                child = fields[k]
                if child is not None and item is not None:
                    _walk(item, child, f"{path}.{k}" if path else k, found)
    elif kind == _LIST:
        if isinstance(value, list):
            for i, item in enumerate(value):
                if item is not None:
                    _walk(item, node[1], f"{path}[{i}]", found)
    elif isinstance(value, dict):
        for k, item in value.items():
            if item is not None:
                _walk(item, node[1], f"{path}[{k}]", found)


# --- duplicate keys ---------------------------------------------------------------------------------
# Both parsers record the objects that repeat a key while they build them ("marks"); only a document with
# marks is walked again to name the paths. A clean document costs one C-level parse plus one Python call
# per JSON object (the pairs hook) or nothing extra for YAML (the mapping constructor runs anyway).

DuplicateMarks = list[tuple[dict[Any, Any], list[str]]]


def load_json_checked(raw: bytes | str) -> tuple[Any, list[str]]:
    """Parse one JSON text; also return the path of every repeated key (``metadata.name``, ``items[2].kind``).

    Raises ValueError (json.JSONDecodeError) on malformed JSON."""
    marks: DuplicateMarks = []

    def pairs_hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        obj = dict(pairs)
        if len(obj) != len(pairs):
            seen: set[str] = set()
            marks.append((obj, [k for k, _ in pairs if k in seen or seen.add(k)]))  # type: ignore[func-returns-value]
        return obj

    data = json.loads(raw, object_pairs_hook=pairs_hook)
    return data, duplicate_paths(data, marks) if marks else []


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
            keys = [self.construct_object(k) for k in own]
        else:
            data.update(self.construct_mapping(node))
            if len(data) == len(pairs):
                return
            keys = [self.construct_object(k) for k, _ in pairs]
        seen: set[Any] = set()
        dups = [str(k) for k in keys if k in seen or seen.add(k)]  # type: ignore[func-returns-value]
        if dups:
            self.dup_marks.append((data, dups))


CheckedYAMLLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG,
                                  CheckedYAMLLoader.construct_checked_map)
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
    _CORE + "float": yaml.constructor.SafeConstructor.construct_yaml_float,
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
                data = loader.construct_document(node)
                paths = duplicate_paths(data, loader.dup_marks) if loader.dup_marks else []
                out.append((node.start_mark.line + 1 if node is not None else 1, data, paths))
        finally:
            loader.dispose()
        return out
    except yaml.YAMLError as exc:
        exc.document_index = len(out) + 1  # type: ignore[attr-defined]
        raise


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
                else:
                    raise _NeedsFullLoader
                if stack:
                    _add(stack[-1], value, marks)
                else:
                    root = value
            out.append((line, root, duplicate_paths(root, marks) if marks else []))
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
        frame[1] = value
        return
    frame[1] = _NO_KEY
    if key in container:
        if frame[2] is None:
            frame[2] = []
        frame[2].append(str(key))
    container[key] = value


def _make_scalar(loader: Any, tag: str, value: str) -> Any:
    if tag not in _SCALAR_MAKERS:
        raise _NeedsFullLoader  # merge keys, binary, set, custom tags
    maker = _SCALAR_MAKERS[tag]
    return value if maker is None else maker(loader, yaml.ScalarNode(tag, value))


def _load_json(raw: bytes | str, duplicates: list[str]) -> Any:
    data, paths = load_json_checked(raw)
    duplicates.extend(duplicate_messages(paths))
    return data


def _load_yaml(raw: bytes | str, duplicates: list[str]) -> Any:
    loader = CheckedYAMLLoader(raw)
    try:
        data = loader.get_single_data()
    finally:
        loader.dispose()
    if loader.dup_marks:
        duplicates.extend(duplicate_messages(duplicate_paths(data, loader.dup_marks)))
    return data


def duplicates_by_document(text: str) -> dict[int, list[str]]:
    """``duplicate field`` messages of each document (1-based index) of a YAML or JSON stream."""
    out: dict[int, list[str]] = {}
    loader = CheckedYAMLLoader(text)
    index = 0
    try:
        while loader.check_node():
            index += 1
            loader.dup_marks = []
            data = loader.get_data()
            if loader.dup_marks:
                out[index] = duplicate_messages(duplicate_paths(data, loader.dup_marks))
    except yaml.YAMLError:
        pass  # the regular parser reports syntax errors with their position
    finally:
        loader.dispose()
    return out
