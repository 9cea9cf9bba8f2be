"""A core object's nulls and zero values are stored and returned as kube-apiserver decodes them into the Go
types and encodes them: a null field, or an omitempty field's zero, as if it were absent (neither stored nor
owned in managedFields), a pointer's zero kept, a null list item or map value as its type's zero value, a
null time held by value as null (Go writes its zero so)."""

from __future__ import annotations

import json
import warnings
from collections.abc import Iterator
from typing import Any

import pytest
import yaml

warnings.filterwarnings("ignore", message="Using `httpx`")
from starlette.testclient import TestClient  # noqa: E402

from dralloc.server import create_app  # noqa: E402
from dralloc.store import SQLiteStore  # noqa: E402

PODS = "/api/v1/namespaces/default/pods"
DEPLOYMENTS = "/apis/apps/v1/namespaces/default/deployments"
CLAIMS = "/apis/resource.k8s.io/v1/namespaces/default/resourceclaims"


@pytest.fixture(scope="module")
def client() -> Iterator[TestClient]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield TestClient(create_app(SQLiteStore(":memory:")))


def _pod(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "labels": None, "annotations": {"a": None}, "creationTimestamp": None},
            "spec": {"nodeSelector": None, "affinity": None, "tolerations": None, "hostname": None,
                     "containers": [{"name": "c", "image": "i", "ports": None, "command": [None, "x"],
                                     "resources": {"requests": {"cpu": None}}, "securityContext": None}]}}


def _owned(obj: dict[str, Any]) -> str:
    return json.dumps([entry["fieldsV1"] for entry in obj["metadata"]["managedFields"]])


@pytest.mark.parametrize("ctype", ["application/json", "application/yaml"])
def test_a_created_pods_nulls_are_what_go_decodes(client: TestClient, ctype: str) -> None:
    name = f"nulls-{ctype.split('/')[1]}"
    pod = _pod(name)
    body = json.dumps(pod) if ctype == "application/json" else yaml.safe_dump(pod)
    r = client.post(PODS, content=body, headers={"content-type": ctype})
    assert r.status_code == 201, r.text
    for obj in (r.json(), client.get(f"{PODS}/{name}").json()):
        meta, spec = obj["metadata"], obj["spec"]
        assert "labels" not in meta and meta["annotations"] == {"a": ""}
        assert not {"nodeSelector", "affinity", "hostname"} & spec.keys()
        assert len(spec["tolerations"]) == 2  # (only DefaultTolerationSeconds' own)
        container = spec["containers"][0]
        assert "ports" not in container and "securityContext" not in container
        assert container["command"] == ["", "x"] and container["resources"] == {"requests": {"cpu": "0"}}
        owned = _owned(obj)
        assert all(f'"f:{field}"' not in owned for field in ("labels", "nodeSelector", "affinity", "hostname",
                                                              "ports", "tolerations"))


def test_a_yaml_manifests_empty_fields_are_nulls_go_drops(client: TestClient) -> None:
    text = ("apiVersion: v1\nkind: Pod\nmetadata:\n  name: empty-fields\n  labels:\n  annotations:\n"
            "spec:\n  nodeSelector:\n  containers:\n  - name: c\n    image: i\n    env:\n    args:\n")
    r = client.post(PODS, content=text, headers={"content-type": "application/yaml"})
    assert r.status_code == 201, r.text
    obj = r.json()
    assert not {"labels", "annotations"} & obj["metadata"].keys() and "nodeSelector" not in obj["spec"]
    assert not {"env", "args"} & obj["spec"]["containers"][0].keys()


def test_a_value_times_null_stays_as_go_writes_its_zero(client: TestClient) -> None:
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "nulls"},
                  "spec": {"selector": {"matchLabels": {"app": "n"}}, "strategy": None,
                           "template": {"metadata": {"labels": {"app": "n"}, "creationTimestamp": None},
                                        "spec": {"nodeSelector": None,
                                                 "containers": [{"name": "c", "image": "i", "args": None}]}}}}
    r = client.post(DEPLOYMENTS, json=deployment)
    assert r.status_code == 201, r.text
    template = client.get(f"{DEPLOYMENTS}/nulls").json()["spec"]["template"]
    assert template["metadata"]["creationTimestamp"] is None
    assert "nodeSelector" not in template["spec"] and "args" not in template["spec"]["containers"][0]


def test_an_update_and_a_json_patch_drop_null_fields_too(client: TestClient) -> None:
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "patched-nulls"},
           "spec": {"containers": [{"name": "c", "image": "i"}]}}
    created = client.post(PODS, json=pod).json()
    created["metadata"]["labels"] = None
    created["spec"]["nodeSelector"] = None
    updated = client.put(f"{PODS}/patched-nulls", json=created)
    assert updated.status_code == 200, updated.text
    assert "labels" not in updated.json()["metadata"] and "nodeSelector" not in updated.json()["spec"]
    patch = [{"op": "add", "path": "/metadata/labels", "value": None},
             {"op": "add", "path": "/metadata/annotations", "value": {"a": None}}]
    r = client.patch(f"{PODS}/patched-nulls", content=json.dumps(patch),
                     headers={"content-type": "application/json-patch+json"})
    assert r.status_code == 200, r.text
    assert "labels" not in r.json()["metadata"] and r.json()["metadata"]["annotations"] == {"a": ""}


def test_a_resource_claims_nulls_are_neither_stored_nor_owned(client: TestClient) -> None:
    """The modelled kinds decode into their models, which drop a null field: the same answer."""
    claim = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
             "metadata": {"name": "nulls", "labels": None, "creationTimestamp": None},
             "spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": "g", "selectors": None}}],
                                  "constraints": None}}}
    r = client.post(CLAIMS, json=claim)
    assert r.status_code == 201, r.text
    obj = r.json()
    assert "labels" not in obj["metadata"] and "constraints" not in obj["spec"]["devices"]
    assert "selectors" not in obj["spec"]["devices"]["requests"][0]["exactly"]
    assert '"f:labels"' not in _owned(obj) and '"f:selectors"' not in _owned(obj)


def test_zero_values_of_omitempty_fields_are_neither_stored_nor_owned(client: TestClient) -> None:
    """Go's encoder does not write an omitempty field's zero ("", 0, false, an empty list or map) unless the
    field is a pointer (a *bool's false is written)."""
    pod = {"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": "zeros", "labels": {}, "annotations": {}, "finalizers": [], "generateName": ""},
           "spec": {"hostNetwork": False, "hostname": "", "nodeSelector": {}, "volumes": [],
                    "automountServiceAccountToken": False, "terminationGracePeriodSeconds": 0,
                    "containers": [{"name": "c", "image": "i", "stdin": False, "args": [], "workingDir": "",
                                    "ports": [{"containerPort": 80, "hostPort": 0, "name": ""}]}]}}
    r = client.post(PODS, json=pod)
    assert r.status_code == 201, r.text
    obj = r.json()
    assert not {"labels", "annotations", "finalizers", "generateName"} & obj["metadata"].keys()
    spec = obj["spec"]
    assert not {"hostNetwork", "hostname", "nodeSelector", "volumes"} & spec.keys()
    assert spec["automountServiceAccountToken"] is False and spec["terminationGracePeriodSeconds"] == 0  # (pointers)
    container = spec["containers"][0]
    assert not {"stdin", "args", "workingDir"} & container.keys()
    assert container["ports"] == [{"containerPort": 80, "protocol": "TCP"}]
    owned = _owned(obj)
    assert all(f'"f:{field}"' not in owned for field in ("labels", "hostNetwork", "stdin", "hostPort", "workingDir"))
    config_map = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "zeros"}, "data": {"a": ""},
                  "binaryData": {}, "immutable": False}
    stored = client.post("/api/v1/namespaces/default/configmaps", json=config_map).json()
    assert stored["data"] == {"a": ""} and "binaryData" not in stored and stored["immutable"] is False


def test_a_field_without_omitempty_is_written_whatever_it_holds(client: TestClient) -> None:
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "zeros"},
            "spec": {"taints": [{"key": "k", "effect": "NoSchedule", "value": ""}], "unschedulable": False},
            "status": {"images": [{"names": None, "sizeBytes": 0}]}}
    r = client.post("/api/v1/nodes", json=node)
    assert r.status_code == 201, r.text
    obj = r.json()
    assert "unschedulable" not in obj["spec"] and obj["spec"]["taints"] == [{"key": "k", "effect": "NoSchedule"}]
    assert obj["status"]["images"] == [{"names": None}]  # (names has no omitempty: a nil list is written null)


def test_quantities_are_stored_as_quantitys_marshal_writes_them(client: TestClient) -> None:
    """kube-apiserver parses a quantity (a number's JSON text too) and writes it back in its form: 1000m is 1,
    a number 1.5 is 1500m, 1024Mi is 1Gi; a form the parser keeps (100m, 32Gi) stays."""
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "quantities"},
           "spec": {"containers": [{"name": "c", "image": "i", "resources": {
               "limits": {"cpu": 1.5, "memory": "1024Mi", "example.com/gpu": 2},
               "requests": {"cpu": "1000m", "memory": " 512Mi ", "example.com/gpu": 2}}}]}}
    r = client.post(PODS, json=pod)
    assert r.status_code == 201, r.text
    assert r.json()["spec"]["containers"][0]["resources"] == {
        "limits": {"cpu": "1500m", "memory": "1Gi", "example.com/gpu": "2"},
        "requests": {"cpu": "1", "memory": "512Mi", "example.com/gpu": "2"}}
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "quantities"},
            "status": {"capacity": {"cpu": 8, "memory": "32768Mi", "pods": "110"}}}
    r = client.post("/api/v1/nodes", json=node)
    assert r.status_code == 201 and r.json()["status"]["capacity"] == {"cpu": "8", "memory": "32Gi", "pods": "110"}


def test_a_workloads_template_is_stored_as_kube_apiserver_stores_it(client: TestClient) -> None:
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "stored"},
                  "spec": {"selector": {"matchLabels": {"app": "s"}},
                           "template": {"metadata": {"labels": {"app": "s"}},
                                        "spec": {"containers": [{"name": "c", "image": "i", "resources": {
                                            "requests": {"cpu": "1000m"}}}]}}}}
    r = client.post(DEPLOYMENTS, json=deployment)
    assert r.status_code == 201, r.text
    assert r.json()["spec"]["template"]["spec"]["containers"][0]["resources"] == {"requests": {"cpu": "1"}}
