"""The response's media type negotiated from Accept as kube-apiserver negotiates it for a resource: quality
order, q=0 rejections, transforms, watch framing, pretty printing, 406 Not Acceptable."""

from __future__ import annotations

import json
import warnings

import pytest
from hypothesis import given
from hypothesis import strategies as st

warnings.filterwarnings("ignore", message="Using `httpx`")
from cluster import api_client  # noqa: E402
from starlette.testclient import TestClient  # noqa: E402

from dralloc.server.http.errors import ApiError  # noqa: E402
from dralloc.server.http.negotiation import JSON, PROTOBUF, YAML, Output, negotiate, parse_accept  # noqa: E402

CLASSES = "/apis/resource.k8s.io/v1/deviceclasses"
SERVED = "only the following media types are accepted: application/json, application/yaml, " \
         "application/vnd.kubernetes.protobuf"
TABLE_V1 = "application/json;as=Table;v=v1;g=meta.k8s.io"


@pytest.fixture
def client() -> TestClient:
    c = api_client()
    made = c.post(CLASSES, json={"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
                                 "metadata": {"name": "gpu"}})
    assert made.status_code == 201, made.text
    return c


@pytest.mark.parametrize("header, output", [
    ("", Output(JSON)), ("*/*", Output(JSON)), ("application/*", Output(JSON)),
    (f"{TABLE_V1},application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json", Output(JSON, "Table")),
    ("application/vnd.kubernetes.protobuf, */*", Output(PROTOBUF)),  # client-go's protobuf clients
    ("application/yaml;q=0.9, application/json", Output(JSON)),  # quality before order
    ("application/json;q=0, */*", Output(YAML)),  # a q=0 clause rejects its type, whatever */* says
    ("text/html, application/yaml", Output(YAML)),
    ("application/json;pretty=1", Output(JSON, None, True)),
    ("application/vnd.kubernetes.protobuf;as=Table;v=v1;g=meta.k8s.io, application/json", Output(JSON)),
    ("application/json;q=abc, application/yaml", Output(YAML)),  # an unreadable quality is 0 (goautoneg)
    ("application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io", Output(JSON, "PartialObjectMetadataList")),
])
def test_negotiation_picks_what_kube_apiserver_picks(header: str, output: Output) -> None:
    assert negotiate(header) == output


@pytest.mark.parametrize("header", ["text/html", "application/json;as=Foo;v=v1;g=meta.k8s.io",
                                    "application/json;sv=v2", "application/json;q=0", "Application/JSON",
                                    "application/vnd.kubernetes.protobuf;as=Table;v=v1;g=meta.k8s.io"])
def test_nothing_servable_is_406_with_the_media_types_served(header: str) -> None:
    with pytest.raises(ApiError) as caught:
        negotiate(header)
    assert (caught.value.code, caught.value.message) == (406, SERVED)


def test_a_watch_needs_a_type_with_a_watch_framing() -> None:
    assert negotiate("application/vnd.kubernetes.protobuf;stream=watch, */*", watch=True) == Output(PROTOBUF)
    with pytest.raises(ApiError) as caught:
        negotiate("application/yaml, application/json", watch=True)  # the first acceptable type decides
    assert caught.value.message == ("only the following media types are accepted: application/json;stream=watch, "
                                    "application/vnd.kubernetes.protobuf;stream=watch")
    with pytest.raises(ApiError):
        negotiate("application/yaml;stream=watch")  # YAML has no watch framing


def test_clauses_are_ordered_as_goautoneg_orders_them() -> None:
    clauses = parse_accept("*/*;q=0.8, text/*, application/json;as=Table, bad, application/yaml;q=0.5")
    # Go's insertion sort with goautoneg's comparison, which ranks a concrete type above a wildcard whatever
    # their qualities: application/yaml;q=0.5 passes */*;q=0.8 and text/* on its way up
    assert [(c.type, c.subtype, c.q) for c in clauses] == [
        ("application", "json", 1.0), ("application", "yaml", 0.5), ("text", "*", 1.0), ("*", "*", 0.8)]
    assert clauses[0].params == (("as", "Table"),)


@given(st.text(max_size=60))
def test_any_accept_header_gets_an_output_or_a_406(header: str) -> None:
    try:
        negotiate(header, watch=len(header) % 2 == 1)
    except ApiError as exc:
        assert exc.code == 406


def test_a_get_with_nothing_servable_is_a_406_status_before_the_store_is_asked(client: TestClient) -> None:
    for path in (f"{CLASSES}/gpu", f"{CLASSES}/missing", CLASSES):
        r = client.get(path, headers={"accept": "text/html"})
        assert r.status_code == 406 and r.json()["reason"] == "NotAcceptable" and r.json()["message"] == SERVED
    created = client.post(CLASSES, headers={"accept": "text/html"}, json={
        "apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "refused"}})
    assert created.status_code == 406
    assert client.get(f"{CLASSES}/refused").status_code == 404  # negotiated before anything is written


def test_yaml_lists_and_tables_follow_the_negotiation(client: TestClient) -> None:
    listed = client.get(CLASSES, headers={"accept": "application/yaml"})
    assert listed.headers["content-type"] == YAML and "kind: DeviceClassList" in listed.text
    weighted = client.get(CLASSES, headers={"accept": f"application/json;q=0.5, {TABLE_V1}"})
    assert weighted.json()["kind"] == "Table"
    assert client.get(CLASSES, headers={"accept": f"{TABLE_V1};q=0, application/json"}).json()["kind"] == \
        "DeviceClassList"
    watched = client.get(f"{CLASSES}?watch=true&timeoutSeconds=1", headers={"accept": "application/yaml"})
    assert watched.status_code == 406


def test_json_is_indented_for_curl_and_browsers_as_kube_apiserver_indents_it(client: TestClient) -> None:
    assert client.get(f"{CLASSES}/gpu").text.startswith('{"')
    for agent in ("curl/8.5.0", "Wget/1.21", "Mozilla/5.0 (X11)"):
        shown = client.get(f"{CLASSES}/gpu", headers={"user-agent": agent}).text
        assert shown.startswith('{\n  "') and json.loads(shown)["metadata"]["name"] == "gpu"
    assert client.get(f"{CLASSES}/gpu?pretty=false", headers={"user-agent": "curl/8"}).text.startswith('{"')
    assert client.get(f"{CLASSES}/gpu", headers={"accept": "application/json;pretty=1"}).text.startswith("{\n")
    assert client.get(CLASSES, headers={"user-agent": "curl/8"}).text.startswith("{\n")  # the list too


PARTIAL = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1"
PARTIAL_LIST = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"


@pytest.mark.slow
def test_metadata_only_clients_get_partial_object_metadata(client: TestClient) -> None:
    # as client-go's metadata informers ask: the list, then a watch, each object's metadata alone
    listed = client.get(CLASSES, headers={"accept": f"{PARTIAL_LIST},application/json"}).json()
    assert (listed["kind"], listed["apiVersion"]) == ("PartialObjectMetadataList", "meta.k8s.io/v1")
    (item,) = listed["items"]
    assert set(item) == {"kind", "apiVersion", "metadata"} and item["kind"] == "PartialObjectMetadata"
    assert item["metadata"]["name"] == "gpu" and listed["metadata"]["resourceVersion"]
    got = client.get(f"{CLASSES}/gpu", headers={"accept": PARTIAL}).json()
    assert got == {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": got["metadata"]}
    assert "spec" not in got and got["metadata"]["uid"]
    wrong = client.get(f"{CLASSES}/gpu", headers={"accept": PARTIAL_LIST})
    assert (wrong.status_code, wrong.json()["message"]) == (
        406, "you requested PartialObjectMetadataList, but the requested object is not a list "
             "(*resource.DeviceClass)")
    assert client.get(CLASSES, headers={"accept": PARTIAL}).json()["message"] == (
        "you requested PartialObjectMetadata, but the requested object is a list (*resource.DeviceClassList)")
    watched = client.get(f"{CLASSES}?watch=true&resourceVersion=0&timeoutSeconds=1", headers={"accept": PARTIAL})
    (event,) = [json.loads(line) for line in watched.text.splitlines()]
    assert event["type"] == "ADDED" and event["object"]["kind"] == "PartialObjectMetadata"
    assert set(event["object"]) == {"kind", "apiVersion", "metadata"}
