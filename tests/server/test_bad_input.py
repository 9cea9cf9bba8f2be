"""Bad input of every shape gets a 4xx Status, never a 500: mutated example objects on create, update,
merge patch and apply; garbage query parameters, bodies and content types on every verb and URL."""

from __future__ import annotations

import asyncio
import copy
import json
import random
import time
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

warnings.filterwarnings("ignore", message="Using `httpx`")
from cluster import api_client, make_namespaces  # noqa: E402
from starlette.requests import Request  # noqa: E402
from starlette.testclient import TestClient  # noqa: E402

from dralloc.server import create_app  # noqa: E402
from dralloc.server.http.bodies import MAX_DEPTH  # noqa: E402
from dralloc.server.watch import stream as watch_module  # noqa: E402
from dralloc.store import SQLiteStore  # noqa: E402

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
URLS = {"ResourceSlice": "/apis/resource.k8s.io/v1/resourceslices",
        "DeviceClass": "/apis/resource.k8s.io/v1/deviceclasses",
        "ResourceClaim": "/apis/resource.k8s.io/v1/namespaces/ml-team/resourceclaims",
        "ResourceClaimTemplate": "/apis/resource.k8s.io/v1/namespaces/gpu-monitoring/resourceclaimtemplates",
        "DeviceTaintRule": "/apis/resource.k8s.io/v1/devicetaintrules", "Node": "/api/v1/nodes",
        "Pod": "/api/v1/namespaces/default/pods", "Event": "/api/v1/namespaces/default/events",
        "Namespace": "/api/v1/namespaces", "PriorityClass": "/apis/scheduling.k8s.io/v1/priorityclasses",
        "Lease": "/apis/coordination.k8s.io/v1/namespaces/x/leases",
        "ConfigMap": "/api/v1/namespaces/default/configmaps", "Secret": "/api/v1/namespaces/default/secrets"}
POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "labels": {"a": "b"}},
       "spec": {"containers": [{"name": "c", "image": "i", "resources": {"requests": {"cpu": "1"},
                                                                       "claims": [{"name": "gpu"}]}}],
                "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "t"}],
                "tolerations": [{"key": "k", "operator": "Exists"}], "nodeSelector": {"x": "y"}}}
EVENT = {"apiVersion": "v1", "kind": "Event", "metadata": {"name": "e"}, "reason": "Scheduled", "count": 1,
         "involvedObject": {"kind": "Pod", "name": "p", "namespace": "default"}, "type": "Normal"}
PRIORITY_CLASS = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "pc"},
                  "value": 10, "globalDefault": False, "preemptionPolicy": "Never", "description": "d"}
LEASE = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": "l"},
         "spec": {"holderIdentity": "h", "leaseDurationSeconds": 15, "renewTime": "2026-11-24T01:00:00.000000Z",
                  "leaseTransitions": 0}}
CONFIG_MAP = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm"}, "data": {"a": "1"},
              "binaryData": {"b": "AAE="}}
SECRET = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}, "type": "kubernetes.io/basic-auth",
          "data": {"username": "YQ=="}, "stringData": {"password": "p"}}
DOCS = [d for f in sorted(EXAMPLES.glob("*.yaml")) for d in yaml.safe_load_all(f.read_text()) if d] + [
    POD, EVENT, PRIORITY_CLASS, LEASE, CONFIG_MAP, SECRET]
WEIRD = [None, 0, -1, 2**70, 1.5, "", "x" * 300, [], {}, [1], {"a": 1}, True, "Ünï", "1Gi", "-1", "NaN", [{}],
         {"a": {"b": []}}]


@pytest.fixture(scope="module")
def client() -> Iterator[TestClient]:
    waited = watch_module.FRESHNESS_WAIT
    watch_module.FRESHNESS_WAIT = 0.05  # a watch from a future resourceVersion answers at once
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield make_namespaces(TestClient(create_app(SQLiteStore(":memory:"))), "ml-team", "gpu-monitoring", "x")
    watch_module.FRESHNESS_WAIT = waited


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
    # The one 5xx kube-apiserver answers to a client's input: a resourceVersion from the future (504, after
    # waiting for it, as the watch cache does).
    too_large = r.status_code == 504 and r.json()["message"].startswith("Too large resource version")
    assert r.status_code < 500 or too_large, r.text
    if r.status_code >= 400:
        assert r.json()["kind"] == "Status" and r.json()["code"] == r.status_code


@pytest.mark.slow
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
        suffix = "/status" if doc["kind"] in ("ResourceClaim", "Pod") and body is not changed else ""
        _assert_status(client.request(method, f"{url}/{name}{suffix}?fieldManager=fuzz&fieldValidation={mode}",
                                      content=json.dumps(body), headers={"content-type": ctype}))


VALUES = st.sampled_from(["", "0", "-1", "abc", "1e99", "99999999999999999999", "true", "a=b", "a in (", "!",
                          "x,,y", "=", "a==b,c!=d", "spec.driver=x", "metadata.name", "All", "Strict", "Bogus",
                          "é", "(", "a in (b,c)", "a notin ()", "a=b=c", "k" * 64 + "=v", "a>x", "!a=b", "a,",
                          "9223372036854775808", "18446744073709551616", "NotOlderThan", "Exact", "garbage",
                          "Orphan", "m" * 129, "\x07"])
PARAMS = st.sampled_from(["limit", "continue", "resourceVersion", "resourceVersionMatch", "labelSelector",
                          "fieldSelector", "dryRun", "fieldValidation", "fieldManager", "force", "pretty",
                          "allowWatchBookmarks", "sendInitialEvents", "watch", "propagationPolicy",
                          "gracePeriodSeconds", "orphanDependents", "timeoutSeconds"])
BODIES = st.sampled_from([b"", b"null", b"[]", b"{}", b"[{}]", b'[{"op":"add"}]', b'[{"op":"move","from":"/x"}]',
                          b'[{"op":"remove","path":"/spec/devices/99"}]', b'{"metadata":null}', b'{"spec":null}',
                          b'{"preconditions":"x"}', b'{"preconditions":{"uid":5}}', b'{"dryRun":[5]}', b"\xff\xfe",
                          b"- a\n- b", b"a: [", b'{"a":1,"a":2}', b'{"kind":[1],"metadata":{"name":"x"}}',
                          b'{"apiVersion":5}', b"k8s\x00\x0a\x02\x0a", b'[{"op":"add","path":5,"value":1}]',
                          b'[{"op":"remove","path":""}]', b'[{"op":"replace","path":"","value":{}}]',
                          b'[{"op":"copy","from":[],"path":"/a"}]', b'[{"op":7,"path":"/a"}]',
                          b'{"a":' * 3000 + b"1" + b"}" * 3000, b"a: " + b"[" * 3000 + b"]" * 3000,
                          b'{"propagationPolicy":"garbage"}', b'{"gracePeriodSeconds":"x"}',
                          b'{"spec":{"x":18446744073709551616}}', b'{"target":{"name":"n"}}', b'{"target":5}',
                          b'{"metadata":{"name":"p"},"target":{"kind":"Pod","name":7}}',
                          b'{"spec":{"containers":[{"name":"c","$patch":"delete"}],"$setElementOrder/containers":5}}',
                          b'{"spec":{"$retainKeys":"x","volumes":[{"$patch":"bogus"}]}}',
                          b'{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"containers":[{}]}}',
                          # keyed lists server-side apply merges item by item: a key twice, an item without its key
                          b'{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"containers":'
                          b'[{"name":"a","image":"i"},{"name":"a","image":"j"}]}}',
                          b'{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"containers":[{"image":"i"}],'
                          b'"volumes":[5]}}',
                          b'{"status":{"reservedFor":[{"resource":"pods"},{"uid":"u"},{"uid":"u"}],"devices":[{}]}}',
                          b'{"metadata":{"finalizers":["a","a",5],"ownerReferences":[{"uid":1},{}]}}',
                          # review bodies with the wrong shapes
                          b'{"spec":{"resourceAttributes":5}}', b'{"spec":{"token":5}}',
                          # token request bodies with the wrong shapes
                          b'{"spec":{"expirationSeconds":"1h","boundObjectRef":{"kind":"Pod","name":5}}}',
                          b'{"spec":{"boundObjectRef":{"kind":"Node","name":".."},"audiences":[null]}}',
                          b'{"spec":{"nonResourceAttributes":{"path":[]}},"status":7}', b'{"spec":[]}', b'[{"op":"add","path":"/spec/x","value":' +
                          b"[" * 150 + b"]" * 150 + b"}]"])
CTYPES = st.sampled_from(["application/json", "application/merge-patch+json", "application/json-patch+json",
                          "application/strategic-merge-patch+json", "application/apply-patch+yaml",
                          "application/yaml", "text/plain", "application/vnd.kubernetes.protobuf"])
PATHS = st.sampled_from(["/apis/resource.k8s.io/v1/resourceslices", "/apis/resource.k8s.io/v1/resourceslices/s",
                         "/apis/resource.k8s.io/v1beta1/resourceslices/s",
                         "/apis/resource.k8s.io/v1/namespaces/x/resourceclaims",
                         "/apis/resource.k8s.io/v1/namespaces/x/resourceclaims/c/status", "/api/v1/namespaces",
                         "/api/v1/namespaces/x", "/api/v1/nodes/n", "/apis/resource.k8s.io/v1/devicetaintrules/x",
                         "/apis", "/openapi/v3/apis/resource.k8s.io/v9", "/apis/resource.k8s.io/v1/resourceslices/a/b/c",
                         "/api/v1/namespaces/x/pods", "/api/v1/namespaces/x/pods/p", "/api/v1/namespaces/x/pods/p/binding",
                         "/api/v1/namespaces/x/pods/p/status", "/api/v1/namespaces/x/events", "/api/v1/pods",
                         "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
                         "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews",
                         "/apis/authentication.k8s.io/v1/selfsubjectreviews",
                         "/apis/authentication.k8s.io/v1/tokenreviews", "/openapi/v2", "/apis/authorization.k8s.io",
                         "/api/v1/namespaces/x/pods/p/eviction", "/api/v1/namespaces/x/pods/p/exec",
                         "/api/v1/namespaces/x/pods/p/portforward", "/apis/scheduling.k8s.io/v1/priorityclasses",
                         "/apis/scheduling.k8s.io/v1/priorityclasses/system-node-critical",
                         "/apis/coordination.k8s.io/v1/namespaces/x/leases",
                         "/apis/coordination.k8s.io/v1/namespaces/x/leases/l", "/readyz", "/livez/store",
                         "/openapi/v3/apis/coordination.k8s.io/v1", "/api/v1/namespaces/x/configmaps",
                         "/api/v1/namespaces/x/configmaps/c", "/api/v1/namespaces/x/secrets/s",
                         "/api/v1/namespaces/default/serviceaccounts/default/token"])


@pytest.mark.slow
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(method=st.sampled_from(["GET", "POST", "PUT", "PATCH", "DELETE", "TRACE", "OPTIONS", "HEAD"]), path=PATHS,
       params=st.dictionaries(PARAMS, VALUES, max_size=3), body=BODIES, ctype=CTYPES)
def test_garbage_requests_never_give_a_500(client: TestClient, method: str, path: str, params: dict[str, str],
                                           body: bytes, ctype: str) -> None:
    params = {**params, "timeoutSeconds": "0"}  # a watch ends at once
    if method == "HEAD":  # no body to check
        assert client.request(method, path, params=params).status_code < 500
        return
    _assert_status(client.request(method, path, params=params, content=body, headers={"content-type": ctype}))


DC = "/apis/resource.k8s.io/v1/deviceclasses"
CLAIMS = "/apis/resource.k8s.io/v1/namespaces/default/resourceclaims"


def _nested(depth: int) -> Any:
    value: Any = {}
    for _ in range(depth - 1):
        value = {"a": value}
    return value


def _device_class(name: str, parameters: Any = None) -> dict[str, Any]:
    doc: dict[str, Any] = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": name}}
    if parameters is not None:
        doc["spec"] = {"config": [{"opaque": {"driver": "gpu.example.com", "parameters": parameters}}]}
    return doc


@pytest.mark.parametrize("method,suffix,ctype", [
    ("POST", "", "application/json"), ("POST", "", "application/yaml"),
    ("PATCH", "/deep", "application/merge-patch+json"), ("PATCH", "/deep?fieldManager=m", "application/apply-patch+yaml"),
    ("PUT", "/deep", "application/json")])
@pytest.mark.slow
def test_bodies_nested_thousands_of_levels_deep_are_400_not_500(client: TestClient, method: str, suffix: str,
                                                                ctype: str) -> None:
    client.post(DC, json=_device_class("deep"))
    deep = '{"a":' * 5000 + "1" + "}" * 5000
    body = '{"apiVersion":"resource.k8s.io/v1","kind":"DeviceClass","metadata":{"name":"deep"},"spec":' + deep + "}"
    if "yaml" in ctype:
        body = "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: deep}\nspec: " + \
            "[" * 5000 + "]" * 5000
    r = client.request(method, DC + suffix, content=body, headers={"content-type": ctype})
    assert r.status_code == 400, r.text
    assert r.json()["message"] == f'DeviceClass in version "v1" cannot be handled as a DeviceClass: exceeded max ' \
                                  f'depth of {MAX_DEPTH}'


def test_opaque_parameters_nested_just_under_the_limit_round_trip(client: TestClient) -> None:
    parameters = _nested(MAX_DEPTH - 10)
    created = client.post(DC, json=_device_class("nested-ok", parameters))
    assert created.status_code == 201, created.text
    got = client.get(f"{DC}/nested-ok").json()
    assert got["spec"]["config"][0]["opaque"]["parameters"] == parameters
    patched = client.patch(f"{DC}/nested-ok", json={"metadata": {"labels": {"a": "b"}}},
                           headers={"content-type": "application/merge-patch+json"})
    assert patched.status_code == 200
    # a JSON patch can nest an added value below existing ones: the result is checked too
    r = client.patch(f"{DC}/nested-ok", content=json.dumps([{"op": "add", "path": "/spec/config/0/opaque/parameters"
                                                              + "/a" * (MAX_DEPTH - 12) + "/b", "value": _nested(50)}]),
                     headers={"content-type": "application/json-patch+json"})
    assert r.status_code == 400 and "exceeded max depth" in r.json()["message"]


@pytest.mark.parametrize("ops", [
    [{"op": "add", "path": 5, "value": 1}], [{"op": "move", "from": ["x"], "path": "/a"}],
    [{"op": "remove", "path": ""}], [{"op": "replace", "path": "", "value": {}}],
    [{"op": "replace", "path": "/spec/nope/x", "value": 1}], [{"op": "test", "path": "/metadata/name", "value": "x"}],
    [{"op": "frobnicate", "path": "/a"}], [{"path": "/a"}]])
def test_a_json_patch_that_does_not_apply_is_kube_apiservers_generic_422(client: TestClient, ops: Any) -> None:
    """kube-apiserver answers every failure of json-patch's Apply with NewGenericServerResponse(422): reason
    Invalid, its fixed message (json-patch's text is not passed on) and empty details."""
    client.post(DC, json=_device_class("patched"))
    r = client.patch(f"{DC}/patched", content=json.dumps(ops), headers={"content-type": "application/json-patch+json"})
    assert r.status_code == 422
    assert r.json() == {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                        "message": "the server rejected our request due to an error in our request",
                        "reason": "Invalid", "details": {}, "code": 422}


@pytest.mark.parametrize("body,message", [
    ({"op": "add"}, "json: cannot unmarshal object into Go value of type jsonpatch.Patch"),
    ([1], "json: cannot unmarshal number into Go value of type jsonpatch.Operation")])
def test_a_json_patch_that_is_not_a_list_of_operations_is_a_400(client: TestClient, body: Any, message: str) -> None:
    client.post(DC, json=_device_class("patched"))
    r = client.patch(f"{DC}/patched", content=json.dumps(body), headers={"content-type": "application/json-patch+json"})
    assert (r.status_code, r.json()["message"]) == (400, message)


def test_watch_resource_versions_beyond_uint64_are_400_and_future_ones_too_large(client: TestClient) -> None:
    r = client.get(DC, params={"watch": "true", "resourceVersion": "99999999999999999999", "timeoutSeconds": "1"})
    assert r.status_code == 400 and r.json()["reason"] == "BadRequest"
    current = int(client.get(DC).json()["metadata"]["resourceVersion"])
    future = str(current + 1000)
    r = client.get(DC, params={"watch": "true", "resourceVersion": future, "timeoutSeconds": "1"})
    assert r.status_code == 504
    status = r.json()
    assert status["message"].startswith(f"Too large resource version: {future}, current: ")
    assert status["details"]["causes"] == [{"reason": "ResourceVersionTooLarge",
                                            "message": "Too large resource version"}]


def test_a_garbage_propagation_policy_is_refused_and_deletes_nothing(client: TestClient) -> None:
    client.post(DC, json=_device_class("kept"))
    for kwargs in ({"params": {"propagationPolicy": "garbage"}}, {"content": '{"propagationPolicy":"garbage"}'}):
        r = client.request("DELETE", f"{DC}/kept", **kwargs)  # type: ignore[arg-type]
        assert r.status_code == 422 and r.json()["message"] == (
            'DeleteOptions.meta.k8s.io "" is invalid: Invalid value: "garbage": DeletionPropagation need to be one '
            'of "Foreground", "Background", "Orphan" or nil')
    assert client.get(f"{DC}/kept").status_code == 200
    assert client.request("DELETE", f"{DC}/kept", params={"propagationPolicy": "Background"}).status_code == 200


def test_a_count_beyond_int64_is_refused_as_the_decoder_refuses_it(client: TestClient) -> None:
    claim = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "big"},
             "spec": {"devices": {"requests": [{"name": "r", "exactly": {
                 "deviceClassName": "gpu", "allocationMode": "ExactCount", "count": 2 ** 63}}]}}}
    r = client.post(CLAIMS, json=claim)
    assert r.status_code == 400 and r.json()["message"] == (
        'ResourceClaim in version "v1" cannot be handled as a ResourceClaim: json: cannot unmarshal number '
        '9223372036854775808 into Go struct field ResourceClaim.spec.devices.requests.exactly.count of type int64')
    assert client.get(f"{CLAIMS}/big").status_code == 404


@pytest.mark.parametrize("selector,message", [
    ("a=b=c", "found '=', expected: ',' or 'end of string'"),
    ("k" * 64 + "=v", 'unable to parse requirement: <nil>: Invalid value: "' + "k" * 64 + '": name part must be no '
                      'more than 63 bytes'),
    ("a=" + "v" * 64, 'unable to parse requirement: values[0][a]: Invalid value: "' + "v" * 64 + '": must be no '
                      'more than 63 bytes'),
    ("a in (b", "unable to parse requirement: found '', expected: ',' or ')'"),
    ("!a=b", "found '=', expected: ',' or 'end of string'"),
    ("a,", "found '', expected: identifier after ','")])
def test_malformed_label_selectors_are_400_with_apimachinery_messages(client: TestClient, selector: str,
                                                                      message: str) -> None:
    r = client.get(DC, params={"labelSelector": selector})
    assert (r.status_code, r.json()["message"]) == (400, message)


def test_field_managers_longer_than_128_bytes_are_refused_on_every_write(client: TestClient) -> None:
    manager = "m" * 129
    r = client.post(DC, params={"fieldManager": manager}, json=_device_class("managed"))
    assert r.status_code == 422 and r.json()["message"] == ('CreateOptions.meta.k8s.io "" is invalid: fieldManager: '
                                                            'Too long: may not be more than 128 bytes')
    assert client.post(DC, params={"fieldManager": "m" * 128}, json=_device_class("managed")).status_code == 201
    r = client.put(f"{DC}/managed", params={"fieldManager": manager}, json=_device_class("managed"))
    assert r.status_code == 422 and r.json()["details"]["kind"] == "UpdateOptions"
    r = client.patch(f"{DC}/managed", params={"fieldManager": manager}, content="{}",
                     headers={"content-type": "application/merge-patch+json"})
    assert r.status_code == 422 and r.json()["details"]["kind"] == "PatchOptions"


def test_a_delete_of_a_status_subresource_is_not_allowed_and_leaves_the_object(client: TestClient) -> None:
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "kept"},
           "spec": {"containers": [{"name": "c", "image": "x"}]}}
    assert client.post("/api/v1/namespaces/default/pods", json=pod).status_code == 201
    assert client.post(DC, json=_device_class("kept")).status_code == 201
    for path in ("/api/v1/namespaces/default/pods/kept/status", f"{DC}/kept/status",
                 "/api/v1/namespaces/default/status"):
        r = client.delete(path)
        assert r.status_code in (404, 405), (path, r.text)  # (a device class has no status subresource)
    assert client.get("/api/v1/namespaces/default/pods/kept").status_code == 200
    assert client.get(f"{DC}/kept").status_code == 200
    assert client.get("/api/v1/namespaces/default").status_code == 200
    r = client.delete("/api/v1/namespaces/default/pods/kept/status")
    assert r.status_code == 405 and r.json()["reason"] == "MethodNotAllowed"


def test_trace_gets_a_status_body(client: TestClient) -> None:
    r = client.request("TRACE", DC)
    assert r.status_code == 405 and r.json()["reason"] == "MethodNotAllowed"


HEADER_VALUES = st.sampled_from(["", "bob", "system:serviceaccount:ns:sa", "system:serviceaccount::", "system:anonymous",
                                 "system:serviceaccount:a:b:c", "é", "x" * 300, "system:masters", ",", "a,b"])


@pytest.mark.slow
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(headers=st.dictionaries(st.sampled_from(["impersonate-user", "impersonate-group", "impersonate-uid",
                                                "impersonate-extra-scopes", "impersonate-extra-", "authorization"]),
                               HEADER_VALUES, max_size=4),
       path=st.sampled_from([DC, "/apis/authentication.k8s.io/v1/selfsubjectreviews", "/api/v1/namespaces/x/pods"]),
       method=st.sampled_from(["GET", "POST"]))
def test_impersonation_headers_never_give_a_500(client: TestClient, headers: dict[str, str], path: str,
                                                 method: str) -> None:
    body = b'{"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview"}' if "review" in path else b"{}"
    sent = {k.encode(): v.encode() for k, v in headers.items()}  # UTF-8 bytes, as a client puts them on the wire
    _assert_status(client.request(method, path, content=body if method == "POST" else None,
                                  headers={**sent, b"content-type": b"application/json"}))


def _asgi(client: TestClient, method: str, path: str) -> tuple[int, dict[str, str], bytes]:
    """A request sent to the application as the HTTP server hands it over, whatever its target (a test client
    sends only URLs)."""
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {"type": "http", "http_version": "1.1", "method": method, "path": path, "raw_path": path.encode(),
             "root_path": "", "scheme": "http", "query_string": b"", "headers": [], "client": ("127.0.0.1", 1),
             "server": ("127.0.0.1", 80)}
    asyncio.run(client.app(scope, receive, send))  # type: ignore[arg-type]
    start = sent[0]
    headers = {k.decode().lower(): v.decode() for k, v in start["headers"]}
    return start["status"], headers, b"".join(m.get("body", b"") for m in sent[1:])


@pytest.mark.parametrize("method", ["GET", "POST", "DELETE"])
def test_the_asterisk_request_target_is_not_found_not_a_500(client: TestClient, method: str) -> None:
    status, _, body = _asgi(client, method, "*")
    assert status == 404 and json.loads(body)["reason"] == "NotFound"


def test_options_asterisk_is_answered_as_gos_server_answers_it(client: TestClient) -> None:
    status, headers, body = _asgi(client, "OPTIONS", "*")
    assert (status, headers.get("content-length"), body) == (200, "0", b"")


PODS = "/api/v1/namespaces/ml-team/pods"


def _pod(name: str, **meta: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, **meta},
            "spec": {"containers": [{"name": "c", "image": "i"}]}}


@pytest.mark.parametrize("method,ctype,body,message", [
    ("PUT", "application/json", _pod("named", namespace="x"),
     "the namespace of the provided object does not match the namespace sent on the request"),
    ("PUT", "application/json", {**_pod("named"), "metadata": {}},
     "the name of the object (named based on URL) was undeterminable: name must be provided"),
    ("PUT", "application/json", _pod("other"), "the name of the object (other) does not match the name on the URL "
                                               "(named)"),
    ("PATCH", "application/merge-patch+json", {"metadata": {"namespace": "x"}},
     "the namespace of the provided object does not match the namespace sent on the request"),
    ("PATCH", "application/json-patch+json", [{"op": "replace", "path": "/metadata/name", "value": "other"}],
     "the name of the object (other) does not match the name on the URL (named)"),
    ("PATCH", "application/apply-patch+yaml", _pod("other"),
     "the name of the object (other) does not match the name on the URL (named)")])
def test_an_update_or_patch_naming_another_object_is_refused_with_kube_apiservers_message(
        client: TestClient, method: str, ctype: str, body: Any, message: str) -> None:
    client.post(PODS, json=_pod("named"))
    r = client.request(method, f"{PODS}/named", params={"fieldManager": "m"}, content=json.dumps(body),
                       headers={"content-type": ctype})
    assert (r.status_code, r.json()["message"]) == (400, message)
    assert client.get(f"{PODS}/named").json()["metadata"]["namespace"] == "ml-team"


def test_the_namespace_of_a_cluster_scoped_object_is_cleared_as_kube_apiserver_clears_it(client: TestClient) -> None:
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "scoped", "namespace": "x"}}
    r = client.post("/api/v1/nodes", json=node)
    assert r.status_code == 201 and "namespace" not in r.json()["metadata"], r.text
    r = client.put("/api/v1/nodes/scoped", json=node)
    assert r.status_code == 200 and "namespace" not in r.json()["metadata"], r.text
    created = client.post(DC, json={**_device_class("scoped"), "metadata": {"name": "scoped", "namespace": "x"}})
    assert created.status_code == 201 and "namespace" not in created.json()["metadata"], created.text


def test_a_binding_naming_another_pod_gets_the_binding_storages_message(client: TestClient) -> None:
    client.post(PODS, json=_pod("bound"))
    binding = {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "other"},
               "target": {"kind": "Node", "name": "n"}}
    r = client.post(f"{PODS}/bound/binding", json=binding)
    assert (r.status_code, r.json()["message"]) == (400, "name in URL does not match name in Binding object")
    assert "nodeName" not in client.get(f"{PODS}/bound").json()["spec"]


@pytest.mark.parametrize("entry,message", [
    ({"manager": "a", "operation": "Bogus"}, 'metadata.managedFields[0].operation: Invalid value: "Bogus": must be '
                                             '`Apply` or `Update`'),
    ({"manager": "a", "operation": "Update", "fieldsType": "FieldsV2"},
     'metadata.managedFields[0].fieldsType: Invalid value: "FieldsV2": must be `FieldsV1`'),
    ({"manager": "m" * 129, "operation": "Apply"}, "metadata.managedFields[0].manager: Too long: may not be more "
                                                   "than 128 bytes")])
@pytest.mark.parametrize("url,doc", [(PODS, _pod("managed")), (CLAIMS.replace("default", "ml-team"), {
    "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "managed"}, "spec": {}})])
def test_managed_fields_entries_kube_apiserver_refuses_are_never_stored(client: TestClient, entry: dict[str, Any],
                                                                       message: str, url: str,
                                                                       doc: dict[str, Any]) -> None:
    bad = {"metadata": {"managedFields": [entry]}}
    r = client.post(url, json={**doc, "metadata": {**doc["metadata"], "name": "managed-new", **bad["metadata"]}})
    assert r.status_code == 422 and message in r.json()["message"], r.text
    client.post(url, json=doc)
    for suffix in ("", "/status"):
        r = client.patch(f"{url}/managed{suffix}", content=json.dumps(bad),
                         headers={"content-type": "application/merge-patch+json"})
        assert r.status_code == 422 and message in r.json()["message"], r.text
    assert entry not in client.get(f"{url}/managed").json()["metadata"].get("managedFields", [])


def test_boolean_and_node_and_namespace_field_selectors_read_as_kube_apiserver_formats_them(
        client: TestClient) -> None:
    client.post("/api/v1/nodes", json={"apiVersion": "v1", "kind": "Node", "metadata": {"name": "cordoned"},
                                       "spec": {"unschedulable": True}})
    client.post("/api/v1/nodes", json={"apiVersion": "v1", "kind": "Node", "metadata": {"name": "open"}})
    client.post(PODS, json={**_pod("host"), "spec": {"hostNetwork": True, "containers": [{"name": "c",
                                                                                          "image": "i"}]}})
    client.post(PODS, json=_pod("plain"))

    def names(url: str, selector: str) -> set[str]:
        r = client.get(url, params={"fieldSelector": selector})
        assert r.status_code == 200, r.text
        return {item["metadata"]["name"] for item in r.json()["items"]}

    assert {"cordoned"} <= names("/api/v1/nodes", "spec.unschedulable=true")
    assert "cordoned" not in names("/api/v1/nodes", "spec.unschedulable=false")
    assert "open" in names("/api/v1/nodes", "spec.unschedulable=false")
    assert names(PODS, "spec.hostNetwork=true") == {"host"}
    assert "plain" in names(PODS, "spec.hostNetwork=false") and "host" not in names(PODS, "spec.hostNetwork=false")
    assert "ml-team" in names("/api/v1/namespaces", "status.phase=Active")


@pytest.mark.parametrize("value,problem", [("nan", "invalid syntax"), ("1.5", "invalid syntax"), ("1_0", "invalid syntax"),
                                           (" 1", "invalid syntax"), ("١", "invalid syntax"),
                                           ("9223372036854775808", "value out of range")])
@pytest.mark.parametrize("param,watch", [("timeoutSeconds", True), ("timeoutSeconds", False), ("limit", False)])
def test_list_options_that_are_not_go_int64s_are_400s_with_parse_ints_text(client: TestClient, value: str,
                                                                           problem: str, param: str,
                                                                           watch: bool) -> None:
    params = {param: value, **({"watch": "1"} if watch else {})}
    r = client.get(DC, params=params)
    assert (r.status_code, r.json()["message"]) == (400, f"strconv.ParseInt: parsing {json.dumps(value)}: {problem}")


def test_the_largest_watch_timeout_is_one_the_event_loop_can_schedule() -> None:
    query = f"watch=1&timeoutSeconds={(1 << 63) - 1}".encode()
    timeout, *_ = watch_module._watch_options(Request({"type": "http", "query_string": query, "headers": []}))
    assert timeout == watch_module.MAX_TIMEOUT
    asyncio.new_event_loop().call_later(timeout, lambda: None).cancel()  # (a float beyond this raises)


def _laughs(levels: int) -> str:
    """A YAML document whose aliases expand to 9**levels strings ("billion laughs")."""
    lines = ["apiVersion: v1", "kind: Namespace", "metadata: {name: laughs}", 'a0: &a0 ["lol","lol","lol","lol",'
             '"lol","lol","lol","lol","lol"]']
    lines += [f"a{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, levels + 1)]
    return "\n".join(lines)


@pytest.mark.parametrize("method,url,ctype", [
    ("POST", "/api/v1/namespaces", "application/yaml"),
    ("PATCH", "/api/v1/namespaces/laughs?fieldManager=m", "application/apply-patch+yaml")])
def test_a_yaml_alias_bomb_is_refused_at_once_as_gos_decoder_refuses_it(client: TestClient, method: str, url: str,
                                                                      ctype: str) -> None:
    started = time.monotonic()
    r = client.request(method, url, content=_laughs(9), headers={"content-type": ctype})
    assert (r.status_code, r.json()["message"]) == (
        400, "couldn't decode the request body as YAML: yaml: document contains excessive aliasing")
    assert time.monotonic() - started < 5
    assert client.get("/api/v1/namespaces/laughs").status_code == 404


def test_yaml_anchors_used_a_few_times_still_decode(client: TestClient) -> None:
    doc = ("apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: anchored, labels: &l {a: b}, "
           "annotations: *l}\n")
    r = client.post(DC, content=doc, headers={"content-type": "application/yaml"})
    assert r.status_code == 201 and r.json()["metadata"]["annotations"] == {"a": "b"}, r.text


@pytest.mark.slow
def test_json_patch_copies_that_would_grow_the_object_beyond_the_copy_limit_are_the_generic_422(
        client: TestClient) -> None:
    client.post(DC, json=_device_class("copied"))
    # each copy doubles spec: 40 of them would build 2**40 entries
    ops = [{"op": "add", "path": "/spec", "value": {"config": []}}] + [
        {"op": "copy", "from": "/spec", "path": "/spec/config/-"}] * 40
    started = time.monotonic()
    r = client.patch(f"{DC}/copied", content=json.dumps(ops), headers={"content-type": "application/json-patch+json"})
    assert (r.status_code, r.json()["message"]) == (422, "the server rejected our request due to an error in our "
                                                         "request")
    # a guard against a hang, not a speed check: without the copy limit this patch never returns
    assert time.monotonic() - started < 30


def test_a_json_patch_of_more_than_ten_thousand_operations_is_too_large(client: TestClient) -> None:
    client.post(DC, json=_device_class("many-ops"))
    ops = [{"op": "test", "path": "/metadata/name", "value": "many-ops"}] * 10001
    r = client.patch(f"{DC}/many-ops", content=json.dumps(ops), headers={"content-type": "application/json-patch+json"})
    assert (r.status_code, r.json()["reason"], r.json()["message"]) == (
        413, "RequestEntityTooLarge", "Request entity too large: The allowed maximum operations in a JSON patch is "
                                      "10000, got 10001")


def test_a_query_parameter_sent_twice_is_its_first_value_as_go_reads_it(client: TestClient) -> None:
    assert client.get(f"{DC}?limit=1&limit=x").status_code == 200
    assert client.get(f"{DC}?limit=x&limit=1").status_code == 400
    labelled = {**_device_class("twice"), "metadata": {"name": "twice", "labels": {"a": "b"}}}
    r = client.post(f"{DC}?fieldManager=first&fieldManager=second", json=labelled)
    assert r.status_code == 201 and r.json()["metadata"]["managedFields"][0]["manager"] == "first"


def test_a_time_go_cannot_parse_is_refused_and_never_stored(client: TestClient) -> None:
    # Stored, it would break every Go client's list of the kind (decoding into metav1.Time fails)
    pods = "/api/v1/namespaces/default/pods"
    assert client.post(pods, json={**POD, "metadata": {"name": "timed"}}).status_code == 201
    r = client.patch(f"{pods}/timed/status", json={"status": {"startTime": "garbage"}},
                     headers={"content-type": "application/merge-patch+json"})
    assert r.status_code == 400 and r.json()["message"] == (
        'Pod in version "v1" cannot be handled as a Pod: parsing time "garbage" as "2006-01-02T15:04:05Z07:00": '
        'cannot parse "garbage" as "2006"')
    assert "startTime" not in client.get(f"{pods}/timed").json().get("status", {})
    tainted = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "timed"},
               "spec": {"driver": "gpu.example.com", "nodeName": "n", "pool": {"name": "n", "resourceSliceCount": 1},
                        "devices": [{"name": "g", "taints": [{"key": "k", "effect": "NoSchedule",
                                                              "timeAdded": "2026-02-30T00:00:00Z"}]}]}}
    r = client.post(URLS["ResourceSlice"], json=tainted)
    assert r.status_code == 400 and r.json()["message"].endswith('parsing time "2026-02-30T00:00:00Z": day out of range')


@pytest.mark.parametrize("state", [
    '{"running": {"startedAt": "garbage"}}',  # a time field whose name lacks "ime"
    '{"terminated": {"exitCode": 0, "finishedAt": "garbage"}}',
    '{"running": {"st\\u0061rtedAt": "garbage"}}'])  # a time field's name escaped
def test_a_core_body_without_a_time_fields_usual_name_still_has_its_times_checked(client: TestClient,
                                                                                 state: str) -> None:
    # (the time walk is skipped only for a body whose text can name no time field at all)
    body = ('{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "states"}, "spec": {"containers": '
            '[{"name": "c", "image": "i"}]}, "status": {"containerStatuses": [{"name": "c", "image": "i", '
            '"imageID": "", "ready": false, "restartCount": 0, "state": ' + state + '}]}}')
    r = client.post("/api/v1/namespaces/default/pods", content=body, headers={"content-type": "application/json"})
    assert r.status_code == 400 and r.json()["message"].endswith(
        'parsing time "garbage" as "2006-01-02T15:04:05Z07:00": cannot parse "garbage" as "2006"'), r.text


@pytest.mark.parametrize("nested", ["[" * 100_000 + "]" * 100_000, "{a: " * 100_000 + "1" + "}" * 100_000,
                                    "- " * 100_000 + "1"], ids=["flow-lists", "flow-maps", "block-lists"])
@pytest.mark.parametrize("method,url,ctype", [
    ("POST", "/api/v1/namespaces/default/pods", "application/yaml"),
    ("PATCH", "/api/v1/namespaces/default/pods/deep?fieldManager=m", "application/apply-patch+yaml")])
def test_yaml_a_hundred_thousand_levels_deep_is_refused_at_once_as_json_is(client: TestClient, nested: str,
                                                                         method: str, url: str, ctype: str) -> None:
    body = "apiVersion: v1\nkind: Pod\nmetadata: {name: deep}\nspec:\n  x:\n    " + nested.replace("\n", "")
    started = time.monotonic()
    r = client.request(method, url, content=body, headers={"content-type": ctype})
    elapsed = time.monotonic() - started
    assert r.status_code == 400, r.text
    assert r.json() == {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                        "message": f'Pod in version "v1" cannot be handled as a Pod: exceeded max depth of {MAX_DEPTH}',
                        "reason": "BadRequest", "code": 400}
    assert elapsed < 3  # milliseconds; the pure-Python YAML reader took seconds to give up


ADMISSION_READS = [("spec", "volumes"), ("spec", "serviceAccountName"), ("spec", "serviceAccount"),
                   ("spec", "automountServiceAccountToken"), ("spec", "priorityClassName"), ("spec", "priority"),
                   ("spec", "tolerations"), ("spec", "initContainers"), ("metadata", "annotations"),
                   ("metadata", "labels")]


@pytest.mark.parametrize("part,field", ADMISSION_READS)
@pytest.mark.parametrize("value", [1.5, "x", {"a": 1}, True, [1]])
def test_a_wrongly_typed_pod_field_admission_reads_is_the_decoders_400(client: TestClient, part: str, field: str,
                                                                        value: Any) -> None:
    """Admission (ServiceAccount, Priority, DefaultTolerationSeconds, ...) reads these fields of the JSON body;
    kube-apiserver decodes the body before admission, so a value of the wrong type there is the decoder's 400,
    not a 500, and not an admission error."""
    pod: dict[str, Any] = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "typed"},
                           "spec": {"containers": [{"name": "c", "image": "i"}]}}
    if (field in ("serviceAccountName", "serviceAccount", "priorityClassName") and value == "x") or (
            field == "automountServiceAccountToken" and value is True):
        return  # well typed
    pod[part] = {**pod[part], field: value}
    r = client.post("/api/v1/namespaces/x/pods", json=pod)
    _assert_status(r)
    assert r.status_code == 400 and "cannot be handled as a Pod" in r.json()["message"], r.text


@pytest.mark.parametrize("namespace", ["missing", "terminating"])
def test_a_body_that_does_not_decode_is_a_400_before_the_namespace_is_looked_at(namespace: str) -> None:
    """kube-apiserver decodes a create's body before admission: NamespaceLifecycle's 404 (no such namespace)
    and 403 (being deleted) are for bodies that decode; a well-formed body still gets them."""
    http = api_client("terminating")
    assert http.delete("/api/v1/namespaces/terminating").status_code == 200
    bad = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
           "spec": {"containers": [{"name": "c", "image": "i"}], "volumes": "x"}}
    r = http.post(f"/api/v1/namespaces/{namespace}/pods", json=bad)
    assert r.status_code == 400 and "cannot be handled as a Pod" in r.json()["message"], r.text
    good = {**bad, "spec": {"containers": [{"name": "c", "image": "i"}]}}
    r = http.post(f"/api/v1/namespaces/{namespace}/pods", json=good)
    assert r.status_code == (404 if namespace == "missing" else 403), r.text


def test_a_bug_answers_a_500_status_and_logs_its_traceback(client: TestClient, monkeypatch, caplog) -> None:
    from dralloc.server import app

    async def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("deliberately broken")

    monkeypatch.setitem(app.HANDLERS, "get", broken)
    with caplog.at_level("ERROR", logger="dralloc.server.app"):
        r = client.get("/api/v1/namespaces/x/configmaps/any")
    assert r.status_code == 500
    assert r.json()["reason"] == "InternalError" and "deliberately broken" in r.json()["message"]
    (record,) = [rec for rec in caplog.records if rec.name == "dralloc.server.app"]
    assert "GET /api/v1/namespaces/x/configmaps/any" in record.getMessage() and record.exc_info is not None
