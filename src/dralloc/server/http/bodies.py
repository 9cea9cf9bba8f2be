"""Request bodies: read within the size limit, decode (JSON or YAML), and refuse what kube-apiserver's decoder
refuses before any handler walks the data — nesting too deep for a recursive walk, integers beyond int64."""

from __future__ import annotations

from typing import Any

import msgspec
import yaml
from starlette.requests import Request

from dralloc.api import parsing
from dralloc.server.http.errors import ApiError, bad_request
from dralloc.server.http.requests import ApiRequest

MAX_BODY = 3 * 1024 * 1024
MAX_DEPTH = parsing.MAX_DEPTH  # (the handlers recurse: merge, apply, encode)
INT64_MIN, INT64_MAX = -(1 << 63), (1 << 63) - 1
JSON = "application/json"
YAML_TYPES = ("application/yaml", "application/apply-patch+yaml", "application/x-yaml")
# A body that has no run of 19 digits holds no integer beyond int64. The run is looked for in the body with
# every digit made "0" and everything else a blank: a plain substring search (a regex scan of ``\d{19,}``
# costs ten times more, and this check runs on every write).
_DIGITS_ONLY = bytes(48 if 48 <= i <= 57 else 32 for i in range(256))
_LONG_RUN = b"0" * 19


def _has_long_number(raw: bytes) -> bool:
    return _LONG_RUN in raw.translate(_DIGITS_ONLY)


def _too_large() -> ApiError:
    return ApiError(413, f"the request body is too large (limit {MAX_BODY} bytes)")


async def read_body(request: Request) -> tuple[bytes, str]:
    """The raw body (413 beyond 3 MiB, as kube-apiserver) and its media type."""
    length = request.headers.get("content-length")
    if length and length.isdigit() and int(length) > MAX_BODY:
        raise _too_large()
    reader = request if isinstance(request, ApiRequest) else ApiRequest(request.scope, request.receive)
    body = await reader.read_all(MAX_BODY)
    if body is None:
        raise _too_large()
    ctype = request.headers.get("content-type", JSON).split(";")[0].strip().lower()
    return body, ctype


def parse(raw: bytes, ctype: str, kind: str, version: str) -> Any:
    """Decode a JSON or YAML body; 400 for what cannot be decoded or goes beyond the decoder's limits."""
    if not raw.strip():
        raise bad_request("the request body is empty")
    is_yaml = ctype in YAML_TYPES
    if not is_yaml and parsing.too_deep_to_decode(raw):  # (before a decoder recurses down it: see SAFE_BRACKETS)
        raise _too_deep(kind, version)
    try:
        data = _yaml_document(raw) if is_yaml else msgspec.json.decode(raw)
    except (parsing.NestingTooDeep, RecursionError):
        raise _too_deep(kind, version) from None
    except (msgspec.DecodeError, yaml.YAMLError, UnicodeDecodeError, ValueError) as exc:
        raise bad_request(f"couldn't decode the request body as {'YAML' if is_yaml else 'JSON'}: {exc}") from None
    if is_yaml and b"*" in raw and _excessive_aliasing(data):
        raise bad_request("couldn't decode the request body as YAML: yaml: document contains excessive aliasing")
    check_limits(data, raw, kind, version)
    return data


def _yaml_document(raw: bytes) -> Any:
    """The one document of a YAML body, read by libyaml and built from its events: nesting beyond MAX_DEPTH is
    refused as it is read (a body of ``[[[[...`` a hundred thousand deep, in a millisecond), and timestamps
    stay text, as Go's YAML-to-JSON conversion keeps them."""
    documents = parsing.load_yaml_documents(raw)
    if len(documents) > 1:
        raise ValueError("expected a single document in the stream, but found another document")
    return documents[0][1] if documents else None


# Go's YAML decoder (sigs.k8s.io/yaml) refuses a document most of whose nodes come from expanding aliases: a
# few hundred bytes of nested aliases ("billion laughs") expand to billions of nodes. PyYAML shares an aliased
# node instead of copying it, so the expansion would happen later, in every walk and in the stored JSON.
_ALIAS_RATIO_LOW, _ALIAS_RATIO_HIGH = 400_000, 4_000_000


def _allowed_alias_ratio(nodes: int) -> float:
    """The share of a document's nodes that may come from aliases: 99% up to 400 000 nodes, falling to 10% at
    4 000 000 (as Go's decoder allows)."""
    if nodes <= _ALIAS_RATIO_LOW:
        return 0.99
    if nodes >= _ALIAS_RATIO_HIGH:
        return 0.10
    return 0.99 - 0.89 * (nodes - _ALIAS_RATIO_LOW) / (_ALIAS_RATIO_HIGH - _ALIAS_RATIO_LOW)


def _excessive_aliasing(data: Any) -> bool:
    """Whether the document, with its aliases expanded, has too many nodes from aliases. Each shared (aliased)
    container is sized once, so this costs a walk of the document as written, not as expanded."""
    expanded: dict[int, int] = {}  # id of a container -> its nodes, aliases expanded
    written = 0  # the nodes of the document as written (each container counted once)
    stack: list[tuple[Any, bool]] = [(data, False)]
    while stack:
        node, children_sized = stack.pop()
        if not isinstance(node, (dict, list)):
            continue
        values = list(node.values()) if isinstance(node, dict) else node
        own = 1 + (len(node) if isinstance(node, dict) else 0)  # the node and its keys
        if children_sized:
            expanded[id(node)] = own + sum(expanded.get(id(v), 1) for v in values)
            continue
        if id(node) in expanded:
            continue
        expanded[id(node)] = 1  # in progress: a node that contains itself counts once
        written += own + sum(1 for v in values if not isinstance(v, (dict, list)))
        stack.append((node, True))
        stack.extend((v, False) for v in values if isinstance(v, (dict, list)) and id(v) not in expanded)
    total = expanded.get(id(data), 1)
    aliased = total - written
    return aliased > 100 and total > 1000 and aliased / total > _allowed_alias_ratio(total)


def _too_deep(kind: str, version: str) -> ApiError:
    return bad_request(f'{kind} in version "{version}" cannot be handled as a {kind}: exceeded max depth of '
                       f'{MAX_DEPTH}')


def check_limits(data: Any, raw: bytes | None, kind: str, version: str, nesting: int = 0) -> None:
    """Depth at most MAX_DEPTH and every integer an int64 (what Go's decoder accepts into the API types).
    Both checks are skipped when the raw body shows they cannot fail (few brackets, no long digit runs).

    ``nesting``: for a protobuf body, how deep its messages alone can nest (decoder.nesting). Its own integers
    are int64 at most; only the JSON embedded in it (a RawExtension such as opaque device parameters, FieldsV1)
    can break the limits, one level below a message at most ``nesting`` deep, and the body holds that JSON
    verbatim — so its brackets and digits are counted in ``raw`` as a JSON body's are."""
    deep = raw is None or raw.count(b"{") + raw.count(b"[") > MAX_DEPTH - nesting
    numbers = raw is None or _has_long_number(raw)
    if not (deep or numbers) or not isinstance(data, (dict, list)):
        return
    stack: list[tuple[Any, int, tuple[str, ...]]] = [(data, 1, ())]
    while stack:
        node, depth, path = stack.pop()
        if depth > MAX_DEPTH:
            raise _too_deep(kind, version)
        items = node.items() if isinstance(node, dict) else ((None, v) for v in node)
        for key, value in items:
            if isinstance(value, (dict, list)):
                stack.append((value, depth + 1, path + (key,) if key is not None else path))
            elif numbers and isinstance(value, int) and not isinstance(value, bool) \
                    and not INT64_MIN <= value <= INT64_MAX:
                field = ".".join(path + ((key,) if key is not None else ()))
                raise bad_request(f'{kind} in version "{version}" cannot be handled as a {kind}: json: cannot '
                                  f'unmarshal number {value} into Go struct field {kind}.{field} of type int64')
