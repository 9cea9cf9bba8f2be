"""apiextensions.k8s.io/v1 CustomResourceDefinitions through the in-process server: stored with upstream's
defaults and status, validated, and the custom resources they define served (discovery, OpenAPI, tables,
conversion None between versions) until the CRD is deleted, which deletes them."""

from __future__ import annotations

import copy
import time
import warnings
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

warnings.filterwarnings("ignore", message="Using `httpx`")
from cluster import api_client  # noqa: E402
from starlette.testclient import TestClient  # noqa: E402

CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
WIDGETS = "/apis/example.com/v1/namespaces/ns/widgets"
TABLE = {"accept": "application/json;as=Table;v=v1;g=meta.k8s.io"}
SCHEMA = {"type": "object", "properties": {
    "spec": {"type": "object", "required": ["size"], "properties": {
        "size": {"type": "string", "enum": ["small", "large"]},
        "replicas": {"type": "integer", "minimum": 0, "maximum": 100, "default": 1},
        "selector": {"type": "string"},
        "ports": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
                  "items": {"type": "object", "required": ["name"],
                            "properties": {"name": {"type": "string"}, "port": {"type": "integer"}}}},
        "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}},
    "status": {"type": "object", "properties": {"replicas": {"type": "integer"}, "phase": {"type": "string"}}}}}


def widget_crd(**version: Any) -> dict[str, Any]:
    v1 = {"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": SCHEMA},
          "additionalPrinterColumns": [{"name": "Size", "type": "string", "jsonPath": ".spec.size"},
                                       {"name": "Replicas", "type": "integer", "jsonPath": ".spec.replicas"},
                                       {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"}],
          **version}
    v1beta1 = {"name": "v1beta1", "served": True, "storage": False, "schema": {"openAPIV3Schema": SCHEMA}}
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "widgets.example.com"},
            "spec": {"group": "example.com", "scope": "Namespaced",
                     "names": {"plural": "widgets", "kind": "Widget", "shortNames": ["wd"], "categories": ["all"]},
                     "versions": [v1beta1, v1]}}


def widget(name: str, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": name},
            "spec": {"size": "small", **spec}}


@pytest.fixture
def client() -> TestClient:
    http = api_client("ns")
    r = http.post(CRDS, json=widget_crd(subresources={"status": {}}))
    assert r.status_code == 201, r.text
    return http


def test_a_crd_gets_its_defaults_and_is_established_at_once(client: TestClient) -> None:
    crd = client.get(f"{CRDS}/widgets.example.com").json()
    assert crd["spec"]["names"]["singular"] == "widget" and crd["spec"]["names"]["listKind"] == "WidgetList"
    assert crd["spec"]["conversion"] == {"strategy": "None"}
    conditions = {c["type"]: (c["status"], c["reason"]) for c in crd["status"]["conditions"]}
    assert conditions == {"NamesAccepted": ("True", "NoConflicts"), "Established": ("True", "InitialNamesAccepted")}
    assert crd["status"]["acceptedNames"]["kind"] == "Widget" and crd["status"]["storedVersions"] == ["v1"]
    assert crd["metadata"]["finalizers"] == ["customresourcecleanup.apiextensions.k8s.io"]
    table = client.get(CRDS, headers=TABLE).json()
    assert [c["name"] for c in table["columnDefinitions"]] == ["Name", "Created At"]


def test_an_invalid_crd_is_refused_with_kube_apiservers_status(client: TestClient) -> None:
    bad = widget_crd()
    bad["metadata"]["name"] = "widget.example.com"
    r = client.post(CRDS, json=bad)
    assert r.status_code == 422
    assert r.json()["message"] == ('CustomResourceDefinition.apiextensions.k8s.io "widget.example.com" is invalid: '
                                   'metadata.name: Invalid value: "widget.example.com": must be '
                                   'spec.names.plural+"."+spec.group')
    assert r.json()["details"]["causes"][0]["field"] == "metadata.name"


def test_the_group_of_a_crd_cannot_change(client: TestClient) -> None:
    crd = client.get(f"{CRDS}/widgets.example.com").json()
    crd["spec"]["scope"] = "Cluster"
    r = client.put(f"{CRDS}/widgets.example.com", json=crd)
    assert r.status_code == 422 and 'spec.scope: Invalid value: "Cluster": field is immutable' in r.json()["message"]


def test_custom_resources_are_served_discovered_and_listed_with_their_columns(client: TestClient) -> None:
    assert "example.com" in [g["name"] for g in client.get("/apis").json()["groups"]]
    group = client.get("/apis/example.com").json()
    assert group["preferredVersion"]["version"] == "v1" and [v["version"] for v in group["versions"]] == ["v1", "v1beta1"]
    resources = client.get("/apis/example.com/v1").json()["resources"]
    main = next(r for r in resources if r["name"] == "widgets")
    assert (main["kind"], main["shortNames"], main["categories"], main["namespaced"]) == ("Widget", ["wd"], ["all"], True)
    assert "widgets/status" in [r["name"] for r in resources]
    aggregated = client.get("/apis", headers={"accept": "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"})
    assert "example.com" in [i["metadata"]["name"] for i in aggregated.json()["items"]]
    created = client.post(WIDGETS, json=widget("a"))
    assert created.status_code == 201, created.text
    assert created.json()["spec"]["replicas"] == 1  # the schema's default
    table = client.get(WIDGETS, headers=TABLE).json()
    assert [c["name"] for c in table["columnDefinitions"]] == ["Name", "Size", "Replicas", "Age"]
    assert table["rows"][0]["cells"][:3] == ["a", "small", 1]


def test_a_version_with_no_columns_prints_the_age(client: TestClient) -> None:
    assert client.post(WIDGETS, json=widget("a")).status_code == 201
    table = client.get("/apis/example.com/v1beta1/namespaces/ns/widgets", headers=TABLE).json()
    assert [c["name"] for c in table["columnDefinitions"]] == ["Name", "Age"]


def test_another_version_shows_the_object_with_its_api_version(client: TestClient) -> None:
    assert client.post(WIDGETS, json=widget("a")).status_code == 201
    got = client.get("/apis/example.com/v1beta1/namespaces/ns/widgets/a").json()
    assert got["apiVersion"] == "example.com/v1beta1" and got["spec"]["size"] == "small"
    listed = client.get("/apis/example.com/v1beta1/namespaces/ns/widgets").json()
    assert listed["apiVersion"] == "example.com/v1beta1" and listed["kind"] == "WidgetList"


def test_unknown_fields_are_pruned_with_a_warning_or_refused_when_strict(client: TestClient) -> None:
    r = client.post(WIDGETS, json=widget("a", colour="red", free={"any": {"thing": 1}}))
    assert r.status_code == 201 and r.headers["warning"] == '299 - "unknown field \\"spec.colour\\""'
    assert "colour" not in r.json()["spec"] and r.json()["spec"]["free"] == {"any": {"thing": 1}}
    strict = client.post(WIDGETS + "?fieldValidation=Strict", json=widget("b", colour="red"))
    assert strict.status_code == 400
    assert strict.json()["message"] == ('Widget in version "v1" cannot be handled as a Widget: strict decoding '
                                        'error: unknown field "spec.colour"')
    ignored = client.post(WIDGETS + "?fieldValidation=Ignore", json=widget("c", colour="red"))
    assert ignored.status_code == 201 and "warning" not in ignored.headers and "colour" not in ignored.json()["spec"]


@pytest.mark.parametrize(("spec", "message"), [
    ({"replicas": 200}, "spec.replicas: Invalid value: 200: spec.replicas in body should be less than or equal to 100"),
    ({"replicas": -1}, "spec.replicas: Invalid value: -1: spec.replicas in body should be greater than or equal to 0"),
    ({"size": "x"}, 'spec.size: Unsupported value: "x": supported values: "small", "large"'),
    ({"replicas": "two"}, 'spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: '
                          '"string"'),
    ({"ports": [{"name": "a"}, {"name": "a"}]}, 'spec.ports[1]: Duplicate value: map[string]interface {}{"name":"a"}'),
    ({"ports": [{"port": 1}]}, "spec.ports[0].name: Required value"),
])
def test_an_invalid_custom_resource_is_refused_with_upstreams_message(client: TestClient, spec: dict[str, Any],
                                                                      message: str) -> None:
    r = client.post(WIDGETS, json=widget("a", **spec))
    assert r.status_code == 422, r.text
    assert r.json()["message"] == f'Widget.example.com "a" is invalid: {message}'
    assert r.json()["reason"] == "Invalid"


def test_a_required_field_is_named(client: TestClient) -> None:
    obj = widget("a")
    del obj["spec"]["size"]
    r = client.post(WIDGETS, json=obj)
    assert r.json()["message"] == 'Widget.example.com "a" is invalid: spec.size: Required value'


def test_status_is_written_through_its_subresource_only_and_generation_follows_the_spec(client: TestClient) -> None:
    created = client.post(WIDGETS, json={**widget("a"), "status": {"phase": "Ready"}}).json()
    assert "status" not in created and created["metadata"]["generation"] == 1
    body = {**created, "status": {"phase": "Ready"}}
    status = client.put(f"{WIDGETS}/a/status", json=body).json()
    assert status["status"] == {"phase": "Ready"} and status["metadata"]["generation"] == 1
    changed = {**status, "spec": {**status["spec"], "size": "large"}, "status": {"phase": "Lost"}}
    main = client.put(f"{WIDGETS}/a", json=changed).json()
    assert main["status"] == {"phase": "Ready"} and main["metadata"]["generation"] == 2


def test_merge_and_json_patches_apply_and_a_strategic_merge_patch_is_refused(client: TestClient) -> None:
    assert client.post(WIDGETS, json=widget("a")).status_code == 201
    merged = client.patch(f"{WIDGETS}/a", content=b'{"spec":{"replicas":3}}',
                          headers={"content-type": "application/merge-patch+json"})
    assert merged.status_code == 200 and merged.json()["spec"]["replicas"] == 3
    json_patched = client.patch(f"{WIDGETS}/a", content=b'[{"op":"replace","path":"/spec/size","value":"large"}]',
                                headers={"content-type": "application/json-patch+json"})
    assert json_patched.status_code == 200 and json_patched.json()["spec"]["size"] == "large"
    strategic = client.patch(f"{WIDGETS}/a", content=b'{"spec":{"replicas":4}}',
                             headers={"content-type": "application/strategic-merge-patch+json"})
    assert strategic.status_code == 415
    assert strategic.json()["message"] == ("the body of the request was in an unknown format - accepted media types "
                                           "include: application/json-patch+json, application/merge-patch+json, "
                                           "application/apply-patch+yaml")
    invalid = client.patch(f"{WIDGETS}/a", content=b'{"spec":{"replicas":300}}',
                           headers={"content-type": "application/merge-patch+json"})
    assert invalid.status_code == 422


def test_server_side_apply_creates_and_updates_a_custom_resource(client: TestClient) -> None:
    body = b"apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: a}\nspec: {size: large}\n"
    headers = {"content-type": "application/apply-patch+yaml"}
    r = client.patch(f"{WIDGETS}/a?fieldManager=me", content=body, headers=headers)
    assert r.status_code == 201, r.text
    assert r.json()["spec"] == {"size": "large", "replicas": 1}


def test_selectors_and_deletecollection(client: TestClient) -> None:
    for name, tier in (("a", "web"), ("b", "db")):
        obj = widget(name)
        obj["metadata"]["labels"] = {"tier": tier}
        assert client.post(WIDGETS, json=obj).status_code == 201
    names = [i["metadata"]["name"] for i in client.get(WIDGETS + "?labelSelector=tier=db").json()["items"]]
    assert names == ["b"]
    names = [i["metadata"]["name"] for i in client.get(WIDGETS + "?fieldSelector=metadata.name=a").json()["items"]]
    assert names == ["a"]
    assert client.delete(WIDGETS + "?labelSelector=tier=web").status_code == 200
    assert [i["metadata"]["name"] for i in client.get(WIDGETS).json()["items"]] == ["b"]


def test_openapi_describes_the_custom_resource(client: TestClient) -> None:
    root = client.get("/openapi/v3").json()["paths"]
    assert "apis/example.com/v1" in root and "apis/apiextensions.k8s.io/v1" in root
    doc = client.get(root["apis/example.com/v1"]["serverRelativeURL"]).json()
    schema = doc["components"]["schemas"]["com.example.v1.Widget"]
    assert schema["x-kubernetes-group-version-kind"] == [{"group": "example.com", "version": "v1", "kind": "Widget"}]
    assert schema["properties"]["spec"]["properties"]["size"]["enum"] == ["small", "large"]
    assert "/apis/example.com/v1/namespaces/{namespace}/widgets/{name}" in doc["paths"]
    assert "com.example.v1.Widget" in client.get("/openapi/v2").json()["definitions"]


def test_deleting_the_crd_deletes_its_resources_and_stops_serving_them(client: TestClient) -> None:
    assert client.post(WIDGETS, json=widget("a")).status_code == 201
    assert client.delete(f"{CRDS}/widgets.example.com").status_code == 202
    deadline = time.monotonic() + 5
    while client.get(f"{CRDS}/widgets.example.com").status_code != 404 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert client.get(f"{CRDS}/widgets.example.com").status_code == 404
    assert client.get(WIDGETS).status_code == 404
    assert "example.com" not in [g["name"] for g in client.get("/apis").json()["groups"]]
    again = client.post(CRDS, json=widget_crd())
    assert again.status_code == 201, again.text
    assert client.get(WIDGETS).json()["items"] == []  # the old objects went with the old CRD


def test_a_crd_whose_plural_a_built_in_resource_uses_is_not_served(client: TestClient) -> None:
    pods = copy.deepcopy(widget_crd())
    pods["metadata"]["name"] = "pods.example.org"
    pods["spec"].update(group="example.org", names={"plural": "pods", "kind": "Pod"})
    assert client.post(CRDS, json=pods).status_code == 201
    assert client.get("/apis/example.org/v1/namespaces/ns/pods").status_code == 404


def test_a_namespace_being_deleted_deletes_its_custom_resources_and_names_those_held() -> None:
    from cluster import Cluster, make_namespaces

    from dralloc.store import NotFound

    c = Cluster()
    make_namespaces(c.http, "ns")
    c.post(CRDS, widget_crd())
    c.post(WIDGETS, widget("free"))
    c.post(WIDGETS, {**widget("held"), "metadata": {"name": "held", "finalizers": ["example.com/keep"]}})
    c.http.delete("/api/v1/namespaces/ns")
    c.settle()
    assert [w["metadata"]["name"] for w in c.store.list("widgets", "ns")[0]] == ["held"]
    conditions = {x["type"]: x for x in c.store.get("namespaces", "", "ns")["status"]["conditions"]}
    assert conditions["NamespaceContentRemaining"]["message"] == \
        "Some resources are remaining: widgets.example.com has 1 resource instances"
    held = c.http.get(f"{WIDGETS}/held").json()
    c.http.put(f"{WIDGETS}/held", json={**held, "metadata": {**held["metadata"], "finalizers": []}})
    c.settle()
    with pytest.raises(NotFound):
        c.store.get("namespaces", "", "ns")


def test_a_crds_cel_rules_hold_on_its_resources(client: TestClient) -> None:
    """NVIDIA's ComputeDomain: ``self == oldSelf`` keeps its spec immutable."""
    path = Path(__file__).parent / "data" / "computedomains.resource.nvidia.com.yaml"
    assert client.post(CRDS, json=yaml.safe_load(path.read_text())).status_code == 201
    domains = "/apis/resource.nvidia.com/v1beta1/namespaces/ns/computedomains"
    body = {"apiVersion": "resource.nvidia.com/v1beta1", "kind": "ComputeDomain", "metadata": {"name": "imex"},
            "spec": {"numNodes": 1, "channel": {"resourceClaimTemplate": {"name": "t"}}}}
    created = client.post(domains, json=body)
    assert created.status_code == 201, created.text
    changed = {**created.json(), "spec": {**created.json()["spec"], "numNodes": 2}}
    r = client.put(f"{domains}/imex", json=changed)
    assert r.status_code == 422
    assert r.json()["message"] == ('ComputeDomain.resource.nvidia.com "imex" is invalid: spec: Invalid value: '
                                   '"object": A computeDomain.spec is immutable')
    bad_rule = widget_crd()
    bad_rule["metadata"]["name"] = "gadgets.example.com"
    bad_rule["spec"]["names"] = {"plural": "gadgets", "kind": "Gadget"}
    bad_rule["spec"]["versions"][1]["schema"] = {"openAPIV3Schema": {
        "type": "object", "x-kubernetes-validations": [{"rule": "self.spec.size =="}]}}
    refused = client.post(CRDS, json=bad_rule)
    assert refused.status_code == 422
    assert "spec.versions[1].schema.openAPIV3Schema.x-kubernetes-validations[0].rule: Invalid value: " \
           'apiextensions.ValidationRule{Rule:"self.spec.size =="' in refused.json()["message"]


def test_selectable_fields_are_field_selectors_and_others_are_refused(client: TestClient) -> None:
    crd = widget_crd()
    crd["metadata"]["name"] = "gadgets.example.com"
    crd["spec"]["names"] = {"plural": "gadgets", "kind": "Gadget"}
    crd["spec"]["versions"][1]["selectableFields"] = [{"jsonPath": ".spec.size"}]
    assert client.post(CRDS, json=crd).status_code == 201
    gadgets = "/apis/example.com/v1/namespaces/ns/gadgets"
    for name, size in (("a", "small"), ("b", "large")):
        assert client.post(gadgets, json={**widget(name, size=size), "kind": "Gadget"}).status_code == 201
    found = client.get(gadgets + "?fieldSelector=spec.size=large").json()["items"]
    assert [g["metadata"]["name"] for g in found] == ["b"]
    refused = client.get(gadgets + "?fieldSelector=spec.replicas=1")
    assert refused.status_code == 400 and refused.json()["message"] == "field label not supported: spec.replicas"


def test_a_default_added_to_the_schema_later_shows_on_read(client: TestClient) -> None:
    assert client.post(WIDGETS, json=widget("a")).status_code == 201
    crd = client.get(f"{CRDS}/widgets.example.com").json()
    schema = crd["spec"]["versions"][1]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    schema["properties"]["selector"]["default"] = "all"
    assert client.put(f"{CRDS}/widgets.example.com", json=crd).status_code == 200
    assert client.get(WIDGETS).json()["items"][0]["spec"]["selector"] == "all"
    assert client.get(f"{WIDGETS}/a").json()["spec"]["selector"] == "all"


def test_a_crd_deletion_a_stopped_server_began_is_finished_when_it_starts_again(tmp_path: Path) -> None:
    from starlette.testclient import TestClient

    from dralloc.server import create_app
    from dralloc.store import SQLiteStore

    db = str(tmp_path / "db.sqlite")
    first = TestClient(create_app(SQLiteStore(db)))
    assert first.post("/api/v1/namespaces", json={"metadata": {"name": "ns"}}).status_code == 201
    assert first.post(CRDS, json=widget_crd()).status_code == 201
    assert first.post(WIDGETS, json=widget("a")).status_code == 201
    store = first.app.api.store  # type: ignore[attr-defined]
    # what a server stopped right after marking the CRD leaves behind
    store.update("customresourcedefinitions", "", "widgets.example.com",
                 lambda old, rv: {**old, "metadata": {**old["metadata"], "resourceVersion": rv,
                                                      "deletionTimestamp": "2026-01-01T00:00:00Z"}})
    store.close()
    with TestClient(create_app(SQLiteStore(db))) as second:  # (the lifespan: started)
        deadline = time.monotonic() + 5
        while second.get(f"{CRDS}/widgets.example.com").status_code != 404 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert second.get(f"{CRDS}/widgets.example.com").status_code == 404
        assert second.app.api.store.list("widgets")[0] == []  # type: ignore[attr-defined]


def test_server_side_apply_refuses_a_field_the_schema_lacks(client: TestClient) -> None:
    body = b"apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: a}\nspec: {size: large, colour: red}\n"
    r = client.patch(f"{WIDGETS}/a?fieldManager=me", content=body,
                     headers={"content-type": "application/apply-patch+yaml"})
    assert r.status_code == 400
    assert r.json()["message"] == ("failed to create typed patch object (/a; example.com/v1, Kind=Widget): "
                                   ".spec.colour: field not declared in schema")


def test_a_deprecated_version_warns_on_every_request() -> None:
    http = api_client("ns")
    crd = widget_crd()
    crd["spec"]["versions"][0].update(deprecated=True)
    crd["spec"]["versions"][1].update(deprecated=True, deprecationWarning="example.com/v1 is going away; use v2")
    assert http.post(CRDS, json=crd).status_code == 201
    old = http.get("/apis/example.com/v1beta1/namespaces/ns/widgets")
    assert old.headers["warning"] == '299 - "example.com/v1beta1 Widget is deprecated"'
    assert http.get(WIDGETS).headers["warning"] == '299 - "example.com/v1 is going away; use v2"'


def test_a_merge_patch_removing_an_unknown_field_is_not_refused_for_it(client: TestClient) -> None:
    assert client.post(WIDGETS, json=widget("a")).status_code == 201
    r = client.patch(f"{WIDGETS}/a?fieldValidation=Strict", content=b'{"spec":{"colour":null,"replicas":3}}',
                     headers={"content-type": "application/merge-patch+json"})
    assert r.status_code == 200 and r.json()["spec"]["replicas"] == 3, r.text


def test_a_cluster_scoped_custom_resource_has_no_namespace(client: TestClient) -> None:
    crd = widget_crd()
    crd["metadata"]["name"] = "racks.example.com"
    crd["spec"].update(scope="Cluster", names={"plural": "racks", "kind": "Rack"})
    assert client.post(CRDS, json=crd).status_code == 201
    rack = {**widget("r1"), "kind": "Rack"}
    rack["metadata"]["namespace"] = "ns"  # cleared, as for any cluster-scoped object
    created = client.post("/apis/example.com/v1/racks", json=rack)
    assert created.status_code == 201 and "namespace" not in created.json()["metadata"]
    assert client.get("/apis/example.com/v1/namespaces/ns/racks").status_code == 404
    entry = next(r for r in client.get("/apis/example.com/v1").json()["resources"] if r["name"] == "racks")
    assert entry["namespaced"] is False


def test_an_update_is_not_refused_for_a_value_a_stricter_schema_refuses_but_the_update_left_alone(
        client: TestClient) -> None:
    """Validation ratcheting: the stored object's old values stay valid enough to update its other fields."""
    assert client.post(WIDGETS, json=widget("a", replicas=50, selector="x")).status_code == 201
    crd = client.get(f"{CRDS}/widgets.example.com").json()
    crd["spec"]["versions"][1]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["replicas"][
        "maximum"] = 10
    assert client.put(f"{CRDS}/widgets.example.com", json=crd).status_code == 200
    current = client.get(f"{WIDGETS}/a").json()
    other = client.put(f"{WIDGETS}/a", json={**current, "spec": {**current["spec"], "selector": "y"}})
    assert other.status_code == 200, other.text
    changed = client.put(f"{WIDGETS}/a", json={**other.json(), "spec": {**other.json()["spec"], "replicas": 40}})
    assert changed.status_code == 422
    assert "spec.replicas: Invalid value: 40: spec.replicas in body should be less than or equal to 10" in \
        changed.json()["message"]


_JSON = st.recursive(st.none() | st.booleans() | st.integers(-3, 3) | st.sampled_from(["object", "array", "string",
                                                                                       "integer", "a", "^x$", "("]),
                     lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
                         st.sampled_from(["type", "properties", "items", "required", "enum", "default", "pattern",
                                          "maximum", "minLength", "additionalProperties", "nullable", "allOf",
                                          "x-kubernetes-validations", "x-kubernetes-list-type", "rule", "spec",
                                          "x-kubernetes-preserve-unknown-fields", "x-kubernetes-int-or-string",
                                          "format", "x-kubernetes-list-map-keys", "size"]), inner, max_size=4),
                     max_leaves=12)


@pytest.mark.slow
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(schema=_JSON, value=_JSON)
def test_garbage_schemas_and_values_never_get_a_500(client: TestClient, schema: Any, value: Any) -> None:
    crd = widget_crd()
    crd["metadata"]["name"] = "junks.example.com"
    crd["spec"]["names"] = {"plural": "junks", "kind": "Junk"}
    crd["spec"]["versions"][1]["schema"] = {"openAPIV3Schema": {"type": "object", "properties": {"spec": schema}}}
    created = client.post(CRDS, json=crd)
    assert created.status_code in (201, 400, 422), created.text
    if created.status_code == 201:
        r = client.post("/apis/example.com/v1/namespaces/ns/junks",
                        json={"apiVersion": "example.com/v1", "kind": "Junk", "metadata": {"name": "j"}, "spec": value})
        assert r.status_code in (201, 400, 422), r.text
        assert client.get("/apis/example.com/v1/namespaces/ns/junks", headers=TABLE).status_code == 200
        client.delete("/apis/example.com/v1/namespaces/ns/junks/j")
        client.delete(f"{CRDS}/junks.example.com")
        deadline = time.monotonic() + 5
        while client.get(f"{CRDS}/junks.example.com").status_code != 404 and time.monotonic() < deadline:
            time.sleep(0.02)


def test_a_schema_value_of_the_wrong_json_type_is_refused_as_gos_decoder_refuses_it(client: TestClient) -> None:
    crd = widget_crd()
    crd["metadata"]["name"] = "junks.example.com"
    crd["spec"]["names"] = {"plural": "junks", "kind": "Junk"}
    crd["spec"]["versions"][1]["schema"] = {"openAPIV3Schema": {"type": "object", "properties": {
        "spec": {"type": "object", "properties": [{"a": 1}]}}}}
    r = client.post(CRDS, json=crd)
    assert r.status_code == 400
    assert r.json()["message"] == ('CustomResourceDefinition in version "v1" cannot be handled as a '
                                   "CustomResourceDefinition: json: cannot unmarshal array into Go struct field "
                                   "JSONSchemaProps.properties of type map[string]v1.JSONSchemaProps")


def test_cel_rules_run_beside_schema_errors_unless_one_blocks_them() -> None:
    http = api_client("ns")
    crd = widget_crd()
    spec = crd["spec"]["versions"][1]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    spec["x-kubernetes-validations"] = [{"rule": "self.replicas < 50", "message": "too many"}]
    assert http.post(CRDS, json=crd).status_code == 201
    both = http.post(WIDGETS, json=widget("a", replicas=60, ports=[{"name": "a"}, {"name": "a"}])).json()["message"]
    assert both == ('Widget.example.com "a" is invalid: [spec.ports[1]: Duplicate value: map[string]interface {}{"name":"a"}, '
                    'spec: Invalid value: "object": too many]')
    blocked = http.post(WIDGETS, json=widget("a", replicas=60, size="huge")).json()["message"]
    assert blocked == ('Widget.example.com "a" is invalid: [spec.size: Unsupported value: "huge": supported values: '
                       '"small", "large", <nil>: Invalid value: "null": some validation rules were not checked because '
                       'the object was invalid; correct the existing errors to complete validation]')


def test_lists_of_a_custom_resource_are_of_its_list_kind_and_discovery_says_its_singular() -> None:
    http = api_client("ns")
    crd = widget_crd()
    crd["spec"]["names"].update(listKind="WidgetCollection", singular="gadget")
    assert http.post(CRDS, json=crd).status_code == 201
    assert http.post(WIDGETS, json=widget("a")).status_code == 201
    plain = http.get(WIDGETS)  # (the list answered from the stored text)
    assert plain.json()["kind"] == "WidgetCollection" and [i["metadata"]["name"] for i in plain.json()["items"]] == ["a"]
    selected = http.get(WIDGETS, params={"labelSelector": "!x"})
    assert selected.json()["kind"] == "WidgetCollection"
    older = http.get("/apis/example.com/v1beta1/namespaces/ns/widgets")
    assert older.json()["kind"] == "WidgetCollection" and older.json()["apiVersion"] == "example.com/v1beta1"
    as_yaml = yaml.safe_load(http.get(WIDGETS, headers={"accept": "application/yaml"}).text)
    assert as_yaml["kind"] == "WidgetCollection"
    resources = http.get("/apis/example.com/v1").json()["resources"]
    assert next(r for r in resources if r["name"] == "widgets")["singularName"] == "gadget"
    deleted = http.delete(WIDGETS)
    assert deleted.status_code == 200 and deleted.json()["kind"] == "WidgetCollection"


def test_rule_costs_are_limited_when_the_crd_is_written_and_when_a_resource_is() -> None:
    http = api_client("ns")

    def names_crd(rule: str, **bounds: Any) -> dict[str, Any]:
        names = {"type": "array", "items": {"type": "string", **bounds.get("item", {})},
                 "x-kubernetes-validations": [{"rule": rule}], **bounds.get("list", {})}
        crd = widget_crd()
        crd["spec"]["versions"] = [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": {
            "type": "object", "properties": {"spec": {"type": "object", "properties": {"names": names}}}}}}]
        return crd

    refused = http.post(CRDS, json=names_crd("self.all(n, int(n.split('/')[0]) >= 1)"))
    assert refused.status_code == 422
    assert ("spec.versions[0].schema.openAPIV3Schema.properties[spec].properties[names].x-kubernetes-validations[0]"
            ".rule: Forbidden: estimated rule cost exceeds budget by factor of more than 100x") in refused.json()["message"]
    pairs = "self.all(a, self.all(b, a != b || a == b))"
    assert http.post(CRDS, json=names_crd(pairs, item={"maxLength": 10}, list={"maxItems": 1000})).status_code == 201
    many = http.post(WIDGETS, json={"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"},
                                    "spec": {"names": [f"n{i}" for i in range(1000)]}})
    assert many.status_code == 422
    assert many.json()["message"] == (
        'Widget.example.com "w" is invalid: spec.names: Invalid value: "array": \'operation cancelled: actual cost '
        "limit exceeded': no further validation rules will be run due to call cost exceeds limit for rule: "
        f"{pairs}")
    few = http.post(WIDGETS, json={"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"},
                                   "spec": {"names": ["a", "b"]}})
    assert few.status_code == 201
