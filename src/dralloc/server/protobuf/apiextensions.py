"""apiextensions.k8s.io/v1 CustomResourceDefinitions in protobuf (what an operator's typed apiextensions client
sends): the schema table of the CRD (notation: server/protobuf/schema.py), and its OpenAPI schema, a
``JSONSchemaProps``, read and written here. Written from apiextensions-apiserver's generated ``.proto`` of
apiextensions/v1 (field numbers) and the Go types' JSON tags and JSON methods.

A JSONSchemaProps is a special message of the table (its JSON form is not an object of its fields alone): it
nests without bound, holds float64s (wire type 1, which no other table has), embedded JSON (``default``,
``enum``, ``example``) and three unions whose JSON is one of their fields: ``items`` (a schema, or a list of
them), ``additionalProperties`` / ``additionalItems`` (a schema, or a bool) and a ``dependencies`` entry (a
schema, or a list of property names). Both readers leave it to this module (the C reader hands a CRD back to
the Python path)."""

from __future__ import annotations

import math
import struct
from typing import Any

import msgspec

from dralloc.server.protobuf.forms import _raw_json
from dralloc.server.protobuf.plans import MAX_DEPTH
from dralloc.server.protobuf.schema import META, messages, schema
from dralloc.server.protobuf.wire import ProtobufError, _delimited, _text, _varint_bytes, scan

# The messages of a JSONSchemaProps: field number → (JSON name, form, flag). Forms: string, bool, int64,
# double, JSON (embedded JSON), a message of this dict, each possibly ``[]`` (repeated) or ``map:`` (map of
# string to it). Flags: "*" a Go pointer (written when set, kept when empty), "always" a JSON tag without
# omitempty (kept when empty), "" neither (Go writes it always; JSON leaves it out when empty).
_SCHEMA_MESSAGES: dict[str, dict[int, tuple[str, str, str]]] = {
    "JSONSchemaProps": {
        1: ("id", "string", ""), 2: ("$schema", "string", ""), 3: ("$ref", "string", "*"),
        4: ("description", "string", ""), 5: ("type", "string", ""), 6: ("format", "string", ""),
        7: ("title", "string", ""), 8: ("default", "JSON", "*"), 9: ("maximum", "double", "*"),
        10: ("exclusiveMaximum", "bool", ""), 11: ("minimum", "double", "*"), 12: ("exclusiveMinimum", "bool", ""),
        13: ("maxLength", "int64", "*"), 14: ("minLength", "int64", "*"), 15: ("pattern", "string", ""),
        16: ("maxItems", "int64", "*"), 17: ("minItems", "int64", "*"), 18: ("uniqueItems", "bool", ""),
        19: ("multipleOf", "double", "*"), 20: ("enum", "[]JSON", ""), 21: ("maxProperties", "int64", "*"),
        22: ("minProperties", "int64", "*"), 23: ("required", "[]string", ""),
        24: ("items", "JSONSchemaPropsOrArray", "*"), 25: ("allOf", "[]JSONSchemaProps", ""),
        26: ("oneOf", "[]JSONSchemaProps", ""), 27: ("anyOf", "[]JSONSchemaProps", ""),
        28: ("not", "JSONSchemaProps", "*"), 29: ("properties", "map:JSONSchemaProps", ""),
        30: ("additionalProperties", "JSONSchemaPropsOrBool", "*"),
        31: ("patternProperties", "map:JSONSchemaProps", ""),
        32: ("dependencies", "map:JSONSchemaPropsOrStringArray", ""),
        33: ("additionalItems", "JSONSchemaPropsOrBool", "*"), 34: ("definitions", "map:JSONSchemaProps", ""),
        35: ("externalDocs", "ExternalDocumentation", "*"), 36: ("example", "JSON", "*"),
        37: ("nullable", "bool", ""), 38: ("x-kubernetes-preserve-unknown-fields", "bool", "*"),
        39: ("x-kubernetes-embedded-resource", "bool", ""), 40: ("x-kubernetes-int-or-string", "bool", ""),
        41: ("x-kubernetes-list-map-keys", "[]string", ""), 42: ("x-kubernetes-list-type", "string", "*"),
        43: ("x-kubernetes-map-type", "string", "*"), 44: ("x-kubernetes-validations", "[]ValidationRule", "")},
    "ExternalDocumentation": {1: ("description", "string", ""), 2: ("url", "string", "")},
    "ValidationRule": {1: ("rule", "string", "always"), 2: ("message", "string", ""),
                       3: ("messageExpression", "string", ""), 4: ("reason", "string", "*"),
                       5: ("fieldPath", "string", ""), 6: ("optionalOldSelf", "bool", "*")},
    # the unions: read as objects of their fields, then turned into their JSON form (_UNIONS)
    "JSONSchemaPropsOrArray": {1: ("schema", "JSONSchemaProps", "*"), 2: ("jSONSchemas", "[]JSONSchemaProps", "")},
    "JSONSchemaPropsOrBool": {1: ("allows", "bool", "always"), 2: ("schema", "JSONSchemaProps", "*")},
    "JSONSchemaPropsOrStringArray": {1: ("schema", "JSONSchemaProps", "*"), 2: ("property", "[]string", "")},
}
_WIRE = {"bool": 0, "int64": 0, "double": 1}  # (every other form is length-delimited)


def _union_json(name: str, fields: dict[str, Any]) -> Any:
    """A union's JSON, as its Go MarshalJSON writes it (None: JSON's null)."""
    if name == "JSONSchemaPropsOrArray":
        return fields["jSONSchemas"] if fields.get("jSONSchemas") else fields.get("schema")
    if name == "JSONSchemaPropsOrBool":
        return fields["schema"] if "schema" in fields else bool(fields.get("allows"))
    return fields["property"] if fields.get("property") else fields.get("schema")  # (OrStringArray)


def _union_fields(name: str, value: Any) -> dict[str, Any]:
    """A union's fields from its JSON, as its Go UnmarshalJSON reads it."""
    if name == "JSONSchemaPropsOrArray":
        return {"jSONSchemas": value} if isinstance(value, list) else {"schema": value}
    if name == "JSONSchemaPropsOrBool":
        return {"allows": True, "schema": value} if isinstance(value, dict) else {"allows": bool(value)}
    return {"property": value} if isinstance(value, list) else {"schema": value} if isinstance(value, dict) else {}


# --- reading --------------------------------------------------------------------------------------------

def json_schema_props(raw: bytes, depth: int) -> dict[str, Any]:
    """A JSONSchemaProps (at ``depth``: the object is level 1) in its JSON form."""
    out = _message("JSONSchemaProps", raw, depth)
    assert isinstance(out, dict)
    return out


# per message, per field number: (JSON name, form, flag, the wire type it comes in, whether JSON leaves it out
# when empty: a string, bool or int64 that is neither a pointer nor tagged without omitempty)
_FIELDS = {name: {number: (json_name, form, flag,
                           2 if form.startswith(("[]", "map:")) else _WIRE.get(form, 2),
                           not flag and form in ("string", "bool", "int64"))
                  for number, (json_name, form, flag) in fields.items()}
           for name, fields in _SCHEMA_MESSAGES.items()}


def _message(name: str, raw: bytes, depth: int) -> Any:
    if depth > MAX_DEPTH:
        raise ProtobufError(f"messages nested deeper than {MAX_DEPTH}")
    spec = _FIELDS[name]
    found: dict[int, list[int | bytes]] = {}
    for number, wire, value in scan(raw):  # (every field's wire type checked before any value is read)
        field = spec.get(number)
        if field is None:
            continue  # (an unknown field: skipped, as Go's decoder skips it)
        if wire != field[3]:
            raise ProtobufError(f"wrong wire type {wire} for field {name}.{field[0]} (field {number})")
        if field[4] and not value:  # empty, and left out of the JSON (Go writes these always)
            found.pop(number, None)  # (the last one counts)
            continue
        values = found.get(number)
        if values is None:
            found[number] = [value]
        else:
            values.append(value)
    out: dict[str, Any] = {}
    for number in sorted(found):  # (the struct order of each of these messages is its field-number order)
        json_name, form, flag, _, _ = spec[number]
        try:
            value = _value(form, found[number], depth)
        except ProtobufError as exc:
            raise exc.within(json_name) from None
        if value is None or (not flag and value in ("", False, 0) and not isinstance(value, (list, dict))):
            continue
        out[json_name] = value
    return _union_json(name, out) if name.startswith("JSONSchemaPropsOr") else out


def _value(form: str, values: list[int | bytes], depth: int) -> Any:
    if form.startswith("[]"):
        item = form[2:]
        items = []
        for i, v in enumerate(values):
            try:
                items.append(_single(item, v, depth))
            except ProtobufError as exc:
                raise exc.within(f"[{i}]") from None
        return items
    if form.startswith("map:"):
        return _map(form[4:], values, depth)
    if form in _SCHEMA_MESSAGES:  # a message given twice is the two merged, as Go merges it
        return _single(form, b"".join(v for v in values if isinstance(v, bytes)), depth)
    return _single(form, values[-1], depth)


def _single(form: str, value: int | bytes, depth: int) -> Any:
    if form == "bool":
        return value != 0
    if form == "int64":
        assert isinstance(value, int)
        return (value ^ 1 << 63) - (1 << 63)
    assert isinstance(value, bytes)
    if form == "string":
        return _text(value)
    if form == "double":
        return _number(struct.unpack("<d", value)[0])
    if form == "JSON":
        return _raw_json(value, "JSON")
    return _message(form, value, depth + 1)


def _number(value: float) -> int | float:
    """A float64 as Go's JSON writes it, read back as JSON reads it: an integer without a fraction or an exponent
    (below 1e21), else a float; NaN and the infinities have no JSON (Go cannot write them)."""
    if math.isnan(value) or math.isinf(value):
        raise ProtobufError(f"a number JSON cannot hold ({value})")
    return int(value) if value.is_integer() and abs(value) < 1e21 else value


def _map(form: str, entries: list[int | bytes], depth: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for entry in entries:
        key, value = "", b""
        assert isinstance(entry, bytes)
        for number, wire, part in scan(entry):
            if number in (1, 2) and wire != 2:
                raise ProtobufError(f"wrong wire type {wire} for a map {'key' if number == 1 else 'value'}")
            if number == 1:
                key = _text(part)  # type: ignore[arg-type]
            elif number == 2:
                value = part  # type: ignore[assignment]
        try:
            out[key] = _single(form, value, depth)
        except ProtobufError as exc:
            raise exc.within(f"[{key}]") from None
    return out


# --- writing (as Go's generated code writes it: the tests' and benchmarks' bodies) -----------------------

def _key(number: int, wire: int) -> bytes:
    return _varint_bytes(number << 3 | wire)


def encode_json_schema_props(obj: dict[str, Any]) -> bytes:
    """A JSONSchemaProps in its JSON form, encoded."""
    return _encode("JSONSchemaProps", obj)


def _encode(name: str, obj: Any) -> bytes:
    fields = _union_fields(name, obj) if name.startswith("JSONSchemaPropsOr") else obj
    parts = []
    for number, (json_name, form, flag) in sorted(_SCHEMA_MESSAGES[name].items()):
        value = fields.get(json_name)
        if form.startswith("[]"):
            parts += [_encoded_value(number, form[2:], item) for item in value or ()]
        elif form.startswith("map:"):
            entries: dict[str, Any] = value or {}
            parts += [_delimited(number, _delimited(1, key.encode()) + _delimited(2, _encoded_payload(form[4:], entries[key])))
                      for key in sorted(entries)]
        elif value is not None or (flag != "*" and form not in _SCHEMA_MESSAGES and form != "JSON"):
            parts.append(_encoded_value(number, form, value))
    return b"".join(parts)


def _encoded_value(number: int, form: str, value: Any) -> bytes:
    if form in ("bool", "int64"):
        return _key(number, 0) + _varint_bytes(int(value or 0))
    if form == "double":
        return _key(number, 1) + struct.pack("<d", float(value or 0))
    return _delimited(number, _encoded_payload(form, value))


def _encoded_payload(form: str, value: Any) -> bytes:
    if form == "string":
        return (value or "").encode()
    if form == "JSON":
        return b"" if value is None else _delimited(1, msgspec.json.encode(value))
    return _encode(form, value if value is not None else {})


# --- the CustomResourceDefinition ------------------------------------------------------------------------

APIEXTENSIONS_V1 = schema(META, messages({
    "CustomResourceDefinition": {1: "metadata ObjectMeta", 2: "spec CustomResourceDefinitionSpec",
                                 3: "status CustomResourceDefinitionStatus"},
    "CustomResourceDefinitionSpec": {1: "group string always", 3: "names CustomResourceDefinitionNames",
                                     4: "scope string always", 7: "versions []CustomResourceDefinitionVersion",
                                     9: "conversion *CustomResourceConversion", 10: "preserveUnknownFields bool"},
    "CustomResourceConversion": {1: "strategy string always", 2: "webhook *WebhookConversion"},
    "WebhookConversion": {2: "clientConfig *WebhookClientConfig", 3: "conversionReviewVersions []string"},
    "WebhookClientConfig": {3: "url *string", 1: "service *ServiceReference", 2: "caBundle bytes"},
    "ServiceReference": {1: "namespace string always", 2: "name string always", 3: "path *string",
                         4: "port *int32"},
    "CustomResourceDefinitionNames": {1: "plural string always", 2: "singular string", 3: "shortNames []string",
                                      4: "kind string always", 5: "listKind string", 6: "categories []string"},
    "CustomResourceDefinitionVersion": {1: "name string always", 2: "served bool always", 3: "storage bool always",
                                        7: "deprecated bool", 8: "deprecationWarning *string",
                                        4: "schema *CustomResourceValidation",
                                        5: "subresources *CustomResourceSubresources",
                                        6: "additionalPrinterColumns []CustomResourceColumnDefinition",
                                        9: "selectableFields []SelectableField"},
    "CustomResourceValidation": {1: "openAPIV3Schema *JSONSchemaProps"},
    "CustomResourceSubresources": {1: "status *CustomResourceSubresourceStatus",
                                   2: "scale *CustomResourceSubresourceScale"},
    "CustomResourceSubresourceStatus": {},
    "CustomResourceSubresourceScale": {1: "specReplicasPath string always", 2: "statusReplicasPath string always",
                                       3: "labelSelectorPath *string"},
    "CustomResourceColumnDefinition": {1: "name string always", 2: "type string always", 3: "format string",
                                       4: "description string", 5: "priority int32", 6: "jsonPath string always"},
    "SelectableField": {1: "jsonPath string always"},
    "CustomResourceDefinitionStatus": {1: "conditions []CustomResourceDefinitionCondition",
                                       2: "acceptedNames CustomResourceDefinitionNames",
                                       3: "storedVersions []string", 4: "observedGeneration int64"},
    "CustomResourceDefinitionCondition": {1: "type string always", 2: "status string always",
                                          3: "lastTransitionTime Time", 4: "reason string", 5: "message string",
                                          6: "observedGeneration int64"},
}))

KINDS = {("apiextensions.k8s.io/v1", "CustomResourceDefinition"): (APIEXTENSIONS_V1, "CustomResourceDefinition")}
