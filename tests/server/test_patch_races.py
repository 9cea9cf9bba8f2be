"""A patch is applied to the object as it is when written: a write that lands between the patch's read and its
write is kept (the patch is applied again to the new object, as kube-apiserver's update retries), never
overwritten nor turned into a spurious 422; a patch that names its resourceVersion gets a 409 instead."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import pytest

warnings.filterwarnings("ignore", message="Using `httpx`")
from cluster import api_client  # noqa: E402
from starlette.testclient import TestClient  # noqa: E402

from dralloc.server.registry.pods import bind  # noqa: E402
from dralloc.server.verbs import writes  # noqa: E402

PODS = "/api/v1/namespaces/default/pods"
CLASSES = "/apis/resource.k8s.io/v1/deviceclasses"
MERGE = {"content-type": "application/merge-patch+json"}
APPLY = {"content-type": "application/apply-patch+yaml"}


@pytest.fixture
def client() -> TestClient:
    http = api_client()
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web"},
           "spec": {"containers": [{"name": "app", "image": "nginx:1"}]}}
    assert http.post(PODS, json=pod).status_code == 201
    dc = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu"}}
    assert http.post(CLASSES, json=dc).status_code == 201
    return http


def race(client: TestClient, monkeypatch: pytest.MonkeyPatch, meanwhile: Callable[[Any], None],
         times: int = 1) -> None:
    """The next ``times`` reads of a patch return the object as it was, then ``meanwhile`` writes it."""
    store = client.app.state.api.store
    real_get = store.get
    left = [times]

    def stale_get(resource: str, namespace: str, name: str) -> dict[str, Any]:
        obj = real_get(resource, namespace, name)
        if left[0] > 0:
            left[0] -= 1
            meanwhile(store)
        return obj

    monkeypatch.setattr(store, "get", stale_get)


def add_label(resource: str, namespace: str, name: str, key: str) -> Callable[[Any], None]:
    def write(store: Any) -> None:
        def build(old: dict[str, Any], rv: str) -> dict[str, Any]:
            meta = {**old["metadata"], "labels": {**(old["metadata"].get("labels") or {}), key: "1"},
                    "resourceVersion": rv}
            return {**old, "metadata": meta}
        store.update(resource, namespace, name, build)
    return write


def test_a_patch_racing_a_binding_keeps_the_node(client: TestClient, monkeypatch: pytest.MonkeyPatch) -> None:
    race(client, monkeypatch, lambda store: bind(store, "default", "web", "node-1"))
    r = client.patch(f"{PODS}/web", json={"metadata": {"labels": {"a": "b"}}}, headers=MERGE)
    assert r.status_code == 200, r.text
    assert r.json()["spec"]["nodeName"] == "node-1" and r.json()["metadata"]["labels"] == {"a": "b"}


@pytest.mark.parametrize("kind", ["merge", "strategic", "json", "apply"])
def test_a_patch_racing_another_write_does_not_lose_it(client: TestClient, monkeypatch: pytest.MonkeyPatch,
                                                       kind: str) -> None:
    race(client, monkeypatch, add_label("deviceclasses", "", "gpu", "theirs"))
    url = f"{CLASSES}/gpu"
    if kind == "apply":
        body = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
                "metadata": {"name": "gpu", "labels": {"mine": "1"}}}
        r = client.patch(url, params={"fieldManager": "me"}, json=body, headers=APPLY)
    elif kind == "json":
        r = client.patch(url, json=[{"op": "add", "path": "/metadata/annotations", "value": {"mine": "1"}}],
                         headers={"content-type": "application/json-patch+json"})
    else:
        headers = MERGE if kind == "merge" else {"content-type": "application/strategic-merge-patch+json"}
        r = client.patch(url, json={"metadata": {"annotations": {"mine": "1"}}}, headers=headers)
    assert r.status_code == 200, r.text
    assert r.json()["metadata"]["labels"]["theirs"] == "1"  # the write in between is kept
    mine = r.json()["metadata"]["labels" if kind == "apply" else "annotations"]
    assert mine["mine"] == "1"


def test_a_patch_that_names_its_resource_version_conflicts_instead(client: TestClient,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    rv = client.get(f"{CLASSES}/gpu").json()["metadata"]["resourceVersion"]
    race(client, monkeypatch, add_label("deviceclasses", "", "gpu", "theirs"))
    r = client.patch(f"{CLASSES}/gpu", json={"metadata": {"resourceVersion": rv, "labels": {"a": "b"}}},
                     headers=MERGE)
    assert r.status_code == 409 and r.json()["reason"] == "Conflict"


def test_a_patch_that_keeps_losing_the_race_gets_a_conflict(client: TestClient,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    race(client, monkeypatch, add_label("deviceclasses", "", "gpu", "theirs"), times=writes.PATCH_ATTEMPTS)
    r = client.patch(f"{CLASSES}/gpu", json={"metadata": {"labels": {"a": "b"}}}, headers=MERGE)
    assert r.status_code == 409 and "the object has been modified" in r.json()["message"]


@pytest.mark.parametrize("kind", ["merge", "apply"])
def test_a_patch_losing_the_race_to_many_concurrent_writers_still_succeeds(
        client: TestClient, monkeypatch: pytest.MonkeyPatch, kind: str) -> None:
    """Twenty writers landing one after another between the patch's reads (as when twenty clients patch one
    object at once): kube-apiserver keeps applying the patch again, so none of them makes it a 409."""
    writers = [add_label("deviceclasses", "", "gpu", f"theirs-{i}") for i in range(20)]
    done: list[int] = []

    def next_writer(store: Any) -> None:
        writers[len(done)](store)
        done.append(1)
    race(client, monkeypatch, next_writer, times=len(writers))
    url = f"{CLASSES}/gpu"
    if kind == "apply":
        body = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
                "metadata": {"name": "gpu", "labels": {"mine": "1"}}}
        r = client.patch(url, params={"fieldManager": "me"}, json=body, headers=APPLY)
    else:
        r = client.patch(url, json={"metadata": {"labels": {"mine": "1"}}}, headers=MERGE)
    assert r.status_code == 200, r.text
    assert r.json()["metadata"]["labels"] == {"mine": "1", **{f"theirs-{i}": "1" for i in range(20)}}
