"""Server-side apply and managedFields over the schema's list types, as structured-merge-diff computes them:
associative lists owned and merged item by item, sets value by value, atomic values whole, and the ``.``
entries of what an apply owns and of what an update created."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dralloc.server.apply.fieldmerge import merge
from dralloc.server.apply.fieldsets import compare, config_fields, created_fields
from dralloc.server.apply.fieldsv1 import parse_fields, path_string, to_fields
from dralloc.server.apply.fieldtypes import KINDS, kind_type, skeleton
from dralloc.server.apply.managed_fields import _STRIPPED, apply, record_update
from dralloc.server.http.errors import ApiError


def pod(*containers: dict[str, Any], **meta: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default", **meta},
            "spec": {"containers": list(containers)}}


def fields(obj: dict[str, Any], manager: str) -> dict[str, Any]:
    [entry] = [e for e in obj["metadata"]["managedFields"] if e["manager"] == manager]
    return entry["fieldsV1"]


def test_a_pod_apply_owns_containers_ports_and_env_by_key_with_dot_entries_as_kube_apiserver_writes_them() -> None:
    config = pod({"name": "app", "image": "nginx", "ports": [{"containerPort": 80}],
                  "env": [{"name": "MODE", "value": "fast"}]}, finalizers=["example.com/keep"], labels={"a": "1"})
    created = apply(None, config, "alice", False, "v1")
    expected = ('{"f:metadata":{"f:finalizers":{"v:\\"example.com/keep\\"":{}},"f:labels":{"f:a":{}}},'
                '"f:spec":{"f:containers":{"k:{\\"name\\":\\"app\\"}":{".":{},'
                '"f:env":{"k:{\\"name\\":\\"MODE\\"}":{".":{},"f:name":{},"f:value":{}}},"f:image":{},"f:name":{},'
                '"f:ports":{"k:{\\"containerPort\\":80,\\"protocol\\":\\"TCP\\"}":{".":{},"f:containerPort":{}}}}}}}')
    assert json.dumps(fields(created, "alice"), separators=(",", ":")) == expected


def test_a_create_owns_what_it_created_with_dot_entries_and_the_value_structs_a_go_object_always_has() -> None:
    new = pod({"name": "app", "image": "nginx", "env": [{"name": "X", "value": "1"}]}, labels={"run": "app"})
    record_update(None, new, "kubectl-run", "v1")
    assert fields(new, "kubectl-run") == {
        "f:metadata": {"f:labels": {".": {}, "f:run": {}}},
        # spec and containers exist in every Pod; a container is new, so is its env list and its item
        "f:spec": {"f:containers": {'k:{"name":"app"}': {".": {}, "f:env": {".": {}, 'k:{"name":"X"}': {
            ".": {}, "f:name": {}, "f:value": {}}}, "f:image": {}, "f:name": {}, "f:resources": {}}}}}


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_the_create_fast_path_records_what_the_general_comparison_records(kind: str) -> None:
    obj = _sample(kind)
    node = kind_type(kind)
    changed, _ = compare(skeleton(node), obj, node, {("f:metadata", "f:managedFields")})
    tree = created_fields(obj, node, skeleton(node), {"f:apiVersion": True, "f:kind": True, "f:metadata": {
        p[1]: True for p in _STRIPPED if len(p) == 2}})
    assert json.dumps(tree) == json.dumps(to_fields(changed - _STRIPPED))  # the same, in the same order


def _sample(kind: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": kind, "metadata": {"name": "x", "uid": "u", "labels": {"a": "b"},
                                                          "finalizers": ["f"], "ownerReferences": [{"uid": "o"}]},
            "spec": {"containers": [{"name": "c", "ports": [{"containerPort": 1}, {"containerPort": 1,
                                                                                   "protocol": "UDP"}]}],
                     "devices": {"requests": [{"name": "r"}]}, "pool": {"name": "p"}, "podCIDRs": ["10.0.0.0/24"],
                     "nodeSelector": {"nodeSelectorTerms": []}},
            "status": {"conditions": [{"type": "Ready", "status": "True"}], "devices": [
                {"driver": "d", "pool": "p", "device": "g", "conditions": [{"type": "Up"}]}],
                "reservedFor": [{"uid": "1", "name": "a", "resource": "pods"}]}}


names = st.sampled_from(["a", "b", "c", "x-1"])
_containers = st.lists(st.fixed_dictionaries({"name": names}, optional={
    "image": st.sampled_from(["nginx", "busybox"]),
    "ports": st.lists(st.fixed_dictionaries({"containerPort": st.integers(1, 3)},
                                            optional={"protocol": st.sampled_from(["TCP", "UDP"])}), max_size=3),
    "env": st.lists(st.fixed_dictionaries({"name": names}, optional={"value": st.text(max_size=2)}), max_size=3),
    "resources": st.fixed_dictionaries({}, optional={"limits": st.fixed_dictionaries({"cpu": st.just("1")})}),
}), max_size=3)
_pods = st.builds(lambda cs, labels, fins: pod(*cs, labels=labels, finalizers=fins), _containers,
                  st.dictionaries(names, st.just("v"), max_size=2), st.lists(names, max_size=3))


@settings(max_examples=150, deadline=None)
@given(_pods)
def test_the_create_fast_path_agrees_with_the_comparison_for_any_pod(obj: dict[str, Any]) -> None:
    node = kind_type("Pod")
    changed, _ = compare(skeleton(node), obj, node)
    tree = created_fields(obj, node, skeleton(node), {"f:apiVersion": True, "f:kind": True, "f:metadata": {
        p[1]: True for p in _STRIPPED if len(p) == 2}})
    assert json.dumps(tree) == json.dumps(to_fields(changed - _STRIPPED))


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(_pods, _pods)
def test_an_update_takes_over_exactly_the_paths_it_changed_and_everybody_keeps_the_rest(
        first: dict[str, Any], second: dict[str, Any]) -> None:
    old = copy.deepcopy(first)
    record_update(None, old, "creator", "v1")
    new = {**copy.deepcopy(second), "metadata": {**second["metadata"], "managedFields": old["metadata"].get(
        "managedFields", [])}}
    record_update(old, new, "editor", "v1")
    node = kind_type("Pod")
    changed, removed = compare(old, new, node, {("f:metadata", "f:managedFields")})
    owners = {e["manager"]: parse_fields(e["fieldsV1"]) for e in new["metadata"].get("managedFields", [])}
    assert owners.get("editor", set()) == changed - _STRIPPED
    creator_before = parse_fields(fields(old, "creator")) if old["metadata"].get("managedFields") else set()
    assert owners.get("creator", set()) == creator_before - changed - removed


def test_two_appliers_of_different_containers_do_not_conflict_and_both_stay_owned() -> None:
    live = apply(None, pod({"name": "app", "image": "nginx"}), "alice", False, "v1")
    live = apply(live, pod({"name": "side", "image": "busybox"}), "bob", False, "v1")
    assert [c["name"] for c in live["spec"]["containers"]] == ["app", "side"]
    assert list(fields(live, "alice")["f:spec"]["f:containers"]) == ['k:{"name":"app"}']
    assert list(fields(live, "bob")["f:spec"]["f:containers"]) == ['k:{"name":"side"}']


def test_a_conflict_on_one_containers_image_names_the_item_by_its_key() -> None:
    live = apply(None, pod({"name": "app", "image": "nginx"}), "alice", False, "v1")
    with pytest.raises(ApiError) as err:
        apply(live, pod({"name": "app", "image": "nginx:2"}), "bob", False, "v1")
    assert err.value.code == 409
    assert str(err.value) == 'Apply failed with 1 conflict: conflict with "alice": .spec.containers[name="app"].image'
    assert err.value.details == {"causes": [{"reason": "FieldManagerConflict", "message": 'conflict with "alice"',
                                             "field": '.spec.containers[name="app"].image'}]}
    forced = apply(live, pod({"name": "app", "image": "nginx:2"}), "bob", True, "v1")
    assert "f:image" not in fields(forced, "alice")["f:spec"]["f:containers"]['k:{"name":"app"}']
    assert forced["spec"]["containers"][0]["image"] == "nginx:2"


def test_several_conflicts_are_listed_per_manager_as_kube_apiserver_words_them() -> None:
    live = apply(None, pod({"name": "app", "image": "nginx", "ports": [{"containerPort": 80, "name": "web"}]},
                           labels={"tier": "a"}), "alice", False, "v1")
    change = pod({"name": "app", "image": "nginx:2", "ports": [{"containerPort": 80, "name": "http"}]},
                 labels={"tier": "b"})
    with pytest.raises(ApiError) as err:
        apply(live, change, "bob", False, "v1")
    assert str(err.value) == (
        'Apply failed with 3 conflicts: conflicts with "alice":\n- .metadata.labels.tier\n'
        '- .spec.containers[name="app"].image\n'
        '- .spec.containers[name="app"].ports[containerPort=80,protocol="TCP"].name')


def test_an_applier_dropping_its_container_removes_it_and_another_managers_container_stays() -> None:
    live = apply(None, pod({"name": "app", "image": "nginx"}, finalizers=["a.example.com/f"]), "alice", False, "v1")
    live = apply(live, pod({"name": "side", "image": "busybox"}, finalizers=["b.example.com/f"]), "bob", False, "v1")
    assert live["metadata"]["finalizers"] == ["a.example.com/f", "b.example.com/f"]
    dropped = apply(live, pod({"name": "app", "image": "nginx"}), "alice", False, "v1")
    assert dropped["metadata"]["finalizers"] == ["b.example.com/f"]
    dropped = apply(dropped, pod(), "alice", False, "v1")
    assert [c["name"] for c in dropped["spec"]["containers"]] == ["side"]
    assert [e["manager"] for e in dropped["metadata"]["managedFields"]] == ["bob"]


def test_an_item_another_manager_also_applies_survives_its_first_applier_dropping_it() -> None:
    live = apply(None, pod({"name": "app", "image": "nginx"}), "alice", False, "v1")
    live = apply(live, pod({"name": "app", "image": "nginx"}), "bob", False, "v1")  # same value: no conflict
    dropped = apply(live, pod(), "alice", False, "v1")
    assert dropped["spec"]["containers"] == [{"name": "app", "image": "nginx"}]


def test_merged_list_items_follow_the_configurations_order_and_others_keep_their_place() -> None:
    node = KINDS["Pod"].child("spec").child("containers")
    live = [{"name": n} for n in "abc"]
    assert [c["name"] for c in merge(live, [{"name": "c"}, {"name": "a"}], node)] == ["b", "c", "a"]
    assert [c["name"] for c in merge(live, [{"name": "d"}], node)] == ["a", "b", "c", "d"]


def test_atomic_lists_and_structs_are_owned_and_replaced_whole() -> None:
    slice_ = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "s"},
              "spec": {"driver": "d.example.com", "pool": {"name": "p", "generation": 1, "resourceSliceCount": 1},
                       "nodeSelector": {"nodeSelectorTerms": [{"matchExpressions": [
                           {"key": "zone", "operator": "In", "values": ["a"]}]}]},
                       "devices": [{"name": "g0", "attributes": {"model": {"string": "x"}}}, {"name": "g1"}]}}
    live = apply(None, slice_, "driver", False, "resource.k8s.io/v1")
    spec = fields(live, "driver")["f:spec"]
    assert spec["f:devices"] == {} and spec["f:nodeSelector"] == {}
    other = copy.deepcopy(slice_)
    other["spec"]["devices"] = [{"name": "g1"}]
    with pytest.raises(ApiError) as err:
        apply(live, other, "other", False, "resource.k8s.io/v1")
    assert str(err.value).endswith(': conflict with "driver": .spec.devices')
    forced = apply(live, other, "other", True, "resource.k8s.io/v1")
    assert forced["spec"]["devices"] == [{"name": "g1"}]


def test_claim_status_devices_are_keyed_by_driver_pool_device_and_share_id_when_set() -> None:
    claim = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "c"},
             "status": {"devices": [{"driver": "d", "pool": "p", "device": "g0"},
                                    {"driver": "d", "pool": "p", "device": "g0", "shareID": "s1", "data": {"a": 1}}],
                        "reservedFor": [{"resource": "pods", "name": "a", "uid": "u1"}]}}
    owned = {path_string(p) for p in config_fields(claim, kind_type("ResourceClaim"), "")}
    assert '.status.devices[device="g0",driver="d",pool="p"]' in owned
    assert '.status.devices[device="g0",driver="d",pool="p",shareID="s1"].data' in owned
    assert '.status.reservedFor[uid="u1"].name' in owned


def test_status_applies_record_their_subresource_and_never_own_the_spec() -> None:
    claim = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "c"},
             "spec": {"devices": {"requests": []}}, "status": {"reservedFor": [{"resource": "pods", "name": "a",
                                                                                "uid": "u1"}]}}
    live = apply(None, claim, "kubelet", False, "resource.k8s.io/v1", "status")
    [entry] = live["metadata"]["managedFields"]
    assert entry["subresource"] == "status" and list(entry["fieldsV1"]) == ["f:status"]


def test_an_update_that_adds_a_label_map_and_a_finalizer_owns_the_new_map_and_list_itself() -> None:
    old = pod({"name": "app", "image": "nginx"})
    record_update(None, old, "creator", "v1")
    new = copy.deepcopy(old)
    new["metadata"]["labels"] = {"x": "1"}
    new["metadata"]["finalizers"] = ["f"]
    record_update(old, new, "editor", "v1")
    assert fields(new, "editor") == {"f:metadata": {"f:finalizers": {".": {}, 'v:"f"': {}},
                                                    "f:labels": {".": {}, "f:x": {}}}}
    assert [e["manager"] for e in new["metadata"]["managedFields"]] == ["creator", "editor"]


def test_an_update_removing_a_field_takes_it_from_its_owner_without_owning_anything() -> None:
    old = pod({"name": "app", "image": "nginx"}, labels={"a": "1", "b": "2"})
    record_update(None, old, "creator", "v1")
    new = copy.deepcopy(old)
    del new["metadata"]["labels"]["b"]
    record_update(old, new, "editor", "v1")
    assert [e["manager"] for e in new["metadata"]["managedFields"]] == ["creator"]
    assert fields(new, "creator")["f:metadata"]["f:labels"] == {".": {}, "f:a": {}}


def test_paths_print_as_structured_merge_diff_prints_them() -> None:
    assert path_string(("f:metadata", "f:finalizers", 'v:"a"')) == '.metadata.finalizers[="a"]'
    assert path_string(("f:spec", "f:containers", 'k:{"name":"app"}', "f:ports",
                        'k:{"containerPort":80,"protocol":"TCP"}')) == \
        '.spec.containers[name="app"].ports[containerPort=80,protocol="TCP"]'


def test_keys_are_written_as_go_writes_json() -> None:
    node = kind_type("Pod")
    owned = config_fields(pod(finalizers=["a<b&c", "ü"]), node, "")
    tree = to_fields(owned)
    assert list(tree["f:metadata"]["f:finalizers"]) == ['v:"a\\u003cb\\u0026c"', 'v:"ü"']


def test_a_configuration_with_duplicate_keys_is_rejected_with_the_list_path() -> None:
    with pytest.raises(ApiError) as err:
        apply(None, pod({"name": "a"}, {"name": "a"}), "m", False, "v1")
    assert err.value.code == 400
    assert str(err.value) == ('failed to create typed patch object (default/p; /v1, Kind=Pod): .spec.containers: '
                              'duplicate entries for key [name="a"]')
    with pytest.raises(ApiError) as err:
        apply(None, pod("not-a-container"), "m", False, "v1")  # type: ignore[arg-type]
    assert err.value.code == 400


# ---- through the API server ----------------------------------------------------------------------------

CLAIM = "/apis/resource.k8s.io/v1/namespaces/default/resourceclaims/c"
APPLY = {"content-type": "application/apply-patch+yaml"}


@pytest.fixture
def client() -> Any:
    from cluster import api_client

    return api_client()


def _claim(status: dict[str, Any] | None = None) -> str:
    body: dict[str, Any] = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                            "metadata": {"name": "c", "namespace": "default"}}
    if status is None:
        body["spec"] = {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com"}}]}}
    else:
        body["status"] = status
    return json.dumps(body)


def _reserve(uid: str) -> dict[str, Any]:
    return {"reservedFor": [{"resource": "pods", "name": f"pod-{uid}", "uid": uid}]}


def test_two_status_appliers_of_reservedFor_entries_do_not_conflict_and_each_removes_only_its_own(client: Any) -> None:
    assert client.patch(CLAIM, params={"fieldManager": "user"}, content=_claim(), headers=APPLY).status_code == 201
    allocation = {"allocation": {"devices": {"results": [{"request": "gpu", "driver": "gpu.example.com",
                                                          "pool": "n1", "device": "g0"}]}}}
    r = client.patch(f"{CLAIM}/status", params={"fieldManager": "scheduler"}, content=_claim(allocation),
                     headers=APPLY)
    assert r.status_code == 200, r.text
    for manager, uid in (("kubelet-a", "u1"), ("kubelet-b", "u2")):
        r = client.patch(f"{CLAIM}/status", params={"fieldManager": manager}, content=_claim(_reserve(uid)),
                         headers=APPLY)
        assert r.status_code == 200, r.text
    claim = r.json()
    assert [c["uid"] for c in claim["status"]["reservedFor"]] == ["u1", "u2"]
    owners = {e["manager"]: e for e in claim["metadata"]["managedFields"]}
    assert owners["kubelet-b"]["subresource"] == "status"
    assert owners["kubelet-b"]["fieldsV1"] == {"f:status": {"f:reservedFor": {'k:{"uid":"u2"}': {
        ".": {}, "f:name": {}, "f:resource": {}, "f:uid": {}}}}}
    assert claim["status"]["allocation"] == allocation["allocation"]  # the scheduler's, untouched
    r = client.patch(f"{CLAIM}/status", params={"fieldManager": "kubelet-a"}, content=_claim({}), headers=APPLY)
    assert [c["uid"] for c in r.json()["status"]["reservedFor"]] == ["u2"]
    assert fields(r.json(), "kubelet-a") == {"f:status": {}}  # an empty map applied is owned itself


def test_a_pod_applied_by_two_managers_conflicts_only_on_the_container_field_both_set(client: Any) -> None:
    url = "/api/v1/namespaces/default/pods/p"
    two = pod({"name": "app", "image": "nginx"}, {"name": "side", "image": "busybox"})
    assert client.patch(url, params={"fieldManager": "alice"}, content=json.dumps(two), headers=APPLY).status_code \
        == 201
    bob = pod({"name": "side", "image": "busybox:2"})
    r = client.patch(url, params={"fieldManager": "bob"}, content=json.dumps(bob), headers=APPLY)
    assert r.status_code == 409 and r.json()["message"] == (
        'Apply failed with 1 conflict: conflict with "alice": .spec.containers[name="side"].image')
    assert r.json()["details"]["causes"][0]["field"] == '.spec.containers[name="side"].image'
    r = client.patch(url, params={"fieldManager": "bob", "force": "true"}, content=json.dumps(bob), headers=APPLY)
    assert r.status_code == 200 and [c["image"] for c in r.json()["spec"]["containers"]] == ["nginx", "busybox:2"]
    alice = fields(r.json(), "alice")["f:spec"]["f:containers"]
    assert "f:image" in alice['k:{"name":"app"}'] and "f:image" not in alice['k:{"name":"side"}']
    r = client.patch(url, params={"fieldManager": "alice"}, content=json.dumps(two), headers=APPLY)
    assert r.status_code == 409 and 'conflict with "bob": .spec.containers[name="side"].image' in r.json()["message"]


def test_a_merge_patch_adding_a_container_port_owns_the_new_item_with_its_dot_entry(client: Any) -> None:
    url = "/api/v1/namespaces/default/pods/p"
    created = client.post("/api/v1/namespaces/default/pods", params={"fieldManager": "creator"},
                          json=pod({"name": "app", "image": "nginx"}))
    assert created.status_code == 201, created.text
    r = client.patch(url, params={"fieldManager": "editor"}, json={"metadata": {"annotations": {"note": "x"}}},
                     headers={"content-type": "application/merge-patch+json"})
    assert fields(r.json(), "editor") == {"f:metadata": {"f:annotations": {".": {}, "f:note": {}}}}
    creator = fields(r.json(), "creator")["f:spec"]["f:containers"]['k:{"name":"app"}']
    assert creator["."] == {} and creator["f:image"] == {}


def test_openapi_schemas_carry_the_list_types_server_side_apply_follows(client: Any) -> None:
    root = client.get("/openapi/v3").json()["paths"]
    schemas = client.get(root["apis/resource.k8s.io/v1"]["serverRelativeURL"]).json()["components"]["schemas"]

    def array(kind: str, field: str) -> dict[str, Any]:
        prop = schemas[f"io.k8s.api.resource.v1.{kind}"]["properties"][field]
        return next(s for s in prop.get("anyOf", [prop]) if s.get("type") == "array")

    devices = array("ResourceClaimStatus", "devices")
    assert (devices["x-kubernetes-list-type"], devices["x-kubernetes-list-map-keys"]) == (
        "map", ["driver", "device", "pool", "shareID"])
    assert array("ResourceClaimStatus", "reservedFor")["x-kubernetes-list-map-keys"] == ["uid"]
    assert array("ObjectMeta", "finalizers")["x-kubernetes-list-type"] == "set"
    assert array("ResourceSliceSpec", "devices")["x-kubernetes-list-type"] == "atomic"
    assert schemas["io.k8s.api.resource.v1.NodeSelector"]["x-kubernetes-map-type"] == "atomic"
    assert schemas["io.k8s.api.resource.v1.OwnerReference"]["x-kubernetes-map-type"] == "atomic"


@pytest.mark.parametrize("validation", ["Strict", "Ignore"])
def test_an_apply_of_a_field_the_schema_lacks_fails_to_be_typed_whatever_field_validation_says(
        client: Any, validation: str) -> None:
    # kube-apiserver's field manager types the configuration first: kubectl apply --server-side with a typo
    # says "field not declared in schema", even with --validate=false
    body = json.loads(_claim())
    body["spec"]["devices"]["requests"][0]["exactly"]["colour"] = "red"
    r = client.patch(CLAIM, params={"fieldManager": "user", "fieldValidation": validation}, content=json.dumps(body),
                     headers=APPLY)
    assert (r.status_code, r.json()["message"]) == (400, (
        "failed to create typed patch object (default/c; resource.k8s.io/v1, Kind=ResourceClaim): "
        ".spec.devices.requests[0].exactly.colour: field not declared in schema")), r.text
    body["specs"] = {}
    r = client.patch(CLAIM, params={"fieldManager": "user"}, content=json.dumps(body), headers=APPLY)
    assert r.json()["message"].endswith("Kind=ResourceClaim): errors:\n"
                                        "  .spec.devices.requests[0].exactly.colour: field not declared in schema\n"
                                        "  .specs: field not declared in schema"), r.text
    assert client.get(CLAIM).status_code == 404


def test_objects_of_one_shape_with_values_of_other_kinds_each_record_what_the_comparison_records() -> None:
    # A create's walk makes one plan per shape (schema node and field names) and reuses it: the plan must
    # leave to each object what depends on its values (a scalar, a map or a list under the same name; an
    # empty map; a list item's key).
    node = kind_type("Pod")
    skip = {"f:apiVersion": True, "f:kind": True, "f:metadata": {p[1]: True for p in _STRIPPED if len(p) == 2}}
    shapes = [{"name": "c", "resources": "x", "env": 1},
              {"name": "c", "resources": {"limits": {"cpu": "1"}}, "env": [{"name": "A"}]},
              {"name": "d", "resources": {}, "env": []},
              {"name": "c", "resources": {"requests": {}}, "env": [{"name": "A"}, {"name": "A"}]}]
    for container in shapes * 2:  # (the second round reads the plans the first one made)
        obj = pod(dict(container), labels={"a": "b"})
        changed, _ = compare(skeleton(node), obj, node)
        tree = created_fields(obj, node, skeleton(node), skip)
        assert json.dumps(tree) == json.dumps(to_fields(changed - _STRIPPED))
