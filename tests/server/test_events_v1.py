"""events.k8s.io/v1: the core/v1 Events seen through the new API, as kube-apiserver serves them."""

from __future__ import annotations

import json
import warnings
from typing import Any

import pytest

warnings.filterwarnings("ignore", message="Using `httpx`")
from cluster import api_client  # noqa: E402
from starlette.testclient import TestClient  # noqa: E402

from dralloc.server.registry.events import to_core, to_events_v1  # noqa: E402

NEW = "/apis/events.k8s.io/v1/namespaces/default/events"
OLD = "/api/v1/namespaces/default/events"
EVENT = {"apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": {"name": "p.1"},
         "eventTime": "2026-01-01T00:00:00.000000Z", "reportingController": "default-scheduler",
         "reportingInstance": "default-scheduler-node-a", "action": "Binding", "reason": "Scheduled",
         "regarding": {"kind": "Pod", "namespace": "default", "name": "p", "uid": "u", "apiVersion": "v1"},
         "note": "Successfully assigned default/p to node-1", "type": "Normal"}


@pytest.fixture
def client() -> TestClient:
    return api_client()


def test_an_event_created_through_events_k8s_io_is_a_core_event_with_the_old_field_names(
        client: TestClient) -> None:
    r = client.post(NEW, json=EVENT)
    assert r.status_code == 201, r.text
    assert r.json()["apiVersion"] == "events.k8s.io/v1" and r.json()["note"] == EVENT["note"]
    core = client.get(f"{OLD}/p.1").json()
    assert core["apiVersion"] == "v1"
    assert core["message"] == EVENT["note"] and core["involvedObject"] == EVENT["regarding"]
    assert core["reportingComponent"] == "default-scheduler" and core["reportingInstance"] == EVENT["reportingInstance"]
    assert "note" not in core and "regarding" not in core and "reportingController" not in core


def test_a_core_event_is_listed_through_events_k8s_io_with_its_deprecated_fields(client: TestClient) -> None:
    old = {"apiVersion": "v1", "kind": "Event", "metadata": {"name": "e"}, "reason": "Started", "type": "Normal",
           "involvedObject": {"kind": "Pod", "name": "p", "namespace": "default"}, "message": "started",
           "source": {"component": "kubelet", "host": "node-1"}, "count": 3,
           "firstTimestamp": "2026-01-01T00:00:00Z", "lastTimestamp": "2026-01-01T00:01:00Z"}
    assert client.post(OLD, json=old).status_code == 201
    listed = client.get(NEW).json()
    assert listed["kind"] == "EventList" and listed["apiVersion"] == "events.k8s.io/v1"
    item = listed["items"][0]
    assert item["note"] == "started" and item["regarding"]["name"] == "p"
    assert item["deprecatedSource"] == {"component": "kubelet", "host": "node-1"} and item["deprecatedCount"] == 3
    assert item["deprecatedFirstTimestamp"] == "2026-01-01T00:00:00Z"
    assert item["deprecatedLastTimestamp"] == "2026-01-01T00:01:00Z"
    assert "message" not in item and "involvedObject" not in item


def test_the_conversion_goes_both_ways_without_loss() -> None:
    assert to_core(to_events_v1(to_core(EVENT))) == to_core(EVENT)
    assert to_events_v1(to_core(EVENT)) == EVENT


def test_events_k8s_io_is_discovered_and_has_an_openapi_document(client: TestClient) -> None:
    groups = [g["name"] for g in client.get("/apis").json()["groups"]]
    assert groups[:2] == ["apps", "events.k8s.io"]  # kube-apiserver's order
    resources = client.get("/apis/events.k8s.io/v1").json()["resources"]
    assert [(r["name"], r["kind"], r["namespaced"]) for r in resources] == [("events", "Event", True)]
    aggregated = client.get("/apis", headers={
        "accept": "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"}).json()
    assert "events.k8s.io" in [i["metadata"]["name"] for i in aggregated["items"]]
    root = client.get("/openapi/v3").json()["paths"]
    url = root["apis/events.k8s.io/v1"]["serverRelativeURL"]
    assert client.get(url.split("?")[0]).json()["paths"]


def test_a_new_style_event_must_say_who_reported_it_what_and_when(client: TestClient) -> None:
    bad = {k: v for k, v in EVENT.items() if k not in ("eventTime", "reportingController", "action")}
    r = client.post(NEW, json={**bad, "deprecatedCount": 2})
    assert r.status_code == 422
    body = r.json()
    assert body["message"].startswith('Event.events.k8s.io "p.1" is invalid: ')
    fields = [c["field"] for c in body["details"]["causes"]]
    assert fields == ["eventTime", "count"]
    r = client.post(NEW, json={**EVENT, "reportingController": ""})
    causes = r.json()["details"]["causes"]  # required, and not a qualified name (empty, and not matching)
    assert [c["field"] for c in causes] == ["reportingController"] * 3
    assert causes[0]["reason"] == "FieldValueRequired"
    r = client.post(NEW, json={**EVENT, "type": "Odd"})
    assert r.json()["details"]["causes"] == [{"reason": "FieldValueInvalid", "field": "type",
                                              "message": 'Invalid value: "": has invalid value: Odd'}]


def test_events_k8s_io_failures_name_that_group(client: TestClient) -> None:
    r = client.get(f"{NEW}/missing")
    assert r.json()["message"] == 'events.events.k8s.io "missing" not found'
    client.post(NEW, json=EVENT)
    assert client.post(NEW, json=EVENT).json()["message"] == 'events.events.k8s.io "p.1" already exists'
    r = client.patch(f"{NEW}/missing", json={"note": "x"}, headers={"content-type": "application/merge-patch+json"})
    assert r.json()["message"] == 'events.events.k8s.io "missing" not found'


def test_a_series_update_through_events_k8s_io_patches_the_stored_event(client: TestClient) -> None:
    client.post(NEW, json=EVENT)
    series = {"series": {"count": 2, "lastObservedTime": "2026-01-01T00:00:10.000000Z"}}
    r = client.patch(f"{NEW}/p.1", json=series, headers={"content-type": "application/merge-patch+json"},
                     params={"fieldManager": "kube-scheduler"})
    assert r.status_code == 200, r.text
    assert r.json()["series"]["count"] == 2
    core = client.get(f"{OLD}/p.1").json()
    assert core["series"]["count"] == 2 and core["message"] == EVENT["note"]
    entry = next(e for e in core["metadata"]["managedFields"] if e["manager"] == "kube-scheduler")
    assert entry["apiVersion"] == "events.k8s.io/v1" and "f:series" in entry["fieldsV1"]


def test_an_updated_event_keeps_its_note_and_the_table_shows_it(client: TestClient) -> None:
    created = client.post(NEW, json=EVENT).json()
    created["metadata"]["labels"] = {"seen": "yes"}
    updated = client.put(f"{NEW}/p.1", json=created).json()
    assert updated["metadata"]["labels"] == {"seen": "yes"} and updated["note"] == EVENT["note"]
    table = client.get(NEW, headers={"accept": "application/json;as=Table;v=v1;g=meta.k8s.io"}).json()
    cells = table["rows"][0]["cells"]
    assert EVENT["note"] in cells and "Scheduled" in cells


def test_server_side_apply_of_a_new_style_event_creates_it(client: TestClient) -> None:
    r = client.patch(f"{NEW}/p.1", json=EVENT, headers={"content-type": "application/apply-patch+yaml"},
                     params={"fieldManager": "recorder"})
    assert r.status_code == 201, r.text
    entry: dict[str, Any] = r.json()["metadata"]["managedFields"][0]
    assert entry["operation"] == "Apply" and "f:note" in entry["fieldsV1"]
    assert client.get(f"{OLD}/p.1").json()["message"] == EVENT["note"]
    assert client.delete(f"{NEW}/p.1").status_code == 200
    assert client.get(f"{OLD}/p.1").status_code == 404


def test_a_core_event_with_an_event_time_is_held_to_the_new_style_rules(client: TestClient) -> None:
    event = {"apiVersion": "v1", "kind": "Event", "metadata": {"name": "e"}, "reason": "Started", "type": "Normal",
             "eventTime": "2026-01-01T00:00:00.000000Z", "reportingInstance": "node-1",
             "involvedObject": {"kind": "Pod", "name": "p", "namespace": "default"}}
    r = client.post(OLD, json=event)
    assert r.status_code == 422
    assert [(c["reason"], c["field"]) for c in r.json()["details"]["causes"]] == [
        ("FieldValueRequired", "reportingController"), ("FieldValueInvalid", "reportingController"),
        ("FieldValueInvalid", "reportingController"), ("FieldValueRequired", "action")]
    ok = {**event, "reportingComponent": "example.com/agent", "action": "Start"}
    assert client.post(OLD, json=ok).status_code == 201


def test_an_old_style_event_about_an_object_of_no_namespace_belongs_in_default(client: TestClient) -> None:
    client.post("/api/v1/namespaces", json={"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team"}})
    node_event = {"apiVersion": "v1", "kind": "Event", "metadata": {"name": "n"}, "reason": "Ready",
                  "involvedObject": {"kind": "Node", "name": "node-1"}}
    r = client.post("/api/v1/namespaces/team/events", json=node_event)
    assert r.status_code == 422
    assert r.json()["details"]["causes"] == [{"reason": "FieldValueInvalid", "field": "involvedObject.namespace",
                                              "message": 'Invalid value: "": does not match event.namespace'}]
    assert client.post(OLD, json=node_event).status_code == 201


@pytest.mark.slow
def test_a_watch_through_events_k8s_io_shows_core_writes_in_the_new_shape(client: TestClient) -> None:
    rv = client.get(NEW).json()["metadata"]["resourceVersion"]
    old = {"apiVersion": "v1", "kind": "Event", "metadata": {"name": "e"}, "reason": "Started", "type": "Normal",
           "involvedObject": {"kind": "Pod", "name": "p", "namespace": "default"}, "message": "started"}
    client.post(OLD, json=old)
    r = client.get(NEW, params={"watch": "true", "timeoutSeconds": "1", "resourceVersion": rv})
    events = [json.loads(line) for line in r.text.splitlines()]
    assert [e["type"] for e in events] == ["ADDED"]
    shown = events[0]["object"]
    assert shown["apiVersion"] == "events.k8s.io/v1" and shown["note"] == "started" and "message" not in shown


def test_events_k8s_io_field_selectors_use_the_new_names(client: TestClient) -> None:
    client.post(NEW, json=EVENT)
    other = {**EVENT, "metadata": {"name": "q.1"}, "regarding": {**EVENT["regarding"], "name": "q"}}
    client.post(NEW, json=other)

    def names(selector: str) -> list[str]:
        r = client.get(NEW, params={"fieldSelector": selector})
        assert r.status_code == 200, r.text
        return [i["metadata"]["name"] for i in r.json()["items"]]

    assert names("regarding.name=p") == ["p.1"]
    assert names("reportingController=default-scheduler,regarding.kind=Pod") == ["p.1", "q.1"]
    r = client.get(NEW, params={"fieldSelector": "involvedObject.name=p"})
    assert r.status_code == 400 and r.json()["message"] == "field label not supported: involvedObject.name"


def test_an_event_updated_through_events_k8s_io_keeps_what_it_says(client: TestClient) -> None:
    created = client.post(NEW, json=EVENT).json()
    changed = {**created, "reason": "Preempted", "regarding": {**EVENT["regarding"], "name": "other"}}
    r = client.put(f"{NEW}/p.1", json=changed)
    assert r.status_code == 422
    causes = [(c["field"], c["message"]) for c in r.json()["details"]["causes"]]
    assert causes == [
        ("involvedObject", 'Invalid value: {"kind":"Pod","namespace":"default","name":"other","uid":"u",'
                           '"apiVersion":"v1"}: field is immutable'),
        ("reason", 'Invalid value: "Preempted": field is immutable'),
        ("reason", 'Invalid value: "Preempted": field is immutable')]  # upstream checks reason twice
    assert r.json()["message"].startswith('Event.events.k8s.io "p.1" is invalid: ')
    r = client.patch(f"{NEW}/p.1", json={"series": {"count": 1}}, headers={"content-type": "application/merge-patch+json"})
    assert [c["field"] for c in r.json()["details"]["causes"]] == ["series.count", "series.lastObservedTime"]
    # the same change through core/v1 is held to the legacy rules only
    core = client.get(f"{OLD}/p.1").json()
    assert client.put(f"{OLD}/p.1", json={**core, "reason": "Preempted"}).status_code == 200


def test_a_core_event_update_is_held_to_the_legacy_rules(client: TestClient) -> None:
    old = {"apiVersion": "v1", "kind": "Event", "metadata": {"name": "e"}, "reason": "Started", "type": "Normal",
           "involvedObject": {"kind": "Pod", "name": "p", "namespace": "default"}}
    created = client.post(OLD, json=old).json()
    r = client.put(f"{OLD}/e", json={**created, "involvedObject": {**old["involvedObject"], "namespace": "other"}})
    assert r.status_code == 422
    assert [c["field"] for c in r.json()["details"]["causes"]] == ["involvedObject.namespace"]


def test_a_strategic_merge_patch_of_an_event_follows_object_metas_strategies(client: TestClient) -> None:
    """events.k8s.io/v1 Event declares no patch strategy of its own, so a strategic merge patch is a merge patch
    except where ObjectMeta has one: owner references merge by uid, finalizers are a set, and the directives
    ($patch, $deleteFromPrimitiveList) are honoured rather than stored or dropped."""
    owner = {"apiVersion": "v1", "kind": "Pod", "name": "p", "uid": "u1"}
    event = {**EVENT, "metadata": {"name": "p.1", "finalizers": ["a.example/x"], "ownerReferences": [owner]}}
    assert client.post(NEW, json=event).status_code == 201
    smp = {"content-type": "application/strategic-merge-patch+json"}
    other = {"apiVersion": "v1", "kind": "Pod", "name": "q", "uid": "u2"}
    r = client.patch(f"{NEW}/p.1", headers=smp,
                     json={"metadata": {"finalizers": ["b.example/y"], "ownerReferences": [other],
                                        "labels": {"l": "v"}}})
    assert r.status_code == 200, r.text
    meta = r.json()["metadata"]
    assert meta["finalizers"] == ["a.example/x", "b.example/y"]
    assert meta["ownerReferences"] == [owner, other] and meta["labels"] == {"l": "v"}
    r = client.patch(f"{NEW}/p.1", headers=smp, json={"metadata": {
        "$deleteFromPrimitiveList/finalizers": ["a.example/x"], "ownerReferences": [{"uid": "u1", "$patch": "delete"}],
        "labels": {"$patch": "replace", "m": "w"}}})
    assert r.status_code == 200, r.text
    meta = r.json()["metadata"]
    assert meta["finalizers"] == ["b.example/y"] and meta["ownerReferences"] == [other]
    assert meta["labels"] == {"m": "w"}
    # a JSON merge patch of the same list replaces it
    r = client.patch(f"{NEW}/p.1", json={"metadata": {"finalizers": ["c.example/z"]}},
                     headers={"content-type": "application/merge-patch+json"})
    assert r.json()["metadata"]["finalizers"] == ["c.example/z"]


@pytest.mark.parametrize("field,value", [("series", {"count": "x", "lastObservedTime": "2026-01-01T00:00:00.000000Z"}),
                                         ("deprecatedCount", "x"), ("regarding", 5)])
def test_an_events_v1_create_with_a_value_of_the_wrong_type_is_a_400_not_a_500(client: TestClient, field: str,
                                                                              value: Any) -> None:
    event = {"apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": {"name": "typed"},
             "eventTime": "2026-01-01T00:00:00.000000Z", "reportingController": "c/x", "reportingInstance": "i",
             "action": "a", "reason": "r", "type": "Normal", field: value}
    r = client.post("/apis/events.k8s.io/v1/namespaces/default/events", json=event)
    assert r.status_code == 400, r.text
    assert r.json()["message"].startswith('Event in version "v1" cannot be handled as a Event: ')
