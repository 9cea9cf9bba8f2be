"""Strict decoding: every unknown field and every duplicate key of a manifest, with its path.

kube-apiserver's ``fieldValidation=Strict`` (and ``kubectl --validate=strict``) rejects a body that names a
field the schema does not have or repeats a key; ``Warn`` reports the same problems as warnings. The texts
are upstream's: ``unknown field "spec.devices[0].foo"`` and ``duplicate field "metadata.name"``.
"""

from __future__ import annotations

import functools
import types
import typing
from typing import Any, NamedTuple

import msgspec
import yaml

from dralloc.api import conversion, core_v1_fields, gotypes, sent_json
from dralloc.api.kinds import model_for
from dralloc.api.parsing import CheckedYAMLLoader, duplicate_messages, duplicate_paths, load_json_checked
from dralloc.api.quantity import Quantity


def field_problems(raw: bytes | str, *, yaml_input: bool = False, decoded: Any = None, **kw: Any) -> list[str]:
    """Problems of one encoded object: duplicate keys first (as found), then unknown fields (document order).
    ``decoded``: the JSON text as msgspec decoded it, when the caller has it (saves decoding it again)."""
    duplicates, unknown = body_problems(raw, yaml_input=yaml_input or bool(kw.get("yaml")), decoded=decoded)
    return duplicates + unknown


def body_problems(raw: bytes | str, *, yaml_input: bool = False, decoded: Any = None) -> tuple[list[str], list[str]]:
    """:func:`field_problems` in two lists: the duplicate keys and the unknown fields."""
    checked = check_body(raw, yaml_input=yaml_input, decoded=decoded)
    return checked.duplicates, checked.unknown


class BodyCheck(NamedTuple):
    """What reading one encoded object found: its duplicate keys, its unknown fields, and whether its JSON
    text decoded into its core/v1 kind's typed shape (then Go's decoder takes every value in it too)."""

    duplicates: list[str]
    unknown: list[str]
    typed: bool = False


def check_body(raw: bytes | str, *, yaml_input: bool = False, decoded: Any = None) -> BodyCheck:
    """:func:`body_problems`, and whether a core object's values are known to have Go's types."""
    duplicates: list[str] = []
    if yaml_input and raw.lstrip()[:1] in (b"{", "{"):
        yaml_input = False  # JSON is YAML too; the JSON scanner is much faster (kubectl sends JSON)
    try:
        data = _load_yaml(raw, duplicates) if yaml_input else _load_json(raw, duplicates, decoded)
    except (ValueError, yaml.YAMLError):
        return BodyCheck([], [])  # not decodable at all: the caller reports the parse error itself
    if not yaml_input and not duplicates and _decodes_into_shape(raw, data):
        # (a core kind's shape is typed as Go's types are: then its values are too, unless a string written
        # with escapes may stand where a quantity is, which Go parses as written)
        kind = data.get("kind")
        core = data.get("apiVersion") == "v1" and kind in core_v1_fields.ROOTS
        return BodyCheck(duplicates, [], core and not (gotypes.holds_quantity("v1", kind)
                                                       and sent_json.quantity_suspects(raw)))
    return BodyCheck(duplicates, unknown_fields(data))


def unknown_fields(data: Any) -> list[str]:
    """``unknown field "<path>"`` for each key of a decoded object that its kind's schema lacks.

    Every kind dralloc models is checked. The core/v1 kinds the API server stores (Pod, Node, Namespace,
    Event) are checked against their whole upstream schema (:mod:`dralloc.api.core_v1_fields`), and so is a
    struct that models a core/v1 type in part (``PARTIAL``: a workload's pod template spec); below other
    partial structs nothing is reported, since a field dralloc lacks there is not an unknown field."""
    return [f'unknown field "{p}"' for p in unknown_field_paths(data)]


def unknown_field_paths(data: Any) -> list[str]:
    """The paths (``spec.devices[0].foo``) of what ``unknown_fields`` reports, in document order."""
    if not isinstance(data, dict):
        return []
    api_version = data.get("apiVersion")
    kind = data.get("kind")
    if api_version == "v1" and kind in core_v1_fields.ROOTS:
        node = _table_node(kind)
    elif f"{api_version}.{kind}" in core_v1_fields.FIELDS:  # events.k8s.io/v1's Event: a view of core/v1's
        node = _table_node(f"{api_version}.{kind}")
    else:
        model = model_for(api_version, kind)
        if model is None:
            return []
        if api_version in conversion.SERVED_VERSIONS and api_version != conversion.V1:
            data = conversion.to_v1(data)
        node = _node(model)
    if not _has_unknown(data, node):  # the common case: one pass of C-level set comparisons
        return []
    found: list[str] = []
    _walk(data, node, "", found)
    return found


def _root_model(data: dict[str, Any]) -> Any:
    """The v1 model of a modelled kind that is not core/v1, or None (also for a v1beta1 object, whose devices
    and requests are laid out otherwise). A v1beta2 object has v1's shape: its conversion changes the value of
    its apiVersion alone."""
    api_version = data.get("apiVersion")
    model = model_for(api_version, data.get("kind"))
    if model is None or api_version == conversion.V1BETA1:
        return None
    return model


def drop_unknown_fields(data: dict[str, Any]) -> None:
    """Remove, in place, the fields a core/v1 object's schema lacks, as kube-apiserver's decoding into its Go
    types drops them when fieldValidation is Ignore or Warn (the stored object never has them)."""
    kind = data.get("kind")
    if data.get("apiVersion") != "v1" or kind not in core_v1_fields.ROOTS:
        return
    node = _table_node(kind)
    if _has_unknown(data, node):
        _prune(data, node)


def _prune(value: Any, node: Any) -> None:
    kind = node[0]
    if kind == _STRUCT:
        if type(value) is not dict:
            return
        fields = node[1]
        for key in [k for k in value if k not in fields]:
            del value[key]
        for key, child in node[3].items():
            item = value.get(key)
            if item is not None:
                _prune(item, child)
    elif type(value) is list:
        for item in value:
            _prune(item, node[1])
    elif type(value) is dict:
        for item in value.values():
            _prune(item, node[1])


# --- walking the schema -----------------------------------------------------------------------------
# Each model type compiles once into a small node tree, so the walk itself never touches ``typing``:
# (STRUCT, {json name: node}, frozenset of json names, {json name: node} of the non-leaf fields),
# (LIST, node), (MAP, node), or None for a leaf / free-form value.

_LEAF = None
_STRUCT, _LIST, _MAP = 0, 1, 2


def _strip_optional(tp: Any) -> Any:
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        return args[0] if len(args) == 1 else Any
    return tp


# Each model type (and each core/v1 type of the field table) compiles once into its node: types never change,
# so neither do their nodes. (No modelled or core/v1 type holds itself, so the nodes are built bottom-up.)
@functools.cache
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
            # a core/v1 type dralloc models in part (a workload's pod template spec) is checked against the
            # whole upstream type; below other partial models nothing is known to be unknown
            return _table_node(tp.__name__) if tp.__name__ in core_v1_fields.FIELDS else _LEAF
        hints = typing.get_type_hints(tp)
        fields = {f.encode_name: _node(hints[f.name]) for f in msgspec.structs.fields(tp)}
        return (_STRUCT, fields, frozenset(fields), {k: c for k, c in fields.items() if c is not _LEAF})
    return _LEAF


@functools.cache
def _table_node(name: str) -> Any:
    """The node of a core/v1 type from the field table ("" a leaf, "T", "[T]", "{T}")."""
    fields = {field: _table_ref(ref) for field, ref in core_v1_fields.FIELDS[name].items()}
    return (_STRUCT, fields, frozenset(fields), {k: c for k, c in fields.items() if c is not _LEAF})


def _table_ref(ref: str) -> Any:
    if not ref or ref[0] == "@":  # a scalar, or a time (dralloc.api.gotime checks those)
        return _LEAF
    if ref[0] == "[":
        return (_LIST, _table_ref(ref[1:-1]))
    if ref[0] == "{":
        return (_MAP, _table_ref(ref[1:-1]))
    return _table_node(ref)


def _has_unknown(value: Any, node: Any) -> bool:
    """Whether any key below ``value`` is unknown to ``node`` (no paths: cheap enough for every object)."""
    kind = node[0]
    if kind == _STRUCT:
        if type(value) is not dict:
            return False
        if not value.keys() <= node[2]:
            return True
        children = node[3]
        for key, item in value.items():  # an object sets a few of its type's fields: walk those
            child = children.get(key)
            if child is not None and item is not None and _has_unknown(item, child):
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


# --- the same question of a JSON text, answered by msgspec -----------------------------------------------
# Each compiled node also compiles, once, into a "shape": a msgspec struct per schema struct, every field
# optional, every leaf left undecoded (msgspec.Raw), unknown fields forbidden. A JSON text decodes into its
# kind's shape only when no object in it at a struct's place names a field the struct lacks, so a text that
# decodes has no unknown field, found at C speed (a slice of 8 devices: 96 000 instructions instead of the
# walk's 168 000). Anything else the shape refuses (a value of another JSON type than the schema's, a null
# in a list) leaves the answer to the walk, which reads such values as they are. The core/v1 kinds' shapes
# are dralloc.api.gotypes' instead, whose leaves are typed as Go's: the one decoding answers both questions
# there (no unknown field, no value Go refuses) when it succeeds.

class _Cyclic(Exception):
    """A type that holds itself: it has no shape (msgspec's structs are made whole), the walk answers."""


def _decodes_into_shape(raw: bytes | str, data: Any) -> bool:
    """Whether ``raw`` (``data``'s JSON text) certainly has no unknown field: it decodes into its kind's shape
    (for a core/v1 kind, a typed one: then every value has the JSON type of its Go field too). False says
    nothing (the walk then answers)."""
    if not isinstance(data, dict):
        return False
    core = data.get("apiVersion") == "v1" and data.get("kind") in core_v1_fields.ROOTS
    if core:
        decoder: msgspec.json.Decoder[Any] | None = gotypes.shape_decoder(data["kind"])
    else:
        model = _root_model(data)
        decoder = _model_shape_decoder(model) if model is not None else None
    if decoder is None:
        return False
    try:
        decoder.decode(raw)
    except (msgspec.ValidationError, msgspec.DecodeError):
        return False
    return True


def model_shape_decoder(model: type) -> msgspec.json.Decoder[Any] | None:
    """The decoder of a model's shape (not a core/v1 kind's): a JSON text of that kind it decodes has no
    unknown field. None for a model that has no shape (a free-form or self-holding type)."""
    return _model_shape_decoder(model)


@functools.cache
def _model_shape_decoder(model: type) -> msgspec.json.Decoder[Any] | None:
    node = _node(model)
    if node is _LEAF:
        return None
    try:
        return msgspec.json.Decoder(_shape(node, set(), {}))
    except _Cyclic:
        return None


def _shape(node: Any, building: set[int], made: dict[int, Any]) -> Any:
    if node is _LEAF:
        return msgspec.Raw
    if node[0] == _LIST:
        return list[_shape(node[1], building, made)]  # type: ignore[misc]
    if node[0] == _MAP:
        return dict[str, _shape(node[1], building, made)]  # type: ignore[misc]
    if id(node) in made:
        return made[id(node)]
    if id(node) in building:
        raise _Cyclic()
    building.add(id(node))
    fields: list[tuple[str, Any, Any]] = []
    rename: dict[str, str] = {}
    for i, (name, child) in enumerate(node[1].items()):
        tp = _shape(child, building, made)
        fields.append((f"f{i}", tp if tp is msgspec.Raw else tp | None, None))
        rename[f"f{i}"] = name  # (JSON names need not be identifiers)
    building.discard(id(node))
    made[id(node)] = msgspec.defstruct("Shape", fields, rename=rename, forbid_unknown_fields=True,
                                          gc=False)  # (thrown away at once, holding no cycles)
    return made[id(node)]


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


def _load_json(raw: bytes | str, duplicates: list[str], decoded: Any = None) -> Any:
    data, paths = load_json_checked(raw) if decoded is None else load_json_checked(raw, decoded)
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
