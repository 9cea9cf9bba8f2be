"""A typed kind's JSON body read on the one-pass path (server/verbs/typed_json.py) gives what the general
path gives, byte for byte: the body, its warnings (repeated keys, unknown fields), its 400s, the decoded
object and the stored form, for bodies written every way JSON allows (blanks, escapes, repeated keys,
unknown fields, explicit nulls, quantities in other forms, big integers, deep free-form values, bad times)."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dralloc.api import gotime, parsing
from dralloc.api.codec import to_dict
from dralloc.api.defaults import apply_defaults
from dralloc.server.http import routing
from dralloc.server.http.errors import ApiError
from dralloc.server.verbs import objects, typed_json

SLICES = "/apis/resource.k8s.io/v1/resourceslices"
CLAIMS = "/apis/resource.k8s.io/v1/namespaces/ns/resourceclaims"
CLASSES = "/apis/resource.k8s.io/v1/deviceclasses"
OLD_CLAIMS = "/apis/resource.k8s.io/v1beta1/namespaces/ns/resourceclaims"

SLICE: dict[str, Any] = {
    "apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "node-1-gpus"},
    "spec": {"driver": "gpu.example.com", "nodeName": "node-1",
             "pool": {"name": "node-1", "generation": 1, "resourceSliceCount": 1},
             "devices": [{"name": f"gpu-{g}", "attributes": {"model": {"string": "h100"}, "index": {"int": g},
                                                             "driverVersion": {"version": "560.35.3"}},
                          "capacity": {"memory": {"value": "80Gi"}}} for g in range(3)]}}
CLAIM: dict[str, Any] = {
    "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "claim"},
    "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com"}}],
                         "config": [{"opaque": {"driver": "gpu.example.com",
                                                "parameters": {"a": {"b": [1, {"c": "d"}]}}}}]}}}
CLASS: dict[str, Any] = {
    "apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu.example.com"},
    "spec": {"selectors": [{"cel": {"expression": "device.driver == 'gpu.example.com'"}}]}}
BODIES = [(SLICES, SLICE), (CLAIMS, CLAIM), (CLASSES, CLASS)]


class _Query:
    def __init__(self, mode: str) -> None:
        self.mode = mode

    def get(self, key: str, default: str | None = None) -> str | None:
        return self.mode if key == "fieldValidation" else default

    def getlist(self, key: str) -> list[str]:
        return []


class _Request:
    def __init__(self, mode: str) -> None:
        self.query_params = _Query(mode)


def _target(path: str) -> routing.Target:
    return routing.target([p for p in path.split("/") if p])


def _outcome(path: str, raw: bytes, mode: str) -> tuple[Any, ...]:
    """Everything a create takes from its body: the body and its warnings (or the 400), the decoded object
    (or its 400), and the stored form of the object as a create sets its namespace."""
    t = _target(path)
    try:
        body = objects.object_body(raw, "application/json", _Request(mode), t)  # type: ignore[arg-type]
    except ApiError as exc:
        return "refused", exc.code, exc.message
    shown = (msgspec.json.encode(body.data), body.warnings, body.plain)
    try:
        obj = objects.typed(body.data, t)
    except ApiError as exc:
        return shown, "undecodable", exc.code, exc.message
    meta = msgspec.structs.replace(obj.metadata, namespace=t.namespace or None)
    created = msgspec.structs.replace(obj, metadata=meta)
    stored = objects.stored_form(created)
    return shown, type(obj).__name__, msgspec.json.encode(to_dict(obj)), msgspec.json.encode(stored)


def _both(monkeypatch: pytest.MonkeyPatch, path: str, raw: bytes, mode: str) -> tuple[Any, Any]:
    """The outcome on the one-pass path and on the general path."""
    monkeypatch.setattr(objects, "now", lambda: "2026-01-01T00:00:00Z")  # (a taint's timeAdded stamp)
    fast = _outcome(path, raw, mode)
    with monkeypatch.context() as m:
        m.setattr(typed_json, "applies", lambda t: False)
        general = _outcome(path, raw, mode)
    return fast, general


# --- rendering a JSON text every way JSON allows -----------------------------------------------------------

_BLANKS = st.sampled_from(["", " ", "\n", "\t ", "\r\n  "])


def _string(draw: Callable[[Any], Any], text: str) -> str:
    how = draw(st.sampled_from(["plain", "plain", "ascii", "escape-all", "escape-colon"]))
    if how == "ascii":
        return json.dumps(text)
    if how == "escape-all":
        return '"' + "".join(f"\\u{ord(c):04x}" if ord(c) < 0x10000 else c for c in text) + '"'
    if how == "escape-colon":
        return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace(":", "\\u003a") + '"'
    return json.dumps(text, ensure_ascii=False)


def _render(draw: Callable[[Any], Any], value: Any) -> str:
    blank = draw(_BLANKS)
    if isinstance(value, dict):
        items = []
        for key, item in value.items():
            if draw(st.integers(0, 19)) == 0:  # a repeated key: an earlier value, then the one that counts
                items.append(f"{_string(draw, key)}{draw(_BLANKS)}:{_render(draw, 'earlier')}")
            items.append(f"{_string(draw, key)}{draw(_BLANKS)}:{draw(_BLANKS)}{_render(draw, item)}")
        return "{" + blank + ("," + draw(_BLANKS)).join(items) + draw(_BLANKS) + "}"
    if isinstance(value, list):
        return "[" + blank + ("," + draw(_BLANKS)).join(_render(draw, v) for v in value) + "]"
    if isinstance(value, str):
        return _string(draw, value)
    return json.dumps(value)


_ODD_VALUES = st.one_of(
    st.none(), st.booleans(), st.integers(-(1 << 64), 1 << 64), st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=8), st.sampled_from(["80Gi", "1000m", "0.5", "1e3", "2026-01-01T00:00:00Z", "x:y", "bad time"]),
    st.lists(st.integers(), max_size=3), st.fixed_dictionaries({"k": st.text(max_size=3)}))
_TIME_FIELDS = st.sampled_from([("metadata", "creationTimestamp"), ("metadata", "deletionTimestamp")])


def _places(value: Any, at: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """The path of every object in ``value``."""
    out = [at] if isinstance(value, dict) else []
    children = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, item in children:
        out += _places(item, (*at, key))
    return out


def _at(value: Any, path: tuple[Any, ...]) -> Any:
    for step in path:
        value = value[step]
    return value


@st.composite
def _bodies(draw: Callable[[Any], Any]) -> tuple[str, bytes]:
    path, base = draw(st.sampled_from([*BODIES, (OLD_CLAIMS, {**CLAIM, "apiVersion": "resource.k8s.io/v1beta1"})]))
    body = copy.deepcopy(base)
    for _ in range(draw(st.integers(0, 3))):  # fields the schema may lack, or values of another type
        places = _places(body)
        where = _at(body, draw(st.sampled_from(places)))
        key = draw(st.sampled_from(["foo", "name", "string", "int", "value", "generation", "driver", "count",
                                    "allocationMode", "nodeName", "taints", "parameters"]))
        where[key] = draw(_ODD_VALUES)
    if draw(st.booleans()):
        section, key = draw(_TIME_FIELDS)
        body.setdefault(section, {})[key] = draw(st.sampled_from(
            [None, "2026-01-01T00:00:00Z", "2026-13-01T00:00:00Z", "yesterday"]))
    if path == SLICES and draw(st.booleans()):
        body["spec"]["devices"][0]["taints"] = [{"key": "k", "effect": "NoSchedule", **draw(st.sampled_from(
            [{}, {"timeAdded": "2026-01-01T00:00:00Z"}, {"timeAdded": "2026-02-30T00:00:00Z"}]))}]
    if draw(st.integers(0, 9)) == 0:
        body["kind"] = draw(st.sampled_from(["DeviceClass", "ResourceSlice"]))
    if draw(st.integers(0, 9)) == 0:
        del body["apiVersion"]
    return path, _render(draw, body).encode()


@pytest.mark.slow
@given(_bodies(), st.sampled_from(["Strict", "Warn", "Ignore"]))
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_the_one_pass_path_gives_what_the_general_path_gives(monkeypatch: pytest.MonkeyPatch,
                                                             body: tuple[str, bytes], mode: str) -> None:
    path, raw = body
    fast, general = _both(monkeypatch, path, raw, mode)
    assert fast == general


@pytest.mark.parametrize("raw", [
    b'{"apiVersion":"resource.k8s.io/v1","kind":"DeviceClass","metadata":{"name":"c","name":"d"}}',
    b'{"apiVersion":"resource.k8s.io/v1","kind":"DeviceClass","metadata":{"name":"c"},"spec":{"x":1}}',
    b'{"apiVersion":"resource.k8s.io/v1","kind":"DeviceClass","metadata":{"name":"c\\u003a","name":"d"}}',
    b'{"apiVersion":"resource.k8s.io/v1","kind":"DeviceClass","metadata":{"name":"c",'
    b'"creationTimestamp":"2026-01-01T00:00:00"}}',
    b'{"apiVersion":"resource.k8s.io/v1","kind":"DeviceClass","metadata":{"name":"c",'
    b'"creation\\u0054imestamp":"yesterday"}}',
    b'{"apiVersion":"resource.k8s.io/v1","kind":"DeviceClass","metadata":{"name":"c","uid":1}}',
], ids=["repeated", "unknown", "repeated-escaped-colon", "bad-time", "bad-time-escaped-key", "wrong-type"])
@pytest.mark.parametrize("mode", ["Strict", "Warn", "Ignore"])
def test_bodies_with_something_to_report_are_answered_as_before(monkeypatch: pytest.MonkeyPatch, raw: bytes,
                                                                mode: str) -> None:
    fast, general = _both(monkeypatch, CLASSES, raw, mode)
    assert fast == general


def test_a_clean_body_is_decoded_once_and_its_stored_form_made_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """The common body takes the one-pass path: no shape decoding, no second conversion, no second
    to_dict (each would fail this test if it came back)."""
    raw = msgspec.json.encode(SLICE)
    t = _target(SLICES)
    assert typed_json.read(raw, msgspec.json.decode(raw), t, "Strict")
    assert t.decoded is not None
    calls: list[str] = []
    monkeypatch.setattr(typed_json, "_decodes", lambda *a: calls.append("shape") or True)
    monkeypatch.setattr(objects, "to_dict", lambda obj: calls.append("to_dict") or to_dict(obj))
    monkeypatch.setattr(objects, "decode", lambda data: calls.append("decode"))
    body = objects.object_body(raw, "application/json", _Request("Strict"), t)  # type: ignore[arg-type]
    assert body.warnings == [] and not body.plain
    obj = objects.typed(body.data, t)
    stored = objects.stored_form(msgspec.structs.replace(obj, metadata=obj.metadata))
    assert calls == []
    assert msgspec.json.encode(stored) == msgspec.json.encode(to_dict(obj))
    assert objects.stored_form(obj) == stored and calls == ["to_dict"]  # (a kept form is taken once)


def test_a_claim_that_gets_defaults_is_checked_by_its_shape(monkeypatch: pytest.MonkeyPatch) -> None:
    """A claim's stored form has its defaults (allocationMode, count), which its body lacks: the shape
    answers the unknown-field check, and the defaulted form, made once, is its stored form."""
    raw = msgspec.json.encode(CLAIM)
    t = _target(CLAIMS)
    data = msgspec.json.decode(raw)
    assert typed_json.read(raw, data, t, "Strict")
    obj = objects.typed(data, t)
    created = msgspec.structs.replace(obj, metadata=msgspec.structs.replace(obj.metadata, namespace="ns"))
    expected = msgspec.json.encode(to_dict(apply_defaults(created)))
    monkeypatch.setattr(objects, "apply_defaults", lambda obj: pytest.fail("defaulted again"))
    stored = objects.stored_form(created)
    assert stored["spec"]["devices"]["requests"][0]["exactly"]["allocationMode"] == "ExactCount"
    assert msgspec.json.encode(stored) == expected
    unknown = msgspec.json.encode({**CLAIM, "spec": {**CLAIM["spec"], "extra": 1}})
    assert not typed_json.read(unknown, msgspec.json.decode(unknown), _target(CLAIMS), "Strict")


def test_an_older_version_and_a_view_are_left_to_the_general_path() -> None:
    old = {**CLAIM, "apiVersion": "resource.k8s.io/v1beta1"}
    raw = msgspec.json.encode(old)
    t = _target(OLD_CLAIMS)
    assert not typed_json.read(raw, msgspec.json.decode(raw), t, "Strict") and t.decoded is None
    assert not typed_json.applies(_target("/apis/events.k8s.io/v1/namespaces/ns/events"))
    assert not typed_json.applies(_target("/api/v1/namespaces/ns/pods"))


def test_every_time_field_name_holds_the_needle_the_text_is_searched_for() -> None:
    for kind in ("ResourceSlice", "ResourceClaim", "DeviceTaintRule", "Lease", "DeviceClass"):
        keys = gotime.model_time_keys(kind)
        assert {"creationTimestamp", "deletionTimestamp", "time"} <= keys
        assert all("ime" in key for key in keys)
    assert "timeAdded" in gotime.model_time_keys("ResourceSlice")
    assert "renewTime" in gotime.model_time_keys("Lease")


def test_repeated_keys_are_told_apart_from_colons_in_text() -> None:
    assert parsing.repeats_no_key(b'{"a":"x:y","b":1}', {"a": "x:y", "b": 1})
    assert not parsing.repeats_no_key(b'{"a":1,"a":2}', {"a": 2})
    assert not parsing.repeats_no_key(b'{"a":"x\\u003ay"}', {"a": "x:y"})  # (cannot tell: the slow way)


def test_a_kept_form_is_not_taken_for_an_object_whose_status_was_cleared() -> None:
    """A create clears the status a body sends (it is written through /status only): the form kept of the
    body, which has that status, is not the stored form then."""
    rule = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceTaintRule", "metadata": {"name": "r"},
            "spec": {"taint": {"key": "k", "effect": "NoSchedule", "timeAdded": "2026-01-01T00:00:00Z"}},
            "status": {"conditions": [{"type": "EvictionInProgress", "status": "False", "reason": "R",
                                       "message": "", "lastTransitionTime": "2026-01-01T00:00:00Z"}]}}
    raw = msgspec.json.encode(rule)
    t = _target("/apis/resource.k8s.io/v1/devicetaintrules")
    data = msgspec.json.decode(raw)
    assert typed_json.read(raw, data, t, "Strict")
    obj = objects.typed(data, t)
    cleared = msgspec.structs.replace(obj, status=None)
    stored = objects.stored_form(cleared)
    assert "status" not in stored
    assert msgspec.json.encode(stored) == msgspec.json.encode(to_dict(cleared))


def test_a_go_clients_null_creation_time_leaves_the_body_on_the_one_pass_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """client-go writes ``"creationTimestamp": null`` into every new object: the body is still found to have
    no unknown field without decoding it into its shape, and answers as the general path does."""
    body = {**SLICE, "metadata": {"name": "node-1-gpus", "creationTimestamp": None}}
    raw = msgspec.json.encode(body)
    monkeypatch.setattr(typed_json, "_decodes", lambda *a: pytest.fail("decoded into the shape"))
    assert typed_json.read(raw, msgspec.json.decode(raw), _target(SLICES), "Strict")
    monkeypatch.undo()
    unknown = msgspec.json.encode({**body, "metadata": {**body["metadata"], "foo": None}})
    assert not typed_json.read(unknown, msgspec.json.decode(unknown), _target(SLICES), "Strict")
    for raw_body in (raw, unknown):
        fast, general = _both(monkeypatch, SLICES, raw_body, "Warn")
        assert fast == general
