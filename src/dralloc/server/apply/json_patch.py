"""JSON merge patch (RFC 7386) and JSON patch (RFC 6902). A strategic merge patch follows the types' patch
strategies (``smp``), and server-side apply merges by the schema's list types (``fieldmerge``)."""

from __future__ import annotations

import copy
from typing import Any

import msgspec

from dralloc.api.gojson import go_json_type
from dralloc.server.http.errors import ApiError


def merge_patch(target: Any, patch: Any) -> Any:
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    out = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if key.startswith("$"):  # strategic-merge directives ($patch, $retainKeys, ...) on atomic lists: ignore
            continue
        if value is None:
            out.pop(key, None)
        else:
            out[key] = merge_patch(out.get(key), value)
    return out


def _pointer(path: Any, op: str = "", field: str = "path") -> list[str]:
    if not isinstance(path, str):  # as json-patch decoding a non-string path
        raise _Failed(f"{op} operation failed to decode {field}: json: cannot unmarshal {go_json_type(path)} into "
                            f"Go value of type string")
    if path == "":
        return []
    if not path.startswith("/"):
        raise _Failed(f"invalid JSON pointer {path!r}")
    return [p.replace("~1", "/").replace("~0", "~") for p in path[1:].split("/")]


def _walk(doc: Any, parts: list[str]) -> Any:
    cur = doc
    for p in parts:
        if isinstance(cur, list):
            try:
                cur = cur[int(p)]
            except (ValueError, IndexError):
                raise _Failed(f"path element {p!r} not found") from None
        elif isinstance(cur, dict):
            if p not in cur:
                raise _Failed(f"path element {p!r} not found")
            cur = cur[p]
        else:
            raise _Failed(f"path element {p!r} not found")
    return cur


def _set(doc: Any, parts: list[str], value: Any, insert: bool) -> Any:
    if not parts:
        return value
    parent = _walk(doc, parts[:-1])
    last = parts[-1]
    if isinstance(parent, list):
        if last == "-":
            parent.append(value)
            return doc
        try:
            i = int(last)
        except ValueError:
            raise _Failed(f"invalid array index {last!r}") from None
        if insert:
            if not 0 <= i <= len(parent):
                raise _Failed(f"array index {i} out of bounds")
            parent.insert(i, value)
        else:
            if not 0 <= i < len(parent):
                raise _Failed(f"array index {i} out of bounds")
            parent[i] = value
    elif isinstance(parent, dict):
        if not insert and last not in parent:
            raise _Failed(f"replace operation does not apply: doc is missing key: /{'/'.join(parts)}")
        parent[last] = value
    else:
        raise _Failed(f"path {'/'.join(parts)!r} not found")
    return doc


def _remove(doc: Any, parts: list[str]) -> Any:
    if not parts:
        raise _Failed('remove operation does not apply: doc is missing path: ""')
    parent = _walk(doc, parts[:-1])
    last = parts[-1]
    if isinstance(parent, list):
        try:
            return parent.pop(int(last))
        except (ValueError, IndexError):
            raise _Failed(f"array index {last!r} out of bounds") from None
    if isinstance(parent, dict) and last in parent:
        return parent.pop(last)
    raise _Failed(f"remove operation does not apply: doc is missing path: /{'/'.join(parts)}")


class _Failed(Exception):
    """An operation that does not apply (the message says why; kube-apiserver does not pass it on)."""


# kube-apiserver's answer to a JSON patch that does not apply, whatever json-patch said: a 422 whose message
# is the generic one of NewGenericServerResponse (json-patch's own text is dropped) and empty details.
JSON_PATCH_FAILED = "the server rejected our request due to an error in our request"
MAX_OPERATIONS = 10000  # kube-apiserver's maxJSONPatchOperations
# What "copy" operations may add to a document in all, in bytes of JSON (kube-apiserver's default
# --json-patch-max-copy-bytes, the request size limit): each copy can double the document, so twenty-five of
# them in a 2 KiB patch would otherwise build gigabytes.
MAX_COPIED_BYTES = 3 * 1024 * 1024


def json_patch(doc: Any, ops: Any) -> Any:
    """``doc`` with the operations ``ops`` applied. A body that is not a list of objects is a 400 (json-patch
    cannot decode it); an operation that cannot be applied is kube-apiserver's generic 422."""
    if not isinstance(ops, list):
        raise ApiError(400, f"json: cannot unmarshal {go_json_type(ops)} into Go value of type jsonpatch.Patch")
    for op in ops:
        if not isinstance(op, dict):
            raise ApiError(400, f"json: cannot unmarshal {go_json_type(op)} into Go value of type jsonpatch.Operation")
    if len(ops) > MAX_OPERATIONS:
        raise ApiError(413, f"Request entity too large: The allowed maximum operations in a JSON patch is "
                            f"{MAX_OPERATIONS}, got {len(ops)}", "RequestEntityTooLarge")
    try:
        return _apply(copy.deepcopy(doc), ops)
    except _Failed as exc:
        raise ApiError(422, JSON_PATCH_FAILED, "Invalid", details={}) from exc


def _apply(doc: Any, ops: list[dict[str, Any]]) -> Any:
    copied = 0
    for op in ops:
        kind = op.get("op")
        if not isinstance(kind, str) or "path" not in op:
            raise _Failed(f"invalid json patch operation: {op!r}")
        parts = _pointer(op["path"], kind)
        if not parts and kind in ("add", "replace", "remove", "move", "copy"):
            # the whole document cannot be added, replaced or removed, as json-patch refuses
            raise _Failed(f'{kind} operation does not apply: doc is missing path: ""')
        if kind == "add":
            doc = _set(doc, parts, copy.deepcopy(op.get("value")), True)
        elif kind == "replace":
            doc = _set(doc, parts, copy.deepcopy(op.get("value")), False)
        elif kind == "remove":
            _remove(doc, parts)
        elif kind == "test":
            if _walk(doc, parts) != op.get("value"):
                raise _Failed(f"testing value {op['path']} failed")
        elif kind in ("move", "copy"):
            src = _pointer(op.get("from", ""), kind, "from")
            if kind == "move":
                value = _remove(doc, src)
            else:
                value = _walk(doc, src)
                encoded = msgspec.json.encode(value)  # measured before it is copied
                copied += len(encoded)
                if copied > MAX_COPIED_BYTES:
                    raise _Failed(f"Unable to complete the copy, the accumulated size increase of copy is {copied}, "
                                  f"exceeding the limit {MAX_COPIED_BYTES}")
                # decoding the bytes just measured copies a large value many times faster than deepcopy
                value = msgspec.json.decode(encoded)
            doc = _set(doc, parts, value, True)
        else:
            raise _Failed(f"unexpected json patch operation {kind!r}")
    return doc
