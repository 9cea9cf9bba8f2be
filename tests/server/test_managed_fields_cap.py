"""managedFields as kube-apiserver's field manager keeps them: at most ten Update entries (older ones merged into
``ancient-changes``), and a write that changes nothing leaves the object untouched."""

from __future__ import annotations

import itertools
import warnings
from typing import Any

import pytest

warnings.filterwarnings("ignore", message="Using `httpx`")
from starlette.testclient import TestClient  # noqa: E402

from dralloc.server import create_app  # noqa: E402
from dralloc.server.apply import managed_fields as apply_module  # noqa: E402
from dralloc.store import SQLiteStore  # noqa: E402

CLASSES = "/apis/resource.k8s.io/{version}/deviceclasses"
MERGE = {"content-type": "application/merge-patch+json"}
APPLY = {"content-type": "application/apply-patch+yaml"}


@pytest.fixture
def client(monkeypatch: pytest.MonkeyPatch) -> TestClient:
    seconds = itertools.count(10)  # every write a second later than the one before
    monkeypatch.setattr(apply_module, "now", lambda: f"2026-01-01T00:00:{next(seconds):02d}Z")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return TestClient(create_app(SQLiteStore(":memory:")))


def label_by(client: TestClient, manager: str, version: str = "v1") -> dict[str, Any]:
    r = client.patch(f"{CLASSES.format(version=version)}/gpu", json={"metadata": {"labels": {manager: "x"}}},
                     headers=MERGE, params={"fieldManager": manager})
    assert r.status_code == 200, r.text
    return r.json()


def entries(obj: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {f'{e["manager"]} {e["apiVersion"]}': e for e in obj["metadata"]["managedFields"]}


def create_class(client: TestClient, manager: str) -> None:
    body = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
            "metadata": {"name": "gpu", "labels": {manager: "x"}}}
    assert client.post(CLASSES.format(version="v1"), json=body, params={"fieldManager": manager}).status_code == 201


def test_ten_updaters_are_kept_as_they_are(client: TestClient) -> None:
    create_class(client, "m00")
    for i in range(1, 10):
        obj = label_by(client, f"m{i:02d}")
    assert sorted(e["manager"] for e in obj["metadata"]["managedFields"]) == [f"m{i:02d}" for i in range(10)]


def test_an_eleventh_updater_merges_the_two_oldest_into_ancient_changes(client: TestClient) -> None:
    create_class(client, "m00")
    for i in range(1, 11):
        obj = label_by(client, f"m{i:02d}")
    kept = entries(obj)
    assert len(kept) == 10
    assert "m00 resource.k8s.io/v1" not in kept and "m01 resource.k8s.io/v1" not in kept
    bucket = kept["ancient-changes resource.k8s.io/v1"]
    assert bucket["operation"] == "Update"
    # the creator's fields (the labels map it made, and its label) and the first updater's label
    assert bucket["fieldsV1"] == {"f:metadata": {"f:labels": {".": {}, "f:m00": {}, "f:m01": {}}}}
    assert bucket["time"] == "2026-01-01T00:00:11Z"  # the time of the last updater merged into it
    # the next updater merges the oldest remaining one into the same entry
    obj = label_by(client, "m11")
    kept = entries(obj)
    assert len(kept) == 10 and "m02 resource.k8s.io/v1" not in kept
    assert set(kept["ancient-changes resource.k8s.io/v1"]["fieldsV1"]["f:metadata"]["f:labels"]) == \
        {".", "f:m00", "f:m01", "f:m02"}


def test_the_oldest_updater_of_another_version_stays_alone_until_a_second_one_joins_it(client: TestClient) -> None:
    create_class(client, "m00")
    label_by(client, "old", "v1beta2")
    for i in range(1, 10):
        obj = label_by(client, f"m{i:02d}")
    kept = entries(obj)
    assert "old resource.k8s.io/v1beta2" in kept  # first of its version: never merged alone
    assert set(kept["ancient-changes resource.k8s.io/v1"]["fieldsV1"]["f:metadata"]["f:labels"]) == \
        {".", "f:m00", "f:m01"}
    assert len(kept) == 10


def test_appliers_do_not_count_towards_the_cap(client: TestClient) -> None:
    create_class(client, "m00")
    for i in range(12):
        body = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
                "metadata": {"name": "gpu", "labels": {f"a{i}": "x"}}}
        r = client.patch(f"{CLASSES.format(version='v1')}/gpu", json=body, headers=APPLY,
                         params={"fieldManager": f"applier-{i}"})
        assert r.status_code == 200, r.text
    managers = [e["manager"] for e in r.json()["metadata"]["managedFields"]]
    assert len(managers) == 13 and "ancient-changes" not in managers


def test_an_apply_that_changes_nothing_leaves_the_object_untouched(client: TestClient) -> None:
    body = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu", "labels": {"a": "b"}}}
    url = f"{CLASSES.format(version='v1')}/gpu"
    first = client.patch(url, json=body, headers=APPLY, params={"fieldManager": "m"}).json()
    again = client.patch(url, json=body, headers=APPLY, params={"fieldManager": "m"}).json()
    assert again["metadata"]["resourceVersion"] == first["metadata"]["resourceVersion"]
    assert again["metadata"]["managedFields"] == first["metadata"]["managedFields"]  # same time too
    replaced = client.put(url, json=again).json()
    assert replaced["metadata"]["resourceVersion"] == first["metadata"]["resourceVersion"]
