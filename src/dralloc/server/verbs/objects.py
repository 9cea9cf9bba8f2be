"""From a request body to an object of the URL's type: media types, kind and apiVersion checks, typed decoding,
unknown and duplicate fields (fieldValidation), and the stored (defaulted v1) form."""

from __future__ import annotations

from typing import Any, NamedTuple

import msgspec
from starlette.requests import Request

from dralloc.api import (
    core_v1,
    core_v1_fields,
    core_v1_limits,
    core_v1_network,
    core_v1_storage,
    gotime,
    gotypes,
    sent_json,
    strict,
)
from dralloc.api.codec import QuantityDecodeError, decode, to_dict
from dralloc.api.defaults import apply_defaults
from dralloc.api.gojson import go_json_type
from dralloc.api.kinds import model_for
from dralloc.api.quantity import quantity_dec_hook
from dralloc.errors import DecodeError, InputError
from dralloc.server.clock import now
from dralloc.server.crds.custom_resources import CustomResourceStrategy
from dralloc.server.http.bodies import check_limits, parse
from dralloc.server.http.errors import ApiError, bad_request, invalid
from dralloc.server.http.responses import JSON
from dralloc.server.http.routing import Target
from dralloc.server.protobuf import decoder as protobuf
from dralloc.server.verbs import typed_json
from dralloc.validation import pod_status

CORE_MODELS: dict[str, type] = {"Node": core_v1.Node, "Namespace": core_v1.Namespace, "Pod": core_v1.Pod,
                                "Event": core_v1.Event, "ConfigMap": core_v1.ConfigMap, "Secret": core_v1.Secret,
                                "ServiceAccount": core_v1.ServiceAccount, "Service": core_v1.Service,
                                "PersistentVolume": core_v1_storage.PersistentVolume,
                                "PersistentVolumeClaim": core_v1_storage.PersistentVolumeClaim,
                                "LimitRange": core_v1_limits.LimitRange, "ResourceQuota": core_v1_limits.ResourceQuota,
                                "Endpoints": core_v1_network.Endpoints,
                                "ReplicationController": core_v1.ReplicationController}


def dry_run_list(options: dict[str, Any] | None) -> list[str]:
    """The ``dryRun`` of delete options as sent; 400 unless it is a list of strings (as Go's decoder)."""
    sent = (options or {}).get("dryRun") or []
    if not isinstance(sent, list) or not all(isinstance(v, str) for v in sent):
        raise bad_request(f"json: cannot unmarshal {go_json_type(sent)} into Go struct field DeleteOptions.dryRun of "
                          f"type []string")
    return sent


def dry_run(request: Request, options: dict[str, Any] | None = None) -> bool:
    values = request.query_params.getlist("dryRun")
    if options:  # (a create has none)
        values = values + dry_run_list(options)
    for v in values:
        if v != "All":
            raise bad_request(f'invalid dry run option "{v}": only "All" is supported')
    return bool(values)


def field_validation(request: Request) -> str:
    value = request.query_params.get("fieldValidation", "Warn") or "Warn"
    if value not in ("Ignore", "Warn", "Strict"):
        raise bad_request(f'fieldValidation must be one of "Ignore", "Warn" or "Strict", not "{value}"')
    return value


def field_problems(raw: bytes | None, ctype: str, data: dict[str, Any], mode: str, t: Target) -> list[str]:
    duplicates, unknown, _ = _problems(raw, ctype, data, mode, t)
    return duplicates + unknown


def _problems(raw: bytes | None, ctype: str, data: dict[str, Any], mode: str,
              t: Target) -> tuple[list[str], list[str], bool]:
    """:func:`field_problems` in two lists, the duplicate keys and the unknown fields (Strict: a 400), and
    whether the check found a core object's values all of Go's types (its JSON text decoded into the typed
    shape of its kind)."""
    if mode == "Ignore":
        return [], [], False
    own_paths = t.resource.strategy.unknown_fields(data) if isinstance(data, dict) else None
    if own_paths is not None:  # a kind that checks its own fields (a custom resource: its CRD's schema)
        own = [f'unknown field "{p}"' for p in own_paths]
        if mode == "Strict" and own:
            raise bad_request(f'{t.resource.kind} in version "{t.version}" cannot be handled as a '
                              f"{t.resource.kind}: strict decoding error: {', '.join(own)}")
        return [], own, False
    # the resource.k8s.io kinds and the other modelled groups, and the core kinds whose whole schema is known
    checked = bool(t.resource.group) or t.resource.kind in core_v1_fields.ROOTS
    duplicates: list[str] = []
    typed_values = False
    if checked and data is not None and raw is not None:
        # The body as sent: duplicate keys (found while parsing) and unknown fields.
        duplicates, unknown, typed_values = strict.check_body(raw, yaml_input="yaml" in ctype,
                                                              decoded=data if ctype == JSON else None)
        if not duplicates and not unknown and ctype != JSON and "yaml" not in ctype:
            unknown = strict.unknown_fields(data)
    elif checked:
        unknown = strict.unknown_fields(data)
    else:
        unknown = []
    problems = duplicates + unknown
    if mode == "Strict" and problems:
        kind = t.resource.kind
        raise bad_request(f'{kind} in version "{t.version}" cannot be handled as a {kind}: strict decoding '
                          f"error: {', '.join(problems)}")
    return duplicates, unknown, typed_values


def typed(data: Any, t: Target) -> Any:
    """Check kind and apiVersion against the URL and decode into the v1 model."""
    decoded = t.decoded
    if decoded is not None and decoded[0] is data:  # (the body object_body decoded already: typed_json)
        return decoded[1]
    if not isinstance(data, dict):
        raise bad_request("the request body must be a JSON object")
    kind = data.get("kind") or t.resource.kind
    api_version = data.get("apiVersion") or t.api_version
    if kind != t.resource.kind:
        raise bad_request(f'the kind "{kind}" does not match the resource "{t.resource.name}" '
                          f'(expected "{t.resource.kind}")')
    if api_version != t.api_version:
        raise bad_request(f'the API version in the data ({api_version}) does not match the expected API '
                          f'version ({t.api_version})')
    original, data = data, {**data, "kind": kind, "apiVersion": api_version}
    try:
        own = t.resource.strategy.decode(data)  # (a kind without a model: a CRD, a custom resource)
        if own is not None:
            return own
        if not t.resource.group:  # core kinds: the modelled fields' JSON types (the object is stored as sent;
            # every value's JSON type was checked where the body was decoded: type_meta_checked)
            try:
                obj: Any = msgspec.convert(data, CORE_MODELS[kind], dec_hook=quantity_dec_hook)
            except msgspec.ValidationError as exc:
                raise InputError(str(exc)) from None
            # every time of the schema, as decoding into Go's types reads it (none in a body that names none)
            bad_time = gotime.time_error(data) if t.timeless is not original else None
            if bad_time is not None:
                raise InputError(bad_time)
            if kind == "Pod":  # the status fields kube-apiserver validates, which the pod model leaves out
                bad_status = pod_status.status_type_error(data)
                if bad_status is not None:
                    raise InputError(bad_status)
            return obj
        bad_time = gotime.model_time_error(data)
        if bad_time is not None:
            raise InputError(bad_time)
        return decode(data)
    except QuantityDecodeError as exc:
        raise bad_request(f'{kind} in version "{t.version}" cannot be handled as a {kind}: {exc.parser_error}') from None
    except InputError as exc:
        raise bad_request(f'{kind} in version "{t.version}" cannot be handled as a {kind}: {exc}') from None


def stored_form(obj: Any) -> dict[str, Any]:
    stored = typed_json.stored_dict(obj)  # (made while the body was read, when it could be)
    if stored is None:
        stored = to_dict(apply_defaults(obj))
    _stamp_device_taints(stored)
    return stored


def _stamp_device_taints(stored: dict[str, Any]) -> None:
    """A device taint without ``timeAdded`` gets the time it is written, as kube-apiserver's defaulting of
    DeviceTaint does on decoding a ResourceSlice or DeviceTaintRule (eviction's tolerationSeconds count
    from it)."""
    kind = stored.get("kind")
    spec = stored.get("spec") or {}
    if kind == "ResourceSlice":
        taints = [t for device in spec.get("devices") or () for t in device.get("taints") or ()]
    elif kind == "DeviceTaintRule":
        taints = [spec["taint"]] if spec.get("taint") else []
    else:
        return
    for taint in taints:
        if not taint.get("timeAdded"):
            taint["timeAdded"] = now()


def check_valid(t: Target, name: str, errors: list[Any]) -> None:
    if errors:
        raise invalid(t.resource, name, errors)


class Body(NamedTuple):
    """A request's object (see :func:`object_body`)."""

    data: Any
    warnings: list[str]
    # A core/v1 object of the URL's kind, decoded from JSON (so JSON's types, no part shared by two places),
    # already without the fields its schema lacks: it may be stored as it is, changed in place.
    plain: bool
    # The body has no field its kind's schema lacks: its typed decoding found none (fieldValidation not Ignore)
    known: bool = False


def object_body(raw: bytes, ctype: str, request: Request, t: Target) -> Body:
    """The object a create, update or status update sends (JSON, YAML, or protobuf for the kinds
    server/protobuf/decoder.py decodes) and its field warnings."""
    if ctype == protobuf.CONTENT_TYPE and isinstance(t.resource.strategy, CustomResourceStrategy):
        raise bad_request(protobuf.custom_resource_refusal(raw, t.resource.kind, t.version))  # (as upstream: no 415)
    takes_protobuf = not t.resource.group or protobuf.accepts(t.api_version, t.resource.kind)
    if ctype == protobuf.CONTENT_TYPE and takes_protobuf:  # (a core kind it cannot decode: a 400 that says so)
        try:
            data = protobuf.decode(raw)
        except protobuf.ProtobufError as exc:
            raise bad_request(f"couldn't decode the request body as protobuf: {exc}") from None
        nesting = protobuf.nesting(data["apiVersion"], data["kind"])  # (the walk only for embedded JSON)
        check_limits(data, raw, t.resource.kind, t.version, nesting)
        field_validation(request)
        # (protobuf's wire types are Go's: only a quantity's text can fail, as Quantity's Unmarshal parses it)
        return Body(values_checked(data, t), [], False)
    if ctype not in (JSON, "application/yaml", "application/x-yaml"):
        accepted = "application/json, application/yaml" + (f", {protobuf.CONTENT_TYPE}" if takes_protobuf else "")
        raise ApiError(415, f"the body of the request was in an unknown format - accepted media types "
                            f"include: {accepted}")
    data = type_meta_checked(parse(raw, ctype, t.resource.kind, t.version), t, values=False)
    if ctype == JSON and t.resource.group and raw.find(b"\\") >= 0:
        escaped_quantities_checked(raw, t)
    # (a core kind's nulls, zeros and quantities to rewrite are found by the typed shape that the unknown-field
    # check decodes the text into, below; another kind's by the same shape, before the typed JSON path decodes
    # its model: settling changes only values the type check takes)
    core = not t.resource.group and t.resource.kind in core_v1_fields.ROOTS
    if not core and (ctype != JSON or not gotypes.stored_as_sent(data, t.resource.kind, t.api_version)):
        zeros_settled(data, t)
    mode = field_validation(request)
    if ctype == JSON and typed_json.applies(t) and typed_json.read(raw, data, t, mode):
        # (no repeated key, no unknown field; a typed kind is never plain)
        return Body(data, [], False, mode != "Ignore")
    duplicates, unknown, typed_values = _problems(raw, ctype, data, mode, t)
    if ctype == JSON and not t.resource.group and not gotime.may_name_core_time(raw):
        t.timeless = data
    if not typed_values:  # (the unknown-field check's decoding of a JSON text into the typed shape answers it)
        values_checked(data, t, raw if ctype == JSON else None)
    if unknown or duplicates or mode == "Ignore":
        # A core object is stored without the fields its schema lacks, as decoding into the Go type drops
        # them. When the check above found none there is nothing to drop: one walk, not two. (With duplicate
        # keys the check read its own decoding of the body.)
        strict.drop_unknown_fields(data)
    if core and not typed_values:  # (the shape refuses a null or zero that is not stored as sent)
        zeros_settled(data, t)
    # (both key on the body's own apiVersion and kind: one that names the URL's kind is checked and dropped
    # by the URL's schema)
    plain = core and ctype == JSON and t.version == "v1" and data.get("apiVersion") == "v1" \
        and data.get("kind") == t.resource.kind
    return Body(data, duplicates + unknown, plain)


def zeros_settled(data: Any, t: Target) -> Any:
    """A core/v1 or workload object with its nulls and zero values as kube-apiserver stores them: a null or
    zero omitempty field is neither stored nor owned, a null list item or map value is its type's zero value
    (dralloc.api.gotypes.settle_zeros). Changed in place; returned."""
    kind = t.resource.kind
    if isinstance(data, dict) and (data.get("kind") or kind) == kind \
            and (data.get("apiVersion") or t.api_version) == t.api_version:
        gotypes.settle_zeros(data, kind, t.api_version)
    return data


def escaped_quantities_checked(raw: bytes, t: Target) -> None:
    """A modelled group's JSON body must not hold a quantity written with an escape (``"\\u0031"``): Go's
    Quantity parses the text between the quotes as written, and a backslash is no quantity's character. (The
    core kinds' type check reads the text itself: dralloc.api.gotypes.)"""
    kind = t.resource.kind
    if model_for(t.api_version, kind) is None:
        return  # (a custom resource: no quantity is typed as one)
    suspects = sent_json.quantity_suspects(raw)
    if not suspects:  # (no string with escapes that decodes to text Python would read as a quantity)
        return
    written = sent_json.with_escapes_as_written(raw, suspects)
    if not isinstance(written, dict):
        return
    try:
        decode({"kind": kind, "apiVersion": t.api_version, **written})
    except QuantityDecodeError as exc:
        raise bad_request(f'{kind} in version "{t.version}" cannot be handled as a {kind}: {exc.parser_error}') from None
    except DecodeError:
        pass  # (anything else is the body's own: its decoding reports it)


def type_meta_checked(data: Any, t: Target, values: bool = True) -> Any:
    """A body must be an object whose kind, apiVersion and metadata (when present) have the right JSON types;
    ``values``: and a core/v1 object's every value (:func:`values_checked`)."""
    if not isinstance(data, dict):
        raise bad_request("the request body must be a JSON object")
    kind_value, version_value, meta = data.get("kind"), data.get("apiVersion"), data.get("metadata")
    if not ((kind_value is None or isinstance(kind_value, str)) and (version_value is None or isinstance(version_value, str))
            and (meta is None or isinstance(meta, dict))):  # (the common case: one test of all three)
        kind = t.resource.kind
        for key, want, name in (("kind", str, "string"), ("apiVersion", str, "string"),
                                ("metadata", dict, "v1.ObjectMeta")):
            value = data.get(key)
            if value is not None and not isinstance(value, want):
                raise bad_request(f'{kind} in version "{t.version}" cannot be handled as a {kind}: json: cannot '
                                  f'unmarshal {go_json_type(value)} into Go struct field {kind}.{key} of type {name}')
    return values_checked(data, t) if values else data


def values_checked(data: dict[str, Any], t: Target, sent: bytes | None = None) -> dict[str, Any]:
    """A core/v1 or workload object's values must have the JSON types of its Go fields (a workload's pod
    template is core/v1 types that dralloc models in part): kube-apiserver decodes a body into
    its Go type before admission or anything else sees it, and an object stored with a value Go cannot
    decode would break every Go client that reads it (dralloc stores core objects as sent). ``sent``: the
    JSON text ``data`` was decoded from (Go's errors quote its numbers as written)."""
    kind = t.resource.kind
    if not gotypes.has_go_types(t.api_version, kind) or (data.get("kind") or kind) != kind \
            or (data.get("apiVersion") or t.api_version) != t.api_version:
        return data  # (a kind of no Go type table; or a body naming another kind, which typed() refuses)
    bad_type = gotypes.type_error(data, kind, t.api_version, sent)
    if bad_type is not None:
        raise bad_request(f'{kind} in version "{t.version}" cannot be handled as a {kind}: {bad_type}')
    return data
