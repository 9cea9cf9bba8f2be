"""/openapi/v2: the Swagger 2.0 definitions of the served kinds, as JSON or as the protobuf (gnostic's
``openapi.v2.Document``) that kubectl asks for.

kubectl validates on the server (``fieldValidation``) whatever OpenAPI v3 says a kind supports, but a ``List``
(``kubectl get -o yaml`` output, ``kubectl create -f`` of a list) is checked on the client against the v2
definitions, item by item, found through their ``x-kubernetes-group-version-kind``. The definitions are the
ones of /openapi/v3 (the models' schemas) with ``#/definitions/`` references, those of the gated versions
only when the server serves them; paths are left out, as no client reads them from here.
"""

from __future__ import annotations

import json
from functools import cache
from typing import Any

import yaml

from dralloc import __version__
from dralloc.server.http import openapi_gated
from dralloc.server.http.discovery import (
    MODELLED_OTHER_VERSIONS,
    MODELLED_V1_GROUPS,
    PARTLY_MODELLED_GROUPS,
    open_schemas,
    openapi_v3_group,
    openapi_v3_gv,
)
from dralloc.server.registry.kinds import GROUP_VERSIONS

PROTOBUF = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"  # what clients ask for
# what kube-apiserver answers with: Go's media type parser refuses the "@" of the asked-for type
PROTOBUF_RETURNED = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"


@cache
def document(gated: tuple[openapi_gated.GroupVersion, ...] = ()) -> dict[str, Any]:
    """``gated``: the gated group versions the server serves (:func:`openapi_gated.served`)."""
    definitions: dict[str, Any] = {}
    # (the workloads' models describe them in part: open schemas here, as the core kinds', since kubectl checks
    # a List's items against these on the client)
    docs = [openapi_v3_gv("v1", core=True, core_models=False), *(openapi_v3_gv(v) for v in GROUP_VERSIONS),
            *(openapi_v3_group(g) for g in MODELLED_V1_GROUPS if g not in PARTLY_MODELLED_GROUPS),
            *(openapi_v3_group(*gv) for gv in MODELLED_OTHER_VERSIONS),
            *(open_schemas(g) for g in PARTLY_MODELLED_GROUPS), *(openapi_gated.document(*gv) for gv in gated)]
    for doc in docs:
        schemas = (doc or {}).get("components", {}).get("schemas", {})
        text = json.dumps(schemas).replace('"#/components/schemas/', '"#/definitions/')
        definitions.update(json.loads(text))
    return {"swagger": "2.0", "info": {"title": "dralloc", "version": __version__}, "paths": {},
            "definitions": dict(sorted(definitions.items()))}


# --- protobuf ------------------------------------------------------------------------------------------

def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _field(number: int, payload: bytes | str) -> bytes:
    """A length-delimited field (a string or an embedded message)."""
    data = payload.encode() if isinstance(payload, str) else payload
    return _varint(number << 3 | 2) + _varint(len(data)) + data


def _int(number: int, value: int) -> bytes:
    return _varint(number << 3) + _varint(value)


def _any(value: Any) -> bytes:
    """gnostic's Any: the value as YAML text (field 2)."""
    return _field(2, yaml.safe_dump(value, default_flow_style=False, sort_keys=True))


_STRINGS = {"$ref": 1, "format": 2, "title": 3, "description": 4, "pattern": 13}
_INTS = {"maxLength": 11, "minLength": 12, "maxItems": 14, "minItems": 15}


def _schema(schema: dict[str, Any]) -> bytes:
    """gnostic's Schema message, fields in their numbers' order as Go's encoder writes them."""
    parts: list[tuple[int, bytes]] = []
    if schema.get("type") == "array" and "items" not in schema:  # kubectl needs the items: any value
        schema = {**schema, "items": {}}
    for key, value in schema.items():
        if key in _STRINGS and isinstance(value, str):
            parts.append((_STRINGS[key], _field(_STRINGS[key], value)))
        elif key in _INTS and isinstance(value, int):
            parts.append((_INTS[key], _int(_INTS[key], value)))
        elif key == "required" and isinstance(value, list):
            parts += [(19, _field(19, str(v))) for v in value]
        elif key == "enum" and isinstance(value, list):
            parts += [(20, _field(20, _any(v))) for v in value]
        elif key == "additionalProperties":
            item = _field(1, _schema(value)) if isinstance(value, dict) else _int(2, int(bool(value)))
            parts.append((21, _field(21, item)))
        elif key == "type":
            types = value if isinstance(value, list) else [value]
            parts.append((22, _field(22, b"".join(_field(1, str(t)) for t in types))))
        elif key == "items" and isinstance(value, dict):
            parts.append((23, _field(23, _field(1, _schema(value)))))
        elif key == "allOf" and isinstance(value, list):
            parts += [(24, _field(24, _schema(v))) for v in value]
        elif key == "properties" and isinstance(value, dict):
            named = b"".join(_field(1, _field(1, name) + _field(2, _schema(sub))) for name, sub in value.items())
            parts.append((25, _field(25, named)))
        elif key.startswith("x-"):
            parts.append((31, _field(31, _field(1, key) + _field(2, _any(value)))))
    parts.sort(key=lambda p: p[0])  # stable: repeated fields keep their order
    return b"".join(p for _, p in parts)


@cache
def document_protobuf(gated: tuple[openapi_gated.GroupVersion, ...] = ()) -> bytes:
    doc = document(gated)
    info = _field(1, doc["info"]["title"]) + _field(2, doc["info"]["version"])
    definitions = b"".join(_field(1, _field(1, name) + _field(2, _schema(schema)))
                           for name, schema in doc["definitions"].items())
    return _field(1, doc["swagger"]) + _field(2, info) + _field(8, b"") + _field(9, definitions)


def definitions_protobuf(definitions: dict[str, Any]) -> bytes:
    """More definitions, as the fields of the Document message that :func:`document_protobuf` ends with (a
    repeated field's entries may come in several pieces: a reader concatenates them)."""
    if not definitions:
        return b""
    named = b"".join(_field(1, _field(1, name) + _field(2, _schema(schema)))
                     for name, schema in sorted(definitions.items()))
    return _field(9, named)


def wants_protobuf(accept: str) -> bool:
    return PROTOBUF in accept or PROTOBUF_RETURNED in accept
