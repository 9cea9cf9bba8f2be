"""Reading and writing objects: YAML/JSON documents ⇄ typed models.

* :func:`read_documents` turns a file, a directory, a stream or ``"-"`` (stdin) into plain documents, each
  remembering where it came from (file, document number, line) so errors can say so.
* :func:`decode` turns one document (a dict with ``apiVersion``/``kind``) into its typed model, converting
  resource.k8s.io v1beta1/v1beta2 to v1 first.
* :func:`load` does both and flattens ``kind: List`` and typed ``*List`` documents into their items.
* :func:`to_dict`, :func:`dump_json`, :func:`dump_yaml` write objects back the way kube-apiserver returns
  them: camelCase, unset fields omitted, canonical quantities.

Unknown kinds are skipped with a :class:`UnknownKindWarning` naming them; undecodable documents raise
:class:`~dralloc.errors.DecodeError` naming file, document and line.
"""

from __future__ import annotations

import functools
import gc
import json
import os
import re
import sys
import warnings
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import msgspec
import yaml

from dralloc.api import (
    admissionregistration_v1,
    apps_v1,
    autoscaling_v2,
    batch_v1,
    conversion,
    core_v1,
    gotypes,
    networking_v1,
    parsing,
    policy_v1,
    rbac_v1,
    resource_v1,
    scheduling_v1,
    scheduling_v1alpha2,
    strict,
)
from dralloc.api.gojson import go_json_type
from dralloc.api.kinds import NAMESPACED_KINDS, model_for
from dralloc.api.quantity import ERR_FORMAT_WRONG, ERR_NUMERIC, ERR_SUFFIX, Quantity, quantity_dec_hook
from dralloc.errors import DecodeError

__all__ = [
    "CheckedObject",
    "Document",
    "FieldProblem",
    "UnknownKindWarning",
    "decode",
    "dump_json",
    "dump_yaml",
    "encode_json",
    "iter_checked",
    "kind_of",
    "load",
    "load_checked",
    "model_for",
    "read_documents",
    "to_dict",
]

MANIFEST_SUFFIXES = (".yaml", ".yml", ".json")


class UnknownKindWarning(UserWarning):
    """A document of a kind dralloc does not model was skipped."""


@dataclass(frozen=True, slots=True)
class Document:
    """One parsed document and where it came from."""

    source: str  # file name, or "<stdin>" / "<stream>"
    index: int  # 1-based document number within the source
    line: int  # 1-based line where the document starts
    data: Any
    duplicates: tuple[str, ...] = ()  # paths of repeated keys within ``data`` ("metadata.name")

    @property
    def where(self) -> str:
        return f"{self.source}: document {self.index} (line {self.line})"


# --- kinds ------------------------------------------------------------------------------------------

def kind_of(obj: Any) -> str:
    return type(obj).__name__


# --- decoding ---------------------------------------------------------------------------------------


# JSON/YAML numbers are accepted as quantities and surrounding blanks trimmed, as Quantity.UnmarshalJSON does.
_dec_hook = quantity_dec_hook


def _msgspec_path(message: str) -> tuple[str, str]:
    """Split msgspec's "text - at `$.spec.x[0]`" into ("spec.x[0]", "text")."""
    text, sep, where = message.rpartition(" - at `")
    if not sep:
        return "", message
    path = where.rstrip("`")
    path = path[2:] if path.startswith("$.") else path.lstrip("$")
    return path, text


_SEGMENT = re.compile(r"\[[^\]]*\]|[^.\[\]]+")


def _name_map_keys(data: Any, model: Any, path: str, error: str) -> str:
    """msgspec writes a map entry as ``[...]``; name the key as kube-apiserver's field paths do
    (``spec.devices[0].capacity[memory].value``): the failing entry is the first one that, alone in its
    map, reproduces the error."""
    segments = _SEGMENT.findall(path)
    trail: list[Any] = []
    node = data
    out: list[str] = []
    for seg in segments:
        if seg == "[...]" and isinstance(node, dict):
            key = next((k for k in node if _fails_alone(data, model, trail, k, error)), None)
            if key is None:
                return path
            out.append(f"[{key}]")
            trail.append(key)
            node = node[key]
        elif seg.startswith("[") and isinstance(node, list) and seg[1:-1].isdigit():
            out.append(seg)
            trail.append(int(seg[1:-1]))
            node = node[int(seg[1:-1])]
        elif isinstance(node, dict) and seg in node:
            out.append(("." if out else "") + seg)
            trail.append(seg)
            node = node[seg]
        else:
            return path
    return "".join(out)


def _fails_alone(data: Any, model: Any, trail: list[Any], key: Any, error: str) -> bool:
    def narrowed(node: Any, depth: int) -> Any:
        if depth == len(trail):
            return {key: node[key]}
        step = trail[depth]
        copy = list(node) if isinstance(node, list) else dict(node)
        copy[step] = narrowed(node[step], depth + 1)
        return copy

    try:
        msgspec.convert(narrowed(data, 0), model, dec_hook=_dec_hook, str_keys=True)
    except (msgspec.ValidationError, ValueError, TypeError) as exc:
        return str(exc) == error
    return False


def decode(data: Any, *, where: str = "") -> Any:
    """Decode one document into its model (v1 for resource.k8s.io). Raises DecodeError."""
    prefix = f"{where}: " if where else ""
    if not isinstance(data, dict):
        raise DecodeError(f"{prefix}expected an object with apiVersion and kind, got {type(data).__name__}")
    api_version, kind = data.get("apiVersion"), data.get("kind")
    for field_name, value in (("apiVersion", api_version), ("kind", kind)):
        if value is not None and not isinstance(value, str):  # (as Go's decoder of TypeMeta words it)
            raise DecodeError(f"{prefix}json: cannot unmarshal {go_json_type(value)} into Go struct field "
                              f"TypeMeta.{field_name} of type string")
    if not api_version or not kind:
        missing = "apiVersion" if not api_version else "kind"
        raise DecodeError(f"{prefix}Object '{missing}' is missing")
    model = model_for(api_version, kind)
    if model is None:
        raise DecodeError(f"{prefix}no kind \"{kind}\" is registered for version \"{api_version}\"")
    if api_version != conversion.V1 and api_version in conversion.SERVED_VERSIONS:
        data = conversion.to_v1(data)
    problem = gotypes.type_problem(data)  # a core/v1 object: every value's JSON type, as Go's decoder reads it
    if problem is not None:
        raise DecodeError(f"{prefix}{kind} {_name_of(data)}: {problem.path}: {problem.message}")
    try:
        return msgspec.convert(data, model, dec_hook=_dec_hook, str_keys=True)
    except (msgspec.ValidationError, ValueError, TypeError) as exc:
        path, text = _msgspec_path(str(exc))
        if "[...]" in path:
            path = _name_map_keys(data, model, path, str(exc))
        at = f"{path}: " if path else ""
        message = f"{prefix}{kind} {_name_of(data)}: {at}{text}"
        if text in _QUANTITY_ERRORS or text.startswith(_NOT_A_QUANTITY):
            raise QuantityDecodeError(message, ERR_FORMAT_WRONG if text.startswith(_NOT_A_QUANTITY) else text) from None
        raise DecodeError(message) from None


_QUANTITY_ERRORS = (ERR_FORMAT_WRONG, ERR_NUMERIC, ERR_SUFFIX)
_NOT_A_QUANTITY = "Expected a quantity"  # (quantity_dec_hook's: a bool, a list, an object)


class QuantityDecodeError(DecodeError):
    """A quantity the parser refuses; ``parser_error`` is the parser's text, which is all kube-apiserver's
    decoder says of it (Quantity's UnmarshalJSON parses any JSON value's text: ``true`` does not parse)."""

    def __init__(self, message: str, parser_error: str) -> None:
        super().__init__(message)
        self.parser_error = parser_error


def _name_of(data: dict[str, Any]) -> str:
    meta = data.get("metadata")
    name = meta.get("name") if isinstance(meta, dict) else None
    return f'"{name}"' if name else "(unnamed)"


def _list_items(doc: Document) -> list[Document] | None:
    """The item documents of a List, or None if ``doc`` is not a list."""
    data = doc.data
    if not isinstance(data, dict):
        return None
    kind = data.get("kind")
    if not (isinstance(kind, str) and kind.endswith("List") and "items" in data):
        return None
    items = data.get("items") or []
    if not isinstance(items, list):
        raise DecodeError(f"{doc.where}: items: expected a list")
    item_kind = kind[: -len("List")] if kind != "List" else None
    item_duplicates = _split_duplicates(doc.duplicates, len(items))
    out = []
    for i, item in enumerate(items):
        if isinstance(item, msgspec.Raw):  # (a streamed List: see _streamed_list)
            out.append(Document(doc.source, doc.index, doc.line, item, ()))
            continue
        if item_kind and isinstance(item, dict):
            # Typed lists from the API omit each item's apiVersion/kind.
            item = {"apiVersion": data.get("apiVersion"), "kind": item_kind, **item}
        out.append(Document(doc.source, doc.index, doc.line, item, item_duplicates[i]))
    return [_parsed_item(d, data.get("apiVersion"), item_kind) for d in out]


def _parsed_item(item: Document, api_version: Any, item_kind: str | None) -> Document:
    """An item of a streamed List parsed (with its repeated keys) once it is needed; others as they are."""
    if not isinstance(item.data, msgspec.Raw):
        return item
    text = bytes(item.data)
    try:
        data, duplicates = parsing.load_json_checked(text)
        too_deep = parsing.json_too_deep(data, text, parsing.MAX_DEPTH - 2)  # (the List and its items list)
    except RecursionError:
        too_deep = True
    if too_deep:
        raise DecodeError(f"{item.source}: document {item.index}: exceeded max depth of {parsing.MAX_DEPTH}")
    if item_kind and isinstance(data, dict):
        data = {"apiVersion": api_version, "kind": item_kind, **data}
    return Document(item.source, item.index, item.line, data, tuple(duplicates))


def _is_list(doc: Document) -> bool:
    data = doc.data
    if not isinstance(data, dict):
        return False
    kind = data.get("kind")
    return isinstance(kind, str) and kind.endswith("List") and "items" in data


def _taken_items(doc: Document) -> Iterator[Document]:
    """The item documents of a List (see :func:`_list_items`) one at a time, each taken out of the List as it
    is handed out: once its caller drops it (decoded into its typed object), its dicts can go, and a big
    dump never holds all its parsed items and all its typed objects at once."""
    listed = doc.data.get("items")
    if isinstance(listed, list) and listed and isinstance(listed[0], msgspec.Raw):
        kind = doc.data.get("kind")
        item_kind = kind[: -len("List")] if kind != "List" else None
        for i in range(len(listed)):
            raw, listed[i] = listed[i], None  # the text stays; each item's dicts exist while it is decoded
            yield _parsed_item(Document(doc.source, doc.index, doc.line, raw, ()), doc.data.get("apiVersion"),
                               item_kind)
        return
    items = _list_items(doc) or []
    for i in range(len(items)):
        item, items[i] = items[i], None  # type: ignore[call-overload]
        if isinstance(listed, list) and i < len(listed):
            listed[i] = None
        yield item
        del item


def _split_duplicates(paths: tuple[str, ...], count: int, prefix: str = "items") -> list[tuple[str, ...]]:
    """Hand each item of a list its own repeated-key paths (``items[2].metadata.name`` -> item 2's
    ``metadata.name``); repeats in the list object itself go to the first item, path unchanged."""
    out: list[list[str]] = [[] for _ in range(count)]
    for path in paths:
        if path.startswith(prefix + "["):
            index, _, rest = path[len(prefix) + 1:].partition("]")
            if index.isdigit() and int(index) < count and rest.startswith("."):
                out[int(index)].append(rest[1:])
                continue
        if count:
            out[0].append(path)
    return [tuple(p) for p in out]


def iter_objects(docs: Iterable[Document], *, skip_unknown: bool = True) -> Iterator[tuple[Document, Any]]:
    """Decode documents (flattening lists), yielding (document, object) pairs."""
    for doc in docs:
        if doc.data is None:  # an empty document ("---" at the end)
            continue
        items = _list_items(doc)
        if items is not None:
            yield from iter_objects(items, skip_unknown=skip_unknown)
            continue
        data = doc.data
        if skip_unknown and isinstance(data, dict):
            api_version, kind = data.get("apiVersion"), data.get("kind")
            if (isinstance(api_version, str) and isinstance(kind, str) and api_version and kind
                    and model_for(api_version, kind) is None):
                warnings.warn(
                    f"{doc.where}: skipping {kind} ({api_version}): not a kind dralloc reads",
                    UnknownKindWarning,
                    stacklevel=2,
                )
                continue
        yield doc, decode(data, where=doc.where)


def load(src: str | os.PathLike[str] | IO[str] | IO[bytes], *, skip_unknown: bool = True) -> list[Any]:
    """Load the typed objects of a file, a directory (every .yaml/.yml/.json, sorted), a stream or "-"."""
    if isinstance(src, (str, os.PathLike)) and str(src) != "-":
        path = Path(src)
        if path.is_file() and path.suffix.lower() == ".json":
            fast = _load_json_fast(path)
            if fast is not None:
                return fast
    return [obj for _, obj in iter_objects(read_documents(src), skip_unknown=skip_unknown)]


@dataclass(frozen=True, slots=True)
class CheckedObject:
    """One object of a checked load: the decoded object, or why its document could not be decoded, and
    its strict-decoding problems (``duplicate field "..."`` first, then ``unknown field "..."``)."""

    document: Document
    obj: Any = None  # None when ``error`` is set
    error: DecodeError | None = None
    problems: tuple[str, ...] = ()

    @property
    def kind(self) -> str | None:
        if self.obj is not None:
            return kind_of(self.obj)
        data = self.document.data
        kind = data.get("kind") if isinstance(data, dict) else None
        return kind if isinstance(kind, str) else None

    @property
    def name(self) -> str | None:
        if self.obj is not None:
            return self.obj.metadata.name  # type: ignore[no-any-return]
        meta = self.document.data.get("metadata") if isinstance(self.document.data, dict) else None
        name = meta.get("name") if isinstance(meta, dict) else None
        return name if isinstance(name, str) else None


@dataclass(frozen=True, slots=True)
class FieldProblem:
    """An unknown or repeated field of one object, where kube-apiserver's strict field validation would
    reject it (``fieldValidation=Strict``) or warn (``Warn``)."""

    where: str  # file, document and line
    kind: str
    name: str
    message: str  # 'unknown field "spec.x"' or 'duplicate field "metadata.name"'

    def __str__(self) -> str:
        return f"{self.kind}/{self.name}: {self.message}"


@contextmanager
def cyclic_gc_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector while a block builds objects, restoring it afterwards.

    Parsing and decoding a dump allocates millions of dicts and structs; every few thousand allocations
    the collector walks what is young, and ever more often what was built before, which made loading a
    233 MB dump five times slower. What is built here holds no reference cycles, so reference counting
    frees it all the same."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def iter_checked(sources: Iterable[str | os.PathLike[str] | IO[str] | IO[bytes]]) -> Iterator[CheckedObject]:
    """Read, strictly check and decode every object of the sources (files, directories, streams, "-").

    Lists are flattened into their items. Kinds dralloc does not read are skipped with one
    UnknownKindWarning per kind and source (naming the first such document and how many there were). A
    document that cannot be decoded yields a CheckedObject with ``error`` set, so a caller can report every
    bad document; unreadable or unparsable files raise DecodeError."""
    for src in sources:
        skipped: dict[tuple[str, str], list[Document]] = {}
        with cyclic_gc_paused():
            docs = read_documents(src, check_duplicates=True, stream_lists=True)
        yield from _checked(docs, skipped)
        for (api_version, kind), docs in skipped.items():
            many = f"{len(docs)} {kind} objects" if len(docs) > 1 else kind
            first = docs[0].where if len(docs) == 1 else f"{docs[0].where} and {len(docs) - 1} more"
            warnings.warn(f"{first}: skipping {many} ({api_version}): not a kind dralloc reads",
                          UnknownKindWarning, stacklevel=2)


def _checked(docs: Iterable[Document], skipped: dict[tuple[str, str], list[Document]]) -> Iterator[CheckedObject]:
    for doc in docs:
        if doc.data is None:
            continue
        if _is_list(doc):
            yield from _checked(_taken_items(doc), skipped)
            continue
        data = doc.data
        problems = parsing.duplicate_messages(list(doc.duplicates))
        if isinstance(data, dict):
            api_version, kind = data.get("apiVersion"), data.get("kind")
            if (isinstance(api_version, str) and isinstance(kind, str) and api_version and kind
                    and model_for(api_version, kind) is None):
                skipped.setdefault((str(api_version), str(kind)), []).append(doc)
                continue
        try:
            with cyclic_gc_paused():
                obj = decode(data, where=doc.where)
        except DecodeError as exc:
            yield CheckedObject(doc, None, exc, tuple(problems))
            continue
        yield CheckedObject(doc, obj, None, tuple(problems + strict.unknown_fields(data)))


def load_checked(sources: Iterable[str | os.PathLike[str] | IO[str] | IO[bytes]], *,
                 each: Callable[[Any], Any] | None = None) -> tuple[list[Any], list[FieldProblem]]:
    """The objects of the sources and their strict-decoding problems (unknown and repeated fields).

    The loading path shared by ``dralloc validate``, ``allocate`` and ``simulate``: JSON is parsed once by
    the C JSON scanner, YAML by libyaml, both noting repeated keys as they build objects. Raises
    DecodeError (naming file, document and line) for the first document that cannot be decoded. ``each``:
    what is kept of each object, made as soon as it is decoded (the simulator shares the identical parts of
    slices there, before the next item is decoded)."""
    objects: list[Any] = []
    problems: list[FieldProblem] = []
    first_error: DecodeError | None = None
    first_seen: dict[tuple[str, str, str], str] = {}
    with cyclic_gc_paused():
        # Each object is kept, its document (the parsed dicts) dropped as soon as it is decoded.
        for checked in iter_checked(sources):
            if checked.error is None:
                checked = _first_of_its_name(checked, first_seen)
            if checked.error is not None:
                first_error = first_error or checked.error
                continue
            if first_error is not None:
                continue  # (read on only for the warnings of the kinds skipped)
            objects.append(checked.obj if each is None else each(checked.obj))
            for message in checked.problems:
                problems.append(FieldProblem(checked.document.where, checked.kind or "",
                                             _qualified_name(checked.obj), message))
            del checked
    if first_error is not None:
        raise first_error
    return objects, problems


def _first_of_its_name(checked: CheckedObject, first_seen: dict[tuple[str, str, str], str]) -> CheckedObject:
    """``checked``, or a decode error when an object of its kind, namespace and name came before: a cluster
    holds each object once (kube-apiserver refuses a second create), and a dump that repeats one (two dumps
    concatenated) would otherwise count its node or its devices twice."""
    obj = checked.obj
    meta = getattr(obj, "metadata", None)
    name = getattr(meta, "name", None)
    if not name:
        return checked  # (generateName: the server names it)
    kind = kind_of(obj)
    namespace = (getattr(meta, "namespace", None) or "default") if kind in NAMESPACED_KINDS else ""
    key = (kind, namespace, name)
    where = checked.document.where
    first = first_seen.get(key)
    if first is None:
        first_seen[key] = where
        return checked
    shown = f"{namespace}/{name}" if namespace else name
    error = DecodeError(f"{where}: {kind} \"{shown}\" already exists (first at {first}): each object may "
                        "appear once")
    return CheckedObject(checked.document, None, error, checked.problems)


def _qualified_name(obj: Any) -> str:
    meta = obj.metadata
    name = meta.name or "(unnamed)"
    return f"{meta.namespace}/{name}" if meta.namespace else name


class _Head(msgspec.Struct, rename="camel"):
    api_version: str | None = None
    kind: str | None = None


def _load_json_fast(path: Path) -> list[Any] | None:
    """Decode a v1 JSON file straight into its model (a ResourceSliceList of 5000 slices: 0.35 s instead of
    1.2 s through dicts). Returns None to fall back to the general path, which also words the errors."""
    try:
        raw = path.read_bytes()
        if parsing.too_deep_to_decode(raw):  # (the general path refuses it)
            return None
        head = msgspec.json.decode(raw, type=_Head)
    except (OSError, msgspec.DecodeError, msgspec.ValidationError, RecursionError):
        return None
    if head.api_version not in (conversion.V1, "v1") or not head.kind:
        return None
    model = model_for(head.api_version, head.kind)
    list_of = model_for(head.api_version, head.kind[:-4]) if head.kind.endswith("List") else None
    if model is None and list_of is None:
        return None
    target = model if model is not None else _LIST_MODELS.get(head.kind)
    if target is None:
        return None
    decoder = _typed_decoder(target)
    try:
        obj = decoder.decode(raw)
    except (msgspec.DecodeError, msgspec.ValidationError, ValueError, TypeError, RecursionError):
        return None  # (the general path words the error; a body nested too deep is refused there)
    return list(obj.items) if model is None else [obj]


@functools.lru_cache(maxsize=32)
def _typed_decoder(model: type) -> msgspec.json.Decoder[Any]:
    """A model's JSON decoder, built once per model (building one walks the whole type)."""
    return msgspec.json.Decoder(model, dec_hook=_dec_hook)


_LIST_MODELS: dict[str, type] = {
    "ResourceSliceList": resource_v1.ResourceSliceList,
    "DeviceClassList": resource_v1.DeviceClassList,
    "ResourceClaimList": resource_v1.ResourceClaimList,
    "ResourceClaimTemplateList": resource_v1.ResourceClaimTemplateList,
    "DeviceTaintRuleList": resource_v1.DeviceTaintRuleList,
    "NodeList": core_v1.NodeList,
    "PodList": core_v1.PodList,
    "DeploymentList": apps_v1.DeploymentList,
    "ReplicaSetList": apps_v1.ReplicaSetList,
    "StatefulSetList": apps_v1.StatefulSetList,
    "DaemonSetList": apps_v1.DaemonSetList,
    "JobList": batch_v1.JobList,
    "CronJobList": batch_v1.CronJobList,
    **admissionregistration_v1.LIST_KINDS,
    "HorizontalPodAutoscalerList": autoscaling_v2.HorizontalPodAutoscalerList,
    "IngressList": networking_v1.IngressList,
    "IngressClassList": networking_v1.IngressClassList,
    "NetworkPolicyList": networking_v1.NetworkPolicyList,
    "RoleList": rbac_v1.RoleList,
    "ClusterRoleList": rbac_v1.ClusterRoleList,
    "RoleBindingList": rbac_v1.RoleBindingList,
    "ClusterRoleBindingList": rbac_v1.ClusterRoleBindingList,
    "PriorityClassList": scheduling_v1.PriorityClassList,
    "WorkloadList": scheduling_v1alpha2.WorkloadList,
    "PodGroupList": scheduling_v1alpha2.PodGroupList,
    "PodDisruptionBudgetList": policy_v1.PodDisruptionBudgetList,
}


# --- reading documents ------------------------------------------------------------------------------


def read_documents(src: str | os.PathLike[str] | IO[str] | IO[bytes], *,
                   check_duplicates: bool = False, stream_lists: bool = False) -> list[Document]:
    """Parse every document of a file, a directory, a stream or "-" (stdin).

    With ``check_duplicates`` each document also carries the paths of its repeated keys (YAML documents
    always do: the check is free there). ``stream_lists`` (with ``check_duplicates``): a JSON List's items
    are left unparsed until taken one at a time (see :func:`_streamed_list`)."""
    check, stream = check_duplicates, stream_lists
    if hasattr(src, "read"):
        name = getattr(src, "name", "<stream>")
        return parse_text(_as_text(src.read(), str(name)), str(name), check_duplicates=check, stream_lists=stream)
    if str(src) == "-":
        return parse_text(_as_text(sys.stdin.buffer.read(), "<stdin>"), "<stdin>", check_duplicates=check,
                          stream_lists=stream)
    path = Path(src)
    if path.is_dir():
        files = sorted(p for p in path.iterdir() if p.is_file() and p.suffix.lower() in MANIFEST_SUFFIXES)
        return [doc for f in files for doc in _read_file(f, check, stream)]
    return _read_file(path, check, stream)


def _read_file(path: Path, check_duplicates: bool = False, stream_lists: bool = False) -> list[Document]:
    try:
        text = _as_text(path.read_bytes(), str(path))  # (the bytes go once decoded: not beside the parse)
    except FileNotFoundError:
        raise DecodeError(f"{path}: no such file or directory") from None
    except OSError as exc:
        raise DecodeError(f"{path}: {exc.strerror or exc}") from None
    return parse_text(text, str(path), check_duplicates=check_duplicates, stream_lists=stream_lists)


def _as_text(raw: str | bytes, name: str) -> str:
    if isinstance(raw, str):
        return raw
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise DecodeError(f"{name}: not UTF-8 text (byte {exc.start})") from None


def parse_text(text: str, source: str = "<stream>", *, check_duplicates: bool = False,
               stream_lists: bool = False) -> list[Document]:
    """Parse YAML or JSON text (one or many documents); see read_documents for ``check_duplicates``."""
    stripped = text.lstrip()
    if stripped.startswith(("{", "[")):
        if parsing.too_deep_to_decode(text):  # (before a decoder recurses down it: see parsing.SAFE_BRACKETS)
            raise DecodeError(f"{source}: document 1: exceeded max depth of {parsing.MAX_DEPTH}")
        duplicates: list[str] = []
        if check_duplicates and stream_lists and (streamed := _streamed_list(text, source)) is not None:
            return [streamed]
        try:
            if check_duplicates:
                data, duplicates = parsing.load_json_checked(text)
            else:
                data = msgspec.json.decode(text)
        except (msgspec.DecodeError, ValueError):
            pass  # flow-style YAML or broken JSON: let the YAML parser say where
        except RecursionError:
            raise DecodeError(f"{source}: document 1: exceeded max depth of {parsing.MAX_DEPTH}") from None
        else:
            if parsing.json_too_deep(data, text):
                raise DecodeError(f"{source}: document 1: exceeded max depth of {parsing.MAX_DEPTH}")
            if isinstance(data, list):  # a bare JSON array of objects
                per_item = _split_duplicates(tuple(duplicates), len(data), prefix="")
                return [Document(source, i + 1, 1, d, per_item[i]) for i, d in enumerate(data)]
            return [Document(source, 1, 1, data, tuple(duplicates))]
    try:
        parsed = parsing.load_yaml_documents(text)
    except yaml.MarkedYAMLError as exc:
        index = getattr(exc, "document_index", 1)
        mark = exc.problem_mark or exc.context_mark
        line = f"line {mark.line + 1}, column {mark.column + 1}" if mark else "unknown line"
        problem = exc.problem or exc.context or "invalid YAML"
        raise DecodeError(f"{source}: document {index}: {line}: {problem}") from None
    except yaml.YAMLError as exc:
        raise DecodeError(f"{source}: document {getattr(exc, 'document_index', 1)}: {exc}") from None
    return [Document(source, i + 1, line, data, tuple(paths)) for i, (line, data, paths) in enumerate(parsed)]


def _streamed_list(text: str, source: str) -> Document | None:
    """A JSON List whose items are left unparsed (``msgspec.Raw``, pointing into ``text``) until each is taken,
    so that a dump's parsed dicts exist one item at a time, not all at once. None when ``text`` is not such a
    List, or when it needs the general path's exact checks: a key the List object itself repeats (its entry
    is dropped by the decoder, so the text holds more colons than the entries kept), a colon written as an
    escape, or anything the decoder refuses (the general path words the error)."""
    if "\\u003" in text:
        return None
    try:
        top = msgspec.json.decode(text, type=dict[str, msgspec.Raw])
        kind = msgspec.json.decode(top["kind"]) if "kind" in top else None
        if not (isinstance(kind, str) and kind.endswith("List") and "items" in top):
            return None
        items = msgspec.json.decode(top["items"], type=list[msgspec.Raw])
        head = {key: msgspec.json.decode(raw) for key, raw in top.items() if key != "items"}
    except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
        return None
    colons = sum(1 + key.count(":") + bytes(raw).count(b":") for key, raw in top.items() if key != "items")
    colons += 1 + sum(bytes(item).count(b":") for item in items)
    if colons != text.count(":") or parsing.json_too_deep(head, text):
        return None
    return Document(source, 1, 1, {**head, "items": items}, ())


# --- encoding ---------------------------------------------------------------------------------------


def _enc_hook(obj: Any) -> Any:
    if isinstance(obj, Quantity):
        return str(obj)
    raise NotImplementedError(f"cannot encode {type(obj).__name__}")


def to_dict(obj: Any) -> Any:
    """The JSON-ready form kube-apiserver would return (camelCase, unset omitted, canonical quantities)."""
    data = msgspec.to_builtins(obj, enc_hook=_enc_hook)
    kind = getattr(obj, "kind", None)
    if isinstance(data, dict) and isinstance(kind, str):
        # apiVersion and kind equal their defaults, which omit_defaults would drop; objects always carry them.
        data = {"apiVersion": obj.api_version, "kind": kind, **data}
    return data


_json_encoder = msgspec.json.Encoder(enc_hook=_enc_hook)


def encode_json(obj: Any) -> bytes:
    """Compact JSON bytes (struct field order, as kube-apiserver writes)."""
    if isinstance(getattr(obj, "kind", None), str):
        return _json_encoder.encode(to_dict(obj))  # keep apiVersion/kind (see to_dict)
    return _json_encoder.encode(obj)


def dump_json(obj: Any, *, indent: int = 2) -> str:
    """Indented JSON text with a trailing newline (kubectl -o json style)."""
    return json.dumps(to_dict(obj), indent=indent, ensure_ascii=False) + "\n"


class _Dumper(yaml.CSafeDumper if hasattr(yaml, "CSafeDumper") else yaml.SafeDumper):  # type: ignore[misc]
    pass


# Strings Go's YAML 1.1 reader would take for booleans must stay quoted.
_YAML11_BOOLS = frozenset("y Y yes Yes YES n N no No NO on On ON off Off OFF".split())


def _represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.Node:
    if value in _YAML11_BOOLS:
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style="'")
    if "\n" in value:
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style="|")
    return dumper.represent_str(value)


_Dumper.add_representer(str, _represent_str)


def dump_yaml(obj: Any) -> str:
    """YAML text as ``kubectl get -o yaml`` prints it (keys sorted). A list of objects becomes a v1 List."""
    if isinstance(obj, list):
        data: Any = {"apiVersion": "v1", "kind": "List", "items": [to_dict(o) for o in obj]}
    else:
        data = to_dict(obj)
    return yaml.dump(data, Dumper=_Dumper, sort_keys=True, default_flow_style=False, allow_unicode=True, width=1 << 16)


def dump_yaml_stream(objs: Iterable[Any]) -> str:
    """Several objects as a multi-document YAML stream."""
    return "".join("---\n" + dump_yaml(o) for o in objs)


def read_text(src: str | os.PathLike[str]) -> str:  # pragma: no cover - convenience
    if str(src) == "-":
        return sys.stdin.read()
    return Path(src).read_text(encoding="utf-8")


