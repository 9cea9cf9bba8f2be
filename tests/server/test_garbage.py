"""The garbage collector inside `dralloc serve`: objects whose owners are gone are deleted, as
kube-controller-manager's collector does, with the Background, Foreground and Orphan propagation policies."""

from __future__ import annotations

from typing import Any

import pytest
from cluster import NODE, Cluster, R, slice_

from dralloc.store import NotFound


def owned_slice(name: str, node: dict[str, Any], **ref: Any) -> dict[str, Any]:
    obj = slice_(name=name)
    obj["metadata"]["ownerReferences"] = [{"apiVersion": "v1", "kind": "Node", "name": node["metadata"]["name"],
                                           "uid": node["metadata"]["uid"], **ref}]
    return obj


def gone(cluster: Cluster, resource: str, name: str, namespace: str = "") -> bool:
    try:
        cluster.store.get(resource, namespace, name)
    except NotFound:
        return True
    return False


@pytest.fixture
def node_cluster() -> tuple[Cluster, dict[str, Any]]:
    c = Cluster()
    return c, c.post("/api/v1/nodes", NODE)


def test_a_slice_owned_by_its_node_goes_when_the_node_is_deleted(node_cluster: Any) -> None:
    cluster, node = node_cluster
    cluster.post(f"{R}/resourceslices", owned_slice("node-1-gpu", node))
    cluster.post(f"{R}/resourceslices", slice_(name="unowned"))
    cluster.settle()
    assert not gone(cluster, "resourceslices", "node-1-gpu")
    assert cluster.http.delete("/api/v1/nodes/node-1").status_code == 200
    cluster.settle()
    assert gone(cluster, "resourceslices", "node-1-gpu") and not gone(cluster, "resourceslices", "unowned")


def test_an_owner_of_the_same_name_but_another_uid_is_a_different_owner(node_cluster: Any) -> None:
    cluster, node = node_cluster
    cluster.post(f"{R}/resourceslices", owned_slice("node-1-gpu", {**node, "metadata": {**node["metadata"],
                                                                                        "uid": "an-older-node"}}))
    cluster.settle()
    assert gone(cluster, "resourceslices", "node-1-gpu")


def test_an_object_with_one_owner_left_only_loses_the_reference_to_the_gone_one(node_cluster: Any) -> None:
    cluster, node = node_cluster
    other = cluster.post("/api/v1/nodes", {**NODE, "metadata": {"name": "node-2"}})
    obj = owned_slice("shared", node)
    obj["metadata"]["ownerReferences"].append({"apiVersion": "v1", "kind": "Node", "name": "node-2",
                                               "uid": other["metadata"]["uid"]})
    cluster.post(f"{R}/resourceslices", obj)
    cluster.http.delete("/api/v1/nodes/node-1")
    cluster.settle()
    refs = cluster.get("resourceslices", "shared", "")["metadata"]["ownerReferences"]
    assert [r["name"] for r in refs] == ["node-2"]


def test_an_owner_of_a_kind_this_server_does_not_serve_never_makes_an_object_garbage(node_cluster: Any) -> None:
    cluster, _ = node_cluster
    obj = slice_(name="by-operator")
    obj["metadata"]["ownerReferences"] = [{"apiVersion": "example.com/v1", "kind": "DriverOperator",
                                           "name": "driver", "uid": "1234"}]
    cluster.post(f"{R}/resourceslices", obj)
    cluster.settle()
    assert not gone(cluster, "resourceslices", "by-operator")


def test_an_object_whose_deployment_is_gone_is_garbage(node_cluster: Any) -> None:
    """apps/v1 Deployments are served: an owner missing is an owner gone."""
    cluster, _ = node_cluster
    obj = slice_(name="by-driver")
    obj["metadata"]["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "driver",
                                           "uid": "1234"}]
    cluster.post(f"{R}/resourceslices", obj)
    cluster.settle()
    assert gone(cluster, "resourceslices", "by-driver")


def test_orphan_propagation_keeps_the_dependents_without_their_reference(node_cluster: Any) -> None:
    cluster, node = node_cluster
    cluster.post(f"{R}/resourceslices", owned_slice("node-1-gpu", node))
    cluster.settle()
    r = cluster.http.request("DELETE", "/api/v1/nodes/node-1", json={"propagationPolicy": "Orphan"})
    assert r.status_code == 202 and r.json()["metadata"]["finalizers"] == ["orphan"]
    cluster.settle()
    assert gone(cluster, "nodes", "node-1")
    assert "ownerReferences" not in cluster.get("resourceslices", "node-1-gpu", "")["metadata"]


def test_foreground_propagation_deletes_the_dependents_before_the_owner(node_cluster: Any) -> None:
    cluster, node = node_cluster
    obj = owned_slice("node-1-gpu", node, blockOwnerDeletion=True)
    obj["metadata"]["finalizers"] = ["example.com/hold"]  # the dependent takes a while to go
    cluster.post(f"{R}/resourceslices", obj)
    cluster.settle()
    r = cluster.http.delete("/api/v1/nodes/node-1", params={"propagationPolicy": "Foreground"})
    assert r.status_code == 202 and r.json()["metadata"]["finalizers"] == ["foregroundDeletion"]
    cluster.settle()
    assert cluster.get("resourceslices", "node-1-gpu", "")["metadata"].get("deletionTimestamp")
    assert cluster.get("nodes", "node-1", "")["metadata"]["finalizers"] == ["foregroundDeletion"]
    held = cluster.get("resourceslices", "node-1-gpu", "")
    held["metadata"]["finalizers"] = []
    assert cluster.http.put(f"{R}/resourceslices/node-1-gpu", json=held).status_code == 200
    cluster.settle()
    assert gone(cluster, "resourceslices", "node-1-gpu") and gone(cluster, "nodes", "node-1")


def test_a_collector_restarted_after_the_owner_went_still_collects(node_cluster: Any) -> None:
    cluster, node = node_cluster
    cluster.post(f"{R}/resourceslices", owned_slice("node-1-gpu", node))
    cluster.http.delete("/api/v1/nodes/node-1")  # no pass ran: the new manager must find it on its own
    from dralloc.server.controllers import ControllerManager

    cluster.manager = ControllerManager(cluster.store)
    cluster.manager.position = cluster.store.current_rv()
    cluster.settle()
    assert gone(cluster, "resourceslices", "node-1-gpu")
