"""Object lifecycle beyond plain CRUD: finalizers and graceful deletion, /status metadata, watch selectors
(objects entering and leaving a selection), WatchList's initial-events bookmark, old event logs."""

from __future__ import annotations

import copy
import json
import sqlite3
import warnings
from pathlib import Path
from typing import Any

import pytest
import yaml

warnings.filterwarnings("ignore", message="Using `httpx`")
from cluster import api_client  # noqa: E402
from starlette.testclient import TestClient  # noqa: E402

from dralloc.store import SQLiteStore  # noqa: E402

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
SLICES = "/apis/resource.k8s.io/v1/resourceslices"
CLAIMS = "/apis/resource.k8s.io/v1/namespaces/ml-team/resourceclaims"
MERGE = {"content-type": "application/merge-patch+json"}


def docs(name: str) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all((EXAMPLES / name).read_text()) if d]


@pytest.fixture
def client() -> TestClient:
    return api_client("ml-team")


def claim_with_finalizer() -> dict[str, Any]:
    claim = copy.deepcopy(docs("30-claims.yaml")[0])
    claim["metadata"]["finalizers"] = ["resource.kubernetes.io/delete-protection"]
    return claim


def watch(client: TestClient, url: str, **params: str) -> list[dict[str, Any]]:
    r = client.get(url, params={"watch": "true", "timeoutSeconds": "1", **params})
    return [json.loads(line) for line in r.text.splitlines()]


def test_delete_of_an_object_with_finalizers_only_marks_it(client: TestClient) -> None:
    created = client.post(CLAIMS, json=claim_with_finalizer()).json()
    url = f"{CLAIMS}/{created['metadata']['name']}"
    r = client.delete(url)
    assert r.status_code == 202
    meta = r.json()["metadata"]
    assert meta["deletionTimestamp"] and meta["deletionGracePeriodSeconds"] == 0
    assert meta["generation"] == 2 and meta["resourceVersion"] != created["metadata"]["resourceVersion"]
    assert client.get(url).json()["metadata"]["deletionTimestamp"] == meta["deletionTimestamp"]
    again = client.delete(url)  # deleting again changes nothing
    assert again.status_code == 202 and again.json()["metadata"]["resourceVersion"] == meta["resourceVersion"]


@pytest.mark.slow
def test_removing_the_last_finalizer_completes_the_deletion(client: TestClient) -> None:
    created = client.post(CLAIMS, json=claim_with_finalizer()).json()
    url = f"{CLAIMS}/{created['metadata']['name']}"
    rv = created["metadata"]["resourceVersion"]
    client.delete(url)
    r = client.patch(url, content=json.dumps({"metadata": {"finalizers": None}}), headers=MERGE)
    assert r.status_code == 200
    assert client.get(url).status_code == 404
    assert [e["type"] for e in watch(client, CLAIMS, resourceVersion=rv)] == ["MODIFIED", "DELETED"]


def test_no_finalizer_can_be_added_while_deleting(client: TestClient) -> None:
    created = client.post(CLAIMS, json=claim_with_finalizer()).json()
    url = f"{CLAIMS}/{created['metadata']['name']}"
    client.delete(url)
    patch = {"metadata": {"finalizers": ["resource.kubernetes.io/delete-protection", "example.com/late"]}}
    r = client.patch(url, content=json.dumps(patch), headers=MERGE)
    assert r.status_code == 422
    assert 'metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted' \
        in r.json()["message"]


def test_clients_cannot_set_or_clear_deletion_timestamp(client: TestClient) -> None:
    created = client.post(CLAIMS, json=claim_with_finalizer()).json()
    url = f"{CLAIMS}/{created['metadata']['name']}"
    sneaky = copy.deepcopy(created)
    sneaky["metadata"]["deletionTimestamp"] = "2020-01-01T00:00:00Z"
    assert "deletionTimestamp" not in client.put(url, json=sneaky).json()["metadata"]


def test_deletecollection_respects_finalizers(client: TestClient) -> None:
    client.post(CLAIMS, json=claim_with_finalizer())
    plain = copy.deepcopy(docs("30-claims.yaml")[1])
    client.post(CLAIMS, json=plain)
    r = client.delete(CLAIMS)
    assert r.status_code == 200
    left = client.get(CLAIMS).json()["items"]
    assert [c["metadata"]["name"] for c in left] == [claim_with_finalizer()["metadata"]["name"]]
    assert left[0]["metadata"]["deletionTimestamp"]


def test_status_writes_keep_the_stored_metadata(client: TestClient) -> None:
    created = client.post(CLAIMS, json=docs("30-claims.yaml")[0]).json()
    url = f"{CLAIMS}/{created['metadata']['name']}/status"
    body = copy.deepcopy(created)
    body["metadata"]["labels"] = {"sneaky": "yes"}
    body["metadata"]["finalizers"] = ["example.com/x"]
    r = client.put(url, json=body)
    assert r.status_code == 200
    assert "labels" not in r.json()["metadata"] and "finalizers" not in r.json()["metadata"]


@pytest.mark.slow
def test_watch_with_a_selector_sees_objects_enter_and_leave(client: TestClient) -> None:
    doc = docs("21-nic-slices.yaml")[0]
    name = doc["metadata"]["name"]
    rv = client.post(SLICES, json=doc).json()["metadata"]["resourceVersion"]
    url = f"{SLICES}/{name}"
    for value in ("yes", "still", None):
        patch = {"metadata": {"labels": {"watched": value, "other": "x"} if value else {"watched": None}}}
        client.patch(url, content=json.dumps(patch), headers=MERGE)
    events = watch(client, SLICES, resourceVersion=rv, labelSelector="watched")
    assert [e["type"] for e in events] == ["ADDED", "MODIFIED", "DELETED"]
    gone = events[-1]["object"]["metadata"]
    assert gone["labels"]["watched"] == "still"  # the last state that matched...
    assert int(gone["resourceVersion"]) > int(events[1]["object"]["metadata"]["resourceVersion"])  # ...now
    # Without a selector every change is a MODIFIED.
    assert [e["type"] for e in watch(client, SLICES, resourceVersion=rv)] == ["MODIFIED"] * 3


@pytest.mark.slow
def test_watch_list_ends_initial_events_with_a_bookmark(client: TestClient) -> None:
    client.post(SLICES, json=docs("21-nic-slices.yaml")[0])
    events = watch(client, SLICES, sendInitialEvents="true", allowWatchBookmarks="true",
                   resourceVersionMatch="NotOlderThan", resourceVersion="")
    assert [e["type"] for e in events] == ["ADDED", "BOOKMARK"]
    assert events[1]["object"]["metadata"]["annotations"] == {"k8s.io/initial-events-end": "true"}
    assert watch(client, SLICES, sendInitialEvents="false", allowWatchBookmarks="true",
                 resourceVersionMatch="NotOlderThan") == []


def test_send_initial_events_needs_not_older_than_and_bookmarks_as_list_options_validation(
        client: TestClient) -> None:
    r = client.get(SLICES, params={"watch": "true", "sendInitialEvents": "true", "timeoutSeconds": "1"})
    assert r.status_code == 422 and r.json()["message"] == (
        'ListOptions.meta.k8s.io "" is invalid: [resourceVersionMatch: Forbidden: sendInitialEvents requires '
        'setting resourceVersionMatch to NotOlderThan, allowWatchBookmarks: Forbidden: sendInitialEvents requires '
        'setting allowWatchBookmarks to true]')
    r = client.get(SLICES, params={"watch": "true", "resourceVersionMatch": "NotOlderThan", "resourceVersion": "1",
                                   "timeoutSeconds": "1"})
    assert r.status_code == 422 and "resourceVersionMatch is forbidden for watch unless sendInitialEvents is " \
                                    "provided" in r.json()["message"]


def test_event_logs_from_before_the_prev_column_still_open(tmp_path: Path) -> None:
    db = tmp_path / "old.sqlite"
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE events (rv BIGINT PRIMARY KEY, type TEXT NOT NULL, resource TEXT NOT NULL, "
                     "namespace TEXT NOT NULL, name TEXT NOT NULL, data TEXT NOT NULL)")
        conn.execute("INSERT INTO events VALUES (1, 'ADDED', 'deviceclasses', '', 'a', '{}')")
    store = SQLiteStore(str(db))
    assert [e.prev for e in store.events_since(0)] == [None]
    store.create("deviceclasses", "", "b", lambda _old, rv: {"metadata": {"name": "b", "resourceVersion": rv}})
    store.update("deviceclasses", "", "b", lambda old, rv: {**old, "metadata": {"name": "b", "resourceVersion": rv},
                                                            "x": 1})
    assert store.events_since(0)[-1].prev == {"metadata": {"name": "b", "resourceVersion": "2"}}


@pytest.mark.slow
def test_watches_send_bookmarks_with_the_latest_resource_version(client: TestClient, monkeypatch) -> None:
    from dralloc.server.watch import stream as watch_module

    monkeypatch.setattr(watch_module, "BOOKMARK_EVERY", 0.2)
    client.post(SLICES, json=docs("21-nic-slices.yaml")[0])
    rv = client.get("/apis/resource.k8s.io/v1/deviceclasses").json()["metadata"]["resourceVersion"]
    events = watch(client, "/apis/resource.k8s.io/v1/deviceclasses", resourceVersion="1",
                   allowWatchBookmarks="true")
    assert events and {e["type"] for e in events} == {"BOOKMARK"}
    assert events[-1]["object"]["metadata"]["resourceVersion"] == rv  # the slice's write, seen by the hub
    assert events[-1]["object"]["kind"] == "DeviceClass"
