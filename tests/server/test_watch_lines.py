"""A watch writes an event's object as stored when it shows it unchanged: the same bytes as encoding the decoded
object, without decoding it; the hub reads nothing while no watch is open."""

from __future__ import annotations

import json
import time
import warnings
from typing import Any

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st
from starlette.testclient import TestClient

from dralloc.server import create_app
from dralloc.server.watch.stream import _stored_line
from dralloc.store import SQLiteStore
from dralloc.store.sqlite import _encode

CONFIGMAPS = "/api/v1/namespaces/default/configmaps"
SLICES = "/apis/resource.k8s.io/v1/resourceslices"

_scalars = st.none() | st.booleans() | st.integers(-2**63, 2**63 - 1) | \
    st.floats(allow_nan=False, allow_infinity=False) | st.text()
_values = st.recursive(_scalars, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner,
                                                                                          max_size=4), max_leaves=20)


@pytest.mark.slow
@given(obj=st.dictionaries(st.text(), _values, max_size=6), kind=st.sampled_from(["ADDED", "MODIFIED", "DELETED"]))
def test_a_line_around_the_stored_text_is_the_encoding_of_the_decoded_object(obj: dict[str, Any], kind: str) -> None:
    stored = _encode(obj)  # as the store writes it
    assert _stored_line(kind, stored) == msgspec.json.encode({"type": kind, "object": json.loads(stored)}) + b"\n"


def _client() -> tuple[TestClient, SQLiteStore]:
    store = SQLiteStore(":memory:")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return TestClient(create_app(store, anonymous=True)), store


@pytest.mark.slow
def test_watches_see_the_stored_object_as_stored_in_their_version_and_through_selectors() -> None:
    client, _ = _client()
    sent = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "labels": {"app": "web"}},
            "data": {"text": "<&> é \u2028 \"quoted\"", "n": "1"}}
    created = client.post(CONFIGMAPS, json=sent).json()
    for params in ({}, {"labelSelector": "app=web"}):
        watched = client.get(CONFIGMAPS, params={"watch": "true", "resourceVersion": "1", "timeoutSeconds": "1",
                                                 **params})
        lines = watched.text.rstrip("\n").split("\n")  # (not splitlines: U+2028 is no line end in JSON)
        assert [json.loads(line) for line in lines] == [{"type": "ADDED", "object": created}]


@pytest.mark.slow
def test_the_hub_reads_no_event_while_no_watch_is_open() -> None:
    client, store = _client()
    hub = client.app.api.hub  # type: ignore[attr-defined]
    read: list[int] = []
    events_since = store.events_since

    def counted(rv: int, limit: int = 1000) -> Any:
        read.append(rv)
        return events_since(rv, limit)

    store.events_since = counted  # type: ignore[method-assign]
    with client:  # one loop for every request: the hub's task lives on
        first = client.get(CONFIGMAPS, params={"watch": "true", "timeoutSeconds": "1"})  # starts the hub
        assert first.status_code == 200
        time.sleep(0.3)  # (the hub takes in the watch's end)
        read.clear()
        for i in range(20):
            client.post(CONFIGMAPS, json={"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"c{i}"}})
        time.sleep(0.3)  # the hub's wake-ups after those commits
        assert read == [] and hub.position == store.current_rv()  # it moved on without reading the log
        watched = client.get(CONFIGMAPS, params={"watch": "true", "resourceVersion": "1", "timeoutSeconds": "1"})
    assert len(watched.text.splitlines()) == 20  # a watch opened later replays them from the store
