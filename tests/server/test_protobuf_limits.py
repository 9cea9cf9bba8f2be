"""A protobuf body against a JSON body's limits (nesting at most 200 deep, integers within int64): its messages
nest no deeper than its kind's table allows (decoder.nesting) and its integers are int64 at most, so the server
walks a decoded protobuf body only when the JSON embedded in it (opaque device parameters, FieldsV1) might break
a limit — and then answers as it answers the same object sent as JSON."""

from __future__ import annotations

import base64
import json
import sys
import warnings
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

warnings.filterwarnings("ignore", message="Using `httpx`")
from cluster import api_client  # noqa: E402
from protobuf_readers import reader  # noqa: E402, F401 (each test: C reader, then Python)
from starlette.testclient import TestClient  # noqa: E402

from dralloc.api.parsing import MAX_DEPTH  # noqa: E402
from dralloc.server.protobuf.decoder import KINDS, OPTIONS, decode, encode, nesting  # noqa: E402
from dralloc.server.protobuf.schema import SPECIAL, UNBOUNDED, Schema  # noqa: E402

PROTOBUF = {"content-type": "application/vnd.kubernetes.protobuf"}
JSON = {"content-type": "application/json"}
CLAIMS = "/apis/resource.k8s.io/v1/namespaces/ml-team/resourceclaims"

# a value of each scalar and special type that is not its zero value (Go would leave a zero value out)
FULL_VALUES: dict[str, Any] = {
    "string": "x", "bool": True, "int32": 1, "int64": 1, "bytes": base64.b64encode(b"x").decode(),
    "Quantity": "1", "Time": "2025-01-02T03:04:05Z", "MicroTime": "2025-01-02T03:04:05.000006Z",
    "RawExtension": 1, "FieldsV1": 1, "IntOrString": 1, "JSONSchemaProps": {"type": "object"}}


def full(table: Schema, name: str) -> dict[str, Any]:
    """An object of message ``name`` with every field set, each list and map holding one item (embedded JSON is
    a plain number, so the object's nesting is its messages')."""
    out: dict[str, Any] = {}
    for f in table[name].values():
        value = FULL_VALUES[f.type] if f.type in FULL_VALUES else full(table, f.type)
        if f.inline:
            out.update(value)
        elif f.map:
            out[f.name] = {"k": value}
        elif f.repeated:
            out[f.name] = [value]
        else:
            out[f.name] = value
    return out


def depth(value: Any) -> int:
    """The nesting of a JSON value (an object or array is one level, a scalar none)."""
    if isinstance(value, dict):
        return 1 + max(map(depth, value.values()), default=0)
    if isinstance(value, list):
        return 1 + max(map(depth, value), default=0)
    return 0


@pytest.mark.parametrize(("api_version", "kind"), sorted({**KINDS, **OPTIONS}))
def test_nesting_is_how_deep_a_body_of_the_kind_decodes(api_version: str, kind: str) -> None:
    table, name = {**KINDS, **OPTIONS}[api_version, kind]
    assert set(FULL_VALUES) >= SPECIAL
    obj = {"apiVersion": api_version, "kind": kind, **full(table, name)}
    decoded = decode(encode(obj))
    assert decoded == obj
    unbounded = any(f.type in UNBOUNDED for fields in table.values() for f in fields.values())
    assert nesting(api_version, kind) == (sys.maxsize if unbounded else depth(decoded))


def test_a_kind_without_a_table_has_no_bound() -> None:
    assert nesting("stable.example.com/v1", "CronTab") > MAX_DEPTH


# --- through the server: the same answer as for the object sent as JSON ----------------------------------

@pytest.fixture
def client() -> TestClient:
    return api_client("ml-team")


def claim(parameters: Any, name: str = "c") -> dict[str, Any]:
    """A ResourceClaim whose one request has opaque parameters (6 levels below the object: spec, devices,
    config, its item, opaque, then the parameters' own)."""
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": name},
            "spec": {"devices": {
                "requests": [{"name": "gpus", "exactly": {"deviceClassName": "gpu.example.com",
                                                          "allocationMode": "ExactCount", "count": 1}}],
                "config": [{"requests": ["gpus"], "opaque": {"driver": "gpu.example.com",
                                                             "parameters": parameters}}]}}}


def nested(levels: int) -> Any:
    """JSON ``levels`` deep: an object holding arrays inside arrays."""
    value: Any = []
    for _ in range(levels - 2):
        value = [value]
    return {"a": value}


def answers(client: TestClient, obj: dict[str, Any]) -> tuple[tuple[int, str], tuple[int, str]]:
    """(status code, message) of a dry-run create of ``obj`` sent as protobuf, then as JSON."""
    out = []
    for body, headers in ((encode(obj), PROTOBUF), (msgspec.json.encode(obj), JSON)):
        r = client.post(f"{CLAIMS}?dryRun=All", content=body, headers=headers)
        out.append((r.status_code, r.json().get("message", "") if r.status_code >= 400 else ""))
    return out[0], out[1]


def test_embedded_json_just_too_deep_is_refused_as_in_a_json_body(client: TestClient) -> None:
    # 195 levels of parameters below 6 of the claim's: 201 in all, one beyond the limit — with fewer brackets in
    # the body than the limit, so a test of the body's brackets against the limit alone would let it through
    too_deep = claim(nested(MAX_DEPTH - 5))
    assert encode(too_deep).count(b"[") + encode(too_deep).count(b"{") <= MAX_DEPTH
    protobuf_answer, json_answer = answers(client, too_deep)
    assert protobuf_answer == json_answer == (400, 'ResourceClaim in version "v1" cannot be handled as a '
                                                   f"ResourceClaim: exceeded max depth of {MAX_DEPTH}")
    protobuf_answer, json_answer = answers(client, claim(nested(MAX_DEPTH - 6)))
    assert protobuf_answer == json_answer == (201, "")


def test_an_embedded_integer_beyond_int64_is_refused_as_in_a_json_body(client: TestClient) -> None:
    protobuf_answer, json_answer = answers(client, claim({"a": {"b": [2**63]}}))
    assert protobuf_answer == json_answer == (
        400, 'ResourceClaim in version "v1" cannot be handled as a ResourceClaim: json: cannot unmarshal number '
             "9223372036854775808 into Go struct field ResourceClaim.spec.devices.config.opaque.parameters.a.b of "
             "type int64")


def test_a_deep_embedded_json_in_a_huge_body_gets_its_status(client: TestClient) -> None:
    # parameters over 2 MiB whose deepest part is the last: the whole body is read, then refused with a Status
    parameters = {"padding": "x" * (2 << 20), "deep": nested(MAX_DEPTH)}
    protobuf_answer, json_answer = answers(client, claim(parameters))
    assert protobuf_answer == json_answer
    assert protobuf_answer[0] == 400 and protobuf_answer[1].endswith(f"exceeded max depth of {MAX_DEPTH}")


JSON_LEAF = st.one_of(st.integers(-(2**70), 2**70), st.text(max_size=4), st.booleans())


@pytest.mark.slow
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(levels=st.integers(2, MAX_DEPTH + 10), leaf=JSON_LEAF)
def test_embedded_json_gets_the_answer_its_json_body_gets(client: TestClient, levels: int, leaf: Any) -> None:
    parameters = nested(levels)
    parameters["leaf"] = leaf
    protobuf_answer, json_answer = answers(client, claim(json.loads(json.dumps(parameters))))
    assert protobuf_answer == json_answer
