"""Server-side apply and managedFields of custom resources follow their CRD's schema, as kube-apiserver's field
manager does: ``x-kubernetes-list-type: map`` lists are merged and owned item by item by their keys (a key
field an item leaves out counts with its schema default), ``set`` lists value by value, other lists and
``x-kubernetes-map-type: atomic`` objects whole, other objects field by field; with a status subresource the
main endpoint never owns ``status``."""

from __future__ import annotations

import json
import warnings
from typing import Any

import pytest

warnings.filterwarnings("ignore", message="Using `httpx`")
from cluster import api_client  # noqa: E402
from starlette.testclient import TestClient  # noqa: E402

CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
GADGETS = "/apis/example.com/v1/namespaces/ns/gadgets"
APPLY = {"content-type": "application/apply-patch+yaml"}
PORT = {"type": "object", "required": ["name"], "properties": {
    "name": {"type": "string"}, "protocol": {"type": "string", "default": "TCP"}, "port": {"type": "integer"}}}
SCHEMA = {"type": "object", "properties": {
    "spec": {"type": "object", "properties": {
        "ports": {"type": "array", "x-kubernetes-list-type": "map",
                  "x-kubernetes-list-map-keys": ["name", "protocol"], "items": PORT},
        "tags": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
        "args": {"type": "array", "items": {"type": "string"}},
        "selector": {"type": "object", "x-kubernetes-map-type": "atomic",
                     "additionalProperties": {"type": "string"}},
        "labels": {"type": "object", "additionalProperties": {"type": "string"}},
        "zones": {"type": "object", "additionalProperties": {
            "type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}}}}},
    "status": {"type": "object", "properties": {"phase": {"type": "string"}}}}}


def gadget_crd(status: bool = True) -> dict[str, Any]:
    version: dict[str, Any] = {"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": SCHEMA}}
    if status:
        version["subresources"] = {"status": {}}
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "gadgets.example.com"},
            "spec": {"group": "example.com", "scope": "Namespaced",
                     "names": {"plural": "gadgets", "kind": "Gadget"}, "versions": [version]}}


@pytest.fixture
def client() -> TestClient:
    http = api_client("ns")
    assert http.post(CRDS, json=gadget_crd()).status_code == 201
    return http


def apply(client: TestClient, manager: str, spec: dict[str, Any], force: bool = False,
          **extra: Any) -> Any:
    body = {"apiVersion": "example.com/v1", "kind": "Gadget", "metadata": {"name": "g"}, "spec": spec, **extra}
    params = {"fieldManager": manager, **({"force": "true"} if force else {})}
    return client.patch(f"{GADGETS}/g", content=json.dumps(body), headers=APPLY, params=params)


def fields_of(obj: dict[str, Any], manager: str) -> dict[str, Any]:
    entry = next(e for e in obj["metadata"]["managedFields"] if e["manager"] == manager)
    return entry["fieldsV1"]


def test_a_list_map_is_merged_and_owned_item_by_item(client: TestClient) -> None:
    assert apply(client, "a", {"ports": [{"name": "http", "port": 80}]}).status_code == 201
    r = apply(client, "b", {"ports": [{"name": "metrics", "port": 9090}]})
    assert r.status_code == 200, r.text
    assert [p["name"] for p in r.json()["spec"]["ports"]] == ["http", "metrics"]
    # the key's schema default (protocol TCP) names the item, as in upstream's fieldsV1
    assert fields_of(r.json(), "b") == {"f:spec": {"f:ports": {'k:{"name":"metrics","protocol":"TCP"}': {
        ".": {}, "f:name": {}, "f:port": {}}}}}
    conflict = apply(client, "b", {"ports": [{"name": "http", "port": 81}]})
    assert conflict.status_code == 409
    assert conflict.json()["message"] == ('Apply failed with 1 conflict: conflict with "a": '
                                          '.spec.ports[name="http",protocol="TCP"].port')
    # the applier dropping its item removes it; the other's stays
    left = apply(client, "a", {})
    assert [p["name"] for p in left.json()["spec"]["ports"]] == ["metrics"]


def test_a_set_is_owned_value_by_value_and_an_atomic_list_whole(client: TestClient) -> None:
    assert apply(client, "a", {"tags": ["x"], "args": ["--one"]}).status_code == 201
    r = apply(client, "b", {"tags": ["y"]})
    assert r.json()["spec"]["tags"] == ["x", "y"]
    assert fields_of(r.json(), "b") == {"f:spec": {"f:tags": {'v:"y"': {}}}}
    conflict = apply(client, "b", {"args": ["--two"]})
    assert conflict.status_code == 409 and conflict.json()["details"]["causes"][0]["field"] == ".spec.args"
    forced = apply(client, "b", {"args": ["--two"]}, force=True)
    assert forced.json()["spec"]["args"] == ["--two"]
    assert "f:args" not in fields_of(forced.json(), "a")["f:spec"]


def test_an_atomic_map_is_replaced_whole_and_a_granular_one_merged(client: TestClient) -> None:
    assert apply(client, "a", {"selector": {"app": "x"}, "labels": {"app": "x"},
                               "zones": {"eu": ["a"]}}).status_code == 201
    r = apply(client, "b", {"labels": {"tier": "web"}, "zones": {"eu": ["b"]}})
    assert r.status_code == 200, r.text
    assert r.json()["spec"]["labels"] == {"app": "x", "tier": "web"}
    assert r.json()["spec"]["zones"] == {"eu": ["a", "b"]}  # each key's value has the additionalProperties type
    conflict = apply(client, "b", {"selector": {"app": "x", "more": "y"}})
    assert conflict.status_code == 409 and conflict.json()["details"]["causes"][0]["field"] == ".spec.selector"


def test_an_update_records_list_map_items_as_keys(client: TestClient) -> None:
    body = {"apiVersion": "example.com/v1", "kind": "Gadget", "metadata": {"name": "g"},
            "spec": {"ports": [{"name": "http", "protocol": "UDP", "port": 53}]}}
    created = client.post(GADGETS, json=body, params={"fieldManager": "kubectl-create"})
    assert created.status_code == 201
    assert fields_of(created.json(), "kubectl-create") == {"f:spec": {".": {}, "f:ports": {
        ".": {}, 'k:{"name":"http","protocol":"UDP"}': {".": {}, "f:name": {}, "f:port": {}, "f:protocol": {}}}}}
    updated = created.json()
    updated["spec"]["ports"].append({"name": "dns", "port": 53})
    put = client.put(f"{GADGETS}/g", json=updated, params={"fieldManager": "editor"})
    assert put.status_code == 200, put.text
    assert fields_of(put.json(), "editor") == {"f:spec": {"f:ports": {'k:{"name":"dns","protocol":"TCP"}': {
        ".": {}, "f:name": {}, "f:port": {}, "f:protocol": {}}}}}


def test_the_main_endpoint_never_owns_the_status(client: TestClient) -> None:
    r = apply(client, "a", {"tags": ["x"]}, status={"phase": "Up"})
    assert r.status_code == 201, r.text
    assert "status" not in r.json() and "f:status" not in fields_of(r.json(), "a")


def test_a_strategic_merge_patch_is_refused_and_a_merge_patch_replaces_lists(client: TestClient) -> None:
    assert apply(client, "a", {"ports": [{"name": "http", "port": 80}]}).status_code == 201
    strategic = client.patch(f"{GADGETS}/g", json={"spec": {"ports": [{"name": "dns", "port": 53}]}},
                             headers={"content-type": "application/strategic-merge-patch+json"})
    assert strategic.status_code == 415
    merged = client.patch(f"{GADGETS}/g", json={"spec": {"ports": [{"name": "dns", "port": 53}]}},
                          headers={"content-type": "application/merge-patch+json"})
    assert [p["name"] for p in merged.json()["spec"]["ports"]] == ["dns"]  # RFC 7386: a list is replaced


def test_metadata_is_an_object_meta_whatever_the_schema_says(client: TestClient) -> None:
    assert apply(client, "a", {}).status_code == 201
    body = {"apiVersion": "example.com/v1", "kind": "Gadget", "metadata": {"name": "g", "finalizers": ["x/a"]}}
    first = client.patch(f"{GADGETS}/g", content=json.dumps(body), headers=APPLY, params={"fieldManager": "a"})
    body["metadata"]["finalizers"] = ["x/b"]
    second = client.patch(f"{GADGETS}/g", content=json.dumps(body), headers=APPLY, params={"fieldManager": "b"})
    assert first.status_code == 200 and second.json()["metadata"]["finalizers"] == ["x/a", "x/b"]  # a set


def test_an_item_leaving_out_a_key_without_default_is_keyed_by_the_others() -> None:
    from dralloc.server.apply.fieldsets import item_element
    from dralloc.server.apply.schema_types import kind_type

    node = kind_type({"type": "object", "properties": {"spec": {"type": "object", "properties": {"rules": {
        "type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["b", "a"],
        "items": {"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "integer"}}}}}}}})
    rules = node.child("spec").child("rules")
    assert rules.kind == "list-map"
    assert item_element(rules, {"a": "x", "b": 1}) == 'k:{"a":"x","b":1}'
    assert item_element(rules, {"b": 2}) == 'k:{"b":2}'
    assert item_element(rules, {"c": 2}) is None
