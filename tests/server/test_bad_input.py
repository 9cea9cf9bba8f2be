"""Bad input of every shape gets a 4xx Status, never a 500: mutated example objects on create, update,
merge patch and apply; garbage query parameters, bodies and content types on every verb and URL."""

from __future__ import annotations

import copy
import json
import random
import warnings
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

warnings.filterwarnings("ignore", message="Using `httpx`")
from starlette.testclient import TestClient  # noqa: E402

from dralloc.server import create_app  # noqa: E402
from dralloc.store import SQLiteStore  # noqa: E402

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
URLS = {"ResourceSlice": "/apis/resource.k8s.io/v1/resourceslices",
        "DeviceClass": "/apis/resource.k8s.io/v1/deviceclasses",
        "ResourceClaim": "/apis/resource.k8s.io/v1/namespaces/ml-team/resourceclaims",
        "ResourceClaimTemplate": "/apis/resource.k8s.io/v1/namespaces/gpu-monitoring/resourceclaimtemplates",
        "DeviceTaintRule": "/apis/resource.k8s.io/v1/devicetaintrules", "Node": "/api/v1/nodes"}
DOCS = [d for f in sorted(EXAMPLES.glob("*.yaml")) for d in yaml.safe_load_all(f.read_text()) if d]
WEIRD = [None, 0, -1, 2**70, 1.5, "", "x" * 300, [], {}, [1], {"a": 1}, True, "Ünï", "1Gi", "-1", "NaN", [{}],
         {"a": {"b": []}}]


@pytest.fixture(scope="module")
def client() -> TestClient:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return TestClient(create_app(SQLiteStore(":memory:")))


def _paths(obj: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix] if prefix else []
    if isinstance(obj, dict):
        for k, v in obj.items():
            out += _paths(v, prefix + (k,))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            out += _paths(v, prefix + (i,))
    return out


def _mutated(doc: dict[str, Any], rnd: random.Random) -> dict[str, Any]:
    doc = copy.deepcopy(doc)
    for _ in range(rnd.randint(1, 3)):
        paths = _paths(doc)
        if not paths:
            break
        path = rnd.choice(paths)
        target = doc
        try:
            for part in path[:-1]:
                target = target[part]
            target[path[-1]] = copy.deepcopy(rnd.choice(WEIRD))
        except (KeyError, IndexError, TypeError):
            pass
    return doc


def _assert_status(r: Any) -> None:
    assert r.status_code < 500, r.text
    if r.status_code >= 400:
        assert r.json()["kind"] == "Status" and r.json()["code"] == r.status_code


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(doc=st.sampled_from(DOCS), seed=st.integers(0, 2**32), mode=st.sampled_from(["Strict", "Warn", "Ignore"]))
def test_mutated_objects_never_give_a_500(client: TestClient, doc: dict[str, Any], seed: int, mode: str) -> None:
    # Mutations come from a seeded generator: what the server answers must not steer hypothesis's draws.
    rnd = random.Random(seed)
    url = URLS[doc["kind"]]
    name = f"fuzz-{seed}"
    original = copy.deepcopy(doc)
    original["metadata"]["name"] = name
    bad = _mutated(original, rnd)
    _assert_status(client.post(f"{url}?fieldValidation={mode}", content=json.dumps(bad),
                               headers={"content-type": "application/json"}))
    created = client.post(url, json=original)
    if created.status_code != 201:
        return
    changed = _mutated(created.json(), rnd)
    for method, ctype, body in (("PUT", "application/json", changed),
                                ("PATCH", "application/merge-patch+json", {"spec": changed.get("spec")}),
                                ("PATCH", "application/apply-patch+yaml", changed),
                                ("PUT", "application/json", {**changed, "status": changed.get("spec")})):
        suffix = "/status" if doc["kind"] == "ResourceClaim" and body is not changed else ""
        _assert_status(client.request(method, f"{url}/{name}{suffix}?fieldManager=fuzz&fieldValidation={mode}",
                                      content=json.dumps(body), headers={"content-type": ctype}))


VALUES = st.sampled_from(["", "0", "-1", "abc", "1e99", "99999999999999999999", "true", "a=b", "a in (", "!",
                          "x,,y", "=", "a==b,c!=d", "spec.driver=x", "metadata.name", "All", "Strict", "Bogus",
                          "é", "(", "a in (b,c)", "a notin ()"])
PARAMS = st.sampled_from(["limit", "continue", "resourceVersion", "resourceVersionMatch", "labelSelector",
                          "fieldSelector", "dryRun", "fieldValidation", "fieldManager", "force", "pretty",
                          "allowWatchBookmarks", "sendInitialEvents", "watch"])
BODIES = st.sampled_from([b"", b"null", b"[]", b"{}", b"[{}]", b'[{"op":"add"}]', b'[{"op":"move","from":"/x"}]',
                          b'[{"op":"remove","path":"/spec/devices/99"}]', b'{"metadata":null}', b'{"spec":null}',
                          b'{"preconditions":"x"}', b'{"preconditions":{"uid":5}}', b'{"dryRun":[5]}', b"\xff\xfe",
                          b"- a\n- b", b"a: [", b'{"a":1,"a":2}', b'{"kind":[1],"metadata":{"name":"x"}}',
                          b'{"apiVersion":5}', b"k8s\x00\x0a\x02\x0a"])
CTYPES = st.sampled_from(["application/json", "application/merge-patch+json", "application/json-patch+json",
                          "application/strategic-merge-patch+json", "application/apply-patch+yaml",
                          "application/yaml", "text/plain", "application/vnd.kubernetes.protobuf"])
PATHS = st.sampled_from(["/apis/resource.k8s.io/v1/resourceslices", "/apis/resource.k8s.io/v1/resourceslices/s",
                         "/apis/resource.k8s.io/v1beta1/resourceslices/s",
                         "/apis/resource.k8s.io/v1/namespaces/x/resourceclaims",
                         "/apis/resource.k8s.io/v1/namespaces/x/resourceclaims/c/status", "/api/v1/namespaces",
                         "/api/v1/namespaces/x", "/api/v1/nodes/n", "/apis/resource.k8s.io/v1/devicetaintrules/x",
                         "/apis", "/openapi/v3/apis/resource.k8s.io/v9", "/apis/resource.k8s.io/v1/resourceslices/a/b/c"])


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(method=st.sampled_from(["GET", "POST", "PUT", "PATCH", "DELETE"]), path=PATHS,
       params=st.dictionaries(PARAMS, VALUES, max_size=3), body=BODIES, ctype=CTYPES)
def test_garbage_requests_never_give_a_500(client: TestClient, method: str, path: str, params: dict[str, str],
                                           body: bytes, ctype: str) -> None:
    params = {**params, "timeoutSeconds": "0"}  # a watch ends at once
    _assert_status(client.request(method, path, params=params, content=body, headers={"content-type": ctype}))
