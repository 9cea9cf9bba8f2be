"""A create's answer is the created object's JSON byte for byte as the server then serves it (the stored text,
which the create answers with without encoding it again): for typed and core kinds, a view of another kind,
another version of a group, server-side apply, pretty and YAML answers, and a dry run."""

from __future__ import annotations

import json
import warnings
from typing import Any

import msgspec
import pytest

warnings.filterwarnings("ignore", message="Using `httpx`")
from cluster import api_client  # noqa: E402

SLICE = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "s"},
         "spec": {"driver": "gpu.example.com", "nodeName": "node-1",
                  "pool": {"name": "node-1", "generation": 1, "resourceSliceCount": 1},
                  "devices": [{"name": f"gpu-{g}", "attributes": {"index": {"int": g}, "model": {"string": "h100"}},
                               "capacity": {"memory": {"value": "80Gi"}}} for g in range(3)]}}
CREATES: list[tuple[str, str, dict[str, Any]]] = [
    ("/apis/resource.k8s.io/v1/resourceslices", "s", SLICE),
    ("/apis/resource.k8s.io/v1/deviceclasses", "c", {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
                                                     "metadata": {"name": "c"}}),
    ("/apis/resource.k8s.io/v1beta1/namespaces/ns/resourceclaims", "claim", {
        "apiVersion": "resource.k8s.io/v1beta1", "kind": "ResourceClaim", "metadata": {"name": "claim"},
        "spec": {"devices": {"requests": [{"name": "gpu", "deviceClassName": "c"}]}}}),
    ("/api/v1/namespaces/ns/pods", "p", {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
                                         "spec": {"containers": [{"name": "main", "image": "app:1"}]}}),
    ("/api/v1/namespaces/ns/configmaps", "cm", {"apiVersion": "v1", "kind": "ConfigMap",
                                                "metadata": {"name": "cm"}, "data": {"a": "<&>"}}),
    ("/apis/events.k8s.io/v1/namespaces/ns/events", "e", {
        "apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": {"name": "e"},
        "eventTime": "2026-01-01T00:00:00.000000Z", "reportingController": "c", "reportingInstance": "i",
        "action": "A", "reason": "R", "type": "Normal",
        "regarding": {"kind": "Pod", "name": "p", "namespace": "ns"}}),
]


@pytest.mark.parametrize("collection, name, body", CREATES, ids=[c[2]["kind"] + " " + c[0] for c in CREATES])
@pytest.mark.parametrize("query", ["", "?pretty=true", "?dryRun=All"])
def test_a_creates_answer_is_the_object_as_served(collection: str, name: str, body: dict[str, Any],
                                                  query: str) -> None:
    http = api_client("ns")
    created = http.post(collection + query, content=json.dumps(body), headers={"content-type": "application/json"})
    assert created.status_code == 201, created.text
    if query == "?dryRun=All":
        assert created.content == msgspec.json.encode(created.json())
        return
    served = http.get(f"{collection}/{name}{query}")
    assert served.status_code == 200, served.text
    assert created.content == served.content


def test_a_yaml_answer_and_an_apply_create_are_the_object_as_served() -> None:
    http = api_client("ns")
    created = http.post("/api/v1/namespaces/ns/configmaps", json={"apiVersion": "v1", "kind": "ConfigMap",
                                                                   "metadata": {"name": "y"}},
                        headers={"accept": "application/yaml"})
    assert created.status_code == 201, created.text
    assert created.content == http.get("/api/v1/namespaces/ns/configmaps/y",
                                       headers={"accept": "application/yaml"}).content
    applied = http.patch("/api/v1/namespaces/ns/configmaps/a?fieldManager=me",
                         content=json.dumps({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"},
                                             "data": {"k": "v"}}),
                         headers={"content-type": "application/apply-patch+yaml"})
    assert applied.status_code == 201, applied.text
    assert applied.content == http.get("/api/v1/namespaces/ns/configmaps/a").content


def test_creates_leave_the_shared_empty_objects_of_their_kinds_as_they_were() -> None:
    """The empty object a create's managedFields are worked out against is made once per kind and shared: no
    create may change it (the next create's fields would be wrong)."""
    from dralloc.server.apply import fieldtypes, managed_fields

    http = api_client("ns")
    for collection, _, body in CREATES:
        assert http.post(collection, json=body).status_code == 201
    kinds = {body["kind"] for _, _, body in CREATES}
    assert all(managed_fields._skeleton(fieldtypes.kind_type(k)) == fieldtypes.skeleton(fieldtypes.kind_type(k))
               for k in kinds)
    claims = "/apis/resource.k8s.io/v1/namespaces/ns/resourceclaims"  # (a kind whose status a create ignores)
    fields = []
    for name in ("a", "b"):
        created = http.post(claims, json={"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                                          "metadata": {"name": name}, "spec": {"devices": {"requests": [
                                              {"name": "gpu", "exactly": {"deviceClassName": "c"}}]}}}).json()
        fields.append(created["metadata"]["managedFields"][0]["fieldsV1"])
    assert fields[0] == fields[1] and "f:spec" in fields[0]
